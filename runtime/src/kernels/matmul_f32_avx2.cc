//===- matmul_f32_avx2.cc - AVX2 tiles (-mavx2 -mfma -mf16c) --------------===//
// SPDX-License-Identifier: Apache-2.0
// 3 x 32 register tile: 12 ymm accumulators of the 16 registers, 4 B loads
// (folded into the FMAs) and 3 broadcasts per k step.

#include <immintrin.h>

#include <cmath>

#include "matmul_f32_tiles.h"
#include "weight_prefetch.h"

namespace strata::runtime::kernels {
namespace {

#include "vec_avx2.h"
#include "quantize_avx2.h"

struct Vec : Avx2Floats {
  // 2^n * e^r with n = round(x / ln 2), |r| <= ln(2) / 2, e^r by its
  // degree-6 Taylor polynomial (error < 2e-7 relative); 2^n built in the
  // exponent bits (x is clamped so that n stays in [-126, 127]).
  static V exp(V x) {
    x = _mm256_max_ps(_mm256_min_ps(x, set1(88.3f)), set1(-87.3f));
    V n = _mm256_round_ps(_mm256_mul_ps(x, set1(1.44269504f)),
                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    V r = _mm256_fnmadd_ps(n, set1(0.693145752f), x);
    r = _mm256_fnmadd_ps(n, set1(1.42860677e-6f), r);
    V p = set1(1.0f / 720);
    p = fma(p, r, set1(1.0f / 120));
    p = fma(p, r, set1(1.0f / 24));
    p = fma(p, r, set1(1.0f / 6));
    p = fma(p, r, set1(0.5f));
    p = fma(p, r, set1(1.0f));
    p = fma(p, r, set1(1.0f));
    __m256i bits = _mm256_slli_epi32(
        _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  }
};

#include "matmul_f32_tile_impl.h"

void tile(int64_t rows, int64_t kc, const float* a, int64_t lda,
          const float* b, float* c, int64_t ldc, bool loadC) {
  tileUpTo<3, false>(rows, kc, a, lda, b, c, ldc, loadC, nullptr, 0);
}

void tileStream(int64_t rows, int64_t kc, const float* a, int64_t lda,
                const float* b, float* c, int64_t ldc, bool loadC,
                const char* prefetch, int64_t lines) {
  tileUpTo<3, true>(rows, kc, a, lda, b, c, ldc, loadC, prefetch, lines);
}

// One row and one panel at a time: with 4 vectors per panel row, a
// second row or panel would not fit the 16 registers next to the group
// accumulators.
void gemvI8(int64_t rows, int64_t panels, int64_t k, const float* a,
            int64_t lda, const int8_t* b, const float* scales,
            int64_t scaleStride, int64_t group, float* c, int64_t ldc,
            bool loadC) {
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t i = 0; i < rows; ++i)
      quantTile<1, 1>(k, a + i * lda, lda, b + p * k * 32, scales + p * 32,
                      scaleStride, group, c + i * ldc + p * 32, ldc, loadC);
}

// Columns 8v .. 8v + 7 of a group's 32 scales.
template <bool F16>
inline __m256 loadScales(const uint8_t* scales, int v) {
  if constexpr (F16)
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales + v * 16)));
  else
    return _mm256_loadu_ps(reinterpret_cast<const float*>(scales) + v * 8);
}

