//===- matmul_w8a8_avx2.cc - int8 register tiles with vpmaddubsw -------===//
// SPDX-License-Identifier: Apache-2.0
// Built with -mavx2 -mfma; for CPUs without VNNI (and forced by tests).
// vpmaddubsw multiplies unsigned by signed bytes and adds each pair in
// saturating int16. With A quantized to 8 bits and offset to unsigned (up
// to 255) the pair sums of products with weights up to 127 overflow, so
// this set quantizes A to 7 bits: qa in [-63, 63], stored as qa + 64 (1 to
// 127), whose pair sums (at most 2 * 127 * 127) are exact; vpmaddwd by
// ones adds the pairs of a column's quad into its int32 lane, and the
// epilogue takes 64 * the column sums of B back out, as the VNNI sets do
// with 128. One vpmaddubsw, vpmaddwd and vpaddd per 32 products: about
// twice the fp32 FMA rate (the exact 8-bit form, which applied A's sign to
// the weights first, measured 1.2x). Two A rows by the panel's 32
// columns a tile: 8 accumulators, the quad-row's 4 weight vectors reused
// by both rows.

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "matmul_w8a8_kernels.h"

namespace strata::runtime::kernels {
namespace {

#include "quantize_avx2.h"

constexpr int64_t kMr = 4;

constexpr int32_t kLevels = 63;

// R rows (A rows kMr apart in the quad layout) by 32 columns: column
// 8c + j's int32 sum in lane j of sum[i][c].
template <int R>
void rowsTile(int64_t quads, const uint8_t* a, const int8_t* b, int32_t* acc,
              bool loadAcc, const W8A8Epilogue* e, int64_t row0) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i sum[R][4];
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c)
      sum[i][c] = loadAcc ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                                acc + (row0 + i) * 32 + c * 8))
                          : _mm256_setzero_si256();
  for (int64_t t = 0; t < quads; ++t) {
    const int8_t* bt = b + t * 128;
    __m256i w[4];
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c)
      w[c] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bt + c * 32));
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) {
      int32_t quad;
      __builtin_memcpy(&quad, a + (t * kMr + row0 + i) * 4, 4);
      const __m256i qa = _mm256_set1_epi32(quad);  // qa + 64: 1 to 127
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c)
        sum[i][c] = _mm256_add_epi32(
            sum[i][c],
            _mm256_madd_epi16(_mm256_maddubs_epi16(qa, w[c]), ones));
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i) {
    if (!e) {
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c)
        _mm256_storeu_si256(
            reinterpret_cast<__m256i*>(acc + (row0 + i) * 32 + c * 8),
            sum[i][c]);
      continue;
    }
    const __m256 sa = _mm256_set1_ps(e->aScale[row0 + i]);
    float* out = e->c + (row0 + i) * e->ldc;
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const __m256i corrected = _mm256_sub_epi32(
          sum[i][c], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                         e->corrections + c * 8)));
      const __m256 dot = _mm256_cvtepi32_ps(corrected);
      const __m256 s = _mm256_mul_ps(sa, _mm256_loadu_ps(e->bScale + c * 8));
      float* o = out + c * 8;
      _mm256_storeu_ps(o, e->loadC ? _mm256_fmadd_ps(dot, s, _mm256_loadu_ps(o))
                                   : _mm256_mul_ps(dot, s));
    }
  }
}

void tile(int64_t rows, int64_t quads, const uint8_t* a, const int8_t* b,
          int32_t* acc, bool loadAcc, const W8A8Epilogue* e) {
  int64_t i = 0;
  for (; i + 2 <= rows; i += 2) rowsTile<2>(quads, a, b, acc, loadAcc, e, i);
  if (i < rows) rowsTile<1>(quads, a, b, acc, loadAcc, e, i);
}

// quantizeW8A8Rows to 63 levels, 8 elements at a time: the same fp32
// operations in the same order (max is exact, so its order does not
// matter), so the same bytes and scales. (The scalar loop was about 2.7 of
// 7.2 ms of a 512 x 768 x 768 product: strata-gemm-bench --w8a8
// --kernel-isa avx2.)
void quantize(int64_t rows, int64_t k, int64_t kp, const float* a, int64_t am,
              int64_t ak, uint8_t* tile, float* scale) {
  if (ak != 1) {
    quantizeW8A8Rows(W8A8ALayout::kQuads, kMr, rows, k, kp, a, am, ak, tile,
                     scale, kLevels);
    return;
  }
  const float levels = static_cast<float>(kLevels);
  const __m256i offset = _mm256_set1_epi32(kLevels + 1);
  for (int64_t i = 0; i < kMr; ++i) {
    uint8_t* row = tile + i * 4;
    if (i >= rows) {
      for (int64_t t = 0; t < kp / 4; ++t)
        __builtin_memset(row + t * kMr * 4, kLevels + 1, 4);
      scale[i] = 0.0f;
      continue;
    }
    const float* src = a + i * am;
    int bad = 0;
    const float maxAbs = Avx2Quantizer::absMax(src, k, &bad);
    const __m256 inv =
        _mm256_set1_ps(maxAbs > 0.0f ? levels / maxAbs : 0.0f);
    for (int64_t kk = 0; kk < kp; kk += 8) {
      // Lanes past K quantize to 0 and store the offset, as the padding.
      const __m256i v = _mm256_add_epi32(
          Avx2Quantizer::quantize(src + kk, k - kk, inv, levels), offset);
      // Bytes 0-3 of each 128-bit lane: elements 0-3, then 4-7.
      const __m256i words = _mm256_packs_epi32(v, v);
      const __m256i bytes = _mm256_packus_epi16(words, words);
      const int32_t q0 = _mm_cvtsi128_si32(_mm256_castsi256_si128(bytes));
      const int32_t q1 = _mm_cvtsi128_si32(_mm256_extracti128_si256(bytes, 1));
      __builtin_memcpy(row + (kk / 4) * kMr * 4, &q0, 4);
      if (kk + 4 < kp) __builtin_memcpy(row + (kk / 4 + 1) * kMr * 4, &q1, 4);
    }
    scale[i] = bad ? INFINITY : maxAbs / levels;
  }
}

// w8a8Corrections with an offset of 64, a quad-row (4 k of 32 columns) a
// step: vpmaddubsw by ones sums each column's pairs, vpmaddwd its quad.
void corrections(int64_t panels, int64_t kp, const int8_t* b,
                 int32_t* out) {
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  for (int64_t p = 0; p < panels; ++p) {
    const int8_t* panel = b + p * kp * 32;
    __m256i sum[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                      _mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int64_t t = 0; t < kp / 4; ++t)
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        const __m256i w = _mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(panel + t * 128 + c * 32));
        sum[c] = _mm256_add_epi32(
            sum[c],
            _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, w), ones16));
      }
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c)
      _mm256_storeu_si256(
          reinterpret_cast<__m256i*>(out + p * 32 + c * 8),
          _mm256_mullo_epi32(sum[c], _mm256_set1_epi32(kLevels + 1)));
  }
}

}  // namespace

const W8A8Kernels kW8A8Avx2 = {"avx2",      kMr,     kLevels, tile, quantize,
                               corrections, nullptr, nullptr};

}  // namespace strata::runtime::kernels
