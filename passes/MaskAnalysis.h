//===- MaskAnalysis.h - The keys an attention mask hides --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Reads the masks exporters build around attention scores (sliced
// triangular bias buffers, Trilu, comparisons of position ranges, Where,
// Equal, Not, And, Or over them) as the band of keys each query row sees,
// computed symbolically (ShapeArithmetic.h): causal, sliding-window and
// sink masks become attributes of strata.attention instead of data.

#ifndef STRATA_PASSES_MASKANALYSIS_H_
#define STRATA_PASSES_MASKANALYSIS_H_

#include "passes/ShapeArithmetic.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace strata {

/// How a mask operand of the scores selects the visible keys.
enum class MaskKind {
  /// i1, true where the key is visible (`where(c, scores, fill)`).
  Keep,
  /// i1, true where the key is hidden (`where(c, fill, scores)`).
  Drop,
  /// float, 0 where visible and a hidden fill (isHiddenFill) where hidden
  /// (`scores + m`).
  Additive,
};

/// True if adding |x| to a score hides the key: softmax gives it no weight
/// that matters (-1e4 and below: exporters use -1e4, -1e9, finfo.min, -inf).
bool isHiddenFill(double x);

/// The keys a mask over [rows, cols] (its last two dims) lets each query
/// row see: row i sees key j iff j <= i + diagonal (when set) and either
/// j >= i + leftEdge (when set) or j < sinks. Bounds that hide nothing in
/// the mask's extents are left unset.
struct MaskBand {
  /// The last key row i sees is i + diagonal: Sk - Sq for a causal mask
  /// aligned to the end.
  std::optional<SymbolicIndex> diagonal;
  /// The first key row i sees is i + leftEdge, sinks aside: a sliding
  /// window.
  std::optional<SymbolicIndex> leftEdge;
  /// The first |sinks| keys are visible whatever |leftEdge| says.
  int64_t sinks = 0;
  SymbolicIndex rows, cols;

  /// The keys a row sees up to its diagonal, when both edges are set:
  /// diagonal - leftEdge + 1.
  std::optional<SymbolicIndex> window() const;
  /// True if the band is strata.attention's `causal` for |sq| queries and
  /// |sk| keys: query i sees key j iff j <= i + sk - sq.
  bool isEndAlignedCausal(const SymbolicIndex &sq,
                          const SymbolicIndex &sk) const;
  /// The window W if the band is strata.attention's `causal` with `window
  /// = W` (a constant >= 1) and `sinks` for |sq| queries and |sk| keys:
  /// query i sees key j iff j <= i + sk - sq and (j > i + sk - sq - W or
  /// j < sinks).
  std::optional<int64_t> endAlignedWindow(const SymbolicIndex &sq,
                                          const SymbolicIndex &sk) const;
  /// Writes `rows R, cols C, diagonal D, window W, sinks S` (`none` for an
  /// unset bound).
  void print(llvm::raw_ostream &os) const;
};

/// The band |mask| of |kind| shows, or std::nullopt when the visible keys
/// are not a band (a padding mask, data, an unsupported spelling).
std::optional<MaskBand> analyzeMask(mlir::Value mask, MaskKind kind);

/// A mask that is a band and another mask.
struct MaskSplit {
  MaskBand band;
  /// The other mask: an i1 condition, true where it keeps a key, or (with
  /// |addedToHidden|) a float mask; null when there is none.
  mlir::Value rest;
  /// For an additive mask `where(C, zero, fill)`: the scalars it adds for
  /// kept and hidden keys (`where(rest, zero, fill)` is the other mask).
  mlir::Value zero, fill;
  /// The mask is `band + rest` (both additive): hidden keys score the
  /// fill plus |rest|, strata.attention's `mask_hidden`.
  bool addedToHidden = false;
};

/// Splits a band for which |wanted| holds off a mask of |kind|, as HF's
/// masking utilities combine causal and padding masks:
/// - Keep (`where(C, scores, fill)`) or Additive (`where(C, 0, fill)`)
///   whose C is `and(band, other)` (nested, with constant-true conjuncts
///   and broadcasts of C);
/// - Additive `band + other` (older releases add the padding mask to a
///   float causal mask).
std::optional<MaskSplit>
splitMask(mlir::Value mask, MaskKind kind,
          llvm::function_ref<bool(const MaskBand &)> wanted);

} // namespace strata

#endif // STRATA_PASSES_MASKANALYSIS_H_
