//===- RunContext.cpp - The run context, passed to every import -----------===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-pass-run-context). The context is how an import
// finds the run it serves (buffer cache, pool, cancel, failure trap), so
// several runs of one module may be in progress on different threads.

#include "codegen/cpu/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_PASSRUNCONTEXTPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

// Redirects every use of C library function |from| to runtime import |to|
// of the same type.
LogicalResult redirect(ModuleOp module, StringRef from, StringRef to) {
  auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(from);
  if (!f)
    return success();
  if (!f.isExternal())
    return f.emitError() << "'" << from << "' is defined in generated code";
  if (module.lookupSymbol(to))
    return f.emitError() << "'" << to << "' is declared twice";
  if (failed(SymbolTable::replaceAllSymbolUses(
          f, StringAttr::get(module.getContext(), to), module)))
    return failure();
  f.setSymName(to);
  f->setAttr(kRuntimeImportAttr, UnitAttr::get(module.getContext()));
  return success();
}

// The function a direct call calls, if it is defined in or declared by
// |module|.
LLVM::LLVMFuncOp calleeOf(LLVM::CallOp call, SymbolTable &symbols) {
  std::optional<StringRef> name = call.getCallee();
  return name ? symbols.lookup<LLVM::LLVMFuncOp>(*name) : LLVM::LLVMFuncOp();
}

// |type| with a pointer parameter in front.
LLVM::LLVMFunctionType withContext(LLVM::LLVMFunctionType type) {
  SmallVector<Type> params = {LLVM::LLVMPointerType::get(type.getContext())};
  llvm::append_range(params, type.getParams());
  return LLVM::LLVMFunctionType::get(type.getReturnType(), params,
                                     type.isVarArg());
}

struct PassRunContextPass
    : impl::PassRunContextPassBase<PassRunContextPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(redirect(module, "malloc", "strata_rt_alloc")) ||
        failed(redirect(module, "free", "strata_rt_free")))
      return signalPassFailure();
    SymbolTable symbols(module);

    // Functions that receive the context: tasks have it already; entries
    // and every caller of an import (transitively) get it.
    llvm::SetVector<LLVM::LLVMFuncOp> receivers;
    SmallVector<LLVM::LLVMFuncOp> imports;
    for (auto f : module.getOps<LLVM::LLVMFuncOp>()) {
      if (f->hasAttr(kRuntimeImportAttr))
        imports.push_back(f);
      else if (!f.isExternal() &&
               (f->hasAttr(kEntryAttr) || f->hasAttr(kParallelTaskAttr)))
        receivers.insert(f);
    }
    auto needsContext = [&](LLVM::LLVMFuncOp f) {
      return f && (f->hasAttr(kRuntimeImportAttr) || receivers.contains(f));
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (auto f : module.getOps<LLVM::LLVMFuncOp>()) {
        if (f.isExternal() || receivers.contains(f))
          continue;
        WalkResult calls = f.walk([&](LLVM::CallOp call) {
          return needsContext(calleeOf(call, symbols)) ? WalkResult::interrupt()
                                                       : WalkResult::advance();
        });
        if (calls.wasInterrupted()) {
          receivers.insert(f);
          changed = true;
        }
      }
    }

    // Only tasks are called through their address (by the runtime, with
    // the context); any other function taken by address cannot change type.
    WalkResult taken = module.walk([&](LLVM::AddressOfOp address) {
      auto f = symbols.lookup<LLVM::LLVMFuncOp>(address.getGlobalName());
      if (f && receivers.contains(f) && !f->hasAttr(kParallelTaskAttr)) {
        address.emitError() << "the address of '" << f.getName()
                            << "' is taken, but it needs the run context";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (taken.wasInterrupted())
      return signalPassFailure();

    auto ptr = LLVM::LLVMPointerType::get(&getContext());
    for (LLVM::LLVMFuncOp f : receivers) {
      if (f->hasAttr(kParallelTaskAttr))
        continue;
      f.getBody().front().insertArgument(0u, ptr, f.getLoc());
      f.setFunctionType(withContext(f.getFunctionType()));
    }
    for (LLVM::LLVMFuncOp f : imports)
      f.setFunctionType(withContext(f.getFunctionType()));

    // Every call of a receiver or an import passes the caller's context.
    for (LLVM::LLVMFuncOp caller : receivers) {
      Value context = caller.getArgument(0);
      SmallVector<LLVM::CallOp> calls;
      caller.walk([&](LLVM::CallOp call) {
        if (needsContext(calleeOf(call, symbols)))
          calls.push_back(call);
      });
      for (LLVM::CallOp call : calls) {
        OpBuilder b(call);
        SmallVector<Value> operands = {context};
        llvm::append_range(operands, call.getArgOperands());
        auto replacement = LLVM::CallOp::create(
            b, call.getLoc(), calleeOf(call, symbols), operands);
        call.replaceAllUsesWith(replacement);
        call.erase();
      }
    }
  }
};

} // namespace
} // namespace strata::codegen::cpu
