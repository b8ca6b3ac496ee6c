//===- attention_kv_avx2.cc - Compressed-KV kernels with AVX2 + FMA -------===//
// SPDX-License-Identifier: Apache-2.0
// 8 lanes: int8 widened by vpmovsxbd + vcvtdq2ps, bf16 by vpmovzxwd and a
// 16-bit shift (exact), both straight from memory into the FMA chains.

#include <immintrin.h>

#include "attention_kv_kernels.h"

namespace strata::runtime::kernels {
namespace {

#include "vec_avx2.h"

struct Vec : Avx2Floats {
  static V loadKv(const float* p) { return load(p); }
  static V loadKv(const int8_t* p) { return loadI8(p); }
  static V loadKv(const uint16_t* p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_cvtepu16_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
        16));
  }
  static V abs(V x) {
    return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
  }
  // vmaxps returns its second operand when either is NaN: |acc| is never
  // NaN, so a NaN lane of |x| leaves it as it was.
  static V maxKeep(V acc, V x) { return _mm256_max_ps(x, acc); }
  static bool notFinite(V ax) {
    return _mm256_movemask_ps(
               _mm256_cmp_ps(ax, set1(3.40282347e38f), _CMP_LE_OQ)) != 0xff;
  }
  // quantizeOne on 8 lanes (as the AVX-512 set).
  static void storeQuantized(int8_t* q, V x, V inv) {
    V y = _mm256_mul_ps(x, inv);
    y = _mm256_and_ps(y, _mm256_cmp_ps(y, y, _CMP_ORD_Q));
    y = _mm256_max_ps(_mm256_min_ps(y, set1(127.0f)), set1(-127.0f));
    const V half = _mm256_blendv_ps(set1(-0.5f), set1(0.5f),
                                    _mm256_cmp_ps(y, zero(), _CMP_GE_OQ));
    const __m256i v = _mm256_cvttps_epi32(_mm256_add_ps(y, half));
    const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(v),
                                          _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q),
                     _mm_packs_epi16(words, words));
  }
  // toBf16One on 8 lanes (magnitudes fit the signed compare).
  static void storeBf16(uint16_t* y, V x) {
    const __m256i u = _mm256_castps_si256(x);
    const __m256i high = _mm256_srli_epi32(u, 16);
    const __m256i nan =
        _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                           _mm256_set1_epi32(0x7f800000));
    const __m256i tiny =
        _mm256_cmpeq_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7f800000)),
                           _mm256_setzero_si256());
    const __m256i bias =
        _mm256_add_epi32(_mm256_set1_epi32(0x7fff),
                         _mm256_and_si256(high, _mm256_set1_epi32(1)));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, bias), 16);
    r = _mm256_blendv_epi8(r, _mm256_or_si256(high, _mm256_set1_epi32(0x40)),
                           nan);
    r = _mm256_blendv_epi8(r, _mm256_and_si256(high, _mm256_set1_epi32(0x8000)),
                           tiny);
    // Every lane is in [0, 0xffff], so unsigned saturation keeps it.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y),
                     _mm_packus_epi32(_mm256_castsi256_si128(r),
                                      _mm256_extracti128_si256(r, 1)));
  }
};

#include "attention_kv_impl.h"

}  // namespace

const AttentionKvKernels kAttentionKvAvx2 = {
    "avx2",      dotI8,       axpyI8,     dotBf16,     axpyBf16,
    quantizeI8,  toBf16,      axpyRunsF32, axpyRunsI8, axpyRunsBf16,
    dotRunsF32,  dotRunsI8,  dotRunsBf16};

}  // namespace strata::runtime::kernels
