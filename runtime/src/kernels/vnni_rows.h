//===- vnni_rows.h - Row blocks of the VNNI decode kernels -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// What the int4 and int8 decode kernels on AVX-512 VNNI share: decode
// rows taken in blocks of up to four (each weight line loaded once per
// block), their fp32 totals and int32 group sums, and one quad row of
// weights meeting each row's four int8 activations. Included only by translation units built with AVX-512
// F/BW/VNNI flags.

#ifndef STRATA_RUNTIME_SRC_KERNELS_VNNI_ROWS_H_
#define STRATA_RUNTIME_SRC_KERNELS_VNNI_ROWS_H_

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

namespace strata::runtime::kernels::vnni {

/// Calls |block|(i, std::integral_constant<int, R>{}) for rows [i, i + R)
/// of |rows|, R = 4 while four are left, then the rest at once.
template <typename Block>
inline void forRowBlocks(int64_t rows, Block&& block) {
  for (int64_t i = 0; i < rows; i += 4) {
    const int64_t left = rows - i;
    if (left >= 4)
      block(i, std::integral_constant<int, 4>());
    else if (left == 3)
      block(i, std::integral_constant<int, 3>());
    else if (left == 2)
      block(i, std::integral_constant<int, 2>());
    else
      block(i, std::integral_constant<int, 1>());
  }
}

/// The fp32 totals of R rows x 32 columns: C's (rows |ldc| apart) when
/// |loadC|, else zeros; storeTotals writes them back.
template <int R>
inline void loadTotals(__m512 (&total)[R][2], const float* c, int64_t ldc,
                       bool loadC) {
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < 2; ++h)
      total[r][h] = loadC ? _mm512_loadu_ps(c + r * ldc + h * 16)
                          : _mm512_setzero_ps();
}

template <int R>
inline void storeTotals(const __m512 (&total)[R][2], float* c, int64_t ldc) {
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < 2; ++h)
      _mm512_storeu_ps(c + r * ldc + h * 16, total[r][h]);
}

/// The int32 sums of a group, zeroed.
template <int R>
inline void zeroSums(__m512i (&acc)[R][2]) {
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_si512();
}

/// acc[r][h] += vpdpbusd(w[h], the four int8 activations of row r at
/// a + r * lda) for R rows: a quad row of 16 columns x 4 k in each of the
/// two unsigned weight vectors.
template <int R>
inline void dotQuadRows(__m512i (&acc)[R][2], __m512i w0, __m512i w1,
                        const int8_t* a, int64_t lda) {
  for (int r = 0; r < R; ++r) {
    int32_t quad;
    __builtin_memcpy(&quad, a + r * lda, 4);
    const __m512i av = _mm512_set1_epi32(quad);
    acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], w0, av);
    acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], w1, av);
  }
}

}  // namespace strata::runtime::kernels::vnni

#endif  // STRATA_RUNTIME_SRC_KERNELS_VNNI_ROWS_H_
