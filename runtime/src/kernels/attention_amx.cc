//===- attention_amx.cc - Attention products of prefill blocks on AMX -----===//
// SPDX-License-Identifier: Apache-2.0
// Built with AMX and AVX-512 flags; called only where AMX tiles may be used
// (attention_amx.h). Both products use the matmul's 32 x 32 block
// (amx_block.h), one step a 32 bf16 k; the packing is attention_bf16.cc's.

#include "attention_amx.h"

#include <immintrin.h>

#include <cstring>

#pragma GCC diagnostic ignored "-Wuninitialized"

#include "amx.h"
#include "amx_block.h"

namespace strata::runtime::kernels {
namespace {

constexpr int64_t kPanel = 32;
constexpr int64_t kPairRowBytes = kAmxPanelRowBytes;  // 32 columns x 2 bf16

// A 32 x 32 block of C: rows [r, r + 32) of A (|a|, |aStride| bytes per
// row) times 32 columns of pair rows (|b|, 128 bytes per pair row), |steps|
// steps of 32 k; stored to |c| (|ldc| floats per row).
void block32(const uint8_t* a, int64_t aStride, const uint8_t* b,
             int64_t steps, float* c, int64_t ldc) {
  amxZeroBlock<true>();
  for (int64_t s = 0; s < steps; ++s)
    amxStep<AmxProduct::kBf16, true>(a + s * 64, aStride,
                                     b + s * 16 * kAmxPanelRowBytes);
  amxStoreBlock<true>(c, ldc * 4);
  amxMemoryFence(c);
}

}  // namespace

void queryKeyTilesAmx(int64_t rows, int64_t dp, const uint16_t* q,
                      const uint16_t* keyPairs, int64_t p0, int64_t p1,
                      float* scores, int64_t ldS) {
  amxMemoryFence(q);
  amxMemoryFence(keyPairs);
  const uint8_t* a = reinterpret_cast<const uint8_t*>(q);
  const uint8_t* b = reinterpret_cast<const uint8_t*>(keyPairs);
  const int64_t panelBytes = dp / 2 * kPairRowBytes;
  for (int64_t r = 0; r < rows; r += 32)
    for (int64_t pk = p0; pk < p1; ++pk)
      block32(a + r * dp * 2, dp * 2, b + pk * panelBytes, dp / 32,
              scores + r * ldS + pk * kPanel, ldS);
}

void probValueTilesAmx(int64_t rows, int64_t keys, const uint16_t* probs,
                       int64_t ldP, const uint16_t* valuePairs, int64_t skp,
                       int64_t panel, float* out) {
  amxMemoryFence(probs);
  amxMemoryFence(valuePairs);
  const uint8_t* a = reinterpret_cast<const uint8_t*>(probs);
  const uint8_t* b = reinterpret_cast<const uint8_t*>(valuePairs) +
                     panel * (skp / 2) * kPairRowBytes;
  for (int64_t r = 0; r < rows; r += 32)
    block32(a + r * ldP * 2, ldP * 2, b, keys / 32, out + r * kPanel, kPanel);
}

}  // namespace strata::runtime::kernels
