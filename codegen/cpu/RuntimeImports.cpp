//===- RuntimeImports.cpp - Calls into the runtime through pointers -------===//
// SPDX-License-Identifier: Apache-2.0
// Pointers instead of undefined symbols: the dynamic loader would resolve
// undefined symbols only against libraries in the global scope, which a
// runtime opened with RTLD_LOCAL (Python's ctypes) is not.

#include "codegen/cpu/RuntimeImports.h"

#include "codegen/abi/strata_kernel_abi.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace strata::codegen::cpu {

namespace {

// Redirects every use of C library function |from| to a declaration of
// runtime import |to| of the same type.
void redirect(llvm::Module &module, llvm::StringRef from, llvm::StringRef to) {
  llvm::Function *f = module.getFunction(from);
  if (!f)
    return;
  llvm::FunctionCallee callee =
      module.getOrInsertFunction(to, f->getFunctionType());
  f->replaceAllUsesWith(callee.getCallee());
  f->eraseFromParent();
}

} // namespace

void bindRuntimeImports(llvm::Module &module) {
  // Buffers come from the runtime (ABI v2), which reuses them across runs.
  redirect(module, "malloc", "strata_rt_alloc");
  redirect(module, "free", "strata_rt_free");
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptrType = llvm::PointerType::getUnqual(ctx);
  uint32_t count = 0;
  for (llvm::Function &f : module) {
    if (!f.isDeclaration() || !f.getName().starts_with("strata_rt_"))
      continue;
    auto *slot = new llvm::GlobalVariable(
        module, ptrType, /*isConstant=*/false,
        llvm::GlobalValue::ExternalLinkage,
        llvm::ConstantPointerNull::get(ptrType),
        STRATA_IMPORT_SYMBOL_PREFIX + f.getName().str());
    slot->setVisibility(llvm::GlobalValue::DefaultVisibility);
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    auto *entry = llvm::BasicBlock::Create(ctx, "entry", &f);
    llvm::IRBuilder<> b(entry);
    llvm::Value *target = b.CreateLoad(ptrType, slot);
    llvm::SmallVector<llvm::Value *> args;
    for (llvm::Argument &arg : f.args())
      args.push_back(&arg);
    llvm::CallInst *call = b.CreateCall(f.getFunctionType(), target, args);
    if (f.getReturnType()->isVoidTy())
      b.CreateRetVoid();
    else
      b.CreateRet(call);
    ++count;
  }
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *countVar = new llvm::GlobalVariable(
      module, i32, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantInt::get(i32, count), STRATA_IMPORT_SYMBOL_PREFIX "count");
  countVar->setVisibility(llvm::GlobalValue::DefaultVisibility);
}

} // namespace strata::codegen::cpu
