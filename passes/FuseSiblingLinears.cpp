//===- FuseSiblingLinears.cpp - One linear for siblings of one input -----===//
// SPDX-License-Identifier: Apache-2.0
// Llama-style exports project one normalized activation separately into
// queries, keys and values, and again into the MLP's gate and up halves.
// Each projection is its own strata.linear (or, without bias, a
// strata.matmul by a constant weight), so a decode step pays one runtime
// matmul call (and one thread-pool dispatch) per projection for a row of
// work that is a few microseconds. Concatenating the siblings'
// weights along N makes them one call over the same bytes; a strata.split
// hands each original its columns back. Every output column is the same
// sum over K as before.

#include "passes/Passes.h"
#include "passes/WeightContractions.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallVector.h"

#include <cstddef>
#include <cstring>
#include <optional>
#include <tuple>
#include <vector>

namespace strata {
#define GEN_PASS_DEF_FUSESIBLINGLINEARSPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

/// The single-use constant defining |value| with a static shape of
/// |rank| and a byte-sized element type, or null. A constant with other
/// users would stay alive beside its concatenated copy and grow the
/// artifact by its bytes, so it is no candidate.
ConstantOp exclusiveConstant(Value value, int64_t rank) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant || !value.hasOneUse())
    return {};
  auto type = dyn_cast<RankedTensorType>(constant.getValue().getType());
  if (!type || type.getRank() != rank || !type.hasStaticShape() ||
      !type.getElementType().isIntOrFloat() ||
      type.getElementType().getIntOrFloatBitWidth() % 8 != 0)
    return {};
  return constant;
}

/// A linear layer the pass may fuse: a strata.linear, or a strata.matmul
/// of an activation (rank >= 2) by a [K, N] weight, which is how exports
/// spell a projection without bias (Llama's); with its constant weight and
/// bias.
struct Member {
  Operation *op;
  Value input;
  ConstantOp weight, bias;
  int64_t n;
};

/// What siblings must share to be one op: the op kind, the input, K, the
/// element type, whether they have a bias, the result's leading dims and
/// the op's attributes.
using GroupKey =
    std::tuple<OperationName, Value, int64_t, Type, int, Type, DictionaryAttr>;

std::optional<Member> candidate(Operation *op) {
  Member m{op, {}, {}, {}, 0};
  Value weight, bias;
  if (auto linear = dyn_cast<LinearOp>(op)) {
    m.input = linear.getInput();
    weight = linear.getWeight();
    bias = linear.getBias();
  } else if (auto matmul = dyn_cast<MatmulOp>(op)) {
    m.input = matmul.getLhs();
    weight = matmul.getRhs();
    auto lhs = dyn_cast<RankedTensorType>(m.input.getType());
    if (!lhs || lhs.getRank() < 2)
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  m.weight = exclusiveConstant(weight, 2);
  if (!m.weight)
    return std::nullopt;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto weightType = cast<RankedTensorType>(m.weight.getValue().getType());
  m.n = weightType.getDimSize(1);
  if (!result || result.getRank() < 1 || result.getShape().back() != m.n)
    return std::nullopt;
  if (bias) {
    m.bias = exclusiveConstant(bias, 1);
    if (!m.bias ||
        cast<RankedTensorType>(m.bias.getValue().getType()).getDimSize(0) !=
            m.n)
      return std::nullopt;
  }
  return m;
}

GroupKey keyOf(Member m) {
  auto weightType = cast<RankedTensorType>(m.weight.getValue().getType());
  auto result = cast<RankedTensorType>(m.op->getResult(0).getType());
  // The result type with N erased: siblings agree on the leading dims.
  SmallVector<int64_t> leading(result.getShape());
  leading.back() = 0;
  Type resultKey = RankedTensorType::get(leading, result.getElementType());
  return std::make_tuple(m.op->getName(), m.input, weightType.getDimSize(0),
                         weightType.getElementType(), m.bias ? 1 : 0, resultKey,
                         m.op->getAttrDictionary());
}

/// A constant holding |parts| ([rows, n_i] each, row-major) side by side
/// along the last axis, named after the first part when it is a resource.
std::optional<ElementsAttr> concatenateColumns(ArrayRef<ElementsAttr> parts) {
  auto first = cast<RankedTensorType>(parts.front().getType());
  const int64_t rank = first.getRank();
  const int64_t rows = rank == 2 ? first.getDimSize(0) : 1;
  const size_t width = first.getElementType().getIntOrFloatBitWidth() / 8;
  std::vector<std::vector<char>> bytes;
  int64_t total = 0;
  bool anyResource = false;
  for (ElementsAttr part : parts) {
    std::optional<std::vector<char>> b = constantRawBytes(part);
    if (!b)
      return std::nullopt;
    bytes.push_back(std::move(*b));
    total += cast<RankedTensorType>(part.getType()).getShape().back();
    anyResource |= isa<DenseResourceElementsAttr>(part);
  }
  SmallVector<int64_t> shape(first.getShape());
  shape.back() = total;
  auto type = RankedTensorType::get(shape, first.getElementType());
  const size_t rowBytes = size_t(total) * width;
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      rowBytes * size_t(rows), alignof(std::max_align_t),
      /*dataIsMutable=*/true);
  char *out = blob.getMutableData().data();
  size_t offset = 0;
  for (auto [part, b] : llvm::zip_equal(parts, bytes)) {
    const size_t partRow =
        size_t(cast<RankedTensorType>(part.getType()).getShape().back()) *
        width;
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(out + r * rowBytes + offset, b.data() + r * partRow, partRow);
    offset += partRow;
  }
  if (!anyResource)
    return cast<ElementsAttr>(
        DenseElementsAttr::getFromRawBuffer(type, blob.getData()));
  std::string name = "fused";
  for (ElementsAttr part : parts)
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(part)) {
      name = resource.getRawHandle().getKey().str() + ".fused";
      break;
    }
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, name, std::move(blob)));
}

