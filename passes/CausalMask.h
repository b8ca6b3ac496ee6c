//===- CausalMask.h - Triangular attention masks ----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Recognizes the causal masks exporters build around attention scores (a
// sliced lower-triangular bias buffer, Trilu of a constant, a comparison of
// position ranges, Where/Equal/Not/And over them) by computing, symbolically
// (ShapeArithmetic.h), which key each query row sees.

#ifndef STRATA_PASSES_CAUSALMASK_H_
#define STRATA_PASSES_CAUSALMASK_H_

#include "passes/ShapeArithmetic.h"

#include "mlir/IR/Value.h"

#include <optional>

namespace strata {

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

/// A mask that is an end-aligned causal mask and another mask.
struct CausalSplit {
  /// The other mask: an i1 condition, true where it keeps a key, or (with
  /// |addedToHidden|) a float mask; null when there is none.
  mlir::Value rest;
  /// For an additive mask `where(C, zero, fill)`: the scalars it adds for
  /// kept and hidden keys (`where(rest, zero, fill)` is the other mask).
  mlir::Value zero, fill;
  /// The mask is `causal + rest` (both additive): hidden keys score the
  /// fill plus |rest|, strata.attention's `mask_hidden`.
  bool addedToHidden = false;
};

/// Splits the causal part off a mask of |kind|, for |sq| and |sk|, as HF's
/// masking utilities combine causal and padding masks:
/// - Keep (`where(C, scores, fill)`) or Additive (`where(C, 0, fill)`)
///   whose C is `and(causal, other)` (nested, with constant-true conjuncts
///   and broadcasts of C);
/// - Additive `causal + other` (older releases add the padding mask to a
///   float causal mask).
std::optional<CausalSplit> splitEndAlignedCausalMask(mlir::Value mask,
                                                     MaskKind kind,
                                                     const SymbolicIndex &sq,
                                                     const SymbolicIndex &sk);

} // namespace strata

#endif // STRATA_PASSES_CAUSALMASK_H_
