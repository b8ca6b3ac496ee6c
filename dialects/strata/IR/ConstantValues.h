//===- ConstantValues.h - Values that strata.constant defines ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Reading the contents of strata.constant ops, shared by the importer and the
// fusion patterns.

#ifndef STRATA_DIALECTS_STRATA_IR_CONSTANTVALUES_H_
#define STRATA_DIALECTS_STRATA_IR_CONSTANTVALUES_H_

#include "mlir/IR/Value.h"

#include <optional>

namespace strata::ir {

/// The element of |v| if a strata.constant defines it as a floating-point
/// splat (any shape), else std::nullopt.
std::optional<double> getSplatFloatConstant(mlir::Value v);

} // namespace strata::ir

#endif // STRATA_DIALECTS_STRATA_IR_CONSTANTVALUES_H_
