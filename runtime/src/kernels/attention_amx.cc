//===- attention_amx.cc - Attention products of prefill blocks on AMX -----===//
// SPDX-License-Identifier: Apache-2.0
// Built with AMX and AVX-512 flags; called only where AMX tiles may be used
// (attention_amx.h). Both products use the matmul's 32 x 32 block
// (amx_block.h), one step a 32 bf16 k.

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

__mmask16 firstLanes(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n > 0 ? __mmask16((1u << n) - 1) : 0;
}

// 16 floats (the first |n| of src, the rest 0) to bf16, rounded as
// strata_f32_to_bf16 (vcvtneps2bf16).
__m256i bf16x16(const float* src, int64_t n) {
  return (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(firstLanes(n), src));
}

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

void packKeyPairsAmx(const float* k, int64_t ss, int64_t sk, int64_t d,
                     uint16_t* out) {
  const int64_t dp = amxRoundUp32(d), skp = amxRoundUp32(sk);
  uint32_t* pairs = reinterpret_cast<uint32_t*>(out);
  const int64_t panelPairs = dp / 2 * kPanel;  // uint32 of one key panel
  // Pair p of key j lands at (j / 32) * panelPairs + p * 32 + j % 32: 16
  // pairs of a key at once, 32 apart.
  const __m512i stride = _mm512_mullo_epi32(
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
      _mm512_set1_epi32(kPanel));
  for (int64_t j = 0; j < skp; ++j) {
    uint32_t* base = pairs + (j / kPanel) * panelPairs + j % kPanel;
    for (int64_t e = 0; e < dp; e += 32) {
      __m512i v = _mm512_setzero_si512();
      if (j < sk) {
        const float* row = k + j * ss + e;
        v = (__m512i)_mm512_cvtne2ps_pbh(
            _mm512_maskz_loadu_ps(firstLanes(d - e - 16), row + 16),
            _mm512_maskz_loadu_ps(firstLanes(d - e), row));
      }
      _mm512_i32scatter_epi32(base + (e / 2) * kPanel, stride, v, 4);
    }
  }
}

void packValuePairsAmx(const float* v, int64_t ss, int64_t sk, int64_t dv,
                       uint16_t* out) {
  const int64_t dvp = amxRoundUp32(dv), skp = amxRoundUp32(sk);
  uint32_t* pairs = reinterpret_cast<uint32_t*>(out);
  const int64_t panelPairs = skp / 2 * kPanel;  // uint32 of one column panel
  for (int64_t q = 0; q < skp / 2; ++q) {
    const int64_t j = 2 * q;
    for (int64_t c = 0; c < dvp; c += 16) {
      const int64_t n = dv - c;
      // Keys 2q and 2q + 1 of columns [c, c + 16): one pair a lane.
      const __m256i even = j < sk ? bf16x16(v + j * ss + c, n)
                                  : _mm256_setzero_si256();
      const __m256i odd = j + 1 < sk ? bf16x16(v + (j + 1) * ss + c, n)
                                     : _mm256_setzero_si256();
      const __m512i lanes =
          _mm512_or_si512(_mm512_cvtepu16_epi32(even),
                          _mm512_slli_epi32(_mm512_cvtepu16_epi32(odd), 16));
      _mm512_storeu_si512(
          pairs + (c / kPanel) * panelPairs + q * kPanel + c % kPanel, lanes);
    }
  }
}

void convertRowsAmx(const float* src, int64_t lds, int64_t rows, int64_t cols,
                    uint16_t* dst, int64_t ld) {
  const int64_t rowsPadded = amxRoundUp32(rows);
  for (int64_t i = 0; i < rowsPadded; ++i) {
    uint16_t* out = dst + i * ld;
    for (int64_t c = 0; c < ld; c += 32) {
      __m512i v = _mm512_setzero_si512();
      if (i < rows && c < cols) {
        const float* row = src + i * lds + c;
        v = (__m512i)_mm512_cvtne2ps_pbh(
            _mm512_maskz_loadu_ps(firstLanes(cols - c - 16), row + 16),
            _mm512_maskz_loadu_ps(firstLanes(cols - c), row));
      }
      _mm512_storeu_si512(out + c, v);
    }
  }
  amxMemoryFence(dst);
}

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
