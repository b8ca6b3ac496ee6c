//===- conv_columns.h - A channels-last convolution's columns, on demand --===//
// SPDX-License-Identifier: Apache-2.0
// A channels-last convolution is the matmul of its columns [N * P, K * C]
// (row: an image's output position; k: a tap's channel) and the weight
// [K * C, M]. The columns repeat every input element up to K times, so
// they are never stored: the matmul gathers each block of them it
// multiplies (ConvColumns::gather) into its A block, from the input in
// place, with zeros where a tap falls into the padding.

#ifndef STRATA_RUNTIME_SRC_KERNELS_CONV_COLUMNS_H_
#define STRATA_RUNTIME_SRC_KERNELS_CONV_COLUMNS_H_

#include <cstdint>

namespace strata::runtime::kernels {

/// The geometry of a channels-last convolution over D = |spatial| (1..3)
/// dims: input [N, S..., C] contiguous at |input|, output [N, O..., M].
struct ConvColumns {
  static constexpr int kMaxSpatial = 3;
  int64_t spatial = 0;
  int64_t images = 0;    // N
  int64_t channels = 0;  // C
  int64_t in[kMaxSpatial] = {}, out[kMaxSpatial] = {};
  int64_t kernel[kMaxSpatial] = {}, stride[kMaxSpatial] = {};
  int64_t dilation[kMaxSpatial] = {}, padBegin[kMaxSpatial] = {};
  const float* input = nullptr;

  /// N * P rows.
  int64_t rows() const;
  /// K * C.
  int64_t depth() const;
  /// Whether the fields describe a convolution (sizes >= 1, output extents
  /// that the input, pads, kernel, strides and dilations give, with some
  /// end padding allowed), so that gather stays inside the input.
  bool valid() const;
  /// Columns [k0, k0 + kc) of rows [r0, r0 + rows) into |dst| (rows of
  /// |kc| floats).
  void gather(int64_t r0, int64_t rows, int64_t k0, int64_t kc,
              float* dst) const;

  /// Whether the matmul should read columns in place where it can
  /// (rowsInPlace), in k blocks of whole tap rows or equal parts of one
  /// (blockEnd) and register tiles within one output row: unit dilation
  /// along the last dim, output rows of at least 4 positions.
  bool readsInPlace() const;
  /// The end of the k block that starts at |k0| (a block start): tap rows
  /// longer than |most| columns split into equal parts of at most |most|;
  /// shorter ones as many to a block as fit (2-D; one otherwise), so that
  /// a 7 x 7 stem over 3 channels (21 columns a tap row) is one block.
  int64_t blockEnd(int64_t k0, int64_t most) const;
  /// Where the matmul finds rows of columns in place.
  struct RowsInPlace {
    const float* first = nullptr;  // the first row's first column
    int64_t lda = 0;               // floats from a row to the next
    int64_t segments = 1;          // tap rows the columns span
    int64_t segmentStride = 0;     // floats from a tap row to the next
  };
  /// Columns [k0, k0 + kc) of rows [r, r + rows) (a block of blockEnd), if
  /// the rows lie in one output row and every column of them inside the
  /// input; |first| null otherwise.
  RowsInPlace rowsInPlace(int64_t r, int64_t rows, int64_t k0,
                          int64_t kc) const;
};

/// A STRATA_CONV_* params block (the convolution imports'), decoded.
struct ConvParams {
  ConvColumns columns;
  int64_t outChannels = 0;
  const float* weight = nullptr;
  const float* bias = nullptr;      // null: none
  const float* residual = nullptr;  // null: none
  bool relu = false;
  float* out = nullptr;

  static ConvParams decode(const int64_t* params);
  /// Whether the fields are what a compiler emits: a valid geometry, a
  /// weight, and an output where there are images. Every field but N is a
  /// compile-time constant, so a failure is a compiler bug, not bad input.
  bool valid() const;
};

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_CONV_COLUMNS_H_
