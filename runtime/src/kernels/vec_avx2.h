//===- vec_avx2.h - 8-lane fp32 vector basics for AVX2 kernels ------------===//
// SPDX-License-Identifier: Apache-2.0
// The operations every AVX2 kernel set builds on (the matmul tiles, the
// compressed-KV attention rows): each translation unit built with AVX2 and
// FMA flags derives its own `Vec` from this and adds what only it needs.
// Include only from such a unit, after <immintrin.h> and <cstdint>, inside
// its anonymous namespace (each unit keeps its own copy, built with its
// flags).

#ifndef STRATA_RUNTIME_SRC_KERNELS_VEC_AVX2_H_
#define STRATA_RUNTIME_SRC_KERNELS_VEC_AVX2_H_

struct Avx2Floats {
  using V = __m256;
  static constexpr int kLanes = 8;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V zero() { return _mm256_setzero_ps(); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static float sum(V v) {
    __m128 s =
        _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  // The second operand where either is a NaN (as maxps).
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static float maxOf(V v) {
    __m128 m =
        _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
  }
  // Lanes [0, n) of p and |fill| in the others (0 <= n < 8; reads only
  // the first n floats); the first n lanes stored (writes only those).
  static __m256i firstLanes(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static V loadFirst(const float* p, int64_t n, float fill) {
    const __m256i m = firstLanes(n);
    return _mm256_blendv_ps(set1(fill), _mm256_maskload_ps(p, m),
                            _mm256_castsi256_ps(m));
  }
  static void storeFirst(float* p, V v, int64_t n) {
    _mm256_maskstore_ps(p, firstLanes(n), v);
  }
  // |fill| in lanes [n, 8).
  static V keepFirst(V v, int64_t n, float fill) {
    return _mm256_blendv_ps(set1(fill), v,
                            _mm256_castsi256_ps(firstLanes(n)));
  }
  // 8 int8 values widened to fp32.
  static V loadI8(const int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
};

#endif  // STRATA_RUNTIME_SRC_KERNELS_VEC_AVX2_H_
