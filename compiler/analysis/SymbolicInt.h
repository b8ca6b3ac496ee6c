//===- SymbolicInt.h - Integers as functions of input dims ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The arithmetic the driver's ExtentEvaluator and the CPU memory plan run
// the generated code's index math with: each value an affine expression
// over symbols (one per input dim) where it is known exactly, and a closed
// interval always.

#ifndef STRATA_COMPILER_ANALYSIS_SYMBOLICINT_H_
#define STRATA_COMPILER_ANALYSIS_SYMBOLICINT_H_

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace strata {

/// An integer the generated code computes at run time.
struct SymbolicInt {
  /// Its exact value over the symbols, or null when only the interval is
  /// known.
  mlir::AffineExpr expr;
  /// Bounds over every input within its maxima, closed.
  int64_t lo = 0, hi = 0;
};

namespace symbolic {

/// A value, or nothing known about it (any int64).
using Sym = std::optional<SymbolicInt>;

/// The context of the expressions and each symbol's closed range.
struct Env {
  mlir::MLIRContext *ctx;
  llvm::ArrayRef<std::pair<int64_t, int64_t>> ranges;
};

/// A value from an expression and an interval: the expression is put in a
/// canonical form and the interval narrowed to the expression's. Nothing
/// (any int64) when the interval leaves int64, where the code's arithmetic
/// wraps; no expression when it leaves [-2^42, 2^42].
Sym make(mlir::AffineExpr expr, __int128 lo, __int128 hi, const Env &env);
Sym constant(int64_t value, const Env &env);
/// An integer or index attribute's value (i1 as 0/1).
Sym constantOf(mlir::Attribute attr, const Env &env);
bool isConst(const Sym &a);

Sym add(const Sym &a, const Sym &b, const Env &env);
Sym sub(const Sym &a, const Sym &b, const Env &env);
Sym mul(const Sym &a, const Sym &b, const Env &env);
enum class Rounding { TowardZero, Floor, Ceil };
/// |a| divided by a positive |b| (nothing for a divisor that may be < 1).
Sym divide(const Sym &a, const Sym &b, Rounding rounding, const Env &env);
Sym remainder(const Sym &a, const Sym &b, const Env &env);
/// |cond| ? |t| : |f|, exact when |cond| is decided or both sides agree.
Sym pick(const Sym &cond, const Sym &t, const Sym &f, const Env &env);
Sym maxOrMin(const Sym &a, const Sym &b, bool isMax, const Env &env);

/// An arith op on integers or indices (add, sub, mul, divisions, rem,
/// max, min, select, cmpi, and/or/xor of i1, casts) from its operands'
/// values; nothing for any other op.
Sym applyScalar(mlir::Operation *op, llvm::ArrayRef<Sym> operands,
                const Env &env);

/// The range of |e| with the symbols over their ranges.
std::optional<std::pair<int64_t, int64_t>> rangeOf(mlir::AffineExpr e,
                                                   const Env &env);

} // namespace symbolic
} // namespace strata

#endif // STRATA_COMPILER_ANALYSIS_SYMBOLICINT_H_
