//===- conv_winograd_impl.h - The F(2x2, 3x3) transforms, per ISA ---------===//
// SPDX-License-Identifier: Apache-2.0
// Included once by each ISA's translation unit (conv_winograd_avx512.cc,
// conv_winograd_avx2.cc, conv_winograd.cc), whose flags let the compiler
// vectorize the channel loops to that ISA's width. Additions only, in the
// same order on every ISA: the bits do not depend on it.

#ifndef STRATA_RUNTIME_SRC_KERNELS_CONV_WINOGRAD_IMPL_H_
#define STRATA_RUNTIME_SRC_KERNELS_CONV_WINOGRAD_IMPL_H_

#include "conv_winograd.h"

// The channel loops read one set of arrays and write another: without
// this GCC's vectorizer gives up on the 16 pointers it cannot tell apart.
// (Clang's equivalent request is an error where it cannot vectorize, as
// in the sanitized fuzz build, so clang gets no hint.)
#if defined(__GNUC__) && !defined(__clang__)
#define STRATA_WINOGRAD_DISJOINT _Pragma("GCC ivdep")
#else
#define STRATA_WINOGRAD_DISJOINT
#endif

namespace strata::runtime::kernels {
namespace {

// Tile |t|'s image and top-left output position.
struct TilePlace {
  int64_t image, row, column;
};
inline TilePlace placeOf(const WinogradShape& s, int64_t t) {
  const int64_t tx = t % s.tileColumns;
  t /= s.tileColumns;
  return {t / s.tileRows, 2 * (t % s.tileRows), 2 * tx};
}

// V = B^T d B with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
void winogradInput(const WinogradShape& s, const float* input,
                   const float* zeros, int64_t first, int64_t count,
                   float* v) {
  const int64_t channels = s.channels, plane = count * channels;
  for (int64_t i = 0; i < count; ++i) {
    const TilePlace at = placeOf(s, first + i);
    const float* d[4][4];
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t q = 0; q < 4; ++q) {
        const int64_t y = at.row - s.padTop + r, x = at.column - s.padLeft + q;
        d[r][q] = y >= 0 && y < s.height && x >= 0 && x < s.width
                      ? input + ((at.image * s.height + y) * s.width + x) *
                                    channels
                      : zeros;
      }
    float* out = v + i * channels;
    STRATA_WINOGRAD_DISJOINT
    for (int64_t c = 0; c < channels; ++c) {
      float a[4][4];
      for (int q = 0; q < 4; ++q) {
        a[0][q] = d[0][q][c] - d[2][q][c];
        a[1][q] = d[1][q][c] + d[2][q][c];
        a[2][q] = d[2][q][c] - d[1][q][c];
        a[3][q] = d[1][q][c] - d[3][q][c];
      }
      for (int r = 0; r < 4; ++r) {
        out[(r * 4 + 0) * plane + c] = a[r][0] - a[r][2];
        out[(r * 4 + 1) * plane + c] = a[r][1] + a[r][2];
        out[(r * 4 + 2) * plane + c] = a[r][2] - a[r][1];
        out[(r * 4 + 3) * plane + c] = a[r][1] - a[r][3];
      }
    }
  }
}

// Y = A^T M A with A^T = [1 1 1 0; 0 1 -1 -1], then + bias + residual and
// the ReLU. Positions past the output's edge go to a discard row.
template <bool kRelu>
void winogradOutputTiles(const WinogradShape& s, const float* m,
                         int64_t first, int64_t count, int64_t column0,
                         int64_t columns, const float* bias,
                         const float* residual, const float* zeros,
                         float* out) {
  constexpr int64_t kW = STRATA_PACK_PANEL_WIDTH;
  const int64_t plane = count * kW, stride = s.outChannels;
  alignas(64) float discard[kW];
  for (int64_t i = 0; i < count; ++i) {
    const TilePlace at = placeOf(s, first + i);
    float* o[2][2];
    const float* res[2][2];
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t q = 0; q < 2; ++q) {
        const int64_t y = at.row + r, x = at.column + q;
        const bool inside = y < s.outHeight && x < s.outWidth;
        const int64_t offset =
            ((at.image * s.outHeight + y) * s.outWidth + x) * stride + column0;
        o[r][q] = inside ? out + offset : discard;
        res[r][q] = inside && residual ? residual + offset : zeros;
      }
    const float* mi = m + i * kW;
    STRATA_WINOGRAD_DISJOINT
    for (int64_t j = 0; j < columns; ++j) {
      float p[16];
      for (int k = 0; k < 16; ++k) p[k] = mi[k * plane + j];
      float t[2][4];
      for (int q = 0; q < 4; ++q) {
        t[0][q] = p[q] + p[4 + q] + p[8 + q];
        t[1][q] = p[4 + q] - p[8 + q] - p[12 + q];
      }
      const float b = bias ? bias[j] : 0.0f;
      for (int r = 0; r < 2; ++r) {
        float y0 = t[r][0] + t[r][1] + t[r][2];
        float y1 = t[r][1] - t[r][2] - t[r][3];
        y0 = (y0 + b) + res[r][0][j];
        y1 = (y1 + b) + res[r][1][j];
        if (kRelu) {
          y0 = y0 < 0.0f ? 0.0f : y0;  // a NaN stays
          y1 = y1 < 0.0f ? 0.0f : y1;
        }
        o[r][0][j] = y0;
        o[r][1][j] = y1;
      }
    }
  }
}

void winogradOutput(const WinogradShape& s, const float* m, int64_t first,
                    int64_t count, int64_t column0, int64_t columns,
                    const float* bias, const float* residual,
                    const float* zeros, bool relu, float* out) {
  const float* b = bias ? bias + column0 : nullptr;
  if (relu)
    winogradOutputTiles<true>(s, m, first, count, column0, columns, b,
                              residual, zeros, out);
  else
    winogradOutputTiles<false>(s, m, first, count, column0, columns, b,
                               residual, zeros, out);
}

}  // namespace
}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_CONV_WINOGRAD_IMPL_H_
