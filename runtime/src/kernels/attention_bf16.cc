//===- attention_bf16.cc - bf16 products of attention's prefill blocks ----===//
// SPDX-License-Identifier: Apache-2.0
// Built with AVX-512 F/BW and AVX512-BF16 flags (attention_bf16.h). The
// products are register tiles of 8 rows by 32 columns (16 accumulators),
// one vdpbf16ps a pair of k per row and 16 columns: the bf16 matmul's step.

#include "attention_bf16.h"

#include <immintrin.h>

#include <cstring>

#pragma GCC diagnostic ignored "-Wuninitialized"

namespace strata::runtime::kernels {
namespace {

constexpr int64_t kPanel = 32;
constexpr int64_t kPairRowBytes = kPanel * 2 * 2;  // 32 columns x 2 bf16
constexpr int64_t kTileRows = 8;

__mmask16 firstLanes(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n > 0 ? __mmask16((1u << n) - 1) : 0;
}

// 16 floats (the first |n| of src, the rest 0) to bf16, rounded as
// strata_f32_to_bf16 (vcvtneps2bf16).
__m256i bf16x16(const float* src, int64_t n) {
  return (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(firstLanes(n), src));
}

// C rows [0, 32) x 32 columns = A rows (bf16, |aStride| bytes apart,
// |pairs| pairs of k) times |pairs| pair rows of |b| (128 bytes each),
// stored to |c| (|ldc| floats a row).
void block32(const uint8_t* a, int64_t aStride, const uint8_t* b,
             int64_t pairs, float* c, int64_t ldc) {
  for (int64_t r0 = 0; r0 < 32; r0 += kTileRows) {
    __m512 acc[kTileRows][2];
    for (int i = 0; i < kTileRows; ++i)
      acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t q = 0; q < pairs; ++q) {
      const __m512bh b0 =
          (__m512bh)_mm512_loadu_si512(b + q * kPairRowBytes);
      const __m512bh b1 =
          (__m512bh)_mm512_loadu_si512(b + q * kPairRowBytes + 64);
#pragma GCC unroll 8
      for (int i = 0; i < kTileRows; ++i) {
        int32_t pair;
        std::memcpy(&pair, a + (r0 + i) * aStride + q * 4, 4);
        const __m512bh x = (__m512bh)_mm512_set1_epi32(pair);
        acc[i][0] = _mm512_dpbf16_ps(acc[i][0], x, b0);
        acc[i][1] = _mm512_dpbf16_ps(acc[i][1], x, b1);
      }
    }
    for (int i = 0; i < kTileRows; ++i) {
      _mm512_storeu_ps(c + (r0 + i) * ldc, acc[i][0]);
      _mm512_storeu_ps(c + (r0 + i) * ldc + 16, acc[i][1]);
    }
  }
}

}  // namespace

void packKeyPairs(const float* k, int64_t ss, int64_t sk, int64_t d,
                     uint16_t* out) {
  const int64_t dp = bf16RoundUp32(d), skp = bf16RoundUp32(sk);
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

void packValuePairs(const float* v, int64_t ss, int64_t sk, int64_t dv,
                       uint16_t* out) {
  const int64_t dvp = bf16RoundUp32(dv), skp = bf16RoundUp32(sk);
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

void convertRowsToBf16(const float* src, int64_t lds, int64_t rows, int64_t cols,
                    uint16_t* dst, int64_t ld) {
  const int64_t rowsPadded = bf16RoundUp32(rows);
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
}

void queryKeyProductsBf16(int64_t rows, int64_t dp, const uint16_t* q,
                          const uint16_t* keyPairs, int64_t p0, int64_t p1,
                          float* scores, int64_t ldS) {
  const uint8_t* a = reinterpret_cast<const uint8_t*>(q);
  const uint8_t* b = reinterpret_cast<const uint8_t*>(keyPairs);
  const int64_t panelBytes = dp / 2 * kPairRowBytes;
  for (int64_t r = 0; r < rows; r += 32)
    for (int64_t pk = p0; pk < p1; ++pk)
      block32(a + r * dp * 2, dp * 2, b + pk * panelBytes, dp / 2,
              scores + r * ldS + pk * kPanel, ldS);
}

void probValueProductsBf16(int64_t rows, int64_t keys, const uint16_t* probs,
                           int64_t ldP, const uint16_t* valuePairs,
                           int64_t skp, int64_t panel, float* out) {
  const uint8_t* a = reinterpret_cast<const uint8_t*>(probs);
  const uint8_t* b = reinterpret_cast<const uint8_t*>(valuePairs) +
                     panel * (skp / 2) * kPairRowBytes;
  for (int64_t r = 0; r < rows; r += 32)
    block32(a + r * ldP * 2, ldP * 2, b, keys / 2, out + r * kPanel, kPanel);
}

}  // namespace strata::runtime::kernels
