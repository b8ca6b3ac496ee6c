//===- RuntimeCall.cpp - Calls to a runtime import with a params block ----===//
// SPDX-License-Identifier: Apache-2.0

#include "codegen/cpu/RuntimeCall.h"

#include "codegen/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace strata::codegen::cpu {

Value f32ElementAddress(OpBuilder &b, Location loc, Value memref,
                        memref::ExtractStridedMetadataOp meta) {
  return elementAddress(b, loc, memref, meta, sizeof(float));
}

Value i64ElementAddress(OpBuilder &b, Location loc, Value memref,
                        memref::ExtractStridedMetadataOp meta) {
  return elementAddress(b, loc, memref, meta, sizeof(int64_t));
}

Value elementAddress(OpBuilder &b, Location loc, Value memref,
                     memref::ExtractStridedMetadataOp meta,
                     int64_t bytesPerElement) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value elementBytes =
      arith::ConstantIndexOp::create(b, loc, bytesPerElement);
  Value offset = arith::MulIOp::create(b, loc, meta.getOffset(), elementBytes);
  return arith::AddIOp::create(b, loc, base, offset);
}

Operation *ancestorIn(Block *block, Operation *op) {
  while (op && op->getBlock() != block)
    op = op->getParentOp();
  return op;
}

Operation *nextCall(Operation *op) {
  while (op && !isa<func::CallOp>(op))
    op = op->getNextNode();
  return op;
}

Value readOnlyContiguousAddress(OpBuilder &b, Location loc, Value tensor,
                                int64_t call) {
  auto t = cast<RankedTensorType>(tensor.getType());
  auto view = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(t.getShape(), t.getElementType()), tensor);
  view.setReadOnly(true);
  view->setAttr("strata.runtime_call", b.getI64IntegerAttr(call));
  Value m = view;
  return elementAddress(b, loc, m,
                        memref::ExtractStridedMetadataOp::create(b, loc, m),
                        t.getElementType().getIntOrFloatBitWidth() / 8);
}

func::FuncOp declareRuntimeImport(ModuleOp module, SymbolTable &symbols,
                                  llvm::StringRef name, FunctionType type) {
  if (auto f = symbols.lookup<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name, type);
  f.setPrivate();
  f->setAttr(kRuntimeImportAttr, b.getUnitAttr());
  symbols.insert(f);
  return f;
}

func::FuncOp RuntimeCall::declaration() {
  OpBuilder b(module_.getContext());
  return declareRuntimeImport(module_, symbols_, import_,
                              b.getFunctionType({b.getIndexType()}, {}));
}

Value RuntimeCall::paramsBuffer(func::FuncOp func) {
  auto it = params_.find(func);
  if (it != params_.end())
    return it->second;
  OpBuilder b(&func.getBody().front(), func.getBody().front().begin());
  auto type = MemRefType::get({paramCount_}, b.getI64Type());
  Value buffer = memref::AllocaOp::create(b, func.getLoc(), type);
  // Zeroed once: a field a call does not store then reads 0 (absent), not
  // whatever the stack held.
  Value zero = arith::ConstantIntOp::create(b, func.getLoc(), 0, 64);
  for (int64_t slot = 0; slot < paramCount_; ++slot)
    memref::StoreOp::create(
        b, func.getLoc(), zero, buffer,
        ValueRange{arith::ConstantIndexOp::create(b, func.getLoc(), slot)});
  params_[func] = buffer;
  return buffer;
}

func::CallOp RuntimeCall::emit(OpBuilder &b, Location loc, func::FuncOp func,
                               ArrayRef<std::pair<int64_t, Value>> fields) {
  Value params = paramsBuffer(func);
  for (auto [slot, value] : fields) {
    Value asI64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), value);
    Value index = arith::ConstantIndexOp::create(b, loc, slot);
    memref::StoreOp::create(b, loc, asI64, params, ValueRange{index});
  }
  Value address =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, params);
  return func::CallOp::create(b, loc, declaration(), ValueRange{address});
}

} // namespace strata::codegen::cpu
