//===- attention_amx.h - Attention products of prefill blocks on AMX ------===//
// SPDX-License-Identifier: Apache-2.0
// attention_bf16.h's two products on AMX bf16 tiles (the same operands and
// layouts). Defined in attention_amx.cc, built with AMX and AVX-512 flags:
// call only where matmulIsa() is kAmx, between configureAmxTiles and
// releaseAmxTiles.

#ifndef STRATA_RUNTIME_SRC_KERNELS_ATTENTION_AMX_H_
#define STRATA_RUNTIME_SRC_KERNELS_ATTENTION_AMX_H_

#include <cstdint>

namespace strata::runtime::kernels {

/// queryKeyProductsBf16 on AMX tiles.
void queryKeyTilesAmx(int64_t rows, int64_t dp, const uint16_t* q,
                      const uint16_t* keyPairs, int64_t p0, int64_t p1,
                      float* scores, int64_t ldS);

/// probValueProductsBf16 on AMX tiles.
void probValueTilesAmx(int64_t rows, int64_t keys, const uint16_t* probs,
                       int64_t ldP, const uint16_t* valuePairs, int64_t skp,
                       int64_t panel, float* out);

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_ATTENTION_AMX_H_
