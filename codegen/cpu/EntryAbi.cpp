//===- EntryAbi.cpp - Public functions in the kernel ABI's convention -----===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-entry-abi). The caller frees every result
// (codegen/abi/strata_kernel_abi.h), so none may alias an argument, a
// constant or another result's buffer.

#include "codegen/cpu/Passes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_ENTRYABIPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

// Ops whose result bufferizes to (a view of) a buffer it did not allocate,
// or to no buffer of its own.
bool aliasesAnotherBuffer(Value v) {
  Operation *def = v.getDefiningOp();
  return !def ||
         isa<arith::ConstantOp, tensor::ReshapeOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp, tensor::ExtractSliceOp, tensor::CastOp,
             tensor::EmptyOp>(def);
}

void copyAliasingResults(func::FuncOp func) {
  func.walk([&](func::ReturnOp ret) {
    OpBuilder b(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Value v = operand.get();
      if (!aliasesAnotherBuffer(v))
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
      func.removeArgAttrsAttr();
      func.removeResAttrsAttr();
      copyAliasingResults(func);
    }
  }
};

} // namespace
} // namespace strata::codegen::cpu
