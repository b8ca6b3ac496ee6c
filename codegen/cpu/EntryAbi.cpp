//===- EntryAbi.cpp - Public functions in the kernel ABI's convention -----===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-entry-abi). The caller frees every result
// (codegen/abi/strata_kernel_abi.h), so none may alias an argument, a
// constant or another result's buffer; a state result is the opposite: its
// value must end up in its argument's buffer, which the session owns.

#include "codegen/cpu/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_ENTRYABIPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

// A reshape keeps its source's buffer whole (the same base pointer, no
// offset), so the caller can free it as a result of its own.
bool isWholeView(Operation *op) {
  return isa<tensor::ReshapeOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::CastOp>(op);
}

// The value whose buffer |v| is a whole view of.
Value viewRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isWholeView(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

// Ops whose result bufferizes to (a view of) a buffer it did not allocate,
// or to no buffer of its own.
bool aliasesAnotherBuffer(Value v) {
  Operation *def = v.getDefiningOp();
  return !def ||
         isa<arith::ConstantOp, tensor::ExtractSliceOp, tensor::EmptyOp>(def) ||
         isWholeView(def);
}

// The argument of state |name|, or null.
BlockArgument stateArgument(func::FuncOp func, StringAttr name) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttrOfType<StringAttr>(i, kStateAttr) == name)
      return func.getArgument(i);
  return nullptr;
}

// Per result, the state argument it updates (null for an output).
SmallVector<BlockArgument> stateResults(func::FuncOp func) {
  SmallVector<BlockArgument> states(func.getNumResults());
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (auto name = func.getResultAttrOfType<StringAttr>(i, kStateAttr))
      states[i] = stateArgument(func, name);
  return states;
}

// Whether |v| is |state| updated in place by loops of slice inserts (a KV
// cache write): bufferization then gives it the argument's buffer itself,
// and a materialization into the argument would read it after the loop
// wrote it (a conflict one-shot bufferization refuses).
bool updatesInPlace(Value v, BlockArgument state) {
  while (v != state) {
    if (auto loop = v.getDefiningOp<scf::ForOp>())
      v = loop.getInitArgs()[cast<OpResult>(v).getResultNumber()];
    else if (auto insert = v.getDefiningOp<tensor::InsertSliceOp>())
      v = insert.getDest();
    else
      return false;
  }
  return true;
}

void copyAliasingResults(func::FuncOp func,
                         ArrayRef<BlockArgument> stateOf) {
  func.walk([&](func::ReturnOp ret) {
    OpBuilder b(ret);
    // Buffers one result already returns: a second result on the same one
    // gets a copy, or the caller would free it twice.
    llvm::SmallPtrSet<void *, 8> returned;
    for (OpOperand &operand : ret->getOpOperands()) {
      Value v = operand.get();
      // A state's new value is written into its argument's buffer, so that
      // bufferization makes the result that buffer and it can be dropped.
      if (BlockArgument state = stateOf[operand.getOperandNumber()]) {
        if (updatesInPlace(v, state))
          continue;
        operand.set(bufferization::MaterializeInDestinationOp::create(
                        b, ret.getLoc(), v, state)
                        .getResult());
        continue;
      }
      // A reshaped result of a computation (the logits, reshaped from the
      // LM head's rows) hands over the computation's own buffer.
      Value root = viewRoot(v);
      if (!aliasesAnotherBuffer(root) &&
          returned.insert(root.getAsOpaquePointer()).second)
        continue;
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<Value> dynamic;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          dynamic.push_back(tensor::DimOp::create(b, ret.getLoc(), v, d));
      Value empty = tensor::EmptyOp::create(b, ret.getLoc(), type.getShape(),
                                            type.getElementType(), dynamic);
      operand.set(
          linalg::CopyOp::create(b, ret.getLoc(), v, empty).getResult(0));
    }
  });
}

struct EntryAbiPass : impl::EntryAbiPassBase<EntryAbiPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      func->setAttr("llvm.emit_c_interface", UnitAttr::get(&getContext()));
      func->setAttr(kEntryAttr, UnitAttr::get(&getContext()));
      SmallVector<BlockArgument> stateOf = stateResults(func);
      SmallVector<bool> isState(func.getNumArguments());
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        isState[i] = func.getArgAttr(i, kStateAttr) != nullptr;
      func.removeArgAttrsAttr();
      func.removeResAttrsAttr();
      // For strata-cpu-drop-state-results, which must drop every one.
      int64_t stateCount = llvm::count_if(
          stateOf, [](BlockArgument state) { return state != nullptr; });
      func->setAttr(kStateResultsAttr,
                    IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                     stateCount));
      // Inputs are read-only (a write into one gets a copy first); states
      // are written in place.
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (isa<TensorType>(func.getArgument(i).getType()))
          func.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                          BoolAttr::get(&getContext(), isState[i]));
      copyAliasingResults(func, stateOf);
    }
  }
};

} // namespace
} // namespace strata::codegen::cpu
