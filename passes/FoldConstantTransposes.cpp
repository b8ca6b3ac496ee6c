//===- FoldConstantTransposes.cpp - Transposed weights at compile time ----===//
// SPDX-License-Identifier: Apache-2.0
// Exporters spell a linear layer's weight as it is stored: ONNX Gemm with
// transB = 1 (torchvision classifiers, Keras and TF converters) imports as
// a strata.transpose of the [N, K] constant. Left alone, that transpose
// runs at every call (a strided copy of the whole weight: 6% of a
// ResNet-50 batch-1 run for its 2048 x 1000 classifier) and the weight the
// contraction reads is no constant, so the back end cannot pack it at
// compile time nor the precision passes quantize it. A transpose of a
// constant that nothing else reads becomes the permuted constant here:
// the artifact keeps one copy either way.

#include "passes/Passes.h"
#include "passes/WeightContractions.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace strata {
#define GEN_PASS_DEF_FOLDCONSTANTTRANSPOSESPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

/// |value|'s elements (of |width| bytes, row-major over |inShape|) with
/// the dims permuted: result dim i is input dim perm[i].
std::vector<char> permuteBytes(const std::vector<char> &value,
                               ArrayRef<int64_t> inShape,
                               ArrayRef<int64_t> perm, size_t width) {
  const size_t rank = inShape.size();
  // The input stride of each result dim, in elements.
  SmallVector<int64_t> inStrides(rank, 1), strideOfResultDim(rank);
  for (size_t d = rank; d-- > 1;)
    inStrides[d - 1] = inStrides[d] * inShape[d];
  SmallVector<int64_t> outShape(rank);
  for (size_t i = 0; i < rank; ++i) {
    outShape[i] = inShape[perm[i]];
    strideOfResultDim[i] = inStrides[perm[i]];
  }
  std::vector<char> out(value.size());
  SmallVector<int64_t> index(rank, 0);
  int64_t source = 0;
  const size_t count = value.size() / width;
  for (size_t e = 0; e < count; ++e) {
    std::memcpy(out.data() + e * width, value.data() + source * width, width);
    // Next result index, odometer style, with its input offset.
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < outShape[d]) {
        source += strideOfResultDim[d];
        break;
      }
      source -= strideOfResultDim[d] * (outShape[d] - 1);
      index[d] = 0;
    }
  }
  return out;
}

struct FoldConstantTransposesPass
    : impl::FoldConstantTransposesPassBase<FoldConstantTransposesPass> {
  using FoldConstantTransposesPassBase::FoldConstantTransposesPassBase;

  void runOnOperation() override {
    SmallVector<TransposeOp> transposes;
    getOperation()->walk([&](TransposeOp op) { transposes.push_back(op); });
    for (TransposeOp op : transposes)
      fold(op);
  }

  void fold(TransposeOp op) {
    auto constant = op.getInput().getDefiningOp<ConstantOp>();
    auto resultType = dyn_cast<RankedTensorType>(op.getType());
    if (!constant || !constant->hasOneUse() || !resultType ||
        !resultType.hasStaticShape())
      return;
    auto inType = cast<RankedTensorType>(constant.getType());
    std::optional<std::vector<char>> bytes =
        constantRawBytes(constant.getValue());
    if (!bytes)
      return;
    const size_t width = inType.getElementType().getIntOrFloatBitWidth() / 8;
    std::vector<char> permuted =
        permuteBytes(*bytes, inType.getShape(), op.getPermutation(), width);
    AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
        permuted.size(), alignof(std::max_align_t), /*dataIsMutable=*/true);
    std::memcpy(blob.getMutableData().data(), permuted.data(),
                permuted.size());
    std::string name = "transposed";
    if (auto resource =
            dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
      name = resource.getRawHandle().getKey().str() + ".transposed";
    OpBuilder b(op);
    Value folded = ConstantOp::create(
        b, op.getLoc(),
        DenseResourceElementsAttr::get(resultType, name, std::move(blob)));
    op.getResult().replaceAllUsesWith(folded);
    op->erase();
    constant->erase();
  }
};

} // namespace
} // namespace strata
