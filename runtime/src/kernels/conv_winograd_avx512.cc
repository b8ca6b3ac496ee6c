//===- conv_winograd_avx512.cc - F(2x2, 3x3) transforms for AVX-512 ------===//
// SPDX-License-Identifier: Apache-2.0

#include "conv_winograd_impl.h"

namespace strata::runtime::kernels {

const WinogradTransforms kWinogradTransformsAvx512 = {winogradInput,
                                                      winogradOutput};

}  // namespace strata::runtime::kernels
