//===- vec_avx512.h - 16-lane fp32 vector basics for AVX-512 kernels ------===//
// SPDX-License-Identifier: Apache-2.0
// The operations every AVX-512 kernel set builds on (the matmul tiles, the
// compressed-KV attention rows): each translation unit built with AVX-512
// flags derives its own `Vec` from this and adds what only it needs. Include
// only from such a unit, after <immintrin.h> and <cstdint>, inside its
// anonymous namespace (each unit keeps its own copy, built with its flags).

#ifndef STRATA_RUNTIME_SRC_KERNELS_VEC_AVX512_H_
#define STRATA_RUNTIME_SRC_KERNELS_VEC_AVX512_H_

struct Avx512Floats {
  using V = __m512;
  static constexpr int kLanes = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V zero() { return _mm512_setzero_ps(); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static float sum(V v) { return _mm512_reduce_add_ps(v); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  // The second operand where either is a NaN (as maxps).
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static float maxOf(V v) { return _mm512_reduce_max_ps(v); }
  // Lanes [0, n) of p and |fill| in the others (0 <= n < 16; reads only
  // the first n floats); the first n lanes stored (writes only those).
  static __mmask16 firstLanes(int64_t n) {
    return static_cast<__mmask16>((1u << n) - 1);
  }
  static V loadFirst(const float* p, int64_t n, float fill) {
    return _mm512_mask_loadu_ps(set1(fill), firstLanes(n), p);
  }
  static void storeFirst(float* p, V v, int64_t n) {
    _mm512_mask_storeu_ps(p, firstLanes(n), v);
  }
  // |fill| in lanes [n, 16).
  static V keepFirst(V v, int64_t n, float fill) {
    return _mm512_mask_mov_ps(set1(fill), firstLanes(n), v);
  }
  // 16 int8 values widened to fp32.
  static V loadI8(const int8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
};

#endif  // STRATA_RUNTIME_SRC_KERNELS_VEC_AVX512_H_
