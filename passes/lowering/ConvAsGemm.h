//===- ConvAsGemm.h - Convolutions as im2col + contraction -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_PASSES_LOWERING_CONVASGEMM_H_
#define STRATA_PASSES_LOWERING_CONVASGEMM_H_

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/IR/Builders.h"

namespace strata::lowering {

/// Convolution |op| over |padded| (its input [N, C, S...] placed and
/// padded as the taps read it) and weight |w| as a column tensor and one
/// contraction the CPU back end hands to the runtime's matmul, plus
/// |bias| (may be null); null where that form does not apply (see
/// ConvAsGemm.cpp).
mlir::Value convAsGemm(mlir::OpBuilder &b, mlir::Location loc, ir::ConvOp op,
                       mlir::Value padded, mlir::Value w, mlir::Value bias);

/// Channels-last convolution |op| (input |x| [N, S..., C], weight |w|
/// [K..., C, M]) as one contraction with the positions of every image as
/// rows: A the input itself (1x1, unit strides, no padding) or its
/// columns [N * P, K * C], B the weight [K * C, M], plus |bias|.
mlir::Value convChannelsLastAsGemm(mlir::OpBuilder &b, mlir::Location loc,
                                   ir::ConvOp op, mlir::Value x, mlir::Value w,
                                   mlir::Value bias);

} // namespace strata::lowering

#endif // STRATA_PASSES_LOWERING_CONVASGEMM_H_
