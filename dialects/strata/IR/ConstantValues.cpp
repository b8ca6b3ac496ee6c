//===- ConstantValues.cpp - Values that strata.constant defines -----------===//
// SPDX-License-Identifier: Apache-2.0
// See ConstantValues.h.

#include "dialects/strata/IR/ConstantValues.h"

#include "dialects/strata/IR/StrataOps.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace strata::ir {

std::optional<double> getSplatFloatConstant(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

} // namespace strata::ir
