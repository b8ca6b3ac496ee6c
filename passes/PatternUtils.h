//===- PatternUtils.h - Helpers shared by the fusion patterns --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Constant matching with tolerance and commutative operand matching, so each
// fusion pattern accepts every exporter spelling of the same math.

#ifndef STRATA_PASSES_PATTERNUTILS_H_
#define STRATA_PASSES_PATTERNUTILS_H_

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace strata {

/// The value of |v| if it is a strata.constant splat of a float type (any
/// shape; a broadcast scalar is still a scalar), else std::nullopt.
std::optional<double> getSplatFloatConstant(mlir::Value v);

/// True if |v| is a float splat constant within relative tolerance |relTol|
/// of |expected|.
bool isFloatConstant(mlir::Value v, double expected, double relTol = 1e-3);

/// For a binary op with operands (a, b), tries |match|(a, b) then, if the op
/// is commutative, |match|(b, a). Returns true on the first success.
bool matchEitherOrder(mlir::Value a, mlir::Value b, bool commutative,
                      llvm::function_ref<bool(mlir::Value, mlir::Value)> match);

/// The only user of |v| if it has exactly one use, else nullptr.
mlir::Operation *soleUser(mlir::Value v);

/// Matches |n| / sqrt(|v|) built from |v|'s single-use chain:
/// Div(n, Sqrt(v)), Mul(n, Reciprocal(Sqrt(v))), Mul(n, Div(1, Sqrt(v))) or
/// Mul(n, Rsqrt(v)), multiplications in either operand order. Appends the
/// matched ops to |ops| and returns the result, or a null value.
mlir::Value matchDivideBySqrt(mlir::Value v, mlir::Value n,
                              llvm::SmallVectorImpl<mlir::Operation *> &ops);

/// The `report-missed` remarks of a fusion pass, emitted once after its
/// rewrite reached a fixpoint: for every |RootOp| under |root| that
/// |match|(op, reason, candidate) does not match although it sets
/// |candidate| (left true by matchers without that notion), one remark
/// "<message><reason>" at the op.
template <typename RootOp, typename MatchFn>
void remarkMissedFusions(mlir::Operation *root, MatchFn match,
                         llvm::StringRef message) {
  root->walk([&](RootOp op) {
    std::string reason;
    bool candidate = true;
    if (!match(op, reason, candidate) && candidate)
      op.emitRemark() << message << reason;
  });
}

} // namespace strata

#endif // STRATA_PASSES_PATTERNUTILS_H_
