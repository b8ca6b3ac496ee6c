//===- matmul_w8a8_avx2.cc - int8 x int8 register tiles with vpmaddwd -----===//
// SPDX-License-Identifier: Apache-2.0
// Built with -mavx2 -mfma; for CPUs without VNNI (and forced by tests). B's
// bytes are sign-extended and A's zero-extended to int16 and multiplied in
// pairs by vpmaddwd into int32: exact. (vpmaddubsw would save the widening
// but sums two u8 x s8 products in saturating int16: 2 * 255 * 127 does
// not fit.) Each column's quad lands in two int32 lanes, added at the end.

#include <immintrin.h>

#include <cstdint>

#include "matmul_w8a8_kernels.h"
#include "tile_rows.h"

namespace strata::runtime::kernels {
namespace {

constexpr int64_t kMr = 4;

// Columns 8c..8c+7 of R rows: 2 ymm per row, column j's two halves of its
// quad in lanes 2(j % 4) and 2(j % 4) + 1 of register j / 4.
template <int R>
void chunkRows(int64_t c, int64_t quads, const uint8_t* a, const int8_t* b,
               int32_t* acc, bool loadAcc, const W8A8Epilogue* e) {
  // Zero-extends the broadcast quad's 4 bytes to int16 (a0 a1 a2 a3) x 4.
  const __m256i widen =
      _mm256_setr_epi8(0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1, 3, -1,
                       0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1, 3, -1);
  __m256i sum[R][2];
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h)
      // Whole sums go back into the first lane of each pair.
      sum[i][h] = loadAcc ? _mm256_cvtepu32_epi64(_mm_loadu_si128(
                                reinterpret_cast<const __m128i*>(
                                    acc + i * 32 + c * 8 + h * 4)))
                          : _mm256_setzero_si256();
  for (int64_t t = 0; t < quads; ++t) {
    const int8_t* bt = b + t * 128 + c * 32;
    const __m256i b0 = _mm256_cvtepi8_epi16(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(bt)));
    const __m256i b1 = _mm256_cvtepi8_epi16(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(bt + 16)));
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) {
      int32_t quad;
      __builtin_memcpy(&quad, a + (t * kMr + i) * 4, 4);
      const __m256i av = _mm256_shuffle_epi8(_mm256_set1_epi32(quad), widen);
      sum[i][0] = _mm256_add_epi32(sum[i][0], _mm256_madd_epi16(b0, av));
      sum[i][1] = _mm256_add_epi32(sum[i][1], _mm256_madd_epi16(b1, av));
    }
  }
  __m256i corr = _mm256_setzero_si256();
  __m256 bs = _mm256_setzero_ps();
  if (e) {
    corr = _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(e->corrections + c * 8));
    bs = _mm256_loadu_ps(e->bScale + c * 8);
  }
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i) {
    // Pair sums in column order: hadd gives (0 1 4 5 | 2 3 6 7).
    const __m256i whole = _mm256_permute4x64_epi64(
        _mm256_hadd_epi32(sum[i][0], sum[i][1]), _MM_SHUFFLE(3, 1, 2, 0));
    if (!e) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + i * 32 + c * 8),
                          whole);
      continue;
    }
    const __m256 dot = _mm256_cvtepi32_ps(_mm256_sub_epi32(whole, corr));
    const __m256 s = _mm256_mul_ps(_mm256_set1_ps(e->aScale[i]), bs);
    float* out = e->c + i * e->ldc + c * 8;
    _mm256_storeu_ps(out, e->loadC
                              ? _mm256_fmadd_ps(dot, s, _mm256_loadu_ps(out))
                              : _mm256_mul_ps(dot, s));
  }
}

void tile(int64_t rows, int64_t quads, const uint8_t* a, const int8_t* b,
          int32_t* acc, bool loadAcc, const W8A8Epilogue* e) {
  for (int64_t c = 0; c < 4; ++c) {
    withTileRows<4>(rows, [&](auto r) {
      chunkRows<decltype(r)::value>(c, quads, a, b, acc, loadAcc, e);
    });
  }
}

// The quantization is O(M*K) next to the product's O(M*K*N): the
// reference loop serves.
void quantize(int64_t rows, int64_t k, int64_t kp, const float* a, int64_t am,
              int64_t ak, uint8_t* tile, float* scale) {
  quantizeW8A8Rows(W8A8ALayout::kQuads, kMr, rows, k, kp, a, am, ak, tile,
                   scale);
}

void corrections(int64_t panels, int64_t kp, const int8_t* b, int32_t* out) {
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t p = 0; p < panels; ++p) {
    const int8_t* panel = b + p * kp * 32;
    for (int64_t c = 0; c < 4; ++c) {
      __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
      for (int64_t t = 0; t < kp / 4; ++t) {
        const int8_t* bt = panel + t * 128 + c * 32;
        s0 = _mm256_add_epi32(
            s0, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(
                                      reinterpret_cast<const __m128i*>(bt))),
                                  ones));
        s1 = _mm256_add_epi32(
            s1,
            _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(
                                  reinterpret_cast<const __m128i*>(bt + 16))),
                              ones));
      }
      const __m256i whole = _mm256_permute4x64_epi64(_mm256_hadd_epi32(s0, s1),
                                                     _MM_SHUFFLE(3, 1, 2, 0));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + p * 32 + c * 8),
                          _mm256_slli_epi32(whole, 7));
    }
  }
}

}  // namespace

const W8A8Kernels kW8A8Avx2 = {"avx2",      kMr,     tile,   quantize,
                               corrections, nullptr, nullptr};

}  // namespace strata::runtime::kernels
