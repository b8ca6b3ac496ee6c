//===- matmul_i8_quads_avx2.cc - int8 x int8 products, vpmaddubsw ---------===//
// SPDX-License-Identifier: Apache-2.0
// Built with AVX2 flags. vpmaddubsw multiplies unsigned by signed bytes and
// sums pairs in saturating int16: with |w| as the unsigned operand and the
// activations carrying w's sign (vpsignb), a pair is at most 2 * 128 * 127
// < 2^15, so nothing saturates and the int32 sums (vpmaddwd) are exact: the
// same integers as the VNNI kernel's, so the same floats after them.

#include <immintrin.h>

#include <cstdint>

#include "matmul_f32_tiles.h"
#include "weight_prefetch.h"

namespace strata::runtime::kernels {
namespace {

// One row against panel p: a 128-byte quad row is four 32-byte vectors of
// 8 columns x 4 k (columns 0-7, 8-15, 16-23, 24-31).
template <bool Prefetch>
void rowPanel(const Int8Quads& w, int64_t p, const int8_t* aq,
              const float* aScale, int64_t groups, float* c, bool loadC) {
  const __m256i ones = _mm256_set1_epi16(1);
  const int8_t* panel = w.panel(p);
  __m256 total[4];
  for (int v = 0; v < 4; ++v)
    total[v] = loadC ? _mm256_loadu_ps(c + v * 8) : _mm256_setzero_ps();
  for (int64_t g = 0; g < groups; ++g) {
    __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                      _mm256_setzero_si256(), _mm256_setzero_si256()};
    const int8_t* quads = panel + g * w.actGroup * 32;
    const int8_t* aGroup = aq + g * w.actGroup;
    const int64_t count = w.quadsIn(g);
    for (int64_t t = 0; t < count; ++t) {
      prefetchWeightLine<Prefetch, WeightLineHint::kKeep>(quads + t * 128);
      prefetchWeightLine<Prefetch, WeightLineHint::kKeep>(quads + t * 128 + 64);
      int32_t quad;
      __builtin_memcpy(&quad, aGroup + t * 4, 4);
      const __m256i av = _mm256_set1_epi32(quad);
      for (int v = 0; v < 4; ++v) {
        const __m256i wq = _mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(quads + t * 128 + v * 32));
        const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(wq),
                                                   _mm256_sign_epi8(av, wq));
        acc[v] = _mm256_add_epi32(acc[v], _mm256_madd_epi16(pairs, ones));
      }
    }
    const float* scales = w.scalesOf(p, g);
    const __m256 sa = _mm256_set1_ps(aScale[g]);
    for (int v = 0; v < 4; ++v) {
      const __m256 scale = _mm256_mul_ps(_mm256_loadu_ps(scales + v * 8), sa);
      total[v] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[v]), scale, total[v]);
    }
  }
  for (int v = 0; v < 4; ++v) _mm256_storeu_ps(c + v * 8, total[v]);
}

// The first row of a panel prefetches its stream (weight_prefetch.h); the
// others read the panel from L1.
void gemvI8Quads(int64_t rows, int64_t panels, const int8_t* aq, int64_t ldaq,
                 const float* aScale, const int32_t* /*aSum*/,
                 const Int8Quads& w, float* c, int64_t ldc, bool loadC) {
  const int64_t groups = (w.kq + w.actGroup - 1) / w.actGroup;
  const bool prefetch = weightPrefetchPays();
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t i = 0; i < rows; ++i)
      (i == 0 && prefetch ? rowPanel<true> : rowPanel<false>)(
          w, p, aq + i * ldaq, aScale + i * groups, groups,
          c + i * ldc + p * 32, loadC);
}

}  // namespace

const MatmulGemvI8QuadsFn kGemvI8QuadsAvx2 = gemvI8Quads;

}  // namespace strata::runtime::kernels
