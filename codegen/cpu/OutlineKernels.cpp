//===- OutlineKernels.cpp - One function per linalg op --------------------===//
// SPDX-License-Identifier: Apache-2.0

#include "codegen/cpu/OutlineKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace strata::codegen::cpu {
namespace {

// Values the kernel may rebuild instead of taking as arguments.
bool isCloneable(Value v) {
  Operation *def = v.getDefiningOp();
  return def && isa<arith::ConstantOp, memref::GetGlobalOp>(def);
}

} // namespace

unsigned outlineKernels(ModuleOp module) {
  SmallVector<Operation *> kernels;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    func.walk([&](linalg::LinalgOp op) {
      if (op->getParentOp() == func.getOperation())
        kernels.push_back(op);
    });
  }
  OpBuilder moduleBuilder(module.getBodyRegion());
  moduleBuilder.setInsertionPointToEnd(module.getBody());
  unsigned count = 0;
  for (Operation *op : kernels) {
    // Arguments: the operands, then values the regions use from outside.
    llvm::SetVector<Value> args;
    llvm::SetVector<Value> cloned;
    auto addValue = [&](Value v) {
      if (isCloneable(v))
        cloned.insert(v);
      else
        args.insert(v);
    };
    for (Value v : op->getOperands())
      addValue(v);
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(op->getRegions(), above);
    for (Value v : above)
      addValue(v);

    SmallVector<Type> argTypes;
    for (Value v : args)
      argTypes.push_back(v.getType());
    std::string name = (kKernelPrefix + llvm::Twine(count++)).str();
    auto kernel = func::FuncOp::create(
        moduleBuilder, op->getLoc(), name,
        moduleBuilder.getFunctionType(argTypes, {}));
    kernel.setPrivate();
    Block *body = kernel.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(body);
    IRMapping mapping;
    for (auto [v, arg] : llvm::zip(args, body->getArguments()))
      mapping.map(v, arg);
    for (Value v : cloned)
      mapping.map(v, b.clone(*v.getDefiningOp())->getResult(0));
    b.clone(*op, mapping);
    func::ReturnOp::create(b, op->getLoc());

    OpBuilder callBuilder(op);
    func::CallOp::create(callBuilder, op->getLoc(), kernel,
                         llvm::to_vector(args));
    op->erase();
  }
  return count;
}

} // namespace strata::codegen::cpu
