//===- quantize_avx2.h - Symmetric int8 quantization, 8 lanes ------------===//
// SPDX-License-Identifier: Apache-2.0
// The steps both AVX2 activation quantizers share (per group for the int4
// products, per row for W8A8), with the fp32 operations of the reference
// loops in their order, so that they produce the reference's bytes. Include
// only from a unit built with AVX2 flags, after <immintrin.h> and
// <cstdint>, inside its anonymous namespace (each unit keeps its own copy).

#ifndef STRATA_RUNTIME_SRC_KERNELS_QUANTIZE_AVX2_H_
#define STRATA_RUNTIME_SRC_KERNELS_QUANTIZE_AVX2_H_

struct Avx2Quantizer {
  /// The first |n| of 8 lanes as a maskload mask (none when n <= 0).
  static __m256i lanes(int64_t n) {
    return _mm256_cmpgt_epi32(
        _mm256_set1_epi32(static_cast<int>(n < 8 ? (n > 0 ? n : 0) : 8)),
        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }

  /// The largest |x| of src[0, n) (a NaN never wins, as `x > amax` in the
  /// reference); |*bad| set nonzero when some |x| is not finite.
  static float absMax(const float* src, int64_t n, int* bad) {
    const __m256 limit = _mm256_set1_ps(3.4e38f);
    const __m256 signBit = _mm256_set1_ps(-0.0f);
    __m256 amax = _mm256_setzero_ps();
    int nonFinite = 0;
    for (int64_t kk = 0; kk < n; kk += 8) {
      const __m256 x = _mm256_andnot_ps(
          signBit, _mm256_maskload_ps(src + kk, lanes(n - kk)));
      amax = _mm256_max_ps(x, amax);
      nonFinite |= _mm256_movemask_ps(_mm256_cmp_ps(x, limit, _CMP_NLE_UQ));
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amax),
                           _mm256_extractf128_ps(amax, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    *bad = nonFinite;
    return _mm_cvtss_f32(m4);
  }

  /// src[0, 8) (lanes past |n| read as 0) times |inv|, clamped to
  /// [-levels, levels], NaN to 0, rounded half away from zero, as int32
  /// lanes.
  static __m256i quantize(const float* src, int64_t n, __m256 inv,
                          float levels = 127.0f) {
    __m256 y = _mm256_mul_ps(_mm256_maskload_ps(src, lanes(n)), inv);
    const __m256 nan = _mm256_cmp_ps(y, y, _CMP_UNORD_Q);
    y = _mm256_max_ps(_mm256_min_ps(y, _mm256_set1_ps(levels)),
                      _mm256_set1_ps(-levels));
    y = _mm256_andnot_ps(nan, y);
    const __m256 nonNegative =
        _mm256_cmp_ps(y, _mm256_setzero_ps(), _CMP_GE_OQ);
    y = _mm256_add_ps(y, _mm256_blendv_ps(_mm256_set1_ps(-0.5f),
                                          _mm256_set1_ps(0.5f), nonNegative));
    return _mm256_cvttps_epi32(y);
  }
};

#endif  // STRATA_RUNTIME_SRC_KERNELS_QUANTIZE_AVX2_H_
