//===- matmul_bf16_avx2.cc - bf16 register tiles widened to fp32 FMAs -----===//
// SPDX-License-Identifier: Apache-2.0
// Built with -mavx2 -mfma; for CPUs without AVX512-BF16 (and forced by
// tests). B's bf16 pairs are widened in registers (a shift for the even k,
// a mask for the odd one), A's were widened once by the conversion, and
// each pair is two FMAs into the same accumulator, odd k first: the
// products are exact, so the sums are the reference's bit for bit.

#include <immintrin.h>

#include <cstdint>

#include "matmul_bf16_kernels.h"
#include "tile_rows.h"

namespace strata::runtime::kernels {
namespace {

constexpr int64_t kMr = 4;
constexpr int64_t kRow = kBf16Kc;  // floats between the rows of a block

// Columns 16h..16h+15 of R rows: 2 ymm accumulators per row, 8 columns
// each; per pair of k 2 loads of B widened to 4 ymm, per row 2 broadcasts.
template <int R>
void halfRows(int64_t h, int64_t pairs, const float* a, const uint16_t* b,
              float* c, int64_t ldc, bool loadC) {
  const __m256i oddMask = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
  __m256 sum[R][2];
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
    for (int q = 0; q < 2; ++q)
      sum[i][q] = loadC ? _mm256_loadu_ps(c + i * ldc + h * 16 + q * 8)
                        : _mm256_setzero_ps();
  for (int64_t t = 0; t < pairs; ++t) {
    const uint16_t* bt = b + t * 64 + h * 32;
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bt));
    const __m256i x1 =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bt + 16));
    const __m256 even0 = _mm256_castsi256_ps(_mm256_slli_epi32(x0, 16));
    const __m256 odd0 = _mm256_castsi256_ps(_mm256_and_si256(x0, oddMask));
    const __m256 even1 = _mm256_castsi256_ps(_mm256_slli_epi32(x1, 16));
    const __m256 odd1 = _mm256_castsi256_ps(_mm256_and_si256(x1, oddMask));
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) {
      const __m256 ae = _mm256_broadcast_ss(a + i * kRow + 2 * t);
      const __m256 ao = _mm256_broadcast_ss(a + i * kRow + 2 * t + 1);
      sum[i][0] = _mm256_fmadd_ps(ao, odd0, sum[i][0]);
      sum[i][1] = _mm256_fmadd_ps(ao, odd1, sum[i][1]);
      sum[i][0] = _mm256_fmadd_ps(ae, even0, sum[i][0]);
      sum[i][1] = _mm256_fmadd_ps(ae, even1, sum[i][1]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
    for (int q = 0; q < 2; ++q)
      _mm256_storeu_ps(c + i * ldc + h * 16 + q * 8, sum[i][q]);
}

void tile(int64_t rows, int64_t pairs, const void* aTile, const uint16_t* b,
          float* c, int64_t ldc, bool loadC, const uint8_t* /*prefetch*/,
          int64_t /*prefetchBytes*/) {
  const float* a = static_cast<const float*>(aTile);
  for (int64_t h = 0; h < 2; ++h) {
    withTileRows<4>(rows, [&](auto r) {
      halfRows<decltype(r)::value>(h, pairs, a, b, c, ldc, loadC);
    });
  }
}

// strata_f32_to_bf16 on 8 lanes, widened back to fp32 bits.
__m256i roundToBf16(__m256i u) {
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
  const __m256i absolute = _mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i nan =
      _mm256_cmpgt_epi32(absolute, _mm256_set1_epi32(0x7F800000));
  // Exponent 0: zero or denormal, to a zero of its sign.
  const __m256i tiny =
      _mm256_cmpeq_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7F800000)),
                         _mm256_setzero_si256());
  const __m256i lsb =
      _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb));
  __m256i r = _mm256_and_si256(rounded, high);
  r = _mm256_blendv_epi8(
      r,
      _mm256_and_si256(_mm256_or_si256(u, _mm256_set1_epi32(0x400000)), high),
      nan);
  return _mm256_blendv_epi8(
      r, _mm256_and_si256(u, _mm256_set1_epi32(static_cast<int>(0x80000000u))),
      tiny);
}

// convertBf16Widened, 8 elements at a time (the same bits).
void convert(int64_t rows, int64_t k, int64_t kp, const float* a, int64_t am,
             int64_t ak, void* tileOut) {
  float* tile = static_cast<float*>(tileOut);
  if (ak != 1) {
    convertBf16Widened(kMr, kBf16Kc, rows, k, kp, a, am, ak, tile);
    return;
  }
  for (int64_t i = 0; i < kMr; ++i)
    for (int64_t kk = 0; kk < kp; kk += 8) {
      float* out =
          tile + (kk / kBf16Kc) * kMr * kBf16Kc + i * kBf16Kc + kk % kBf16Kc;
      __m256i u = _mm256_setzero_si256();
      if (i < rows && kk + 8 <= k) {
        u = roundToBf16(_mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(a + i * am + kk)));
      } else if (i < rows) {
        // The tail: k past K holds 0.
        alignas(32) float part[8] = {};
        for (int64_t j = 0; kk + j < k && j < 8; ++j)
          part[j] = a[i * am + kk + j];
        u = roundToBf16(_mm256_load_si256(reinterpret_cast<__m256i*>(part)));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), u);
    }
}

}  // namespace

const Bf16Kernels kBf16Avx2 = {
    "avx2",  kMr,   Bf16AFormat::kWidened, tile,   convert, kBf16Kc,
    kBf16Kc, false, nullptr,               nullptr};

}  // namespace strata::runtime::kernels
