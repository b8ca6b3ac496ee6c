//===- matmul_w8a8_avx512vnni.cc - int8 x int8 register tiles (vpdpbusd) --===//
// SPDX-License-Identifier: Apache-2.0
// Built with AVX-512 F/BW/VNNI flags and called only where the CPU has them
// (matmul_w8a8.cc). A 12 x 32 tile: 24 zmm int32 accumulators; per quad of
// k, 2 loads of B (128 bytes) and per row one 32-bit broadcast of A and 2
// vpdpbusd, 768 multiply-adds in 24 instructions.

#include <immintrin.h>

#include <cmath>
#include <cstdint>

// GCC's AVX-512 headers pass _mm*_undefined_* values to builtins, which
// its -Wuninitialized flags once inlined (a known false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "matmul_w8a8_kernels.h"
#include "tile_rows.h"

namespace strata::runtime::kernels {
namespace {

constexpr int64_t kMr = 12;

template <int R>
void tileRows(int64_t quads, const uint8_t* a, const int8_t* b, int32_t* acc,
              bool loadAcc, const W8A8Epilogue* e) {
  __m512i sum[R][2];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h)
      sum[i][h] = loadAcc ? _mm512_loadu_si512(acc + i * 32 + h * 16)
                          : _mm512_setzero_si512();
  for (int64_t t = 0; t < quads; ++t) {
    const __m512i b0 = _mm512_loadu_si512(b + t * 128);
    const __m512i b1 = _mm512_loadu_si512(b + t * 128 + 64);
    const uint8_t* at = a + t * kMr * 4;
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      int32_t quad;
      __builtin_memcpy(&quad, at + i * 4, 4);
      const __m512i av = _mm512_set1_epi32(quad);
      sum[i][0] = _mm512_dpbusd_epi32(sum[i][0], av, b0);
      sum[i][1] = _mm512_dpbusd_epi32(sum[i][1], av, b1);
    }
  }
  if (!e) {
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h)
        _mm512_storeu_si512(acc + i * 32 + h * 16, sum[i][h]);
    return;
  }
  const __m512i corr[2] = {_mm512_loadu_si512(e->corrections),
                           _mm512_loadu_si512(e->corrections + 16)};
  const __m512 bs[2] = {_mm512_loadu_ps(e->bScale),
                        _mm512_loadu_ps(e->bScale + 16)};
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    const __m512 sa = _mm512_set1_ps(e->aScale[i]);
    float* c = e->c + i * e->ldc;
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m512 dot =
          _mm512_cvtepi32_ps(_mm512_sub_epi32(sum[i][h], corr[h]));
      const __m512 s = _mm512_mul_ps(sa, bs[h]);
      _mm512_storeu_ps(
          c + h * 16, e->loadC
                          ? _mm512_fmadd_ps(dot, s, _mm512_loadu_ps(c + h * 16))
                          : _mm512_mul_ps(dot, s));
    }
  }
}

void tile(int64_t rows, int64_t quads, const uint8_t* a, const int8_t* b,
          int32_t* acc, bool loadAcc, const W8A8Epilogue* e) {
  withTileRows<kMr>(rows, [&](auto r) {
    tileRows<decltype(r)::value>(quads, a, b, acc, loadAcc, e);
  });
}

void quantize(int64_t rows, int64_t k, int64_t kp, const float* a, int64_t am,
              int64_t ak, uint8_t* tile, float* scale) {
  quantizeW8A8RowsAvx512(W8A8ALayout::kQuads, kMr, rows, k, kp, a, am, ak,
                         tile, scale);
}

}  // namespace

