//===- ParallelKernels.cpp - Parallel kernels on the runtime's pool -------===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-dispatch-parallel-kernels). On the LLVM dialect,
// where a kernel's memref arguments are plain scalars that fit one 8-byte
// slot each and a function's address is a value.

#include "codegen/cpu/Passes.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_DISPATCHPARALLELKERNELSPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

constexpr unsigned kRangeParams = 3; // begin, end, work
constexpr llvm::StringLiteral kParallelFor = "strata_rt_parallel_for";

// kernel.task(context, args, begin, end) (strata_rt_task_fn): loads the
// kernel's other arguments from the slots at args. The run context is
// passed on by strata-cpu-pass-run-context if the kernel needs it.
LLVM::LLVMFuncOp makeTask(OpBuilder &top, LLVM::LLVMFuncOp kernel) {
  MLIRContext *ctx = top.getContext();
  Location loc = kernel.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = top.getI64Type();
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                          {ptr, ptr, i64, i64});
  auto task = LLVM::LLVMFuncOp::create(top, loc, (kernel.getName() + ".task").str(),
                                       type, LLVM::Linkage::Internal);
  task->setAttr(kParallelTaskAttr, top.getUnitAttr());
  OpBuilder b = OpBuilder::atBlockBegin(task.addEntryBlock(top));
  SmallVector<Value> args = {task.getArgument(2), task.getArgument(3),
                             LLVM::ConstantOp::create(b, loc, i64, 0)};
  LLVM::LLVMFunctionType kernelType = kernel.getFunctionType();
  for (unsigned i = kRangeParams; i < kernelType.getNumParams(); ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, i64, task.getArgument(1),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i - kRangeParams)});
    args.push_back(
        LLVM::LoadOp::create(b, loc, kernelType.getParamType(i), slot));
  }
  LLVM::CallOp::create(b, loc, kernel, args);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return task;
}

struct DispatchParallelKernelsPass
    : impl::DispatchParallelKernelsPassBase<DispatchParallelKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<LLVM::LLVMFuncOp> kernels;
    for (auto f : module.getOps<LLVM::LLVMFuncOp>())
      if (f->hasAttr(kParallelKernelAttr) && !f.isExternal() &&
          f.getFunctionType().getNumParams() >= kRangeParams)
        kernels.push_back(f);
    if (kernels.empty())
      return;
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    OpBuilder top = OpBuilder::atBlockEnd(module.getBody());
    Type i64 = top.getI64Type();
    auto parallelFor = module.lookupSymbol<LLVM::LLVMFuncOp>(kParallelFor);
    if (!parallelFor) {
      parallelFor = LLVM::LLVMFuncOp::create(
          top, module.getLoc(), kParallelFor,
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                      {ptr, ptr, i64, i64, i64}));
      parallelFor->setAttr(kRuntimeImportAttr, top.getUnitAttr());
    }
    // Every call of each kernel, collected before the tasks add their own.
    llvm::DenseMap<Operation *, SmallVector<LLVM::CallOp>> calls;
    module.walk([&](LLVM::CallOp call) {
      if (auto callee = call.getCallee())
        if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(*callee);
            f && f->hasAttr(kParallelKernelAttr))
          calls[f].push_back(call);
    });
    for (LLVM::LLVMFuncOp kernel : kernels) {
      LLVM::LLVMFuncOp task = makeTask(top, kernel);
      const unsigned slots =
          kernel.getFunctionType().getNumParams() - kRangeParams;
      for (LLVM::CallOp call : calls.lookup(kernel)) {
        Location loc = call.getLoc();
        auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
        OpBuilder entry = OpBuilder::atBlockBegin(&caller.getBody().front());
        Value count = LLVM::ConstantOp::create(entry, loc, i64, slots ? slots : 1);
        Value block = LLVM::AllocaOp::create(entry, loc, ptr, i64, count);
        OpBuilder b(call);
        for (unsigned i = 0; i < slots; ++i) {
          Value slot = LLVM::GEPOp::create(b, loc, ptr, i64, block,
                                           ArrayRef<LLVM::GEPArg>{int32_t(i)});
          LLVM::StoreOp::create(b, loc, call.getArgOperands()[kRangeParams + i],
                                slot);
        }
        Value taskAddress = LLVM::AddressOfOp::create(b, loc, task);
        LLVM::CallOp::create(b, loc, parallelFor,
                             ValueRange{taskAddress, block,
                                        call.getArgOperands()[0],
                                        call.getArgOperands()[1],
                                        call.getArgOperands()[2]});
        call.erase();
      }
    }
  }
};

} // namespace
} // namespace strata::codegen::cpu
