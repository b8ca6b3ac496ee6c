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
};

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_CONV_COLUMNS_H_
