//===- attention_kv.h - Writing rows into a compressed KV cache -----------===//
// SPDX-License-Identifier: Apache-2.0
// strata_rt_kv_quantize of the kernel ABI (codegen/abi/strata_kernel_abi.h):
// new K or V rows written into an fp32, bf16 or int8 (per-token scales)
// cache that strata_rt_attention_kv (attention_f32.h) reads.
// docs/design/cpu-attention.md, "Compressed KV cache".

#ifndef STRATA_RUNTIME_SRC_KERNELS_ATTENTION_KV_H_
#define STRATA_RUNTIME_SRC_KERNELS_ATTENTION_KV_H_

#include <cstdint>

#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

/// The import itself: decodes STRATA_KVQ_PARAM_COUNT params and runs on the
/// current thread pool.
extern "C" void strataKvQuantize(strata_rt_context_t* context,
                                 const int64_t* params);

/// strata_rt_kv_quantize_paged: the same into a paged cache; decodes
/// STRATA_KVQ_PAGED_PARAM_COUNT params.
extern "C" void strataKvQuantizePaged(strata_rt_context_t* context,
                                      const int64_t* params);

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_ATTENTION_KV_H_
