//===- matmul_f32_tiles.h - Per-ISA inner kernels of the fp32 matmul ------===//
// SPDX-License-Identifier: Apache-2.0
// Each ISA's kernels live in their own translation unit built with that
// ISA's flags (matmul_f32_avx512.cc, matmul_f32_avx2.cc); the driver
// (matmul_f32.cc) picks one set at run time from the CPU's features.

#ifndef STRATA_RUNTIME_SRC_KERNELS_MATMUL_F32_TILES_H_
#define STRATA_RUNTIME_SRC_KERNELS_MATMUL_F32_TILES_H_

#include <cstdint>

namespace strata::runtime::kernels {

/// C[rows x 32] (+)= A[rows x kc] * B[kc x 32]: A rows |lda| apart with unit
/// k stride, B one packed panel slice (32 contiguous floats per k), C rows
/// |ldc| apart with 32 contiguous columns. |rows| is 1..mr. C is read only
/// if |loadC|.
using MatmulTileFn = void (*)(int64_t rows, int64_t kc, const float* a,
                              int64_t lda, const float* b, float* c,
                              int64_t ldc, bool loadC);

/// MatmulTileFn that also prefetches |prefetchLines| cache lines from
/// |prefetch| on toward L2, spread over its k steps (0: none).
using MatmulTileStreamFn = void (*)(int64_t rows, int64_t kc, const float* a,
                                    int64_t lda, const float* b, float* c,
                                    int64_t ldc, bool loadC,
                                    const char* prefetch,
                                    int64_t prefetchLines);

/// c[0 .. 32*panels) (+)= a[0..k) * B over |panels| whole packed panels
/// starting at |b| (each k*32 floats): the M = 1 (decode) case, which reads
/// several panels at once to keep more memory streams in flight.
using MatmulGemvFn = void (*)(int64_t panels, int64_t k, const float* a,
                              const float* b, float* c, bool loadC);

/// C[rows x 32*panels] (+)= A[rows x k] * B over |panels| whole packed
/// panels starting at |b| (each k*32 floats); A rows |lda| apart with unit
/// k stride, C rows |ldc| apart with contiguous columns. Any |rows| >= 1;
/// up to MatmulTiles::gemvRowsMax of them read the weight in one pass.
using MatmulGemvRowsFn = void (*)(int64_t rows, int64_t panels, int64_t k,
                                  const float* a, int64_t lda, const float* b,
                                  float* c, int64_t ldc, bool loadC);

/// C[rows x 32*panels] (+)= A[rows x k] * B over |panels| whole int8
/// panels starting at |b| (each k*32 bytes), B(k, j) = q(k, j) *
/// scales[(k / group) * scaleStride + j] with j counted from the first
/// panel; A rows |lda| apart, C rows |ldc| apart with contiguous columns.
/// Any |rows| >= 1: the weight-only int8 decode product.
using MatmulGemvI8Fn = void (*)(int64_t rows, int64_t panels, int64_t k,
                                const float* a, int64_t lda, const int8_t* b,
                                const float* scales, int64_t scaleStride,
                                int64_t group, float* c, int64_t ldc,
                                bool loadC);

/// c[0..n) (+)= sum_k a[k * ak] * b[k * bk + 0..n): one row of A against
/// an unpacked B whose rows are contiguous (decode attention's P x V).
using MatmulRowTimesRowsFn = void (*)(int64_t k, int64_t n, const float* a,
                                      int64_t ak, const float* b, int64_t bk,
                                      float* c, bool loadC);

/// c[j * cn] (+)= dot(a[0..k), b[j * bn + 0..k)) for j in [0, n): one
/// contiguous row of A against an unpacked B whose columns are contiguous
/// (decode attention's Q x K^T).
using MatmulRowDotColumnsFn = void (*)(int64_t k, int64_t n, const float* a,
                                       const float* b, int64_t bn, float* c,
                                       int64_t cn, bool loadC);

/// x[j] = exp(x[j] - shift) for j in [0, n); returns the sum of the new
/// values (attention's softmax). Relative error ~2e-7 above exp(-87);
/// smaller results flush towards 0.
using ExpShiftedFn = float (*)(float* x, int64_t n, float shift);

/// x[j] = x[j] * scale, plus mask[j] if |mask| (two roundings, not an
/// FMA) for j in [0, n); returns the largest new value, NaNs skipped
/// (-infinity if none): attention's scaled, masked scores.
using ScaleMaxFn = float (*)(float* x, int64_t n, float scale,
                             const float* mask);

/// What a convolution's register tile does besides its product, in its
/// registers: the accumulators start from C or 0, as loadC says, plus
/// |bias| (the tile's 32 columns; null: none) and end + |residual| (rows |ldr|
/// apart, 32 columns; null: none), then max(0, x) with |relu| (a NaN
/// stays). Before its k steps the tile asks for the lines of a later tile
/// (|aheadRows| rows of 32 columns): its residual rows at |aheadResidual|
/// (|ldr| apart) and its C rows at |aheadC| (ldc apart, for writing), so
/// that a product too short to hide memory latency does not wait on them.
/// A's kc steps may come in |segments| equal runs, each |segmentStride|
/// floats after the one before (rows still |lda| apart).
struct TileEpilogue {
  const float* bias;
  const float* residual;
  int64_t ldr;
  bool relu;
  const float* aheadResidual = nullptr;
  float* aheadC = nullptr;
  int64_t aheadRows = 0;
  int64_t segments = 1;
  int64_t segmentStride = 0;
};

/// MatmulTileStreamFn with |epilogue| (null: none).
using MatmulTileFinishFn = void (*)(int64_t rows, int64_t kc, const float* a,
                                    int64_t lda, const float* b, float* c,
                                    int64_t ldc, bool loadC,
                                    const char* prefetch,
                                    int64_t prefetchLines,
                                    const TileEpilogue* epilogue);

struct MatmulTiles {
  const char* name;
  int64_t mr;  // rows per register tile
  MatmulTileFn tile;
  MatmulGemvFn gemv;
  MatmulRowTimesRowsFn rowTimesRows;
  MatmulRowDotColumnsFn rowDotColumns;
  ExpShiftedFn expShifted;
  MatmulGemvI8Fn gemvI8;
  ScaleMaxFn scaleMax;
  MatmulTileStreamFn tileStream;
  MatmulTileFinishFn tileFinish;
  MatmulGemvRowsFn gemvRows;
  // The most rows gemvRows takes in one row tile (one pass over the
  // weight); larger decode batches go through tileStream.
  int64_t gemvRowsMax;
};

/// An int4 weight in either layout (STRATA_MM_LAYOUT_PANEL_I4_F16_BLOCKS or
/// PANEL_I4_GROUPS), as the kernels walk it: the group_size / 4 quads of
/// group g of panel p from quads(p, g), 64 bytes each, and that group's 32
/// column scales (fp16 or fp32) at scales(p, g).
struct Int4Panels {
  const uint8_t* quadBase;
  const uint8_t* scaleBase;
  int64_t panelBytes, groupBytes;            // of the quads
  int64_t scalePanelBytes, scaleGroupBytes;  // of the scales
  int64_t kp, group;                         // kp: K padded to whole groups
  bool f16Scales;