// quantizeW8A8Rows, 16 elements at a time: the same fp32 operations in the
// same order (max is exact, so its order does not matter), so the same
// bytes and scales.
void quantizeW8A8RowsAvx512(W8A8ALayout layout, int64_t mr, int64_t rows,
                            int64_t k, int64_t kp, const float* a, int64_t am,
                            int64_t ak, uint8_t* tile, float* scale) {
  if (ak != 1) {
    quantizeW8A8Rows(layout, mr, rows, k, kp, a, am, ak, tile, scale);
    return;
  }
  const __m512 limit = _mm512_set1_ps(3.4e38f);
  const __m512 hi = _mm512_set1_ps(127.0f), lo = _mm512_set1_ps(-127.0f);
  const __m512 half = _mm512_set1_ps(0.5f), minusHalf = _mm512_set1_ps(-0.5f);
  const __m512i offset = _mm512_set1_epi32(128);
  for (int64_t i = 0; i < mr; ++i) {
    if (i >= rows) {
      for (int64_t t = 0; t < kp / 4; ++t)
        __builtin_memcpy(tile + w8a8QuadOffset(layout, mr, kp, i, t),
                         "\x80\x80\x80\x80", 4);
      scale[i] = 0.0f;
      continue;
    }
    const float* src = a + i * am;
    __m512 amax = _mm512_setzero_ps();
    __mmask16 bad = 0;
    for (int64_t kk = 0; kk < k; kk += 16) {
      const __mmask16 m =
          k - kk >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (k - kk)) - 1);
      const __m512 x = _mm512_abs_ps(_mm512_maskz_loadu_ps(m, src + kk));
      // max(x, amax) keeps amax where x is NaN, as `x > amax` does.
      amax = _mm512_max_ps(x, amax);
      bad |= _mm512_cmp_ps_mask(x, limit, _CMP_NLE_UQ);
    }
    const float maxAbs = _mm512_reduce_max_ps(amax);
    const __m512 inv = _mm512_set1_ps(maxAbs > 0.0f ? 127.0f / maxAbs : 0.0f);
    for (int64_t kk = 0; kk < kp; kk += 16) {
      const __mmask16 m = k - kk >= 16
                              ? __mmask16(0xFFFF)
                              : __mmask16(k > kk ? (1u << (k - kk)) - 1 : 0);
      __m512 y = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, src + kk), inv);
      const __mmask16 nan = _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q);
      y = _mm512_max_ps(_mm512_min_ps(y, hi), lo);
      y = _mm512_mask_mov_ps(y, nan, _mm512_setzero_ps());
      const __mmask16 nonNegative =
          _mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_GE_OQ);
      y = _mm512_add_ps(y, _mm512_mask_mov_ps(minusHalf, nonNegative, half));
      const __m128i bytes = _mm512_cvtepi32_epi8(
          _mm512_add_epi32(_mm512_cvttps_epi32(y), offset));
      // Four quads, each to its place in the tile (in rows, one block
      // holds all four: blocks are whole multiples of 16 k).
      const int64_t quads = (kp - kk) / 4 < 4 ? (kp - kk) / 4 : 4;
      alignas(16) uint8_t lanes[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(lanes), bytes);
      if (layout == W8A8ALayout::kRowBlocks) {
        __builtin_memcpy(tile + w8a8QuadOffset(layout, mr, kp, i, kk / 4),
                         lanes, quads * 4);
        continue;
      }
      for (int64_t q = 0; q < quads; ++q)
        __builtin_memcpy(tile + w8a8QuadOffset(layout, mr, kp, i, kk / 4 + q),
                         lanes + q * 4, 4);
    }
    scale[i] = bad ? INFINITY : maxAbs / 127.0f;
  }
}

void applyW8A8EpilogueAvx512(int64_t rows, const int32_t* sums,
                             const W8A8Epilogue& e) {
  const __m512i corr[2] = {_mm512_loadu_si512(e.corrections),
                           _mm512_loadu_si512(e.corrections + 16)};
  const __m512 bs[2] = {_mm512_loadu_ps(e.bScale),
                        _mm512_loadu_ps(e.bScale + 16)};
  for (int64_t i = 0; i < rows; ++i) {
    const __m512 sa = _mm512_set1_ps(e.aScale[i]);
    float* c = e.c + i * e.ldc;
    for (int h = 0; h < 2; ++h) {
      const __m512 dot = _mm512_cvtepi32_ps(_mm512_sub_epi32(
          _mm512_loadu_si512(sums + i * 32 + h * 16), corr[h]));
      const __m512 s = _mm512_mul_ps(sa, bs[h]);
      _mm512_storeu_ps(
          c + h * 16, e.loadC
                          ? _mm512_fmadd_ps(dot, s, _mm512_loadu_ps(c + h * 16))
                          : _mm512_mul_ps(dot, s));
    }
  }
}

void w8a8CorrectionsAvx512Vnni(int64_t panels, int64_t kp, const int8_t* b,
                               int32_t* out) {
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t p = 0; p < panels; ++p) {
    const int8_t* panel = b + p * kp * 32;
    __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
    for (int64_t t = 0; t < kp / 4; ++t) {
      s0 = _mm512_dpbusd_epi32(s0, ones, _mm512_loadu_si512(panel + t * 128));
      s1 = _mm512_dpbusd_epi32(s1, ones,
                               _mm512_loadu_si512(panel + t * 128 + 64));
    }
    _mm512_storeu_si512(out + p * 32, _mm512_slli_epi32(s0, 7));
    _mm512_storeu_si512(out + p * 32 + 16, _mm512_slli_epi32(s1, 7));
  }
}

const W8A8Kernels kW8A8Avx512Vnni = {
    "avx512vnni", kMr,     127,    tile, quantize, w8a8CorrectionsAvx512Vnni,
    nullptr,      nullptr};

}  // namespace strata::runtime::kernels
