//===- PatternUtils.cpp - Helpers shared by the fusion patterns -----------===//
// SPDX-License-Identifier: Apache-2.0
// See PatternUtils.h.

#include "passes/PatternUtils.h"

#include "dialects/strata/IR/StrataOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;

namespace strata {

std::optional<double> getSplatFloatConstant(Value v) {
  auto constant = v.getDefiningOp<ir::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

bool isFloatConstant(Value v, double expected, double relTol) {
  std::optional<double> value = getSplatFloatConstant(v);
  return value && std::fabs(*value - expected) <= relTol * std::fabs(expected);
}

bool matchEitherOrder(Value a, Value b, bool commutative,
                      llvm::function_ref<bool(Value, Value)> match) {
  return match(a, b) || (commutative && match(b, a));
}

} // namespace strata
