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
#include "passes/QuantizationGrid.h"
#include "passes/WeightContractions.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
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

/// The resources holding a quantized weight: i8 |values| of |valuesShape|
/// and f32 |scales| of |scalesShape|, named after the source and the form
/// (|kind| bits g group).
QuantizedWeight
quantizedAttrs(MLIRContext *ctx, llvm::StringRef name, llvm::StringRef kind,
               int64_t bits, int64_t group, llvm::ArrayRef<int64_t> valuesShape,
               AsmResourceBlob values, llvm::ArrayRef<int64_t> scalesShape,
               AsmResourceBlob scales) {
  const std::string suffix =
      (kind + std::to_string(bits) + "g" + std::to_string(group)).str();
  QuantizedWeight out;
  out.values = DenseResourceElementsAttr::get(
      RankedTensorType::get(valuesShape, IntegerType::get(ctx, 8)),
      (name + suffix).str(), std::move(values));
  out.scales = DenseResourceElementsAttr::get(
      RankedTensorType::get(scalesShape, Float32Type::get(ctx)),
      (name + suffix + "_scales").str(), std::move(scales));
  return out;
}

/// Symmetric absmax quantization of |w| ([k, n] row-major) per |group| rows
/// of each column (SymmetricGrid).
QuantizedWeight quantize(MLIRContext *ctx, llvm::StringRef name,
                         const std::vector<float> &w, int64_t k, int64_t n,
                         int64_t bits, int64_t group) {
  const SymmetricGrid grid(bits);
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
      const float scale = grid.scale(amax);
      s[g * n + j] = scale;
      for (int64_t kk = k0; kk < k1; ++kk)
        q[kk * n + j] =
            static_cast<int8_t>(grid.quantize(w[kk * n + j], scale));
    }
  }
  return quantizedAttrs(ctx, name, "_q", bits, group, {k, n}, std::move(qBlob),
                        {groups, n}, std::move(sBlob));
}

/// Symmetric absmax quantization of a [rows, width] table per |group|
/// columns of each row (the embedding table's form): rows of |width| int8
/// values, or of ceil(width / 2) bytes of two nibbles (value + 8, the even
/// column low) for 4 bits; scales [rows, groups].
QuantizedWeight quantizeRows(MLIRContext *ctx, llvm::StringRef name,
                             const std::vector<float> &w, int64_t rows,
                             int64_t width, int64_t bits, int64_t group) {
  const SymmetricGrid grid(bits);
  const int64_t groups = (width + group - 1) / group;
  const int64_t rowBytes = bits == 8 ? width : (width + 1) / 2;
  AsmResourceBlob qBlob = HeapAsmResourceBlob::allocate(
      size_t(rows * rowBytes), alignof(int8_t), /*dataIsMutable=*/true);
  AsmResourceBlob sBlob = HeapAsmResourceBlob::allocate(
      size_t(rows * groups) * sizeof(float), alignof(float), true);
  auto *q = reinterpret_cast<uint8_t *>(qBlob.getMutableData().data());
  auto *s = reinterpret_cast<float *>(sBlob.getMutableData().data());
  // An odd width's last high nibble holds 0 (stored as 8).
  std::memset(q, bits == 8 ? 0 : 0x88, size_t(rows * rowBytes));
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = w.data() + r * width;
    uint8_t *out = q + r * rowBytes;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t c0 = g * group, c1 = std::min(width, c0 + group);
      float amax = 0.0f;
      for (int64_t c = c0; c < c1; ++c)
        amax = std::max(amax, std::fabs(row[c]));
      const float scale = grid.scale(amax);
      s[r * groups + g] = scale;
      for (int64_t c = c0; c < c1; ++c) {
        const int v = static_cast<int>(grid.quantize(row[c], scale));
        if (bits == 8) {
          out[c] = static_cast<uint8_t>(static_cast<int8_t>(v));
        } else {
          const int shift = c % 2 ? 4 : 0;
          out[c / 2] = static_cast<uint8_t>((out[c / 2] & ~(0xF << shift)) |
                                            ((v + 8) << shift));
        }
      }
    }
  }
  return quantizedAttrs(ctx, name, "_rows_q", bits, group, {rows, rowBytes},
                        std::move(qBlob), {rows, groups}, std::move(sBlob));
}

