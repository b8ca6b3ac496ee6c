//===- conv_f32.cc - strata_rt_conv_f32: channels-last convolutions -------===//
// SPDX-License-Identifier: Apache-2.0
// Decodes and checks the params block, then runs the convolution as the
// fp32 matmul of its columns, which the matmul gathers block by block from
// the input (conv_columns.h): no column matrix is ever stored, and the
// bias, a residual and a ReLU are applied in the matmul's C tiles.

#include "conv_columns.h"
#include "matmul_f32.h"
#include "param_address.h"

#include "../run_context.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

extern "C" void strataConvF32(strata_rt_context_t* context,
                              const int64_t* params) {
  pollCancel(context);
  ConvColumns columns;
  columns.spatial = params[STRATA_CONV_SPATIAL];
  columns.images = params[STRATA_CONV_BATCH];
  columns.channels = params[STRATA_CONV_CHANNELS];
  columns.input = paramAddress<const float>(params[STRATA_CONV_INPUT]);
  const int64_t dims = columns.spatial >= 1 &&
                               columns.spatial <= ConvColumns::kMaxSpatial
                           ? columns.spatial
                           : 0;
  for (int64_t d = 0; d < dims; ++d) {
    columns.in[d] = params[STRATA_CONV_IN_SIZES + d];
    columns.out[d] = params[STRATA_CONV_OUT_SIZES + d];
    columns.kernel[d] = params[STRATA_CONV_KERNEL + d];
    columns.stride[d] = params[STRATA_CONV_STRIDES + d];
    columns.dilation[d] = params[STRATA_CONV_DILATIONS + d];
    columns.padBegin[d] = params[STRATA_CONV_PADS_BEGIN + d];
  }
  const int64_t outChannels = params[STRATA_CONV_OUT_CHANNELS];
  const auto* weight = paramAddress<const float>(params[STRATA_CONV_WEIGHT]);
  auto* out = paramAddress<float>(params[STRATA_CONV_OUTPUT]);
  // Every field but N is a compile-time constant: a bad one is a compiler
  // bug, not bad input.
  if (!columns.valid() || outChannels < 1 || outChannels > (int64_t{1} << 30) ||
      !weight || (!out && columns.images > 0)) {
    failRunInternal(context, "strata_rt_conv_f32: geometry", columns.spatial);
    return;
  }
  runConvF32(context, columns, weight, outChannels,
             paramAddress<const float>(params[STRATA_CONV_BIAS]),
             paramAddress<const float>(params[STRATA_CONV_RESIDUAL]),
             (params[STRATA_CONV_FLAGS] & STRATA_CONV_FLAG_RELU) != 0, out);
}

}  // namespace strata::runtime::kernels
