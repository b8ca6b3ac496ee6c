//===- WeightContractions.cpp - Contractions by constant weights ----------===//
// SPDX-License-Identifier: Apache-2.0

#include "passes/WeightContractions.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;
using namespace strata::ir;

namespace strata {

llvm::SmallPtrSet<Operation *, 4> contractionsReturned(func::FuncOp func) {
  llvm::SmallPtrSet<Operation *, 4> out;
  func.walk([&](func::ReturnOp ret) {
    for (Value v : ret.getOperands()) {
      for (int steps = 0; steps < 8 && v; ++steps) {
        Operation *def = v.getDefiningOp();
        if (!def)
          break;
        if (isa<LinearOp, MatmulOp>(def)) {
          out.insert(def);
          break;
        }
        if (!isa<ReshapeOp, SliceOp, GatherOp, TransposeOp, ExpandOp,
                 AllGatherOp>(def))
          break;
        v = def->getOperand(0);
      }
    }
  });
  return out;
}

SmallVector<Operation *> weightContractions(func::FuncOp func,
                                            bool skipLmHead) {
  llvm::SmallPtrSet<Operation *, 4> lmHeads;
  if (skipLmHead)
    lmHeads = contractionsReturned(func);
  SmallVector<Operation *> out;
  func.walk([&](Operation *op) {
    if (lmHeads.contains(op))
      return;
    if (isa<LinearOp>(op)) {
      out.push_back(op);
      return;
    }
    auto matmul = dyn_cast<MatmulOp>(op);
    if (!matmul ||
        cast<RankedTensorType>(matmul.getLhs().getType()).getRank() < 2)
      return;
    auto constant = matmul.getRhs().getDefiningOp<ConstantOp>();
    auto type = cast<RankedTensorType>(matmul.getRhs().getType());
    if (constant && type.getRank() == 2 && type.getElementType().isF32())
      out.push_back(op);
  });
  return out;
}

std::optional<std::vector<float>> constantF32Elements(ElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
    return std::nullopt;
  std::vector<float> out(type.getNumElements());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != out.size() * sizeof(float))
      return std::nullopt;
    std::memcpy(out.data(), blob->getData().data(), out.size() * sizeof(float));
    return out;
  }
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    size_t i = 0;
    for (float v : dense.getValues<float>())
      out[i++] = v;
    return out;
  }
  return std::nullopt;
}

std::optional<std::vector<char>> constantRawBytes(ElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat() ||
      type.getElementType().getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  const size_t width = type.getElementType().getIntOrFloatBitWidth() / 8;
  const size_t size = size_t(type.getNumElements()) * width;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != size)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    return std::vector<char>(data.begin(), data.end());
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  ArrayRef<char> data = dense.getRawData();
  if (dense.isSplat()) {
    if (data.size() != width)
      return std::nullopt;
    std::vector<char> out(size);
    for (size_t i = 0; i < size; i += width)
      std::memcpy(out.data() + i, data.data(), width);
    return out;
  }
  if (data.size() != size)
    return std::nullopt;
  return std::vector<char>(data.begin(), data.end());
}

} // namespace strata