/// The resource name of a weight constant, for naming its quantized form.
std::string weightName(ElementsAttr source) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(source))
    return resource.getRawHandle().getKey().str();
  return "weight";
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
    if (activationBlock < 0 || (activationBlock > 0 && activationBits != 8)) {
      getOperation().emitError()
          << "strata-quantize-weights: activation-block must be 0, or > 0 "
             "with activation-bits=8, got "
          << static_cast<int64_t>(activationBlock);
      return signalPassFailure();
    }
    llvm::StringSet<> chosen;
    for (const std::string &name : functions)
      chosen.insert(name);
    // Constants the other functions keep reading in fp32: quantizing an
    // embedding table they share would add a copy, not replace one.
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!chosen.contains(func.getSymName()))
        func.walk([&](ConstantOp c) {
          keptFp32_.insert(c.getValue().getAsOpaquePointer());
        });
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (chosen.contains(func.getSymName()))
        quantizeFunction(func);
  }

  void quantizeFunction(func::FuncOp func) {
    // The K of the LM heads' [K, N] weights, before their contractions
    // change.
    llvm::SmallVector<int64_t> lmHeadWidths;
    if (!keepFp32LmHead)
      for (Operation *op : contractionsReturned(func))
        if (isa<LinearOp, MatmulOp>(op))
          if (auto w = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
              w && w.getRank() == 2 && w.hasStaticShape())
            lmHeadWidths.push_back(w.getDimSize(0));
    for (Operation *op : weightContractions(func, keepFp32LmHead))
      rewrite(op);
    llvm::SmallVector<GatherOp> gathers;
    func.walk([&](GatherOp g) { gathers.push_back(g); });
    for (GatherOp g : gathers)
      if (isEmbeddingTable(g, lmHeadWidths))
        rewriteGather(g, readsEntryIds(g.getIndices()) ? bits : 8);
  }

  // |ids| are the graph's `input_ids` argument (the name the exporters give
  // the token ids, and the one strata-split-prefill-decode keeps), possibly
  // reshaped or cast; a table gathered by anything else (positions) is
  // not the token table.
  static bool readsEntryIds(Value ids) {
    while (Operation *def = ids.getDefiningOp()) {
      if (!isa<ReshapeOp, CastOp, tensor::CastOp>(def))
        return false;
      ids = def->getOperand(0);
    }
    auto arg = dyn_cast<BlockArgument>(ids);
    if (!arg)
      return false;
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    auto name = func ? func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                         "strata.name")
                     : StringAttr();
    return name && name.getValue() == "input_ids";
  }

  // |g| reads rows of a constant fp32 [R, D] table as wide as the hidden
  // state an LM head reads (D is its weight's K: token and learned position
  // embeddings; a rotary cache is a head wide), and only such gathers in
  // chosen functions read it.
  bool isEmbeddingTable(GatherOp g, llvm::ArrayRef<int64_t> lmHeadWidths) {
    auto constant = g.getData().getDefiningOp<ConstantOp>();
    auto type = cast<RankedTensorType>(g.getData().getType());
    if (!constant || g.getAxis() != 0 || type.getRank() != 2 ||
        !type.hasStaticShape() || !type.getElementType().isF32() ||
        keptFp32_.contains(constant.getValue().getAsOpaquePointer()))
      return false;
    const int64_t width = type.getDimSize(1);
    if (!llvm::is_contained(lmHeadWidths, width))
      return false;
    return llvm::all_of(constant->getUsers(), [](Operation *user) {
      auto gather = dyn_cast<GatherOp>(user);
      return gather && gather.getAxis() == 0;
    });
  }

  // |g| reading its table quantized to |tableBits| (int8 one scale per
  // row; int4 per group-size columns).
  void rewriteGather(GatherOp g, int64_t tableBits) {
    auto constant = g.getData().getDefiningOp<ConstantOp>();
    ElementsAttr source = constant.getValue();
    auto type = cast<RankedTensorType>(source.getType());
    const int64_t rows = type.getDimSize(0), width = type.getDimSize(1);
    const int64_t group = tableBits == 4 && groupSize > 0
                              ? std::min<int64_t>(groupSize, width)
                              : width;
    auto key =
        std::make_pair(source.getAsOpaquePointer(), group * 16 + tableBits);
    auto it = quantizedTables_.find(key);
    if (it == quantizedTables_.end()) {
      std::optional<std::vector<float>> values = constantF32Elements(source);
      if (!values)
        return;
      it = quantizedTables_
               .try_emplace(key, quantizeRows(g->getContext(),
                                              weightName(source), *values, rows,
                                              width, tableBits, group))
               .first;
      ++numWeights;
    }
    OpBuilder b(g);
    Value q = ConstantOp::create(b, constant.getLoc(), it->second.values);
    Value s = ConstantOp::create(b, constant.getLoc(), it->second.scales);
    auto replacement = QuantizedGatherOp::create(
        b, g.getLoc(), g.getType(), q, s, g.getIndices(),
        b.getI64IntegerAttr(tableBits), b.getI64IntegerAttr(group));
    g.getResult().replaceAllUsesWith(replacement.getResult());
    g.erase();
    if (constant->use_empty())
      constant->erase();
    ++numTables;
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
      std::optional<std::vector<float>> values = constantF32Elements(source);
      if (!values)
        return;
      const std::string name = weightName(source);
      it = quantized_
               .try_emplace(key, quantize(op->getContext(), name, *values, k, n,
                                          bits, group))
               .first;
      ++numWeights;
    }
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value q = ConstantOp::create(b, constant.getLoc(), it->second.values);
    Value s = ConstantOp::create(b, constant.getLoc(), it->second.scales);
    auto replacement = QuantizedLinearOp::create(
        b, loc, resultType, input, q, s, bias, b.getI64IntegerAttr(bits),
        b.getI64IntegerAttr(group), b.getI64IntegerAttr(activationBits),
        b.getI64IntegerAttr(activationBlock));
    op->getResult(0).replaceAllUsesWith(replacement.getResult());
    op->erase();
    if (constant->use_empty())
      constant->erase();
    ++numQuantized;
  }

  llvm::DenseMap<std::pair<const void *, int64_t>, QuantizedWeight> quantized_;
  // By source table and group * 16 + bits.
  llvm::DenseMap<std::pair<const void *, int64_t>, QuantizedWeight>
      quantizedTables_;
  llvm::DenseSet<const void *> keptFp32_;
};

} // namespace
} // namespace strata
