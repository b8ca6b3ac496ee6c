//===- StrataDialect.cpp - The strata dialect -----------------------------===//
// SPDX-License-Identifier: Apache-2.0
// Dialect registration and constant materialization.

#include "dialects/strata/IR/StrataDialect.h"
#include "dialects/strata/IR/StrataOps.h"

#include "dialects/strata/IR/StrataOpsDialect.cpp.inc"

using namespace mlir;

namespace strata::ir {

void StrataDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/strata/IR/StrataOps.cpp.inc"
      >();
}

// Folders return attributes; this turns them back into strata.constant.
Operation *StrataDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

} // namespace strata::ir
