//===- imports.cc - Runtime functions bound into loaded code --------------===//
// SPDX-License-Identifier: Apache-2.0

#include "imports.h"

#include <cinttypes>
#include <cstdint>
#include <string>

#include "buffer_cache.h"
#include "kernels/attention_f32.h"
#include "kernels/attention_kv.h"
#include "kernels/matmul_f32.h"
#include "run_checks.h"
#include "thread_pool.h"
#include "strata_kernel_abi.h"

namespace strata::runtime {
namespace {

struct Import {
  const char* name;
  void* function;
};

// Every function generated code may import (ABI version 2).
const Import kImports[] = {
    {"strata_rt_matmul_f32", reinterpret_cast<void*>(&kernels::strataMatmulF32)},
    {"strata_rt_matmul_f32_i8",
     reinterpret_cast<void*>(&kernels::strataMatmulF32I8)},
    {"strata_rt_matmul_f32_i4",
     reinterpret_cast<void*>(&kernels::strataMatmulF32I4)},
    {"strata_rt_matmul_f32_w8a8",
     reinterpret_cast<void*>(&kernels::strataMatmulF32W8A8)},
    {"strata_rt_matmul_f32_bf16",
     reinterpret_cast<void*>(&kernels::strataMatmulF32Bf16)},
    {"strata_rt_alloc", reinterpret_cast<void*>(&strataRtAlloc)},
    {"strata_rt_free", reinterpret_cast<void*>(&strataRtFree)},
    {"strata_rt_parallel_for", reinterpret_cast<void*>(&strataRtParallelFor)},
    {"strata_rt_attention_f32",
     reinterpret_cast<void*>(&kernels::strataAttentionF32)},
    {"strata_rt_attention_kv",
     reinterpret_cast<void*>(&kernels::strataAttentionKv)},
    {"strata_rt_kv_quantize",
     reinterpret_cast<void*>(&kernels::strataKvQuantize)},
    {"strata_rt_check_failed", reinterpret_cast<void*>(&strataRtCheckFailed)},
};

}  // namespace

static_assert(sizeof(kImports) / sizeof(kImports[0]) <= 32,
              "bindImports' mask has 32 bits");

size_t importCount() { return sizeof(kImports) / sizeof(kImports[0]); }

const char* importName(size_t i) {
  return i < importCount() ? kImports[i].name : nullptr;
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
