//===- QuantizeWeights.cpp - Weight-only int8/int4 quantization -----------===//
// SPDX-License-Identifier: Apache-2.0
// Decode reads every weight once per token, so its time is the weights'
// bytes over the memory bandwidth: int8 weights read 4x fewer bytes than
// fp32, int4 about 7x. Prefill is compute-bound: with int8 activations too
// (W8A8) its products run on integer dot products. This pass is the one
// place a precision policy changes the IR: constant weights of the chosen
// entries become symmetric integers with fp32 scales, and their
// contractions strata.quantized_linear (docs/design/precision.md).

#include "passes/Passes.h"
#include "passes/WeightContractions.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <cstring>

namespace strata {

#define GEN_PASS_DEF_QUANTIZEWEIGHTSPASS
#include "passes/Passes.h.inc"

using namespace mlir;
using namespace strata::ir;

namespace {

/// A weight's quantized form: integers [K, N] and scales [groups, N].
struct QuantizedWeight {
  ElementsAttr values, scales;
};

/// The fp32 elements of a constant [K, N] weight, row-major, or nothing if
/// |attr| holds something else.
std::optional<std::vector<float>> weightElements(ElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || type.getRank() != 2 || !type.hasStaticShape() ||
      !type.getElementType().isF32())
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

/// Symmetric absmax quantization of |w| ([k, n] row-major) per |group| rows
/// of each column: scale = max|w| / qmax, q = round(w / scale).
QuantizedWeight quantize(MLIRContext *ctx, llvm::StringRef name,
                         const std::vector<float> &w, int64_t k, int64_t n,
                         int64_t bits, int64_t group) {
  const float qmax = bits == 8 ? 127.0f : 7.0f;
  const float qmin = bits == 8 ? -127.0f : -8.0f;
  const int64_t groups = (k + group - 1) / group;
  AsmResourceBlob qBlob = HeapAsmResourceBlob::allocate(
      size_t(k * n), alignof(int8_t), /*dataIsMutable=*/true);
  AsmResourceBlob sBlob = HeapAsmResourceBlob::allocate(
      size_t(groups * n) * sizeof(float), alignof(float), true);
  auto *q = reinterpret_cast<int8_t *>(qBlob.getMutableData().data());
  auto *s = reinterpret_cast<float *>(sBlob.getMutableData().data());
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t k0 = g * group, k1 = std::min(k, k0 + group);
    for (int64_t j = 0; j < n; ++j) {
      float amax = 0.0f;
      for (int64_t kk = k0; kk < k1; ++kk)
        amax = std::max(amax, std::fabs(w[kk * n + j]));
      // An all-zero (or non-finite) group keeps scale 1 and zeros.
      const float scale = amax > 0.0f && std::isfinite(amax) ? amax / qmax
                                                              : 1.0f;
      s[g * n + j] = scale;
      for (int64_t kk = k0; kk < k1; ++kk) {
        float x = std::nearbyint(w[kk * n + j] / scale);
        x = std::isfinite(x) ? std::min(qmax, std::max(qmin, x)) : 0.0f;
        q[kk * n + j] = static_cast<int8_t>(x);
      }
    }
  }
  auto i8 = IntegerType::get(ctx, 8);
  auto f32 = Float32Type::get(ctx);
  std::string suffix = "_q" + std::to_string(bits) + "g" + std::to_string(group);
  QuantizedWeight out;
  out.values = DenseResourceElementsAttr::get(
      RankedTensorType::get({k, n}, i8), (name + suffix).str(),
      std::move(qBlob));
  out.scales = DenseResourceElementsAttr::get(
      RankedTensorType::get({groups, n}, f32), (name + suffix + "_scales").str(),
      std::move(sBlob));
  return out;
}

struct QuantizeWeightsPass
    : impl::QuantizeWeightsPassBase<QuantizeWeightsPass> {
  using QuantizeWeightsPassBase::QuantizeWeightsPassBase;

  void runOnOperation() override {
    if (bits != 8 && bits != 4) {
      getOperation().emitError()
          << "strata-quantize-weights: bits must be 8 or 4, got "
          << static_cast<int64_t>(bits);
      return signalPassFailure();
    }
    if (groupSize < 0) {
      getOperation().emitError()
          << "strata-quantize-weights: group-size must be >= 0";
      return signalPassFailure();
    }
    if (activationBits != 0 &&
        (activationBits != 8 || bits != 8 || groupSize != 0)) {
      getOperation().emitError()
          << "strata-quantize-weights: activation-bits must be 0, or 8 with "
             "bits=8 and group-size=0, got "
          << static_cast<int64_t>(activationBits);
      return signalPassFailure();
    }
    llvm::StringSet<> chosen;
    for (const std::string &name : functions)
      chosen.insert(name);
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (chosen.contains(func.getSymName()))
        quantizeFunction(func);
  }

  void quantizeFunction(func::FuncOp func) {
    for (Operation *op : weightContractions(func, keepFp32LmHead))
      rewrite(op);
  }

  void rewrite(Operation *op) {
    Value input, weight, bias;
    if (auto linear = dyn_cast<LinearOp>(op)) {
      input = linear.getInput();
      weight = linear.getWeight();
      bias = linear.getBias();
    } else {
      auto matmul = cast<MatmulOp>(op);
      // An activation [..., M, K] times a weight [K, N]: a linear layer.
      if (cast<RankedTensorType>(matmul.getLhs().getType()).getRank() < 2)
        return;
      input = matmul.getLhs();
      weight = matmul.getRhs();
    }
    auto constant = weight.getDefiningOp<ConstantOp>();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    if (!constant || !resultType.getElementType().isF32())
      return;
    ElementsAttr source = constant.getValue();
    auto type = cast<RankedTensorType>(source.getType());
    if (type.getRank() != 2 || !type.hasStaticShape())
      return;
    const int64_t k = type.getDimSize(0), n = type.getDimSize(1);
    const int64_t group = groupSize > 0 ? std::min<int64_t>(groupSize, k) : k;
    // One quantized copy per source weight, shared by every function.
    auto key = std::make_pair(source.getAsOpaquePointer(), group);
    auto it = quantized_.find(key);
    if (it == quantized_.end()) {
      std::optional<std::vector<float>> values = weightElements(source);
      if (!values)
        return;
      std::string name = "weight";
      if (auto resource = dyn_cast<DenseResourceElementsAttr>(source))
        name = resource.getRawHandle().getKey().str();
      it = quantized_
               .try_emplace(key, quantize(op->getContext(), name, *values, k,
                                          n, bits, group))
               .first;
      ++numWeights;
    }
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value q = ConstantOp::create(b, constant.getLoc(), it->second.values);
    Value s = ConstantOp::create(b, constant.getLoc(), it->second.scales);
    auto replacement = QuantizedLinearOp::create(
        b, loc, resultType, input, q, s, bias, b.getI64IntegerAttr(bits),
        b.getI64IntegerAttr(group), b.getI64IntegerAttr(activationBits));
    op->getResult(0).replaceAllUsesWith(replacement.getResult());
    op->erase();
    if (constant->use_empty())
      constant->erase();
    ++numQuantized;
  }

  llvm::DenseMap<std::pair<const void *, int64_t>, QuantizedWeight> quantized_;
};

} // namespace
} // namespace strata
