//===- CpuPipeline.h - The CPU back end's pass order -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The one place that orders the CPU passes (Passes.td) and the upstream
// passes between them.

#ifndef STRATA_CODEGEN_CPU_CPUPIPELINE_H_
#define STRATA_CODEGEN_CPU_CPUPIPELINE_H_

#include "codegen/cpu/Passes.h"

#include "mlir/Pass/PassManager.h"

namespace strata::codegen::cpu {

struct CpuPipelineOptions {
  /// fp32 attention calls the runtime's kernel (else the generic lowering).
  bool runtimeAttention = true;
  /// 3x3 convolutions with unit strides use Winograd's F(2x2, 3x3) (else
  /// the direct product of their columns).
  bool winogradConvolutions = true;
  /// Counts for the report, if not null (must outlive the pass manager).
  CpuCodegenStats *stats = nullptr;
};

/// On the strata dialect, before strata-lower-to-linalg: the ops the CPU
/// back end takes over whole (attention).
void buildCpuStrataPipeline(mlir::OpPassManager &pm,
                            const CpuPipelineOptions &options);

/// One-shot bufferization of whole functions (their boundaries too, with
/// identity layouts): what every back end runs after forming its dispatch
/// regions.
void addBufferization(mlir::OpPassManager &pm);

/// From linalg on tensors (after strata-lower-to-linalg) to the LLVM
/// dialect: entry ABI, bufferization, frees at last use, the memory plan,
/// matmuls to the runtime, math approximations, weights out, kernels
/// outlined, checks, loops, LLVM dialect, parallel dispatch, runtime
/// imports bound.
void buildCpuLLVMPipeline(mlir::OpPassManager &pm,
                          const CpuPipelineOptions &options);

/// Both, around strata-lower-to-linalg: the strata dialect after fusion to
/// the LLVM dialect code generation translates.
void buildCpuPipeline(mlir::OpPassManager &pm,
                      const CpuPipelineOptions &options);

/// Registers the codegen passes and `strata-cpu-pipeline` (for strata-opt).
void registerCpuCodegenPasses();

} // namespace strata::codegen::cpu

#endif // STRATA_CODEGEN_CPU_CPUPIPELINE_H_