// int4 x int8: a 64-byte quad is two 32-byte halves (columns 0-7 and
// 16-23 in the low and high nibbles of the first, 8-15 and 24-31 of the
// second); vpmaddubsw multiplies nibbles by activations into 16-bit pair
// sums (at most 2 * 15 * 127: no saturation), vpmaddwd adds the pairs.
template <bool F16, bool Prefetch>
void i4RowPanel(const Int4Panels& w, int64_t p, const int8_t* aq,
                const float* aScale, const int32_t* aSum, float* c,
                bool loadC) {
  const __m256i mask = _mm256_set1_epi8(0x0F);
  const __m256i ones = _mm256_set1_epi16(1);
  // total[v]: columns 8v .. 8v+7.
  __m256 total[4];
  for (int v = 0; v < 4; ++v)
    total[v] = loadC ? _mm256_loadu_ps(c + v * 8) : _mm256_setzero_ps();
  const int64_t groups = w.kp / w.group;
  for (int64_t g = 0; g < groups; ++g) {
    __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                      _mm256_setzero_si256(), _mm256_setzero_si256()};
    const uint8_t* quads = w.quads(p, g);
    const int8_t* aGroup = aq + g * w.group;
    // fp16 scales follow a group's quads: one more line.
    if (F16)
      prefetchWeightLine<Prefetch, WeightLineHint::kStream>(quads +
                                                            w.group * 16);
    for (int64_t t = 0; t < w.group / 4; ++t) {
      prefetchWeightLine<Prefetch, WeightLineHint::kStream>(quads + t * 64);
      int32_t quad;
      __builtin_memcpy(&quad, aGroup + t * 4, 4);
      const __m256i av = _mm256_set1_epi32(quad);
      const uint8_t* q = quads + t * 64;
      for (int half = 0; half < 2; ++half) {
        const __m256i wq =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + half * 32));
        const __m256i lo = _mm256_and_si256(wq, mask);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(wq, 4), mask);
        acc[half] = _mm256_add_epi32(
            acc[half], _mm256_madd_epi16(_mm256_maddubs_epi16(lo, av), ones));
        acc[2 + half] = _mm256_add_epi32(
            acc[2 + half],
            _mm256_madd_epi16(_mm256_maddubs_epi16(hi, av), ones));
      }
    }
    const __m256 correction = _mm256_set1_ps(8.0f * float(aSum[g]));
    const __m256 sa = _mm256_set1_ps(aScale[g]);
    const uint8_t* scales = w.scales(p, g);
    for (int v = 0; v < 4; ++v) {
      const __m256 dot = _mm256_sub_ps(_mm256_cvtepi32_ps(acc[v]), correction);
      const __m256 scale = _mm256_mul_ps(loadScales<F16>(scales, v), sa);
      total[v] = _mm256_fmadd_ps(dot, scale, total[v]);
    }
  }
  for (int v = 0; v < 4; ++v) _mm256_storeu_ps(c + v * 8, total[v]);
}

// The first row of a panel prefetches its stream (weight_prefetch.h); the
// others read the panel from L1.
template <bool F16, bool Prefetch>
void gemvI4Scales(int64_t rows, int64_t panels, const int8_t* aq,
                  int64_t ldaq, const float* aScale, const int32_t* aSum,
                  const Int4Panels& w, float* c, int64_t ldc, bool loadC) {
  const int64_t groups = w.kp / w.group;
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t i = 0; i < rows; ++i)
      (i == 0 ? i4RowPanel<F16, Prefetch> : i4RowPanel<F16, false>)(
          w, p, aq + i * ldaq, aScale + i * groups, aSum + i * groups,
          c + i * ldc + p * 32, loadC);
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

// quantizeGroupsReference, 8 elements at a time.
void quantizeGroups(int64_t k, int64_t kp, int64_t group, const float* a,
                    int8_t* aq, float* aScale, int32_t* aSum) {
  for (int64_t g = 0; g < kp / group; ++g) {
    const int64_t k0 = g * group, n = (k < k0 + group ? k : k0 + group) - k0;
    const float* src = a + k0;
    int bad = 0;
    const float maxAbs = Avx2Quantizer::absMax(src, n, &bad);
    const __m256 inv = _mm256_set1_ps(maxAbs > 0.0f ? 127.0f / maxAbs : 0.0f);
    __m256i sum = _mm256_setzero_si256();
    for (int64_t kk = 0; kk < group; kk += 8) {
      const __m256i v = Avx2Quantizer::quantize(src + kk, n - kk, inv);
      sum = _mm256_add_epi32(sum, v);
      alignas(32) int32_t values[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(values), v);
      const int64_t count = group - kk < 8 ? group - kk : 8;
      for (int64_t e = 0; e < count; ++e)
        aq[k0 + kk + e] = static_cast<int8_t>(values[e]);
    }
    alignas(32) int32_t sums[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(sums), sum);
    aScale[g] = bad ? INFINITY : maxAbs / 127.0f;
    aSum[g] = sums[0] + sums[1] + sums[2] + sums[3] + sums[4] + sums[5] +
              sums[6] + sums[7];
  }
}

}  // namespace

// gemvRows: 2 rows x 2 panels, the 16 ymm registers as accumulators (3
// rows, as 2 + 1 passes, measured slower than the tileStream tiles).
const MatmulTiles kMatmulTilesAvx2 = {"avx2", 3, tile, gemv, rowTimesRows,
                                     rowDotColumns, expShifted, gemvI8,
                                     scaleMax, tileStream, tileFinish<3>,
                                     gemvRowsBlocked<2, 2, 512>, 2};
const MatmulGemvI4Fn kGemvI4Avx2 = gemvI4;
const QuantizeGroupsFn kQuantizeGroupsAvx2 = quantizeGroups;

}  // namespace strata::runtime::kernels
