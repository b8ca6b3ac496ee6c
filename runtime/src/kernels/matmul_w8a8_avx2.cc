//===- matmul_w8a8_avx2.cc - int8 x int8 register tiles with vpmaddubsw ---===//
// SPDX-License-Identifier: Apache-2.0
// Built with -mavx2 -mfma; for CPUs without VNNI (and forced by tests).
// vpmaddubsw multiplies unsigned by signed bytes and adds each pair in
// saturating int16, where A's offset bytes (qa + 128, up to 255) times
// weights up to 127 would overflow. So the products are taken signed:
// |qa| (at most 127) times the weight with qa's sign (vpsignb), whose pair
// sums (at most 2 * 127 * 127) fit in int16 exactly; vpmaddwd by ones then
// adds the pairs of a column's quad into its int32 lane. The sums are
// sum qa * qb itself, so this set needs no column corrections, and they
// equal the other sets' (sum (qa + 128) * qb minus the corrections): the
// outputs agree bit for bit. (The A tiles of this set hold qa, not
// qa + 128.) Two A rows by the panel's 32 columns a tile:
// 8 accumulators, the quad-row's 4 weight vectors reused by both rows.

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "matmul_w8a8_kernels.h"

namespace strata::runtime::kernels {
namespace {

#include "quantize_avx2.h"

constexpr int64_t kMr = 4;

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
      // qa (this set's tiles hold it signed), then its magnitude (qa is
      // never -128).
      const __m256i qa = _mm256_set1_epi32(quad);
      const __m256i magnitude = _mm256_abs_epi8(qa);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c)
        sum[i][c] = _mm256_add_epi32(
            sum[i][c],
            _mm256_madd_epi16(
                _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(w[c], qa)),
                ones));
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
      const __m256 dot = _mm256_cvtepi32_ps(sum[i][c]);
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

// quantizeW8A8Rows, 8 elements at a time: the same fp32 operations in the
// same order (max is exact, so its order does not matter), so the same qa
// and scales; but the tile holds qa itself, not qa + 128 (the products
// are signed). (The scalar loop was about 2.7 of 7.2 ms of a
// 512 x 768 x 768 product: strata-gemm-bench --w8a8 --kernel-isa avx2.)
void quantize(int64_t rows, int64_t k, int64_t kp, const float* a, int64_t am,
              int64_t ak, uint8_t* tile, float* scale) {
  if (ak != 1) {
    quantizeW8A8Rows(W8A8ALayout::kQuads, kMr, rows, k, kp, a, am, ak, tile,
                     scale);
    for (int64_t i = 0; i < kMr * kp; ++i) tile[i] ^= 0x80;
    return;
  }
  for (int64_t i = 0; i < kMr; ++i) {
    uint8_t* row = tile + i * 4;
    if (i >= rows) {
      for (int64_t t = 0; t < kp / 4; ++t)
        __builtin_memset(row + t * kMr * 4, 0, 4);
      scale[i] = 0.0f;
      continue;
    }
    const float* src = a + i * am;
    int bad = 0;
    const float maxAbs = Avx2Quantizer::absMax(src, k, &bad);
    const __m256 inv =
        _mm256_set1_ps(maxAbs > 0.0f ? 127.0f / maxAbs : 0.0f);
    for (int64_t kk = 0; kk < kp; kk += 8) {
      const __m256i v = Avx2Quantizer::quantize(src + kk, k - kk, inv);
      // Bytes 0-3 of each 128-bit lane: elements 0-3, then 4-7.
      const __m256i words = _mm256_packs_epi32(v, v);
      const __m256i bytes = _mm256_packs_epi16(words, words);
      const int32_t q0 = _mm_cvtsi128_si32(_mm256_castsi256_si128(bytes));
      const int32_t q1 = _mm_cvtsi128_si32(_mm256_extracti128_si256(bytes, 1));
      __builtin_memcpy(row + (kk / 4) * kMr * 4, &q0, 4);
      if (kk + 4 < kp) __builtin_memcpy(row + (kk / 4 + 1) * kMr * 4, &q1, 4);
    }
    scale[i] = bad ? INFINITY : maxAbs / 127.0f;
  }
}

}  // namespace

// No corrections: the tiles' sums are signed (above).
const W8A8Kernels kW8A8Avx2 = {"avx2",  kMr,     tile,   quantize,
                               nullptr, nullptr, nullptr};

}  // namespace strata::runtime::kernels
