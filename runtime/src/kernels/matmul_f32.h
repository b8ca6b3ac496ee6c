//===- matmul_f32.h - fp32 matmul the generated code imports --------------===//
// SPDX-License-Identifier: Apache-2.0
// strata_rt_matmul_f32 of the kernel ABI (codegen/abi/strata_kernel_abi.h):
// strided batched C (+)= A*B with B either strided or pre-packed in panels.
// docs/design/cpu-matmul.md explains the choice of a hand-written kernel.

#ifndef STRATA_RUNTIME_SRC_KERNELS_MATMUL_F32_H_
#define STRATA_RUNTIME_SRC_KERNELS_MATMUL_F32_H_

#include <cstdint>

#include "conv_columns.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

/// The import itself: decodes STRATA_MM_PARAM_COUNT params and runs on the
/// current thread pool.
extern "C" void strataMatmulF32(strata_rt_context_t* context,
                                const int64_t* params);

/// The product of a channels-last convolution's |columns| (gathered block
/// by block, never stored) and its packed weight [K * C, |outChannels|]
/// into |out| [N * P, M], starting from |bias| (null: 0), plus |residual|
/// (null: none; shaped as |out|; |out| itself: the result is written over
/// it), clamped at 0 with |relu|: strata_rt_conv_f32's work (conv_f32.cc).
void runConvF32(strata_rt_context_t* context, const ConvColumns& columns,
                const float* packedWeight, int64_t outChannels,
                const float* bias, const float* residual, bool relu,
                float* out);

/// strata_rt_conv_f32 of the kernel ABI.
extern "C" void strataConvF32(strata_rt_context_t* context,
                              const int64_t* params);

/// strata_rt_matmul_f32_i8: the same with a weight-only int8 B
/// (STRATA_MM_LAYOUT_PANEL_I8 and per-group scales).
extern "C" void strataMatmulF32I8(strata_rt_context_t* context,
                                  const int64_t* params);

/// strata_rt_matmul_f32_i4: int4 weights (STRATA_MM_LAYOUT_PANEL_I4_GROUPS)
/// times activations quantized to int8 per group at run time.
extern "C" void strataMatmulF32I4(strata_rt_context_t* context,
                                  const int64_t* params);

/// strata_rt_matmul_f32_w8a8: int8 weights (STRATA_MM_LAYOUT_PANEL_I8_QUADS,
/// one scale per column) times activations quantized to int8 per row at
/// run time, int32 sums (matmul_w8a8.cc).
extern "C" void strataMatmulF32W8A8(strata_rt_context_t* context,
                                    const int64_t* params);

/// strata_rt_matmul_f32_bf16: bf16 weights (STRATA_MM_LAYOUT_PANEL_BF16_PAIRS)
/// times A rounded to bf16 at run time, fp32 sums (matmul_bf16.cc).
extern "C" void strataMatmulF32Bf16(strata_rt_context_t* context,
                                    const int64_t* params);

/// The name of the kernel set each family uses on this host now (the
/// drivers' choices: "amx-bf16", "avx512bf16", "avx512vnni", "avx2",
/// "scalar", ...; imports.cc lists them per import).
const char* matmulF32KernelSet();
const char* matmulI4KernelSet();
/// The int8 products of strata_rt_matmul_f32_i8 on quads (int8 decode);
/// its PANEL_I8 weights (imported models) run on matmulF32KernelSet's.
const char* matmulI8KernelSet();
const char* matmulBf16KernelSet();
const char* matmulW8A8KernelSet();
/// L of the W8A8 set in use: its activations are quantized to [-L, L]
/// (127, or 63 on the AVX2 set; matmul_w8a8_kernels.h).
int32_t matmulW8A8ActivationLevels();

/// Instruction sets the kernels have code for, best first. kAmx is
/// kAvx512 plus AMX tiles for the bf16 and W8A8 matmuls (amx.h): the other
/// kernels use AVX-512 under both.
enum class MatmulIsa { kAmx, kAvx512, kAvx2, kScalar };

/// The ISA the kernels use on this CPU (every kernel family follows it:
/// pickKernelSet).
MatmulIsa matmulIsa();
/// Makes the kernels use |isa|, or the best the CPU has if that is lower
/// (tests, and strata_cpu_cap_kernel_isa).
void capMatmulIsa(MatmulIsa isa);
/// The ISA named |name| ("amx", "avx512", "avx2" or "scalar", as
/// --kernel-isa spells them) in |*isa|; false for any other name.
bool matmulIsaNamed(const char* name, MatmulIsa* isa);

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_MATMUL_F32_H_
