//===- conv_f32.cc - strata_rt_conv_f32: channels-last convolutions -------===//
// SPDX-License-Identifier: Apache-2.0
// Decodes and checks the params block, then runs the convolution as the
// fp32 matmul of its columns, which the matmul gathers block by block from
// the input (conv_columns.h): no column matrix is ever stored, and the
// bias, a residual and a ReLU are applied in the matmul's C tiles.

#include "conv_columns.h"
#include "matmul_f32.h"

#include "../run_context.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

extern "C" void strataConvF32(strata_rt_context_t* context,
                              const int64_t* params) {
  pollCancel(context);
  const ConvParams p = ConvParams::decode(params);
  if (!p.valid()) {
    failRunInternal(context, "strata_rt_conv_f32: geometry", p.columns.spatial);
    return;
  }
  runConvF32(context, p.columns, p.weight, p.outChannels, p.bias, p.residual,
             p.relu, p.out);
}

}  // namespace strata::runtime::kernels
