//===- CausalMask.h - Symbolic extents and triangular masks ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Recognizes the causal masks exporters build around attention scores (a
// sliced lower-triangular bias buffer, Trilu of a constant, Where/Equal/Not
// over them) by computing, symbolically, which key each query row sees.
// Sequence lengths are symbolic extents: `extent(v, d)` traced back through
// transposes, splits, concats and reshapes to one canonical (value, dim), so
// `Shape(K)[-2] - Shape(Q)[-2]` computed in the graph compares equal to
// `Sk - Sq` taken from the attention operands.

#ifndef STRATA_PASSES_CAUSALMASK_H_
#define STRATA_PASSES_CAUSALMASK_H_

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

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
  bool operator==(const SymbolicIndex &other) const;
  bool operator!=(const SymbolicIndex &other) const {
    return !(*this == other);
  }
  std::optional<int64_t> getConstant() const {
    if (terms.empty())
      return constant;
    return std::nullopt;
  }
};

/// Extent |dim| of |v| (a ranked tensor): a constant when static, else the
/// canonical symbolic extent.
SymbolicIndex extentOf(mlir::Value v, int64_t dim);

/// How a mask operand of the scores selects the visible keys.
enum class MaskKind {
  /// i1, true where the key is visible (`where(c, scores, fill)`).
  Keep,
  /// i1, true where the key is hidden (`where(c, fill, scores)`).
  Drop,
  /// float, 0 where visible and <= -1e4 where hidden (`scores + m`).
  Additive,
};

/// True if |mask| of |kind| hides exactly the keys after each query aligned
/// to the end (query i sees key j iff j <= i + Sk - Sq), where |sq| and |sk|
/// are the query and key sequence lengths, i.e. the `causal` attribute of
/// strata.attention.
bool isEndAlignedCausalMask(mlir::Value mask, MaskKind kind,
                            const SymbolicIndex &sq, const SymbolicIndex &sk);

} // namespace strata

#endif // STRATA_PASSES_CAUSALMASK_H_
