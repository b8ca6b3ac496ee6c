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
constexpr unsigned kRangeParams2D = 5; // begin0, end0, begin1, end1, work
constexpr llvm::StringLiteral kParallelFor = "strata_rt_parallel_for";
// A 2-D kernel's pool splits its first loop when that has at least this
// many iterations or as many as the second, else the second: a batch of a
// few sequences of many tokens splits by token, one of many sequences of a
// token each by sequence.
constexpr int64_t kSplitFirstLoopFrom = 16;

bool isTwoD(LLVM::LLVMFuncOp kernel) {
  return kernel->hasAttr(kParallelKernel2DAttr);
}

unsigned rangeParams(LLVM::LLVMFuncOp kernel) {
  return isTwoD(kernel) ? kRangeParams2D : kRangeParams;
}

// Whether a 2-D kernel with loop extents |n0|, |n1| splits its first loop.
Value splitsFirstLoop(OpBuilder &b, Location loc, Value n0, Value n1) {
  Value from = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                        kSplitFirstLoopFrom);
  Value many = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::sge, n0, from);
  Value longer = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::sge, n0, n1);
  return LLVM::OrOp::create(b, loc, many, longer);
}

// kernel.task(context, args, begin, end) (strata_rt_task_fn): loads the
// kernel's other arguments from the slots at args. The run context is
// passed on by strata-cpu-pass-run-context if the kernel needs it. A 2-D
// kernel's slots start with its two loops' extents: [begin, end) is a
// range of the one the call site split (splitsFirstLoop), the other runs
// whole.
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
  Value begin = task.getArgument(2), end = task.getArgument(3);
  auto loadSlot = [&](unsigned i, Type type) -> Value {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, i64, task.getArgument(1),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    return LLVM::LoadOp::create(b, loc, type, slot);
  };
  Value zero = LLVM::ConstantOp::create(b, loc, i64, 0);
  SmallVector<Value> args;
  unsigned extents = 0; // slots before the kernel's own arguments
  if (isTwoD(kernel)) {
    extents = 2;
    Value n0 = loadSlot(0, i64), n1 = loadSlot(1, i64);
    Value first = splitsFirstLoop(b, loc, n0, n1);
    args = {LLVM::SelectOp::create(b, loc, first, begin, zero),
            LLVM::SelectOp::create(b, loc, first, end, n0),
            LLVM::SelectOp::create(b, loc, first, zero, begin),
            LLVM::SelectOp::create(b, loc, first, n1, end), zero};
  } else {
    args = {begin, end, zero};
  }
  LLVM::LLVMFunctionType kernelType = kernel.getFunctionType();
  const unsigned params = rangeParams(kernel);
  for (unsigned i = params; i < kernelType.getNumParams(); ++i)
    args.push_back(loadSlot(extents + i - params, kernelType.getParamType(i)));
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
          f.getFunctionType().getNumParams() >= rangeParams(f))
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
      const bool twoD = isTwoD(kernel);
      const unsigned params = rangeParams(kernel);
      const unsigned extents = twoD ? 2 : 0;
      const unsigned slots =
          extents + kernel.getFunctionType().getNumParams() - params;
      for (LLVM::CallOp call : calls.lookup(kernel)) {
        Location loc = call.getLoc();
        auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
        OpBuilder entry = OpBuilder::atBlockBegin(&caller.getBody().front());
        Value count = LLVM::ConstantOp::create(entry, loc, i64, slots ? slots : 1);
        Value block = LLVM::AllocaOp::create(entry, loc, ptr, i64, count);
        OpBuilder b(call);
        auto operands = call.getArgOperands();
        // A 2-D kernel's loop extents (its calls pass whole ranges from 0),
        // then the kernel's own arguments.
        SmallVector<Value> stored;
        if (twoD)
          stored = {operands[1], operands[3]};
        for (unsigned i = params; i < operands.size(); ++i)
          stored.push_back(operands[i]);
        for (auto [i, value] : llvm::enumerate(stored)) {
          Value slot = LLVM::GEPOp::create(
              b, loc, ptr, i64, block, ArrayRef<LLVM::GEPArg>{int32_t(i)});
          LLVM::StoreOp::create(b, loc, value, slot);
        }
        Value begin = operands[0], end = operands[1];
        if (twoD) {
          Value first = splitsFirstLoop(b, loc, operands[1], operands[3]);
          begin = LLVM::SelectOp::create(b, loc, first, operands[0], operands[2]);
          end = LLVM::SelectOp::create(b, loc, first, operands[1], operands[3]);
        }
        Value taskAddress = LLVM::AddressOfOp::create(b, loc, task);
        LLVM::CallOp::create(b, loc, parallelFor,
                             ValueRange{taskAddress, block, begin, end,
                                        operands[params - 1]});
        call.erase();
      }
    }
  }
};

} // namespace
} // namespace strata::codegen::cpu
