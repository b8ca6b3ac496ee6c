//===- conv_winograd.h - 3x3 convolutions with Winograd's F(2x2, 3x3) -----===//
// SPDX-License-Identifier: Apache-2.0
// A 3 x 3 convolution with unit strides computes each 2 x 2 block of its
// outputs (a tile) from a 4 x 4 patch of its input: the patch's transform
// V = B^T d B (16 points per channel), 16 matmuls over the channels with
// the weight's transform U (compile time, strata_winograd_f23_weight), and
// the result's transform Y = A^T M A: 16 products per channel pair and
// tile instead of 36. The transforms are additions only, so every ISA's
// version gives the same bits; the matmuls are the fp32 tiles'.

#ifndef STRATA_RUNTIME_SRC_KERNELS_CONV_WINOGRAD_H_
#define STRATA_RUNTIME_SRC_KERNELS_CONV_WINOGRAD_H_

#include <cstdint>

#include "conv_columns.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

/// A channels-last 3 x 3 convolution with unit strides, input [N, H, W, C],
/// output [N, Ho, Wo, M], as tiles of 2 x 2 outputs numbered image by
/// image, row by row.
struct WinogradShape {
  int64_t images, height, width, channels;
  int64_t outHeight, outWidth, outChannels;
  int64_t padTop, padLeft;
  int64_t tileRows, tileColumns;  // ceil(Ho / 2), ceil(Wo / 2)

  int64_t tiles() const { return images * tileRows * tileColumns; }
};

/// The patch transforms of tiles [first, first + count) into |v|: point p
/// of tile i's channel c at v[(p * count + i) * C + c]. |zeros| holds C
/// zeros (the padding).
using WinogradInputFn = void (*)(const WinogradShape& s, const float* input,
                                 const float* zeros, int64_t first,
                                 int64_t count, float* v);
/// Outputs [column0, column0 + columns) of tiles [first, first + count)
/// from |m| (point p of tile i, column j at m[(p * count + i) * 32 + j]),
/// plus bias[column] and residual (shaped as |out|; |zeros|: 32 zeros for
/// either when absent), clamped at 0 with |relu|, into |out|; only the
/// positions inside the output. |out| may be |residual|.
using WinogradOutputFn = void (*)(const WinogradShape& s, const float* m,
                                  int64_t first, int64_t count,
                                  int64_t column0, int64_t columns,
                                  const float* bias, const float* residual,
                                  const float* zeros, bool relu, float* out);
struct WinogradTransforms {
  WinogradInputFn input;
  WinogradOutputFn output;
};
extern const WinogradTransforms kWinogradTransformsAvx512;
extern const WinogradTransforms kWinogradTransformsAvx2;
extern const WinogradTransforms kWinogradTransformsGeneric;

/// Whether strata_rt_conv_f32_winograd takes |columns|: 2-D, a 3 x 3
/// kernel, unit strides and dilations.
bool winogradApplies(const ConvColumns& columns);

/// strata_rt_conv_f32_winograd's work: the convolution of |columns| (valid,
/// winogradApplies) with the transformed, packed weight |u| into |out|,
/// epilogues as runConvF32's.
void runConvWinogradF32(strata_rt_context_t* context,
                        const ConvColumns& columns, const float* u,
                        int64_t outChannels, const float* bias,
                        const float* residual, bool relu, float* out);

/// strata_rt_conv_f32_winograd of the kernel ABI.
extern "C" void strataConvF32Winograd(strata_rt_context_t* context,
                                      const int64_t* params);

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_CONV_WINOGRAD_H_
