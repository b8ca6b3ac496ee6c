//===- attention_kv_avx512.cc - Compressed-KV kernels with AVX-512 F ------===//
// SPDX-License-Identifier: Apache-2.0
// 16 lanes: int8 widened by vpmovsxbd + vcvtdq2ps, bf16 by vpmovzxwd and a
// 16-bit shift (exact), both straight from memory into the FMA chains.

#include <immintrin.h>

// GCC 12's AVX-512 headers pass _mm*_undefined_* values to builtins, which
// its own -Wuninitialized flags once they are inlined here (a known false
// positive: the lanes are never read).
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "attention_kv_kernels.h"

namespace strata::runtime::kernels {
namespace {

#include "vec_avx512.h"

struct Vec : Avx512Floats {
  static V loadKv(const float* p) { return load(p); }
  static V loadKv(const int8_t* p) { return loadI8(p); }
  static V loadKv(const uint16_t* p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(
        _mm512_cvtepu16_epi32(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))),
        16));
  }
  static V abs(V x) { return _mm512_abs_ps(x); }
  // vmaxps returns its second operand when either is NaN: |acc| is never
  // NaN, so a NaN lane of |x| leaves it as it was (the reference's
  // `x > amax ? x : amax`).
  static V maxKeep(V acc, V x) { return _mm512_max_ps(x, acc); }
  static bool notFinite(V ax) {
    return _mm512_cmp_ps_mask(ax, set1(3.40282347e38f), _CMP_LE_OQ) != 0xffff;
  }
  // quantizeOne on 16 lanes: NaN lanes to 0 first (vminps/vmaxps would
  // turn them into the bound), then the clamps, the half away from zero
  // and a truncating conversion of values already in [-127.5, 127.5].
  static void storeQuantized(int8_t* q, V x, V inv) {
    V y = _mm512_mul_ps(x, inv);
    y = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(y, y, _CMP_ORD_Q), y);
    y = _mm512_max_ps(_mm512_min_ps(y, set1(127.0f)), set1(-127.0f));
    const __mmask16 nonNegative = _mm512_cmp_ps_mask(y, zero(), _CMP_GE_OQ);
    const V half = _mm512_mask_mov_ps(set1(-0.5f), nonNegative, set1(0.5f));
    const __m512i v = _mm512_cvttps_epi32(_mm512_add_ps(y, half));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtsepi32_epi8(v));
  }
  // toBf16One on 16 lanes.
  static void storeBf16(uint16_t* y, V x) {
    const __m512i u = _mm512_castps_si512(x);
    const __m512i high = _mm512_srli_epi32(u, 16);
    const __m512i magnitude =
        _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
    const __mmask16 nan =
        _mm512_cmpgt_epi32_mask(magnitude, _mm512_set1_epi32(0x7f800000));
    const __mmask16 tiny = _mm512_cmpeq_epi32_mask(
        _mm512_and_si512(u, _mm512_set1_epi32(0x7f800000)),
        _mm512_setzero_si512());
    const __m512i bias =
        _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
                         _mm512_and_si512(high, _mm512_set1_epi32(1)));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
    r = _mm512_mask_mov_epi32(r, nan,
                              _mm512_or_si512(high, _mm512_set1_epi32(0x40)));
    r = _mm512_mask_mov_epi32(
        r, tiny, _mm512_and_si512(high, _mm512_set1_epi32(0x8000)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y),
                        _mm512_cvtepi32_epi16(r));
  }
};

#include "attention_kv_impl.h"

}  // namespace

const AttentionKvKernels kAttentionKvAvx512 = {
    "avx512",      dotI8,       axpyI8,     dotBf16,     axpyBf16,
    quantizeI8,  toBf16,      axpyRunsF32, axpyRunsI8, axpyRunsBf16,
    dotRunsF32,  dotRunsI8,  dotRunsBf16};

}  // namespace strata::runtime::kernels