  const uint8_t* quads(int64_t p, int64_t g) const {
    return quadBase + p * panelBytes + g * groupBytes;
  }
  const uint8_t* scales(int64_t p, int64_t g) const {
    return scaleBase + p * scalePanelBytes + g * scaleGroupBytes;
  }
  /// Scale of column j (0..31) of group g of panel p.
  float scale(int64_t p, int64_t g, int64_t j) const;
  /// The same weight from panel |p| on.
  Int4Panels fromPanel(int64_t p) const {
    Int4Panels w = *this;
    w.quadBase = quads(p, 0);
    w.scaleBase = scales(p, 0);
    return w;
  }
};

/// int4 weights times int8-quantized activations (strata_rt_matmul_f32_i4):
/// C[rows x 32*panels] (+)= sum over groups g of |w.group| k of
///   aScale[i * groups + g] * w.scale(p, g, j) *
///   (dot(nibbles, aq) - 8 * aSum[i * groups + g])
/// with groups = w.kp / w.group, |aq| rows of |ldaq| int8 zero-padded to
/// w.kp, panels counted from |w|'s first. Any |rows| >= 1; w.group <=
/// kMaxInt4GemvGroup, so the int32 sum of a group's products cannot
/// overflow.
constexpr int64_t kMaxInt4GemvGroup = int64_t(1) << 16;
using MatmulGemvI4Fn = void (*)(int64_t rows, int64_t panels,
                                const int8_t* aq, int64_t ldaq,
                                const float* aScale, const int32_t* aSum,
                                const Int4Panels& w, float* c, int64_t ldc,
                                bool loadC);

/// With AVX-512 VNNI (vpdpbusd) and with AVX2 (vpmaddubsw + vpmaddwd; F16C
/// for fp16 scales).
extern const MatmulGemvI4Fn kGemvI4Avx512Vnni;
extern const MatmulGemvI4Fn kGemvI4Avx2;

/// An int8 weight in STRATA_MM_LAYOUT_PANEL_I8_QUADS with per-group fp32
/// scales, as the integer-product kernels walk it: panel p holds kq / 4
/// quad rows of 128 bytes (columns 0-15, then 16-31, four k rows a 32-bit
/// lane) at base + p * kq * 32; column j of weight group g scales by
/// scales[g * scaleStride + p * 32 + j]. Activations come in groups of
/// |actGroup| k (a divisor of |group|); the last may reach past kq.
struct Int8Quads {
  const int8_t* base;
  const float* scales;
  int64_t kq, scaleStride, group, actGroup;

