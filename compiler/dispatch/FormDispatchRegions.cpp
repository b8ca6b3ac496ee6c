//===- FormDispatchRegions.cpp - One region per unit of work --------------===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-form-dispatch-regions).

#include "compiler/dispatch/DispatchRegions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

using namespace mlir;

namespace strata::dispatch {

#define GEN_PASS_DEF_FORMDISPATCHREGIONSPASS
#include "compiler/dispatch/Passes.h.inc"

namespace {

// Marks calls of runtime kernels; the attribute name is the CPU back end's
// (and every back end's) way of declaring an import.
constexpr llvm::StringLiteral kRuntimeImportAttr = "strata.runtime_import";

llvm::StringRef kindOf(linalg::LinalgOp op) {
  if (isa<linalg::CopyOp, linalg::TransposeOp, linalg::BroadcastOp>(op))
    return "data_movement";
  if (op.getNumReductionLoops() == 0)
    return "elementwise";
  // A multiply-accumulate of three inputs is the weight-only quantized
  // contraction (the weight widened and scaled inside the product), which
  // the contraction interface, written for two, does not recognize.
  if (linalg::isaContractionOpInterface(op) ||
      (op.getNumDpsInputs() == 3 && op.getNumReductionLoops() == 1 &&
       dispatch::accumulatedProduct(op)))
    return "contraction";
  return "reduction";
}

// A fill whose only use is the output init of another structured op: it
// computes that op's starting value and belongs to its region.
Operation *fillConsumer(linalg::FillOp fill) {
  Value result = fill->getResult(0);
  if (!result.hasOneUse())
    return nullptr;
  OpOperand &use = *result.getUses().begin();
  auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!user || !user.isDpsInit(&use) || isa<linalg::FillOp>(user.getOperation()))
    return nullptr;
  return user;
}

bool callsRuntimeImport(func::CallOp call, ModuleOp module) {
  auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
  return callee && callee->hasAttr(kRuntimeImportAttr);
}

struct FormDispatchRegionsPass
    : impl::FormDispatchRegionsPassBase<FormDispatchRegionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t next = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      SmallVector<linalg::FillOp> fills;
      func.walk([&](Operation *op) {
        if (auto fill = dyn_cast<linalg::FillOp>(op)) {
          if (fillConsumer(fill)) {
            fills.push_back(fill);
            return;
          }
        }
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
          if (linalgOp.hasPureTensorSemantics())
            setDispatch(op, next++, kindOf(linalgOp));
        } else if (auto call = dyn_cast<func::CallOp>(op)) {
          if (callsRuntimeImport(call, module))
            setDispatch(op, next++, "runtime");
        }
      });
      for (linalg::FillOp fill : fills) {
        Operation *user = fillConsumer(fill);
        if (std::optional<int64_t> id = dispatchId(user))
          setDispatch(fill, *id, dispatchKind(user));
        else
          setDispatch(fill, next++, "elementwise");
      }
    }
  }
};

} // namespace
} // namespace strata::dispatch
