//===- ParallelKernels.cpp - Parallel kernels on the runtime's pool -------===//
// SPDX-License-Identifier: Apache-2.0
// Done on LLVM IR, where a kernel's memref arguments are plain scalars that
// fit one 8-byte slot each and a function's address is a value.

#include "codegen/cpu/ParallelKernels.h"

#include "codegen/cpu/OutlineKernels.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

namespace strata::codegen::cpu {
namespace {

constexpr unsigned kRangeParams = 3; // begin, end, work

// kernel.task(ctx, begin, end): loads the kernel's other arguments from ctx.
llvm::Function *makeTask(llvm::Function &kernel) {
  llvm::LLVMContext &ctx = kernel.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                       {ptr, i64, i64}, false);
  auto *task = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                      kernel.getName() + ".task",
                                      kernel.getParent());
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", task));
  llvm::SmallVector<llvm::Value *> args = {task->getArg(1), task->getArg(2),
                                           llvm::ConstantInt::get(i64, 0)};
  for (unsigned i = kRangeParams; i < kernel.arg_size(); ++i) {
    llvm::Value *slot =
        b.CreateConstGEP1_64(i64, task->getArg(0), i - kRangeParams);
    args.push_back(b.CreateLoad(kernel.getArg(i)->getType(), slot));
  }
  b.CreateCall(&kernel, args);
  b.CreateRetVoid();
  return task;
}

} // namespace

void dispatchParallelKernels(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::SmallVector<llvm::Function *> kernels;
  for (llvm::Function &f : module)
    if (!f.isDeclaration() && f.getName().starts_with(kParallelKernelPrefix) &&
        !f.getName().ends_with(".task") && f.arg_size() >= kRangeParams)
      kernels.push_back(&f);
  if (kernels.empty())
    return;
  llvm::FunctionCallee parallelFor = module.getOrInsertFunction(
      "strata_rt_parallel_for",
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                              {ptr, ptr, i64, i64, i64}, false));
  for (llvm::Function *kernel : kernels) {
    llvm::Function *task = makeTask(*kernel);
    llvm::SmallVector<llvm::CallInst *> calls;
    for (llvm::User *user : kernel->users())
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(user))
        if (call->getFunction() != task)
          calls.push_back(call);
    const unsigned slots = kernel->arg_size() - kRangeParams;
    for (llvm::CallInst *call : calls) {
      llvm::Function *caller = call->getFunction();
      llvm::IRBuilder<> entry(&caller->getEntryBlock(),
                              caller->getEntryBlock().begin());
      llvm::Value *block = entry.CreateAlloca(
          i64, llvm::ConstantInt::get(i64, slots ? slots : 1));
      llvm::IRBuilder<> b(call);
      for (unsigned i = 0; i < slots; ++i)
        b.CreateStore(call->getArgOperand(kRangeParams + i),
                      b.CreateConstGEP1_64(i64, block, i));
      b.CreateCall(parallelFor, {task, block, call->getArgOperand(0),
                                 call->getArgOperand(1),
                                 call->getArgOperand(2)});
      call->eraseFromParent();
    }
  }
}

} // namespace strata::codegen::cpu
