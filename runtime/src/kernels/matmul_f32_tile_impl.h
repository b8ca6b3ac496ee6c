//===- matmul_f32_tile_impl.h - Register-tile kernels, one ISA per TU -----===//
// SPDX-License-Identifier: Apache-2.0
// Included by exactly one translation unit per ISA, inside an anonymous
// namespace, after defining the vector traits `Vec` (load, store, set1,
// zero, fma, lanes). Nothing here may use std:: templates: an inline
// function instantiated in an AVX-512 unit could be picked by the linker for
// callers on CPUs without AVX-512.

// C tile in MR x (32 / lanes) registers, B row loaded once per k and A
// broadcast in place (unpacked A, shared/docs/CPU-GEMM.md: the fastest
// variant on these machines).
template <int MR>
inline void tileRows(int64_t kc, const float* a, int64_t lda, const float* b,
                     float* c, int64_t ldc, bool loadC) {
  constexpr int L = Vec::kLanes;
  constexpr int NV = 32 / L;
  typename Vec::V acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j)
      acc[i][j] = loadC ? Vec::load(c + i * ldc + j * L) : Vec::zero();
  for (int64_t k = 0; k < kc; ++k) {
    typename Vec::V bv[NV];
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) bv[j] = Vec::load(b + k * 32 + j * L);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      typename Vec::V av = Vec::set1(a[i * lda + k]);
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = Vec::fma(av, bv[j], acc[i][j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) Vec::store(c + i * ldc + j * L, acc[i][j]);
}

template <int P>
inline void gemvPanels(int64_t k, const float* a, const float* b, float* c,
                       bool loadC) {
  constexpr int L = Vec::kLanes;
  constexpr int NV = 32 / L;
  const int64_t panelStride = k * 32;
  typename Vec::V acc[P][NV];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j)
      acc[p][j] = loadC ? Vec::load(c + p * 32 + j * L) : Vec::zero();
  for (int64_t kk = 0; kk < k; ++kk) {
    typename Vec::V av = Vec::set1(a[kk]);
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j)
        acc[p][j] = Vec::fma(av, Vec::load(b + p * panelStride + kk * 32 + j * L),
                             acc[p][j]);
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) Vec::store(c + p * 32 + j * L, acc[p][j]);
}

void gemv(int64_t panels, int64_t k, const float* a, const float* b,
          float* c, bool loadC) {
  int64_t p = 0;
  for (; p + 4 <= panels; p += 4)
    gemvPanels<4>(k, a, b + p * k * 32, c + p * 32, loadC);
  for (; p < panels; ++p) gemvPanels<1>(k, a, b + p * k * 32, c + p * 32, loadC);
}
