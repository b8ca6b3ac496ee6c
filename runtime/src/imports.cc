//===- imports.cc - Runtime functions bound into loaded code --------------===//
// SPDX-License-Identifier: Apache-2.0

#include "imports.h"

#include <cinttypes>
#include <cstdint>
#include <string>

#include "buffer_cache.h"
#include "kernels/attention_f32.h"
#include "kernels/attention_kv.h"
#include "kernels/collectives.h"
#include "kernels/conv_winograd.h"
#include "kernels/matmul_f32.h"
#include "kernels/pipeline_transfer.h"
#include "run_checks.h"
#include "thread_pool.h"
#include "strata_kernel_abi.h"

namespace strata::runtime {
namespace {

struct Import {
  const char* name;
  void* function;
  // The kernel set serving it on this host now (strata_module_kernel);
  // null for the imports that are not kernels.
  const char* (*kernelSet)();
};

template <typename F>
void* address(F* function) {
  return reinterpret_cast<void*>(function);
}

// Every function generated code may import (ABI version 2).
const Import kImports[] = {
    {"strata_rt_matmul_f32", address(&kernels::strataMatmulF32),
     kernels::matmulF32KernelSet},
    // int8 decode (quads) on int8 products; imported int8 panels on the
    // fp32 tiles.
    {"strata_rt_matmul_f32_i8", address(&kernels::strataMatmulF32I8),
     kernels::matmulI8KernelSet},
    {"strata_rt_matmul_f32_i4", address(&kernels::strataMatmulF32I4),
     kernels::matmulI4KernelSet},
    {"strata_rt_matmul_f32_w8a8", address(&kernels::strataMatmulF32W8A8),
     kernels::matmulW8A8KernelSet},
    {"strata_rt_matmul_f32_bf16", address(&kernels::strataMatmulF32Bf16),
     kernels::matmulBf16KernelSet},
    // A channels-last convolution: the fp32 tiles on gathered columns.
    {"strata_rt_conv_f32", address(&kernels::strataConvF32),
     kernels::matmulF32KernelSet},
    // A 3 x 3 one with unit strides: Winograd's F(2x2, 3x3) on those tiles.
    {"strata_rt_conv_f32_winograd", address(&kernels::strataConvF32Winograd),
     kernels::matmulF32KernelSet},
    {"strata_rt_alloc", address(&strataRtAlloc), nullptr},
    {"strata_rt_free", address(&strataRtFree), nullptr},
    {"strata_rt_parallel_for", address(&strataRtParallelFor), nullptr},
    {"strata_rt_attention_f32", address(&kernels::strataAttentionF32),
     kernels::attentionF32KernelSet},
    // A compressed cache's attention runs on the fp32 tiles.
    {"strata_rt_attention_kv", address(&kernels::strataAttentionKv),
     kernels::matmulF32KernelSet},
    // A sliding-window layer's ring-buffer cache: the same kernel.
    {"strata_rt_attention_ring", address(&kernels::strataAttentionRing),
     kernels::matmulF32KernelSet},
    // Top-k global blocks beside a window: the same kernel's row path.
    {"strata_rt_attention_global", address(&kernels::strataAttentionGlobal),
     kernels::matmulF32KernelSet},
    // With-past attention that also writes the grown caches: the same
    // kernel (its prefill blocks honour the bf16-products flag).
    {"strata_rt_attention_append", address(&kernels::strataAttentionAppend),
     kernels::attentionF32KernelSet},
    // A paged cache: the same kernel, each row's keys found block by block.
    {"strata_rt_attention_paged", address(&kernels::strataAttentionPaged),
     kernels::matmulF32KernelSet},
    {"strata_rt_kv_quantize", address(&kernels::strataKvQuantize), nullptr},
    {"strata_rt_kv_quantize_paged", address(&kernels::strataKvQuantizePaged),
     nullptr},
    {"strata_rt_check_failed", address(&strataRtCheckFailed), nullptr},
    // A tensor-parallel rank's exchanges, over the session's communicator.
    {"strata_rt_all_reduce_f32", address(&kernels::strataAllReduceF32),
     nullptr},
    {"strata_rt_all_gather_f32", address(&kernels::strataAllGatherF32),
     nullptr},
    // A pipeline stage's hand-overs to and from the other stages.
    {"strata_rt_send_f32", address(&kernels::strataSendF32), nullptr},
    {"strata_rt_recv_extents_f32", address(&kernels::strataRecvExtentsF32),
     nullptr},
    {"strata_rt_recv_f32", address(&kernels::strataRecvF32), nullptr},
};

}  // namespace

static_assert(sizeof(kImports) / sizeof(kImports[0]) <= 32,
              "bindImports' mask has 32 bits");

size_t importCount() { return sizeof(kImports) / sizeof(kImports[0]); }

const char* importName(size_t i) {
  return i < importCount() ? kImports[i].name : nullptr;
}

const char* importKernelSet(size_t i) {
  return i < importCount() && kImports[i].kernelSet ? kImports[i].kernelSet()
                                                    : nullptr;
}

strata_status_t bindImports(const NativeCode& code, uint32_t* boundMask) {
  *boundMask = 0;
  const auto* declared = static_cast<const uint32_t*>(
      code.find(STRATA_IMPORT_SYMBOL_PREFIX "count"));
  if (!declared) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS,
                              "the code section has no '%s' symbol",
                              STRATA_IMPORT_SYMBOL_PREFIX "count");
  }
  uint32_t bound = 0;
  for (size_t i = 0; i < importCount(); ++i) {
    const Import& import = kImports[i];
    std::string symbol = std::string(STRATA_IMPORT_SYMBOL_PREFIX) + import.name;
    if (void* slot = code.find(symbol.c_str())) {
      *static_cast<void**>(slot) = import.function;
      *boundMask |= uint32_t{1} << i;
      ++bound;
    }
  }
  if (bound != *declared) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INCOMPATIBLE,
        "the code imports %" PRIu32
        " runtime functions, this runtime provides %" PRIu32 " of them",
        *declared, bound);
  }
  return nullptr;
}

}  // namespace strata::runtime
