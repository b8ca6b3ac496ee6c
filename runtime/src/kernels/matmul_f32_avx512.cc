//===- matmul_f32_avx512.cc - AVX-512 tiles (built with -mavx512f -mfma) --===//
// SPDX-License-Identifier: Apache-2.0
// 8 x 32 register tile: 16 zmm accumulators, 2 B loads and 8 broadcasts per
// k step (shared/docs/CPU-GEMM.md: 94-96% of peak on Zen 4).

#include <immintrin.h>

#include "matmul_f32_tiles.h"

namespace strata::runtime::kernels {
namespace {

struct Vec {
  using V = __m512;
  static constexpr int kLanes = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V zero() { return _mm512_setzero_ps(); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static float sum(V v) { return _mm512_reduce_add_ps(v); }
};

#include "matmul_f32_tile_impl.h"

void tile(int64_t rows, int64_t kc, const float* a, int64_t lda,
          const float* b, float* c, int64_t ldc, bool loadC) {
  switch (rows) {
    case 1: return tileRows<1>(kc, a, lda, b, c, ldc, loadC);
    case 2: return tileRows<2>(kc, a, lda, b, c, ldc, loadC);
    case 3: return tileRows<3>(kc, a, lda, b, c, ldc, loadC);
    case 4: return tileRows<4>(kc, a, lda, b, c, ldc, loadC);
    case 5: return tileRows<5>(kc, a, lda, b, c, ldc, loadC);
    case 6: return tileRows<6>(kc, a, lda, b, c, ldc, loadC);
    case 7: return tileRows<7>(kc, a, lda, b, c, ldc, loadC);
    default: return tileRows<8>(kc, a, lda, b, c, ldc, loadC);
  }
}

}  // namespace

const MatmulTiles kMatmulTilesAvx512 = {"avx512", 8, tile, gemv, rowTimesRows,
                                     rowDotColumns};

}  // namespace strata::runtime::kernels
