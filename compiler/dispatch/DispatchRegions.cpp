//===- DispatchRegions.cpp - Dispatch-region attributes -------------------===//
// SPDX-License-Identifier: Apache-2.0

#include "compiler/dispatch/DispatchRegions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

#include <set>

using namespace mlir;

namespace strata::dispatch {

std::optional<int64_t> dispatchId(Operation *op) {
  auto dict = op->getAttrOfType<DictionaryAttr>(kDispatchAttr);
  auto id = dict ? dict.getAs<IntegerAttr>("id") : IntegerAttr();
  if (!id)
    return std::nullopt;
  return id.getInt();
}

llvm::StringRef dispatchKind(Operation *op) {
  auto dict = op->getAttrOfType<DictionaryAttr>(kDispatchAttr);
  auto kind = dict ? dict.getAs<StringAttr>("kind") : StringAttr();
  return kind ? kind.getValue() : llvm::StringRef();
}

void setDispatch(Operation *op, int64_t id, llvm::StringRef kind) {
  Builder b(op->getContext());
  op->setAttr(kDispatchAttr,
              b.getDictionaryAttr({b.getNamedAttr("id", b.getI64IntegerAttr(id)),
                                   b.getNamedAttr("kind", b.getStringAttr(kind))}));
}

arith::MulFOp accumulatedProduct(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op->getNumRegions() != 1 ||
      op->getRegion(0).empty())
    return nullptr;
  Block &body = op->getRegion(0).front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1 || body.getNumArguments() == 0)
    return nullptr;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return nullptr;
  Value acc = body.getArguments().back();
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  return product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
}

std::vector<EntryDispatches> countDispatches(ModuleOp module) {
  std::vector<EntryDispatches> result;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    EntryDispatches entry;
    entry.entry = func.getName().str();
    std::set<int64_t> seen;
    func.walk([&](Operation *op) {
      std::optional<int64_t> id = dispatchId(op);
      if (auto call = dyn_cast<func::CallOp>(op); call && id) {
        auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
        if (callee && callee->hasAttr("strata.runtime_import"))
          ++entry.runtimeCalls[call.getCallee().str()];
      }
      if (id && seen.insert(*id).second) {
        ++entry.byKind[dispatchKind(op).str()];
        ++entry.total;
      }
    });
    result.push_back(std::move(entry));
  }
  return result;
}

} // namespace strata::dispatch
