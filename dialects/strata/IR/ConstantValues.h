//===- ConstantValues.h - Values known at compile time ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The one evaluator of scalar constants in strata IR (splats, fills and the
// elementwise math exporters write over them), shared by the importer and
// every pass that asks what value an operand holds.

#ifndef STRATA_DIALECTS_STRATA_IR_CONSTANTVALUES_H_
#define STRATA_DIALECTS_STRATA_IR_CONSTANTVALUES_H_

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"

#include <optional>

namespace strata::ir {

/// The number |attr| holds: a float, an integer (signed unless its type is
/// unsigned) or a bool as 0/1; std::nullopt for anything else or an integer
/// wider than 64 bits.
std::optional<double> getNumber(mlir::Attribute attr);

/// True if |op| is an elementwise strata op over floats that
/// applyFloatElementwise evaluates: add, sub, mul, div, pow, max, min, neg,
/// abs, sqrt, rsqrt, reciprocal, exp, log, erf, tanh, sigmoid or relu with
/// one ranked float result.
bool isFloatElementwiseOp(mlir::Operation *op);

/// |op| (isFloatElementwiseOp) applied to |operands|, one per operand, in
/// double precision with real-number semantics; NaN propagates through max
/// and min as in ONNX. NaN for any other op.
double applyFloatElementwise(mlir::Operation *op,
                             llvm::ArrayRef<double> operands);

/// The value every element of |v| holds when it is known at compile time:
/// a splat strata.constant or a constant_of_shape (float, integer or bool),
/// broadcast or reshaped, converted by strata.cast (to i1: != 0; to an
/// integer: truncated toward zero, unknown when out of range; between
/// floats: kept, as float math here is in reals), or float elementwise ops
/// over such values (`sqrt(float(64))`). Integer arithmetic is not
/// evaluated (its rounding would be lost). std::nullopt otherwise.
std::optional<double> evaluateScalarConstant(mlir::Value v);

} // namespace strata::ir

#endif // STRATA_DIALECTS_STRATA_IR_CONSTANTVALUES_H_
