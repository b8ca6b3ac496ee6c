//===- matmul_i4_avx512vnni.cc - int4 x int8 products with vpdpbusd -------===//
// SPDX-License-Identifier: Apache-2.0
// Built with AVX-512 F/BW/VNNI flags and called only where the CPU has
// them (matmul_f32.cc). A 64-byte quad of a PANEL_I4_GROUPS panel holds
// columns 0-15 in its low nibbles and 16-31 in its high ones (four k rows
// per 32-bit lane); each is multiplied by the row's four int8 activations
// broadcast to every lane: 128 products in two instructions. The products
// are taken of the whole byte (lo + 16 hi) and of the byte masked to its
// high nibble (16 hi): the low columns' sum is their difference and the
// high columns' a shift, exact in int32, one mask per quad instead of a
// mask, a shift and a mask.

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#pragma GCC diagnostic ignored "-Wuninitialized"

#include "matmul_f32_tiles.h"
#include "vnni_rows.h"
#include "weight_prefetch.h"

namespace strata::runtime::kernels {
namespace {

// acc[0] = sum of a * (lo + 16 hi), acc[1] = sum of a * 16 hi (the products
// of whole bytes and of high nibbles) -> the low and the high columns' sums.
// Both are exact: |acc| <= 255 * 127 * group < 2^31 for group <=
// kMaxInt4GemvGroup.
inline void splitNibbleSums(__m512i acc[2]) {
  acc[0] = _mm512_sub_epi32(acc[0], acc[1]);
  acc[1] = _mm512_srai_epi32(acc[1], 4);
}

// Columns 16h .. 16h + 15 of a group's 32 scales.
template <bool F16>
inline __m512 loadScales(const uint8_t* scales, int h) {
  if constexpr (F16)
    return _mm512_cvtph_ps(_mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(scales + h * 32)));
  else
    return _mm512_loadu_ps(reinterpret_cast<const float*>(scales) + h * 16);
}

// R rows (R <= 4) against panel p: each quad's nibbles are unpacked once
// and multiplied by every row's activations, so a decode batch costs one
// unpack per weight byte, not one per row.
template <int R, bool F16, bool Prefetch>
void rowsPanel(const Int4Panels& w, int64_t p, const int8_t* aq,
               int64_t ldaq, const float* aScale, const int32_t* aSum,
               float* c, int64_t ldc, bool loadC) {
  const __m512i highNibbles = _mm512_set1_epi8(char(0xF0));
  const int64_t groups = w.kp / w.group, quadsPerGroup = w.group / 4;
  __m512 total[R][2];
  vnni::loadTotals<R>(total, c, ldc, loadC);
  for (int64_t g = 0; g < groups; ++g) {
    __m512i acc[R][2];
    vnni::zeroSums<R>(acc);
    const uint8_t* quads = w.quads(p, g);
    const int8_t* aGroup = aq + g * w.group;
    // fp16 scales follow a group's quads: one more line.
    if (F16)
      prefetchWeightLine<Prefetch, WeightLineHint::kStream>(
          quads + quadsPerGroup * 64);
    for (int64_t t = 0; t < quadsPerGroup; ++t) {
      const uint8_t* q = quads + t * 64;
      prefetchWeightLine<Prefetch, WeightLineHint::kStream>(q);
      const __m512i wq = _mm512_loadu_si512(q);
      const __m512i hi = _mm512_and_si512(wq, highNibbles);
      vnni::dotQuadRows<R>(acc, wq, hi, aGroup + t * 4, ldaq);
    }
    const uint8_t* scales = w.scales(p, g);
    for (int r = 0; r < R; ++r) {
      splitNibbleSums(acc[r]);
      const __m512 correction =
          _mm512_set1_ps(8.0f * float(aSum[r * groups + g]));
      const __m512 sa = _mm512_set1_ps(aScale[r * groups + g]);
      for (int h = 0; h < 2; ++h) {
        const __m512 dot =
            _mm512_sub_ps(_mm512_cvtepi32_ps(acc[r][h]), correction);
        const __m512 scale = _mm512_mul_ps(loadScales<F16>(scales, h), sa);
        total[r][h] = _mm512_fmadd_ps(dot, scale, total[r][h]);
      }
    }
  }
  vnni::storeTotals<R>(total, c, ldc);
}

template <bool F16, bool Prefetch>
void gemvI4Scales(int64_t rows, int64_t panels, const int8_t* aq,
                  int64_t ldaq, const float* aScale, const int32_t* aSum,
                  const Int4Panels& w, float* c, int64_t ldc, bool loadC) {
  const int64_t groups = w.kp / w.group;
  // Panels outer, rows in blocks of four inner: a panel is read from
  // memory once and from L1 for the other rows, and the weights are one
  // sequential stream (consecutive panels are adjacent; with fp16 scales
  // inside the panels, the scales too). Several panels at once start a
  // new short stream every panel; on AMD EPYC (AVX-512, weights beyond
  // the L3) that read 1.3-1.6x slower. The first row block prefetches
  // the stream (weight_prefetch.h).
  for (int64_t p = 0; p < panels; ++p)
    vnni::forRowBlocks(rows, [&](int64_t i, auto r) {
      constexpr int R = decltype(r)::value;
      (i == 0 ? rowsPanel<R, F16, Prefetch> : rowsPanel<R, F16, false>)(
          w, p, aq + i * ldaq, ldaq, aScale + i * groups, aSum + i * groups,
          c + i * ldc + p * 32, ldc, loadC);
    });
}

void gemvI4(int64_t rows, int64_t panels, const int8_t* aq, int64_t ldaq,
            const float* aScale, const int32_t* aSum, const Int4Panels& w,
            float* c, int64_t ldc, bool loadC) {
  const bool prefetch = weightPrefetchPays();
  (w.f16Scales ? (prefetch ? gemvI4Scales<true, true>
                           : gemvI4Scales<true, false>)
               : (prefetch ? gemvI4Scales<false, true>
                           : gemvI4Scales<false, false>))(
      rows, panels, aq, ldaq, aScale, aSum, w, c, ldc, loadC);
}

// quantizeGroupsReference, 16 elements at a time (AVX-512 F only).
void quantizeGroups(int64_t k, int64_t kp, int64_t group, const float* a,
                    int8_t* aq, float* aScale, int32_t* aSum) {
  const __m512 limit = _mm512_set1_ps(3.4e38f);
  const __m512 hi = _mm512_set1_ps(127.0f), lo = _mm512_set1_ps(-127.0f);
  const __m512 half = _mm512_set1_ps(0.5f), minusHalf = _mm512_set1_ps(-0.5f);
  // The first |n| of 16 lanes (none when n <= 0).
  const auto lanes = [](int64_t n) {
    return n >= 16 ? __mmask16(0xFFFF)
                   : __mmask16(n > 0 ? (1u << n) - 1 : 0);
  };
  for (int64_t g = 0; g < kp / group; ++g) {
    const int64_t k0 = g * group, n = (k < k0 + group ? k : k0 + group) - k0;
    const float* src = a + k0;
    __m512 amax = _mm512_setzero_ps();
    __mmask16 bad = 0;
    for (int64_t kk = 0; kk < n; kk += 16) {
      const __m512 x =
          _mm512_abs_ps(_mm512_maskz_loadu_ps(lanes(n - kk), src + kk));
      // max(x, amax) keeps amax where x is NaN, as `x > amax` does.
      amax = _mm512_max_ps(x, amax);
      bad |= _mm512_cmp_ps_mask(x, limit, _CMP_NLE_UQ);
    }
    const float maxAbs = _mm512_reduce_max_ps(amax);
    const __m512 inv = _mm512_set1_ps(maxAbs > 0.0f ? 127.0f / maxAbs : 0.0f);
    __m512i sum = _mm512_setzero_si512();
    for (int64_t kk = 0; kk < group; kk += 16) {
      __m512 y =
          _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes(n - kk), src + kk), inv);
      const __mmask16 nan = _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q);
      y = _mm512_max_ps(_mm512_min_ps(y, hi), lo);
      y = _mm512_mask_mov_ps(y, nan, _mm512_setzero_ps());
      const __mmask16 nonNegative =
          _mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_GE_OQ);
      y = _mm512_add_ps(y, _mm512_mask_mov_ps(minusHalf, nonNegative, half));
      const __m512i v = _mm512_cvttps_epi32(y);
      sum = _mm512_add_epi32(sum, v);
      _mm512_mask_cvtepi32_storeu_epi8(aq + k0 + kk, lanes(group - kk), v);
    }
    aScale[g] = bad ? INFINITY : maxAbs / 127.0f;
    aSum[g] = _mm512_reduce_add_epi32(sum);
  }
}

}  // namespace

const MatmulGemvI4Fn kGemvI4Avx512Vnni = gemvI4;
const QuantizeGroupsFn kQuantizeGroupsAvx512 = quantizeGroups;

}  // namespace strata::runtime::kernels
