//===- matmul_i8_quads_avx512vnni.cc - int8 x int8 products, vpdpbusd -----===//
// SPDX-License-Identifier: Apache-2.0
// Built with AVX-512 F/BW/VNNI flags and called only where the CPU has
// them (matmul_f32.cc). vpdpbusd multiplies unsigned by signed bytes: the
// weights are offset to unsigned (w ^ 0x80 = w + 128, one instruction a
// 64-byte line, shared by every row), so each lane sums (w + 128) * a over
// four k, and the group's 128 * sum(a) is taken off in int32: exact, and
// the same integer every ISA's kernel computes.

#include <immintrin.h>

#include <cstdint>

#pragma GCC diagnostic ignored "-Wuninitialized"

#include "matmul_f32_tiles.h"
#include "vnni_rows.h"
#include "weight_prefetch.h"

namespace strata::runtime::kernels {
namespace {

// R rows (R <= 4) against panel p: each 64-byte line of weights is loaded
// and offset once and multiplied by every row's four activations.
template <int R, bool Prefetch>
void rowsPanel(const Int8Quads& w, int64_t p, const int8_t* aq, int64_t ldaq,
               const float* aScale, const int32_t* aSum, int64_t groups,
               float* c, int64_t ldc, bool loadC) {
  const __m512i offset = _mm512_set1_epi8(char(0x80));
  const int8_t* panel = w.panel(p);
  __m512 total[R][2];
  vnni::loadTotals<R>(total, c, ldc, loadC);
  for (int64_t g = 0; g < groups; ++g) {
    __m512i acc[R][2];
    vnni::zeroSums<R>(acc);
    const int8_t* quads = panel + g * w.actGroup * 32;
    const int8_t* aGroup = aq + g * w.actGroup;
    const int64_t count = w.quadsIn(g);
    for (int64_t t = 0; t < count; ++t) {
      prefetchWeightLine<Prefetch, WeightLineHint::kKeep>(quads + t * 128);
      prefetchWeightLine<Prefetch, WeightLineHint::kKeep>(quads + t * 128 + 64);
      const __m512i lo = _mm512_xor_si512(
          _mm512_loadu_si512(quads + t * 128), offset);
      const __m512i hi = _mm512_xor_si512(
          _mm512_loadu_si512(quads + t * 128 + 64), offset);
      vnni::dotQuadRows<R>(acc, lo, hi, aGroup + t * 4, ldaq);
    }
    const float* scales = w.scalesOf(p, g);
    for (int r = 0; r < R; ++r) {
      const __m512i correction = _mm512_set1_epi32(128 * aSum[r * groups + g]);
      const __m512 sa = _mm512_set1_ps(aScale[r * groups + g]);
      for (int h = 0; h < 2; ++h) {
        const __m512 dot =
            _mm512_cvtepi32_ps(_mm512_sub_epi32(acc[r][h], correction));
        const __m512 scale = _mm512_mul_ps(_mm512_loadu_ps(scales + h * 16), sa);
        total[r][h] = _mm512_fmadd_ps(dot, scale, total[r][h]);
      }
    }
  }
  vnni::storeTotals<R>(total, c, ldc);
}

// Panels outer, rows in blocks of four inner: a panel is read from memory
// once and from L1 for the other rows, and the weights are one sequential
// stream (consecutive panels are adjacent), as for the int4 kernel; the
// first row block prefetches it (weight_prefetch.h).
template <bool Prefetch>
void gemvI8QuadsPrefetching(int64_t rows, int64_t panels, const int8_t* aq,
                            int64_t ldaq, const float* aScale,
                            const int32_t* aSum, const Int8Quads& w, float* c,
                            int64_t ldc, bool loadC) {
  const int64_t groups = (w.kq + w.actGroup - 1) / w.actGroup;
  for (int64_t p = 0; p < panels; ++p)
    vnni::forRowBlocks(rows, [&](int64_t i, auto r) {
      constexpr int R = decltype(r)::value;
      (i == 0 ? rowsPanel<R, Prefetch> : rowsPanel<R, false>)(
          w, p, aq + i * ldaq, ldaq, aScale + i * groups, aSum + i * groups,
          groups, c + i * ldc + p * 32, ldc, loadC);
    });
}

void gemvI8Quads(int64_t rows, int64_t panels, const int8_t* aq, int64_t ldaq,
                 const float* aScale, const int32_t* aSum, const Int8Quads& w,
                 float* c, int64_t ldc, bool loadC) {
  (weightPrefetchPays() ? gemvI8QuadsPrefetching<true>
                        : gemvI8QuadsPrefetching<false>)(
      rows, panels, aq, ldaq, aScale, aSum, w, c, ldc, loadC);
}

}  // namespace

const MatmulGemvI8QuadsFn kGemvI8QuadsAvx512Vnni = gemvI8Quads;

}  // namespace strata::runtime::kernels
