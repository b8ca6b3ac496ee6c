//===- ShapeRules.h - Broadcasting and shape inference rules ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Pure functions over static/dynamic extents shared by the op verifiers, the
// importer's shape inference and codegen. Dynamic extents are
// mlir::ShapedType::kDynamic.

#ifndef STRATA_DIALECTS_STRATA_IR_SHAPERULES_H_
#define STRATA_DIALECTS_STRATA_IR_SHAPERULES_H_

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace strata::ir {

/// Numpy/ONNX multidirectional broadcast of two shapes. Returns std::nullopt
/// when two static extents differ and neither is 1. A dynamic extent against
/// a static extent N > 1 gives N; against 1 or another dynamic, dynamic.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// True if |actual| could be |expected|: same rank and every pair of extents
/// equal or at least one dynamic.
bool isCompatibleShape(llvm::ArrayRef<int64_t> expected,
                       llvm::ArrayRef<int64_t> actual);

/// True if |from| can be broadcast (ONNX Expand rules) into |to| exactly:
/// rank(from) <= rank(to) and each trailing-aligned static extent of |from|
/// is 1 or matches |to|.
bool isBroadcastableTo(llvm::ArrayRef<int64_t> from,
                       llvm::ArrayRef<int64_t> to);

/// Maps |axis| in [-rank, rank) to [0, rank); std::nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Result shape of numpy.matmul(lhs, rhs), including 1-D promotion and batch
/// broadcasting. Returns std::nullopt for rank-0 operands, mismatched static
/// contraction extents or non-broadcastable batch dims.
std::optional<llvm::SmallVector<int64_t>>
inferMatmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// Shape after reducing |normalizedAxes| (each in [0, rank)) of |shape|.
llvm::SmallVector<int64_t> inferReduceShape(llvm::ArrayRef<int64_t> shape,
                                            llvm::ArrayRef<int64_t> normalizedAxes,
                                            bool keepDims);

/// Extent of ONNX Slice's result along one axis of static extent |dim| for
/// |start|, |end| and a non-zero |step|, with ONNX's clamping (negative
/// bounds count from the end; out-of-range bounds clamp; no overflow for
/// INT64_MIN/INT64_MAX bounds).
int64_t sliceExtent(int64_t dim, int64_t start, int64_t end, int64_t step);

/// Number of elements, or std::nullopt if any extent is dynamic or the
/// product overflows int64.
std::optional<int64_t> staticElementCount(llvm::ArrayRef<int64_t> shape);

/// The output extent of a sliding window (convolution, pooling) over an
/// extent |size| padded by |begin| and |end|: the window of |kernel| taps
/// |dilation| apart moved by |stride|; rounded up with |ceil| (less one
/// when that last window would start past the input and its begin
/// padding). Dynamic if |size| is; negative when no window fits.
int64_t windowExtent(int64_t size, int64_t kernel, int64_t stride,
                     int64_t dilation, int64_t begin, int64_t end,
                     bool ceil = false);

/// Formats a shape as "2x?x64" (scalar: "scalar") for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

} // namespace strata::ir

#endif // STRATA_DIALECTS_STRATA_IR_SHAPERULES_H_
