//===- attention_f32.h - fp32 attention the generated code imports --------===//
// SPDX-License-Identifier: Apache-2.0
// strata_rt_attention_f32 of the kernel ABI (codegen/abi/strata_kernel_abi.h):
// softmax(scale * Q K^T + mask) V per head in one pass over each head's
// keys, skipping keys a causal or window mask hides. Why a runtime kernel:
// docs/design/cpu-attention.md.

#ifndef STRATA_RUNTIME_SRC_KERNELS_ATTENTION_F32_H_
#define STRATA_RUNTIME_SRC_KERNELS_ATTENTION_F32_H_

#include <cstdint>

#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

/// The import itself: decodes STRATA_ATTN_PARAM_COUNT params and runs on the
/// current thread pool.
extern "C" void strataAttentionF32(strata_rt_context_t* context,
                                   const int64_t* params);

/// The kernel set strata_rt_attention_f32 runs on here: the fp32 tiles',
/// and on AMX hosts the bf16 tiles for the products of attention marked
/// with STRATA_ATTN_FLAG_BF16_PRODUCTS.
const char* attentionF32KernelSet();

/// strata_rt_attention_kv: the same over an fp32, bf16 or int8 (per-token
/// scales) K/V cache; decodes STRATA_ATTN_KV_PARAM_COUNT params.
extern "C" void strataAttentionKv(strata_rt_context_t* context,
                                  const int64_t* params);

/// strata_rt_attention_ring: strata_rt_attention_kv over a ring-buffer
/// cache (a window's sinks and its last rows); decodes
/// STRATA_ATTN_RING_PARAM_COUNT params.
extern "C" void strataAttentionRing(strata_rt_context_t* context,
                                    const int64_t* params);

/// strata_rt_attention_global: strata_rt_attention_kv with top-k global
/// key blocks beside a window; decodes STRATA_ATTN_GLOBAL_PARAM_COUNT
/// params.
extern "C" void strataAttentionGlobal(strata_rt_context_t* context,
                                      const int64_t* params);

/// strata_rt_attention_paged: strata_rt_attention_kv over a paged cache
/// (each row's positions in the blocks its table names); decodes
/// STRATA_ATTN_PAGED_PARAM_COUNT params.
extern "C" void strataAttentionPaged(strata_rt_context_t* context,
                                     const int64_t* params);

/// strata_rt_attention_append: strata_rt_attention_f32 over K and V each
/// the concatenation of a past and a new part, which it also writes out
/// (the present); decodes STRATA_ATTN_APPEND_PARAM_COUNT params.
extern "C" void strataAttentionAppend(strata_rt_context_t* context,
                                      const int64_t* params);

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_ATTENTION_F32_H_
