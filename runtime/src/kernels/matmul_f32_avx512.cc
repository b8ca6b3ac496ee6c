//===- matmul_f32_avx512.cc - AVX-512 tiles (built with -mavx512f -mfma) --===//
// SPDX-License-Identifier: Apache-2.0
// 8 x 32 register tile: 16 zmm accumulators, 2 B loads and 8 broadcasts per
// k step (shared/docs/CPU-GEMM.md: 94-96% of peak on Zen 4).

#include <immintrin.h>

// GCC 12's AVX-512 headers pass _mm*_undefined_* values to builtins, which
// its own -Wuninitialized flags once they are inlined here (a known false
// positive: the lanes are never read).
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "matmul_f32_tiles.h"

namespace strata::runtime::kernels {
namespace {

#include "vec_avx512.h"

struct Vec : Avx512Floats {
  // 2^n * e^r with n = round(x / ln 2), |r| <= ln(2) / 2, e^r by its
  // degree-6 Taylor polynomial (error < 2e-7 relative).
  static V exp(V x) {
    x = _mm512_max_ps(_mm512_min_ps(x, set1(88.7f)), set1(-87.3f));
    V n = _mm512_roundscale_ps(_mm512_mul_ps(x, set1(1.44269504f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    V r = _mm512_fnmadd_ps(n, set1(0.693145752f), x);
    r = _mm512_fnmadd_ps(n, set1(1.42860677e-6f), r);
    V p = set1(1.0f / 720);
    p = fma(p, r, set1(1.0f / 120));
    p = fma(p, r, set1(1.0f / 24));
    p = fma(p, r, set1(1.0f / 6));
    p = fma(p, r, set1(0.5f));
    p = fma(p, r, set1(1.0f));
    p = fma(p, r, set1(1.0f));
    return _mm512_scalef_ps(p, n);
  }
};

#include "matmul_f32_tile_impl.h"

void tile(int64_t rows, int64_t kc, const float* a, int64_t lda,
          const float* b, float* c, int64_t ldc, bool loadC) {
  tileUpTo<8, false>(rows, kc, a, lda, b, c, ldc, loadC, nullptr, 0);
}

void tileStream(int64_t rows, int64_t kc, const float* a, int64_t lda,
                const float* b, float* c, int64_t ldc, bool loadC,
                const char* prefetch, int64_t lines) {
  tileUpTo<8, true>(rows, kc, a, lda, b, c, ldc, loadC, prefetch, lines);
}

// One row: four panels at a time (more weight streams in flight, as
// gemv); several rows: tiles of four rows, one panel at a time, the panel
// re-read from cache by the next row tile.
void gemvI8(int64_t rows, int64_t panels, int64_t k, const float* a,
            int64_t lda, const int8_t* b, const float* scales,
            int64_t scaleStride, int64_t group, float* c, int64_t ldc,
            bool loadC) {
  const int64_t panelBytes = k * 32;
  if (rows == 1) {
    int64_t p = 0;
    for (; p + 4 <= panels; p += 4)
      quantTile<1, 4>(k, a, lda, b + p * panelBytes, scales + p * 32,
                      scaleStride, group, c + p * 32, ldc, loadC);
    for (; p < panels; ++p)
      quantTile<1, 1>(k, a, lda, b + p * panelBytes, scales + p * 32,
                      scaleStride, group, c + p * 32, ldc, loadC);
    return;
  }
  for (int64_t p = 0; p < panels; ++p) {
    const int8_t* bp = b + p * panelBytes;
    const float* sp = scales + p * 32;
    float* cp = c + p * 32;
    int64_t i = 0;
    for (; i + 4 <= rows; i += 4)
      quantTile<4, 1>(k, a + i * lda, lda, bp, sp, scaleStride, group,
                      cp + i * ldc, ldc, loadC);
    for (; i < rows; ++i)
      quantTile<1, 1>(k, a + i * lda, lda, bp, sp, scaleStride, group,
                      cp + i * ldc, ldc, loadC);
  }
}

}  // namespace

// gemvRows: up to 3 rows x 4 panels, 24 zmm accumulators (4 rows of 4
// panels would need all 32 registers; larger batches take tileStream).
const MatmulTiles kMatmulTilesAvx512 = {"avx512", 8, tile, gemv, rowTimesRows,
                                     rowDotColumns, expShifted, gemvI8,
                                     scaleMax, tileStream, tileFinish<8>,
                                     gemvRowsBlocked<3, 4, 512>, 3};

}  // namespace strata::runtime::kernels
