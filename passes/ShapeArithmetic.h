//===- ShapeArithmetic.h - Symbolic extents and shape values ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Reads the shape arithmetic of imported graphs symbolically: an extent of a
// tensor, or an element of a 1-D shape tensor built with Shape, Gather,
// Slice, Concat, Reshape, Cast and integer math, as `constant + sum(coeff *
// extent)` over canonical extents, so `Shape(K)[-2] - Shape(Q)[-2]` computed
// in the graph compares equal to `Sk - Sq` taken from the attention operands;
// and compares such indices (equal, known <=, known min/max).

#ifndef STRATA_PASSES_SHAPEARITHMETIC_H_
#define STRATA_PASSES_SHAPEARITHMETIC_H_

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <tuple>

namespace strata {

/// An integer `constant + sum(coeff * extent(value, dim))` over canonical
/// extents. Two indices are equal when their canonical forms are.
struct SymbolicIndex {
  int64_t constant = 0;
  /// (value, dim, coeff), sorted by (value, dim), no zero coefficients.
  llvm::SmallVector<std::tuple<mlir::Value, int64_t, int64_t>, 2> terms;

  static SymbolicIndex of(int64_t c) {
    SymbolicIndex s;
    s.constant = c;
    return s;
  }
  SymbolicIndex operator+(const SymbolicIndex &other) const;
  SymbolicIndex operator-(const SymbolicIndex &other) const;
  /// The index times |factor|.
  SymbolicIndex scaled(int64_t factor) const;
  bool operator==(const SymbolicIndex &other) const;
  bool operator!=(const SymbolicIndex &other) const {
    return !(*this == other);
  }
  std::optional<int64_t> getConstant() const {
    if (terms.empty())
      return constant;
    return std::nullopt;
  }
  /// True if the index is >= 0 for every value of its extents (a
  /// non-negative constant plus non-negative multiples of extents).
  bool isNonNegative() const;
  /// Writes the index as `2*%arg0[1] - 'strata.shape'[0] + 3`: each extent
  /// as the block argument or op it is read from and its dim.
  void print(llvm::raw_ostream &os) const;
};

/// True if |a| <= |b| for every value of the extents.
bool isKnownLessEqual(const SymbolicIndex &a, const SymbolicIndex &b);

/// The smaller of |a| and |b| when one is known to be (isKnownLessEqual),
/// else std::nullopt.
std::optional<SymbolicIndex> knownMin(const SymbolicIndex &a,
                                      const SymbolicIndex &b);

/// The larger of |a| and |b| when one is known to be, else std::nullopt.
std::optional<SymbolicIndex> knownMax(const SymbolicIndex &a,
                                      const SymbolicIndex &b);

/// Number of elements of |v| if it is a tensor of static shape, else
/// std::nullopt.
std::optional<int64_t> staticElementCount(mlir::Value v);

/// Extent |dim| of |v| (a ranked tensor): a constant when static, else the
/// canonical symbolic extent. Dims of function arguments with the same
/// ONNX dim name (`strata.dims`) are one extent: the runtime binds each name
/// to one value per run.
SymbolicIndex extentOf(mlir::Value v, int64_t dim);

/// Element |index| of |v|, a 0-D or 1-D integer tensor of static size
/// computed from shapes and constants; std::nullopt when it is not such a
/// value (a data-dependent integer, an index out of range).
std::optional<SymbolicIndex> elementOf(mlir::Value v, int64_t index);

/// Extent |dim| of the result of |op| from its target shape: an entry, the
/// input extent a 0 copies, or the -1 inferred from the element count when
/// the other entries cancel all but one of the input's symbolic extents
/// (`[B, S, 64] -> [B, S, -1, 16]` gives 4); std::nullopt when unknown.
std::optional<SymbolicIndex> reshapeExtentOf(strata::ir::ReshapeOp op,
                                             int64_t dim);

/// Every element of a 0-D or 1-D integer tensor as by elementOf, or
/// std::nullopt when one is unknown or the tensor has more than |maxCount|
/// elements.
std::optional<llvm::SmallVector<SymbolicIndex>>
elementsOf(mlir::Value v, int64_t maxCount = 64);

/// The result shapes of |op| recomputed from its operands' types and the
/// symbolic values of its shape operands (strata-fold-shape-arithmetic's
/// rules); failure for an op without a rule.
mlir::LogicalResult
inferResultShapes(mlir::Operation *op,
                  llvm::SmallVectorImpl<llvm::SmallVector<int64_t>> &shapes);

} // namespace strata

#endif // STRATA_PASSES_SHAPEARITHMETIC_H_