  const int8_t* panel(int64_t p) const { return base + p * kq * 32; }
  /// The 32 column scales of panel |p| for activation group |h|.
  const float* scalesOf(int64_t p, int64_t h) const {
    return scales + (h * actGroup / group) * scaleStride + p * 32;
  }
  /// Quad rows of activation group |h| (fewer in the last).
  int64_t quadsIn(int64_t h) const {
    const int64_t end = (h + 1) * actGroup < kq ? (h + 1) * actGroup : kq;
    return (end - h * actGroup) / 4;
  }
  Int8Quads fromPanel(int64_t p) const {
    Int8Quads w = *this;
    w.base = panel(p);
    w.scales = scales + p * 32;
    return w;
  }
};

/// int8 weights times int8-quantized activations (strata_rt_matmul_f32_i8
/// on PANEL_I8_QUADS): C[rows x 32*panels] (+)= sum over activation groups
/// h of fma-accumulated (float)dot_h * (w.scalesOf(p, h)[j] * aScale[i *
/// groups + h]), dot_h the exact int32 sum of the group's products, groups
/// = ceil(K / w.actGroup), |aq| rows of |ldaq| int8 zero-padded to groups *
/// w.actGroup. Every ISA's result is the reference's bit for bit.
using MatmulGemvI8QuadsFn = void (*)(int64_t rows, int64_t panels,
                                     const int8_t* aq, int64_t ldaq,
                                     const float* aScale,
                                     const int32_t* aSum, const Int8Quads& w,
                                     float* c, int64_t ldc, bool loadC);

/// With AVX-512 VNNI (vpdpbusd on the weights offset to unsigned, less 128
/// times the activations' sum) and with AVX2 (vpmaddubsw of |w| and a with
/// w's sign, exact in int16 pairs).
extern const MatmulGemvI8QuadsFn kGemvI8QuadsAvx512Vnni;
extern const MatmulGemvI8QuadsFn kGemvI8QuadsAvx2;

/// The activations a MatmulGemvI4Fn takes: one row a[0..k) (unit stride)
/// quantized to int8 per group of |group| k (absmax / 127, clamped, rounded
/// half away from zero), zero-padded to |kp| (a multiple of |group|), with
/// each group's scale and the sum of its int8 values. A group holding a
/// non-finite value gets an infinite scale (its outputs are not finite, as
/// the fp32 product's would not be) and its NaNs quantize to 0.
using QuantizeGroupsFn = void (*)(int64_t k, int64_t kp, int64_t group,
                                  const float* a, int8_t* aq, float* aScale,
                                  int32_t* aSum);

/// The reference QuantizeGroupsFn, for any stride |ak| between A's
/// elements; the vector sets match it bit for bit (the same fp32
/// operations in the same order; max is exact, so its order is free).
void quantizeGroupsReference(int64_t k, int64_t kp, int64_t group,
                             const float* a, int64_t ak, int8_t* aq,
                             float* aScale, int32_t* aSum);

/// With AVX-512 F/BW and with AVX2.
extern const QuantizeGroupsFn kQuantizeGroupsAvx512;
extern const QuantizeGroupsFn kQuantizeGroupsAvx2;

/// The set for this CPU (or the one a test forced).
const MatmulTiles& matmulTiles();

extern const MatmulTiles kMatmulTilesAvx512;
extern const MatmulTiles kMatmulTilesAvx2;

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_MATMUL_F32_TILES_H_
