//===- RuntimeImports.cpp - Calls into the runtime through pointers -------===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-bind-runtime-imports).

#include "codegen/cpu/Passes.h"

#include "codegen/abi/strata_kernel_abi.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_BINDRUNTIMEIMPORTSPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

// A pointer-sized global, null until the runtime sets it.
LLVM::GlobalOp importSlot(OpBuilder &top, Location loc, StringRef name) {
  auto ptr = LLVM::LLVMPointerType::get(top.getContext());
  auto slot = LLVM::GlobalOp::create(top, loc, ptr, /*isConstant=*/false,
                                     LLVM::Linkage::External, name,
                                     Attribute());
  Block *init = new Block();
  slot.getInitializerRegion().push_back(init);
  OpBuilder b = OpBuilder::atBlockBegin(init);
  LLVM::ReturnOp::create(b, loc, LLVM::ZeroOp::create(b, loc, ptr).getResult());
  return slot;
}

struct BindRuntimeImportsPass
    : impl::BindRuntimeImportsPassBase<BindRuntimeImportsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder top = OpBuilder::atBlockEnd(module.getBody());
    auto ptr = LLVM::LLVMPointerType::get(&getContext());
    int32_t count = 0;
    SmallVector<LLVM::LLVMFuncOp> imports;
    for (auto f : module.getOps<LLVM::LLVMFuncOp>())
      if (f->hasAttr(kRuntimeImportAttr))
        imports.push_back(f);
    for (LLVM::LLVMFuncOp f : imports) {
      if (!f.isExternal()) {
        f.emitError() << "runtime import '" << f.getName() << "' has a body";
        return signalPassFailure();
      }
      Location loc = f.getLoc();
      LLVM::GlobalOp slot = importSlot(
          top, loc, (STRATA_IMPORT_SYMBOL_PREFIX + f.getName()).str());
      f.setLinkage(LLVM::Linkage::Internal);
      f->removeAttr("sym_visibility");
      OpBuilder b = OpBuilder::atBlockBegin(f.addEntryBlock(top));
      Value address = LLVM::AddressOfOp::create(b, loc, slot);
      Value target = LLVM::LoadOp::create(b, loc, ptr, address);
      SmallVector<Value> operands = {target};
      llvm::append_range(operands, f.getArguments());
      auto call = LLVM::CallOp::create(b, loc, f.getFunctionType(), operands);
      if (f.getFunctionType().getReturnType() ==
          LLVM::LLVMVoidType::get(&getContext()))
        LLVM::ReturnOp::create(b, loc, ValueRange{});
      else
        LLVM::ReturnOp::create(b, loc, call.getResult());
      ++count;
    }
    LLVM::GlobalOp::create(top, module.getLoc(), top.getI32Type(),
                           /*isConstant=*/true, LLVM::Linkage::External,
                           STRATA_IMPORT_SYMBOL_PREFIX "count",
                           top.getI32IntegerAttr(count));
  }
};

} // namespace
} // namespace strata::codegen::cpu
