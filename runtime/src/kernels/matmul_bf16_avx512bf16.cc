//===- matmul_bf16_avx512bf16.cc - bf16 register tiles (vdpbf16ps) --------===//
// SPDX-License-Identifier: Apache-2.0
// Built with AVX-512 F/BW/BF16 flags and called only where the CPU has them
// (matmul_bf16.cc). A 14 x 32 tile: 28 zmm fp32 accumulators; per pair of
// k, 2 loads of B (128 bytes) and per row one 32-bit broadcast of A's pair
// (at a fixed offset: the rows of an A block are kBf16Kc apart) and 2
// vdpbf16ps, 896 multiply-adds in 28 instructions.

#include <immintrin.h>

#include <cstdint>

// GCC's AVX-512 headers pass _mm*_undefined_* values to builtins, which
// its -Wuninitialized flags once inlined (a known false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "matmul_bf16_kernels.h"
#include "tile_rows.h"

namespace strata::runtime::kernels {
namespace {

constexpr int64_t kMr = 14;
constexpr int64_t kRowPairs = kBf16Kc / 2;  // between the rows of a block

template <int R>
void tileRows(int64_t pairs, const uint32_t* a, const uint16_t* b, float* c,
              int64_t ldc, bool loadC) {
  __m512 sum[R][2];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h)
      sum[i][h] =
          loadC ? _mm512_loadu_ps(c + i * ldc + h * 16) : _mm512_setzero_ps();
  for (int64_t t = 0; t < pairs; ++t) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + t * 64);
    const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + t * 64 + 32);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(a[i * kRowPairs + t]);
      sum[i][0] = _mm512_dpbf16_ps(sum[i][0], av, b0);
      sum[i][1] = _mm512_dpbf16_ps(sum[i][1], av, b1);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h)
      _mm512_storeu_ps(c + i * ldc + h * 16, sum[i][h]);
}

void tile(int64_t rows, int64_t pairs, const void* aTile, const uint16_t* b,
          float* c, int64_t ldc, bool loadC, const uint8_t* /*prefetch*/,
          int64_t /*prefetchBytes*/) {
  const uint32_t* a = static_cast<const uint32_t*>(aTile);
  withTileRows<kMr>(rows, [&](auto r) {
    tileRows<decltype(r)::value>(pairs, a, b, c, ldc, loadC);
  });
}

void convert(int64_t rows, int64_t k, int64_t kp, const float* a, int64_t am,
             int64_t ak, void* tileOut) {
  convertBf16PairsAvx512(kMr, kBf16Kc, rows, k, kp, a, am, ak,
                         static_cast<uint16_t*>(tileOut));
}

}  // namespace

// convertBf16Pairs, 32 elements at a time: vcvtne2ps2bf16 rounds as
// strata_f32_to_bf16 does (nearest even, quiet NaNs, denormals to zero).
void convertBf16PairsAvx512(int64_t mr, int64_t kBlock, int64_t rows,
                            int64_t k, int64_t kp, const float* a, int64_t am,
                            int64_t ak, uint16_t* tile16) {
  if (ak != 1) {
    convertBf16Pairs(mr, kBlock, rows, k, kp, a, am, ak, tile16);
    return;
  }
  auto mask = [&](int64_t from) {
    return k - from >= 16 ? __mmask16(0xFFFF)
           : k > from     ? __mmask16((1u << (k - from)) - 1)
                          : __mmask16(0);
  };
  // 32 k (16 pairs) per store; blocks are whole multiples of 32, so the
  // stores past Kp stay inside the last block's row.
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t kk = 0; kk < kp; kk += 32) {
      uint16_t* out =
          tile16 + (kk / kBlock) * mr * kBlock + i * kBlock + kk % kBlock;
      if (i >= rows) {
        _mm512_storeu_si512(out, _mm512_setzero_si512());
        continue;
      }
      const float* src = a + i * am + kk;
      const __m512 lo = _mm512_maskz_loadu_ps(mask(kk), src);
      const __m512 hi = _mm512_maskz_loadu_ps(mask(kk + 16), src + 16);
      _mm512_storeu_si512(out, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    }
}

const Bf16Kernels kBf16Avx512Bf16 = {
    "avx512bf16", kMr,   Bf16AFormat::kPairs, tile,    convert, kBf16Kc,
    kBf16Kc,      false, nullptr,             nullptr};

}  // namespace strata::runtime::kernels