Location fusedLocOf(MLIRContext *ctx, ArrayRef<Operation *> ops) {
  SmallVector<Location> locs;
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  return FusedLoc::get(ctx, locs);
}

struct FuseSiblingLinearsPass
    : impl::FuseSiblingLinearsPassBase<FuseSiblingLinearsPass> {
  using FuseSiblingLinearsPassBase::FuseSiblingLinearsPassBase;

  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      fuseBlock(*block);
  }

  void fuseBlock(Block &block) {
    llvm::MapVector<GroupKey, SmallVector<Member>> groups;
    for (Operation &op : block)
      if (std::optional<Member> m = candidate(&op))
        groups[keyOf(*m)].push_back(*m);
    for (auto &entry : groups)
      if (entry.second.size() >= 2)
        fuseGroup(entry.second);
  }

  /// Replaces |members| (in block order) by one linear over their
  /// concatenated weights and a split of its result, both in front of the
  /// first member: the shared input dominates it, and every member's users
  /// follow their member.
  void fuseGroup(MutableArrayRef<Member> members) {
    MLIRContext *ctx = &getContext();
    SmallVector<ElementsAttr> weights, biases;
    SmallVector<Operation *> ops, weightOps, biasOps;
    SmallVector<int64_t> sizes;
    SmallVector<Type> resultTypes;
    for (Member &m : members) {
      weights.push_back(m.weight.getValue());
      ops.push_back(m.op);
      weightOps.push_back(m.weight);
      if (m.bias) {
        biases.push_back(m.bias.getValue());
        biasOps.push_back(m.bias);
      }
      sizes.push_back(m.n);
      resultTypes.push_back(m.op->getResult(0).getType());
    }
    std::optional<ElementsAttr> weight = concatenateColumns(weights);
    std::optional<ElementsAttr> bias;
    if (!biases.empty())
      bias = concatenateColumns(biases);
    if (!weight || (!biases.empty() && !bias))
      return;

    Operation *first = members.front().op;
    OpBuilder b(first);
    Location loc = fusedLocOf(ctx, ops);
    Value w = ConstantOp::create(b, fusedLocOf(ctx, weightOps), *weight);
    Value bv;
    if (bias)
      bv = ConstantOp::create(b, fusedLocOf(ctx, biasOps), *bias);
    auto firstType = cast<RankedTensorType>(first->getResult(0).getType());
    SmallVector<int64_t> shape(firstType.getShape());
    int64_t total = 0;
    for (int64_t n : sizes)
      total += n;
    shape.back() = total;
    auto fusedType = RankedTensorType::get(shape, firstType.getElementType());
    Value input = members.front().input;
    Operation *fused =
        isa<LinearOp>(first)
            ? LinearOp::create(b, loc, fusedType, input, w, bv).getOperation()
            : MatmulOp::create(b, loc, fusedType, input, w).getOperation();
    fused->setAttrs(first->getAttrDictionary());
    auto split = SplitOp::create(b, loc, resultTypes, fused->getResult(0),
                                 b.getI64IntegerAttr(firstType.getRank() - 1),
                                 b.getDenseI64ArrayAttr(sizes));
    for (auto [m, piece] : llvm::zip_equal(members, split.getResults())) {
      m.op->getResult(0).replaceAllUsesWith(piece);
      m.op->erase();
      m.weight->erase();
      if (m.bias)
        m.bias->erase();
    }
    ++numGroups;
    numFused += members.size();
  }
};

} // namespace
} // namespace strata
