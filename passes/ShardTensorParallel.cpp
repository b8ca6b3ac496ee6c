//===- ShardTensorParallel.cpp - One rank of a tensor-parallel model -----===//
// SPDX-License-Identifier: Apache-2.0
// Megatron-style tensor parallelism on the strata dialect: every rank runs
// the same program on its share of each layer's weights. A column-parallel
// contraction keeps the rank's output columns, the values computed from it
// stay split (along one axis, the "split axis") through the ops that act
// on that axis elementwise or only move it (reshapes into heads and back,
// transposes, attention and the KV cache), and a row-parallel contraction,
// whose reduction dim is the split axis, keeps the matching rows and ends
// the split with an all-reduce of the partial sums.
//
// The analysis is optimistic and retried: every contraction by a constant
// weight whose input is whole starts a split; when a split value reaches an
// op no rule covers, the contractions it came from are left whole and the
// analysis runs again, until every split reaches only ops that carry it.
// So a graph is never wrong, only less parallel, except that an attention
// left whole is an error (its rank would hold the whole KV cache).

#include "passes/Passes.h"

#include "dialects/strata/IR/ConstantValues.h"
#include "dialects/strata/IR/StrataOps.h"
#include "passes/WeightContractions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <tuple>

namespace strata {

#define GEN_PASS_DEF_SHARDTENSORPARALLELPASS
#include "passes/Passes.h.inc"

using namespace mlir;
using namespace strata::ir;

namespace {

/// A range of indices along an axis.
struct Interval {
  int64_t start, size;
};

/// The indices rank |rank| of |ranks| keeps of an axis made of consecutive
/// |parts| (fused q/k/v: each part split evenly on its own).
SmallVector<Interval> rankIntervals(ArrayRef<int64_t> parts, int64_t ranks,
                                    int64_t rank) {
  SmallVector<Interval> out;
  int64_t offset = 0;
  for (int64_t part : parts) {
    const int64_t share = part / ranks;
    out.push_back({offset + rank * share, share});
    offset += part;
  }
  return out;
}

/// Marks the contractions split: "column" or "row" (strata-compile's
/// report counts them).
constexpr llvm::StringLiteral kTensorParallelAttr = "strata.tensor_parallel";

RankedTensorType tensorType(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

/// |type| with |axis| divided by |ranks| (a static extent).
RankedTensorType divided(RankedTensorType type, int64_t axis, int64_t ranks) {
  SmallVector<int64_t> shape(type.getShape());
  if (!ShapedType::isDynamic(shape[axis]))
    shape[axis] /= ranks;
  return RankedTensorType::get(shape, type.getElementType(),
                               type.getEncoding());
}

/// A contraction's weight: a constant [K, N], or the transpose of a
/// constant [N, K] (a tied embedding read as the LM head).
struct Weight {
  ElementsAttr attr;
  bool transposed = false;
};

std::optional<Weight> weightOf(Value v) {
  if (auto constant = v.getDefiningOp<ConstantOp>()) {
    auto type = tensorType(constant.getResult());
    if (type && type.getRank() == 2 && type.hasStaticShape() &&
        type.getElementType().isF32())
      return Weight{constant.getValue(), false};
    return std::nullopt;
  }
  if (auto transpose = v.getDefiningOp<TransposeOp>()) {
    if (transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
      return std::nullopt;
    std::optional<Weight> inner = weightOf(transpose.getInput());
    if (!inner || inner->transposed)
      return std::nullopt;
    return Weight{inner->attr, true};
  }
  return std::nullopt;
}

/// The activation, weight and bias of a contraction by a constant weight
/// (strata.linear, or strata.matmul of an activation of rank >= 2).
struct Contraction {
  Value input;
  Weight weight;
  Value weightValue;
  Value bias;
};

std::optional<Contraction> contractionOf(Operation *op) {
  Contraction c;
  if (auto linear = dyn_cast<LinearOp>(op)) {
    c.input = linear.getInput();
    c.weightValue = linear.getWeight();
    c.bias = linear.getBias();
  } else if (auto matmul = dyn_cast<MatmulOp>(op)) {
    c.input = matmul.getLhs();
    c.weightValue = matmul.getRhs();
  } else {
    return std::nullopt;
  }
  auto in = tensorType(c.input);
  if (!in || in.getRank() < 2 || !in.getElementType().isF32())
    return std::nullopt;
  std::optional<Weight> w = weightOf(c.weightValue);
  if (!w)
    return std::nullopt;
  c.weight = *w;
  if (c.bias) {
    auto bias = c.bias.getDefiningOp<ConstantOp>();
    auto type = tensorType(c.bias);
    if (!bias || !type || type.getRank() != 1)
      return std::nullopt;
  }
  return c;
}

/// [K, N] of a contraction's weight.
std::pair<int64_t, int64_t> weightShape(const Weight &w) {
  auto shape = cast<ShapedType>(w.attr.getType()).getShape();
  return w.transposed ? std::pair{shape[1], shape[0]}
                      : std::pair{shape[0], shape[1]};
}

bool isElementwise(Operation *op) {
  return isFloatElementwiseOp(op) ||
         isa<GeluOp, SiluOp, CastOp, WhereOp, SinOp, CosOp, FloorOp, CeilOp,
             RoundOp>(op);
}

/// How a split value is split: along |axis|, whose extent was |extent|
/// before the split, made of |parts| each split evenly, derived from the
/// column-parallel contractions in |roots|.
struct Split {
  int64_t axis = 0;
  int64_t extent = 0;
  SmallVector<int64_t> parts;
  llvm::BitVector roots;
};

/// What a reshape's shape operand needs: the element at |index| divided.
struct ShapeEdit {
  ReshapeOp reshape;
  int64_t index;
};

/// A whole operand of an op with split operands, sliced to the rank's share.
struct OperandSlice {
  OpOperand *operand;
  int64_t axis;
  SmallVector<int64_t> parts;
};

/// Where a split value could not go: the contractions it came from, why.
struct Conflict {
  llvm::BitVector roots;
  std::string reason;
  Location loc;
};

/// Which ops of one function split how.
class Analysis {
public:
  Analysis(func::FuncOp func, int64_t ranks, const llvm::BitVector &banned,
           ArrayRef<Operation *> candidates)
      : func_(func), ranks_(ranks), banned_(banned), candidates_(candidates) {}

  /// Runs the rules over the function; a conflict stops it.
  LogicalResult run() {
    for (Operation &op : func_.getBody().front()) {
      if (failed(visit(&op)))
        return failure();
    }
    return success();
  }

  std::optional<Conflict> conflict;
  llvm::MapVector<Value, Split> splits;
  /// Column-parallel contractions and their result's parts.
  llvm::MapVector<Operation *, SmallVector<int64_t>> columns;
  SmallVector<Operation *> rows;
  SmallVector<ShapeEdit> shapeEdits;
  /// Slices of one part of a split axis: their new [start, end).
  struct SliceEdit {
    SliceOp slice;
    int64_t start, end;
  };
  SmallVector<SliceEdit> sliceEdits;
  /// Ops that need their split input whole: gathered before, cut after.
  struct Regather {
    Operation *op;
    int64_t axis;
  };
  SmallVector<Regather> regathered;
  SmallVector<OperandSlice> operandSlices;
  /// Split state arguments (KV caches hold the rank's heads).
  llvm::SetVector<BlockArgument> states;
  /// Returned split values that are gathered.
  SmallVector<OpOperand *> gathers;
  /// Ops whose results' types change, in order; split ops' sizes.
  SmallVector<Operation *> touched;

private:
  const Split *splitOf(Value v) const {
    auto it = splits.find(v);
    return it == splits.end() ? nullptr : &it->second;
  }

  LogicalResult fail(Operation *op, const Twine &reason) {
    llvm::BitVector roots(candidates_.size());
    for (Value operand : op->getOperands())
      if (const Split *s = splitOf(operand))
        roots |= s->roots;
    conflict = Conflict{roots, reason.str(), op->getLoc()};
    return failure();
  }

  void setSplit(Value v, Split s) {
    splits[v] = std::move(s);
  }

  /// The roots of every split operand of |op|.
  llvm::BitVector rootsOf(Operation *op) const {
    llvm::BitVector roots(candidates_.size());
    for (Value operand : op->getOperands())
      if (const Split *s = splitOf(operand))
        roots |= s->roots;
    return roots;
  }

  /// The parts a contraction's result is split into: those of a split of
  /// it along its last axis reached through reshapes that keep that axis
  /// and elementwise ops (GPT-2's fused q/k/v), else the whole.
  SmallVector<int64_t> partsAfter(Value result, int64_t n) const {
    Value v = result;
    while (true) {
      if (std::optional<SmallVector<int64_t>> parts = slicedParts(v, n))
        return *parts;
      if (!v.hasOneUse())
        break;
      Operation *user = *v.getUsers().begin();
      auto type = tensorType(v);
      if (auto split = dyn_cast<SplitOp>(user)) {
        if (int64_t(split.getAxis()) != type.getRank() - 1)
          break;
        SmallVector<int64_t> parts(split.getSizes());
        if (llvm::all_of(parts, [&](int64_t p) { return p % ranks_ == 0; }))
          return parts;
        break;
      }
      if (auto reshape = dyn_cast<ReshapeOp>(user)) {
        auto out = tensorType(reshape.getResult());
        if (out.getShape().back() != n)
          break;
        v = reshape.getResult();
        continue;
      }
      if (isa<AddOp>(user) && user->getNumResults() == 1 &&
          tensorType(user->getResult(0)).getRank() == type.getRank()) {
        v = user->getResult(0);
        continue;
      }
      break;
    }
    return {n};
  }

  /// The parts of |v|'s last axis (extent |n|) when its readers are slices
  /// of that axis alone that tile it (Phi-3's fused q/k/v, cut by Slice).
  std::optional<SmallVector<int64_t>> slicedParts(Value v, int64_t n) const {
    const int64_t axis = tensorType(v).getRank() - 1;
    SmallVector<std::pair<int64_t, int64_t>> ranges;
    for (Operation *user : v.getUsers()) {
      auto slice = dyn_cast<SliceOp>(user);
      std::optional<std::pair<int64_t, int64_t>> range;
      if (slice && slice.getInput() == v)
        range = sliceRange(slice, axis, n);
      if (!range)
        return std::nullopt;
      ranges.push_back(*range);
    }
    if (ranges.size() < 2)
      return std::nullopt;
    llvm::sort(ranges);
    SmallVector<int64_t> parts;
    int64_t at = 0;
    for (auto [start, end] : ranges) {
      if (start == at - (end - start) && !parts.empty() &&
          parts.back() == end - start)
        continue; // the same part read twice
      if (start != at || (end - start) % ranks_ != 0)
        return std::nullopt;
      parts.push_back(end - start);
      at = end;
    }
    if (at != n)
      return std::nullopt;
    return parts;
  }

public:
  /// [start, end) of a slice of |axis| alone (extent |n|) by constants with
  /// step 1, clamped as ONNX Slice clamps.
  static std::optional<std::pair<int64_t, int64_t>>
  sliceRange(SliceOp slice, int64_t axis, int64_t n) {
    ArrayRef<int64_t> axes = slice.getAxes();
    const int64_t rank = tensorType(slice.getInput()).getRank();
    if (axes.size() != 1 || (axes[0] < 0 ? axes[0] + rank : axes[0]) != axis)
      return std::nullopt;
    std::optional<int64_t> start = shapeElement(slice.getStarts(), 0);
    std::optional<int64_t> end = shapeElement(slice.getEnds(), 0);
    std::optional<int64_t> step = shapeElement(slice.getSteps(), 0);
    if (!start || !end || step != 1)
      return std::nullopt;
    auto clamp = [&](int64_t x) {
      if (x < 0)
        x += n;
      return std::clamp<int64_t>(x, 0, n);
    };
    return std::pair{clamp(*start), clamp(*end)};
  }

private:
  LogicalResult visit(Operation *op) {
    if (std::optional<Contraction> c = contractionOf(op))
      return visitContraction(op, *c);
    bool anySplit = llvm::any_of(op->getOperands(), [&](Value v) {
      return splitOf(v) != nullptr;
    });
    if (!anySplit)
      return success();
    if (auto ret = dyn_cast<func::ReturnOp>(op))
      return visitReturn(ret);
    if (isElementwise(op))
      return visitElementwise(op);
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      return visitReshape(reshape);
    if (auto transpose = dyn_cast<TransposeOp>(op))
      return visitTranspose(transpose);
    if (auto split = dyn_cast<SplitOp>(op))
      return visitSplitOp(split);
    if (auto slice = dyn_cast<SliceOp>(op))
      return visitSlice(slice);
    if (auto concat = dyn_cast<ConcatOp>(op))
      return visitConcat(concat);
    if (auto attention = dyn_cast<AttentionOp>(op))
      return visitAttention(attention);
    if (auto write = dyn_cast<CacheWriteOp>(op))
      return visitCacheWrite(write);
    if (auto read = dyn_cast<CacheAttentionOp>(op))
      return visitCacheAttention(read);
    if (auto shape = dyn_cast<ShapeOp>(op))
      return visitShape(shape);
    if (auto gather = dyn_cast<GatherOp>(op))
      return visitGather(gather);
    if (isa<tensor::CastOp>(op)) {
      // Only a type change (a present output's dims made dynamic).
      setSplit(op->getResult(0), *splitOf(op->getOperand(0)));
      touched.push_back(op);
      return success();
    }
    if (isa<RmsNormOp, LayerNormOp>(op))
      return visitNorm(op);
    return fail(op, "'" + op->getName().getStringRef() +
                        "' reads a split value");
  }

  LogicalResult visitContraction(Operation *op, const Contraction &c) {
    auto [k, n] = weightShape(c.weight);
    if (const Split *in = splitOf(c.input)) {
      auto type = tensorType(c.input);
      if (in->axis != type.getRank() - 1 || in->parts.size() != 1 ||
          in->extent != k)
        return fail(op, "a contraction's input is split along another dim");
      rows.push_back(op);
      return success();
    }
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return splitOf(v) != nullptr; }))
      return fail(op, "a contraction's weight or bias is split");
    auto it = llvm::find(candidates_, op);
    if (it == candidates_.end())
      return success();
    const size_t index = it - candidates_.begin();
    if (banned_.test(index))
      return success();
    Value result = op->getResult(0);
    SmallVector<int64_t> parts = partsAfter(result, n);
    columns[op] = parts;
    Split s;
    s.axis = tensorType(result).getRank() - 1;
    s.extent = n;
    s.parts = parts;
    s.roots = llvm::BitVector(candidates_.size());
    s.roots.set(index);
    setSplit(result, s);
    touched.push_back(op);
    return success();
  }

  /// Numpy broadcasting: every split operand's axis lands on one result
  /// axis; a whole operand there is a broadcast (extent 1), absent, or the
  /// full extent (sliced).
  LogicalResult visitElementwise(Operation *op) {
    auto result = tensorType(op->getResult(0));
    if (!result)
      return fail(op, "an elementwise op of an unranked result");
    const int64_t rank = result.getRank();
    const Split *first = nullptr;
    int64_t axis = -1;
    for (Value operand : op->getOperands()) {
      const Split *s = splitOf(operand);
      if (!s)
        continue;
      const int64_t mapped = s->axis + rank - tensorType(operand).getRank();
      if (first && (mapped != axis || s->parts != first->parts ||
                    s->extent != first->extent))
        return fail(op, "operands split along different dims");
      first = s;
      axis = mapped;
    }
    for (OpOperand &operand : op->getOpOperands()) {
      if (splitOf(operand.get()))
        continue;
      auto type = tensorType(operand.get());
      if (!type)
        return fail(op, "an unranked operand");
      const int64_t at = axis - (rank - type.getRank());
      if (at < 0 || type.getDimSize(at) == 1)
        continue;
      if (type.getDimSize(at) != first->extent)
        return fail(op, "a whole operand of unknown extent along the split");
      if (first->parts.size() != 1 && !operand.get().getDefiningOp<ConstantOp>())
        return fail(op, "a computed operand beside fused parts");
      operandSlices.push_back({&operand, at, first->parts});
    }
    Split s = *first;
    s.axis = axis;
    s.roots = rootsOf(op);
    setSplit(op->getResult(0), s);
    touched.push_back(op);
    return success();
  }

  /// A split axis of extent E with I elements after it is a block of E * I
  /// elements; the result's axis is the one whose block has that size.
  LogicalResult visitReshape(ReshapeOp op) {
    if (!splitOf(op.getInput()))
      return fail(op, "a reshape to a shape read from a split value");
    const Split in = *splitOf(op.getInput());
    auto inType = tensorType(op.getInput());
    auto outType = tensorType(op.getResult());
    int64_t inner = 1;
    for (int64_t d = in.axis + 1; d < inType.getRank(); ++d) {
      if (inType.isDynamicDim(d))
        return fail(op, "a reshape of dynamic dims inside the split");
      inner *= inType.getDimSize(d);
    }
    const int64_t block = in.extent * inner;
    int64_t product = 1, axis = -1;
    for (int64_t d = outType.getRank() - 1; d >= 0; --d) {
      if (outType.isDynamicDim(d))
        break;
      product *= outType.getDimSize(d);
      if (product == block && outType.getDimSize(d) % ranks_ == 0) {
        axis = d;
        break;
      }
      if (product > block)
        break;
    }
    // A merge into an inferred last dim (torch's default exporter:
    // view(batch, length, -1)), of the split axis and every dim after it.
    int64_t extent = axis >= 0 ? outType.getDimSize(axis) : 0;
    const int64_t last = outType.getRank() - 1;
    if (axis < 0 && last == in.axis && outType.isDynamicDim(last) &&
        op.getShape() && shapeElement(op.getShape(), last) == -1) {
      axis = last;
      extent = block;
    }
    if (axis < 0)
      return fail(op, "a reshape that does not keep the split whole");
    if (in.parts.size() != 1 && extent != in.extent)
      return fail(op, "a reshape of fused parts");
    if (Value shape = op.getShape()) {
      if (!shapeElementEditable(shape, axis, extent, op.getAllowZero()))
        return fail(op, "a reshape whose target extent is computed");
      shapeEdits.push_back({op, axis});
    }
    Split s = in;
    s.axis = axis;
    s.extent = extent;
    if (extent != in.extent)
      s.parts = {extent};
    setSplit(op.getResult(), s);
    touched.push_back(op);
    return success();
  }

  /// The element |index| of a reshape's shape operand is a constant: the
  /// extent (to divide), -1 (inferred) or, without allow_zero, 0 (copied
  /// from the split input dim at that index).
  static bool shapeElementEditable(Value shape, int64_t index, int64_t extent,
                                   bool allowZero) {
    std::optional<int64_t> value = shapeElement(shape, index);
    if (!value)
      return false;
    return *value == extent || *value == -1 || (*value == 0 && !allowZero);
  }

public:
  /// The constant element |index| of a 1-D shape tensor: a constant, or a
  /// concatenation of pieces whose piece there is one.
  static std::optional<int64_t> shapeElement(Value shape, int64_t index) {
    DenseIntElementsAttr values;
    if (matchPattern(shape, m_Constant(&values))) {
      if (index >= values.getNumElements())
        return std::nullopt;
      return (*(values.begin() + index)).getSExtValue();
    }
    auto concat = shape.getDefiningOp<ConcatOp>();
    if (!concat || concat.getAxis() != 0)
      return std::nullopt;
    int64_t offset = 0;
    for (Value piece : concat.getInputs()) {
      auto type = tensorType(piece);
      if (!type || type.getRank() != 1 || type.isDynamicDim(0))
        return std::nullopt;
      if (index < offset + type.getDimSize(0))
        return shapeElement(piece, index - offset);
      offset += type.getDimSize(0);
    }
    return std::nullopt;
  }

private:
  LogicalResult visitTranspose(TransposeOp op) {
    const Split in = *splitOf(op.getInput());
    ArrayRef<int64_t> perm = op.getPermutation();
    auto it = llvm::find(perm, in.axis);
    if (it == perm.end())
      return fail(op, "a transpose without the split axis");
    Split s = in;
    s.axis = it - perm.begin();
    setSplit(op.getResult(), s);
    touched.push_back(op);
    return success();
  }

  LogicalResult visitSplitOp(SplitOp op) {
    const Split in = *splitOf(op.getInput());
    ArrayRef<int64_t> sizes = op.getSizes();
    if (int64_t(op.getAxis()) == in.axis) {
      if (ArrayRef<int64_t>(in.parts) != sizes)
        return fail(op, "a split of the split axis into other parts");
      for (auto [result, size] : llvm::zip_equal(op.getResults(), sizes)) {
        Split s = in;
        s.extent = size;
        s.parts = {size};
        setSplit(result, s);
      }
    } else {
      for (Value result : op.getResults())
        setSplit(result, in);
    }
    touched.push_back(op);
    return success();
  }

  LogicalResult visitSlice(SliceOp op) {
    const Split *in = splitOf(op.getInput());
    if (!in || llvm::any_of(op->getOperands().drop_front(),
                            [&](Value v) { return splitOf(v) != nullptr; }))
      return fail(op, "a slice bound read from a split value");
    const int64_t rank = tensorType(op.getInput()).getRank();
    for (int64_t axis : op.getAxes())
      if ((axis < 0 ? axis + rank : axis) == in->axis)
        return visitPartSlice(op, *in);
    setSplit(op.getResult(), *in);
    touched.push_back(op);
    return success();
  }

  /// A slice that takes one whole part of a split axis of parts: the same
  /// part of the rank's share.
  LogicalResult visitPartSlice(SliceOp op, Split in) {
    std::optional<std::pair<int64_t, int64_t>> range =
        sliceRange(op, in.axis, in.extent);
    if (!range)
      return fail(op, "a slice of the split axis");
    int64_t offset = 0;
    for (int64_t part : in.parts) {
      if (range->first == offset && range->second == offset + part) {
        sliceEdits.push_back({op, offset / ranks_, (offset + part) / ranks_});
        Split s = in;
        s.extent = part;
        s.parts = {part};
        setSplit(op.getResult(), s);
        touched.push_back(op);
        return success();
      }
      offset += part;
    }
    return fail(op, "a slice of the split axis across its parts");
  }

  LogicalResult visitConcat(ConcatOp op) {
    const Split *first = nullptr;
    for (Value input : op.getInputs())
      if (const Split *s = splitOf(input)) {
        if (first && (s->axis != first->axis || s->parts != first->parts))
          return fail(op, "inputs split along different dims");
        first = s;
      }
    const int64_t axis = int64_t(op.getAxis());
    if (axis == first->axis)
      return fail(op, "a concatenation along the split axis");
    if (first->parts.size() != 1)
      return fail(op, "a concatenation of fused parts");
    for (OpOperand &operand : op->getOpOperands()) {
      if (splitOf(operand.get()))
        continue;
      if (tensorType(operand.get()).getDimSize(first->axis) != first->extent)
        return fail(op, "a whole input of unknown extent along the split");
      operandSlices.push_back({&operand, first->axis, first->parts});
    }
    Split s = *first;
    s.roots = rootsOf(op);
    setSplit(op.getResult(), s);
    touched.push_back(op);
    return success();
  }

  /// Heads (dim 1) of the query, key and value all split.
  LogicalResult visitAttention(AttentionOp op) {
    const Split *q = splitOf(op.getQuery());
    const Split *k = splitOf(op.getKey());
    const Split *v = splitOf(op.getValue());
    if (!q || !k || !v || q->axis != 1 || k->axis != 1 || v->axis != 1)
      return fail(op, "an attention whose query, key and value are not all "
                      "split by heads");
    if (Value mask = op.getMask()) {
      if (splitOf(mask))
        return fail(op, "a split attention mask");
      auto type = tensorType(mask);
      if (type.getRank() == 4 && type.getDimSize(1) != 1) {
        if (type.getDimSize(1) != q->extent)
          return fail(op, "a per-head mask of unknown heads");
        OpOperand &operand = op->getOpOperand(3);
        operandSlices.push_back({&operand, 1, {q->extent}});
      }
    }
    Split s = *q;
    s.roots = rootsOf(op);
    setSplit(op.getResult(), s);
    touched.push_back(op);
    return success();
  }

  LogicalResult visitCacheWrite(CacheWriteOp op) {
    // Copies: setSplit may move the map's entries.
    std::optional<Split> rows;
    if (const Split *s = splitOf(op.getUpdate()))
      rows = *s;
    if (!rows || rows->axis != 1 || splitOf(op.getSlots()) ||
        splitOf(op.getPositions()))
      return fail(op, "a cache write of rows not split by heads");
    if (const Split *cache = splitOf(op.getCache())) {
      if (cache->axis != 1)
        return fail(op, "a cache split along another dim");
    } else {
      auto arg = dyn_cast<BlockArgument>(op.getCache());
      if (!arg || arg.getOwner() != &func_.getBody().front() ||
          !func_.getArgAttr(arg.getArgNumber(), "strata.state") ||
          !llvm::all_of(arg.getUsers(),
                        [](Operation *u) { return isa<CacheWriteOp>(u); }) ||
          tensorType(arg).getDimSize(1) != rows->extent)
        return fail(op, "a cache that is not a state of the entry");
      setSplit(arg, *rows);
      states.insert(arg);
    }
    Split s = *rows;
    s.roots = rootsOf(op);
    setSplit(op.getResult(), s);
    touched.push_back(op);
    return success();
  }

  LogicalResult visitCacheAttention(CacheAttentionOp op) {
    const Split *q = splitOf(op.getQuery());
    const Split *k = splitOf(op.getKeyCache());
    const Split *v = splitOf(op.getValueCache());
    if (!q || !k || !v || q->axis != 1 || k->axis != 1 || v->axis != 1 ||
        splitOf(op.getSlots()) || splitOf(op.getLengths()))
      return fail(op, "a cached attention whose query and caches are not "
                      "all split by heads");
    Split s = *q;
    s.roots = rootsOf(op);
    setSplit(op.getResult(), s);
    touched.push_back(op);
    return success();
  }

  /// Whole indices along another axis than the split one (Falcon takes
  /// each group's key and value by index).
  LogicalResult visitGather(GatherOp op) {
    const Split *in = splitOf(op.getData());
    auto indices = tensorType(op.getIndices());
    const int64_t rank = tensorType(op.getData()).getRank();
    const int64_t axis = int64_t(op.getAxis()) < 0
                             ? int64_t(op.getAxis()) + rank
                             : int64_t(op.getAxis());
    if (!in || splitOf(op.getIndices()) || !indices || axis == in->axis)
      return fail(op, "a gather along the split axis or by split indices");
    Split s = *in;
    if (in->axis > axis)
      s.axis = in->axis + indices.getRank() - 1;
    setSplit(op.getResult(), s);
    touched.push_back(op);
    return success();
  }

  /// A norm over dims after the split axis (per-head q/k norms) keeps the
  /// split; its scale and bias are whole.
  LogicalResult visitNorm(Operation *op) {
    const Split *in = splitOf(op->getOperand(0));
    if (!in || llvm::any_of(op->getOperands().drop_front(),
                            [&](Value v) { return splitOf(v) != nullptr; }))
      return fail(op, "a norm's scale or bias is split");
    const int64_t rank = tensorType(op->getOperand(0)).getRank();
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    if (axis < 0)
      axis += rank;
    if (axis <= in->axis) {
      // A norm over the split last axis alone (OLMo-2's q/k norms over
      // the whole projection): gathered, normalized whole, cut again.
      if (axis != rank - 1 || in->axis != rank - 1 || in->parts.size() != 1)
        return fail(op, "'" + op->getName().getStringRef() +
                            "' normalizes over the split axis");
      regathered.push_back({op, in->axis});
    } else {
      touched.push_back(op);
    }
    setSplit(op->getResult(0), *in);
    return success();
  }

  /// A shape read of a split value is fine where only other dims are read.
  LogicalResult visitShape(ShapeOp op) {
    const Split in = *splitOf(op.getInput());
    const int64_t rank = tensorType(op.getInput()).getRank();
    const int64_t start = int64_t(op.getStart()) < 0
                              ? int64_t(op.getStart()) + rank
                              : int64_t(op.getStart());
    int64_t end = op.getEnd() ? int64_t(*op.getEnd()) : rank;
    if (end < 0)
      end += rank;
    if (in.axis < start || in.axis >= end)
      return success();
    const int64_t index = in.axis - start;
    const int64_t count = end - start;
    for (Operation *user : op->getUsers()) {
      // An element read by a constant index, or a constant range of them.
      if (auto gather = dyn_cast<GatherOp>(user)) {
        std::optional<int64_t> at;
        if (gather.getData() == op.getResult())
          at = shapeElement(gather.getIndices(), 0);
        if (at && *at != index && *at != index - count)
          continue;
      } else if (auto slice = dyn_cast<SliceOp>(user)) {
        std::optional<std::pair<int64_t, int64_t>> range =
            sliceRange(slice, 0, count);
        if (range && (index < range->first || index >= range->second))
          continue;
      }
      return fail(op, "a shape read of the split dim");
    }
    return success();
  }

  LogicalResult visitReturn(func::ReturnOp op) {
    for (OpOperand &operand : op->getOpOperands()) {
      const Split *s = splitOf(operand.get());
      if (!s)
        continue;
      auto state = func_.getResultAttrOfType<StringAttr>(
          operand.getOperandNumber(), "strata.state");
      bool isState = false;
      if (state)
        for (BlockArgument arg : states)
          if (func_.getArgAttr(arg.getArgNumber(), "strata.state") == state)
            isState = true;
      if (isState)
        continue;
      if (s->parts.size() != 1)
        return fail(op, "an output of fused parts");
      gathers.push_back(&operand);
    }
    return success();
  }

  func::FuncOp func_;
  int64_t ranks_;
  const llvm::BitVector &banned_;
  ArrayRef<Operation *> candidates_;
};

/// New constants of a rank's share, one per (constant, axis, share), so
/// that entries sharing a weight keep sharing it.
class ConstantSlicer {
public:
  ConstantSlicer(int64_t ranks, int64_t rank) : ranks_(ranks), rank_(rank) {}

  std::optional<ElementsAttr> slice(ElementsAttr attr, int64_t axis,
                                    ArrayRef<int64_t> parts) {
    auto key = std::make_tuple(attr.getAsOpaquePointer(), axis,
                               std::vector<int64_t>(parts.begin(), parts.end()));
    auto it = cache_.find(key);
    if (it != cache_.end())
      return it->second;
    auto type = cast<RankedTensorType>(attr.getType());
    if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat() ||
        type.getElementType().getIntOrFloatBitWidth() % 8 != 0)
      return std::nullopt;
    std::optional<std::vector<char>> bytes = constantRawBytes(attr);
    if (!bytes)
      return std::nullopt;
    const size_t width = type.getElementType().getIntOrFloatBitWidth() / 8;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= type.getDimSize(d);
    for (int64_t d = axis + 1; d < type.getRank(); ++d)
      inner *= type.getDimSize(d);
    const int64_t extent = type.getDimSize(axis);
    SmallVector<Interval> keep = rankIntervals(parts, ranks_, rank_);
    int64_t kept = 0;
    for (Interval i : keep)
      kept += i.size;
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] = kept;
    auto newType = RankedTensorType::get(shape, type.getElementType());
    const size_t rowBytes = size_t(inner) * width;
    AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
        size_t(outer * kept) * rowBytes, alignof(std::max_align_t),
        /*dataIsMutable=*/true);
    char *out = blob.getMutableData().data();
    // Indices past the extent (a padded split) are zeros.
    std::memset(out, 0, size_t(outer * kept) * rowBytes);
    for (int64_t o = 0; o < outer; ++o)
      for (Interval i : keep) {
        const int64_t present =
            std::max<int64_t>(0, std::min(i.size, extent - i.start));
        if (present > 0)
          std::memcpy(out, bytes->data() + (o * extent + i.start) * rowBytes,
                      size_t(present) * rowBytes);
        out += size_t(i.size) * rowBytes;
      }
    ElementsAttr result;
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
      std::string name = resource.getRawHandle().getKey().str() + ".rank" +
                         std::to_string(rank_);
      result = DenseResourceElementsAttr::get(newType, name, std::move(blob));
    } else {
      result = cast<ElementsAttr>(
          DenseElementsAttr::getFromRawBuffer(newType, blob.getData()));
    }
    cache_[key] = result;
    return result;
  }

private:
  int64_t ranks_, rank_;
  std::map<std::tuple<const void *, int64_t, std::vector<int64_t>>,
           ElementsAttr>
      cache_;
};

struct ShardTensorParallelPass
    : impl::ShardTensorParallelPassBase<ShardTensorParallelPass> {
  using ShardTensorParallelPassBase::ShardTensorParallelPassBase;

  void runOnOperation() override {
    if (ranks == 1 && rank == 0)
      return;
    if (ranks < 1 || rank < 0 || rank >= ranks) {
      getOperation().emitError()
          << "tensor-parallel rank " << int64_t(rank) << " of "
          << int64_t(ranks) << " is not a rank of the group";
      return signalPassFailure();
    }
    ConstantSlicer slicer(ranks, rank);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (failed(shard(func, slicer)))
        return signalPassFailure();
    }
  }

  LogicalResult shard(func::FuncOp func, ConstantSlicer &slicer) {
    SmallVector<Operation *> candidates, padded;
    llvm::SmallPtrSet<Operation *, 4> returned = contractionsReturned(func);
    for (Operation &op : func.getBody().front())
      if (std::optional<Contraction> c = contractionOf(&op)) {
        auto [k, n] = weightShape(c->weight);
        if (n % ranks == 0)
          candidates.push_back(&op);
        else if (returned.contains(&op))
          padded.push_back(&op);
        else
          emitRemark(op.getLoc())
              << "tensor parallelism: a contraction of " << n
              << " output columns stays whole (" << int64_t(ranks)
              << " ranks do not divide them)";
      }
    // An LM head whose vocabulary the ranks do not divide (GPT-2's 50257):
    // each rank computes its share of the vocabulary padded with zero
    // columns, gathered at once and the padding cut off.
    for (Operation *op : padded)
      if (failed(splitPadded(op, slicer)))
        return failure();
    llvm::BitVector banned(candidates.size());
    std::vector<std::string> reasons(candidates.size());
    std::vector<std::optional<Location>> where(candidates.size());
    for (;;) {
      Analysis analysis(func, ranks, banned, candidates);
      if (succeeded(analysis.run())) {
        for (size_t i = 0; i < candidates.size(); ++i)
          if (banned.test(i))
            emitRemark(candidates[i]->getLoc())
                << "tensor parallelism: a contraction stays whole: "
                << reasons[i];
        if (failed(checkAttention(func, analysis, candidates, reasons, where)))
          return failure();
        return rewrite(func, analysis, slicer);
      }
      Conflict &c = *analysis.conflict;
      if (c.roots.none())
        return emitError(c.loc) << "tensor parallelism: " << c.reason;
      for (int i : c.roots.set_bits()) {
        reasons[i] = c.reason;
        where[i] = c.loc;
      }
      banned |= c.roots;
    }
  }

  LogicalResult splitPadded(Operation *op, ConstantSlicer &slicer) {
    Contraction c = *contractionOf(op);
    auto [k, n] = weightShape(c.weight);
    const int64_t columns = (n + ranks - 1) / ranks;
    const int64_t paddedColumns = columns * ranks;
    OpBuilder b(op);
    Location loc = op->getLoc();
    std::optional<ElementsAttr> w = slicer.slice(
        c.weight.attr, c.weight.transposed ? 0 : 1, {paddedColumns});
    if (!w)
      return emitError(loc) << "tensor parallelism: a weight cannot be read";
    Value weight = weightConstant(b, loc, *w, c.weight.transposed);
    op->setOperand(1, weight);
    if (c.bias) {
      FailureOr<Value> bias = share(b, loc, c.bias, 0, {paddedColumns}, slicer);
      if (failed(bias))
        return emitError(loc) << "tensor parallelism: a bias cannot be read";
      op->setOperand(2, *bias);
    }
    op->setAttr(kTensorParallelAttr, b.getStringAttr("column"));
    Value result = op->getResult(0);
    auto whole = tensorType(result);
    const int64_t axis = whole.getRank() - 1;
    SmallVector<int64_t> shape(whole.getShape());
    shape[axis] = columns;
    result.setType(RankedTensorType::get(shape, whole.getElementType()));
    b.setInsertionPointAfter(op);
    shape[axis] = paddedColumns;
    Value gathered =
        AllGatherOp::create(
            b, loc, RankedTensorType::get(shape, whole.getElementType()),
            result, b.getI64IntegerAttr(axis), b.getI64IntegerAttr(ranks))
            .getResult();
    Value cut = slice(b, loc, whole, gathered, axis, 0, n);
    result.replaceAllUsesExcept(cut, gathered.getDefiningOp());
    ++numColumnParallel;
    ++numAllGather;
    return success();
  }

  /// Every attention must be split: a whole one would need every head's
  /// keys and values on every rank.
  LogicalResult checkAttention(func::FuncOp func, const Analysis &analysis,
                               ArrayRef<Operation *> candidates,
                               ArrayRef<std::string> reasons,
                               ArrayRef<std::optional<Location>> where) {
    WalkResult walk = func.walk([&](Operation *op) {
      if (!isa<AttentionOp, CacheAttentionOp>(op) ||
          analysis.splits.count(op->getResult(0)))
        return WalkResult::advance();
      auto q = tensorType(op->getOperand(0));
      auto k = tensorType(op->getOperand(1));
      InFlightDiagnostic diag = emitError(op->getLoc());
      diag << "tensor parallelism over " << int64_t(ranks)
           << " ranks cannot split this attention";
      if (q && k && q.getRank() == 4 && k.getRank() == 4 &&
          (q.getDimSize(1) % ranks != 0 || k.getDimSize(1) % ranks != 0)) {
        diag << ": its " << q.getDimSize(1) << " heads and "
             << k.getDimSize(1) << " key/value heads must both be multiples "
             << "of the rank count";
      } else {
        for (size_t i = 0; i < candidates.size(); ++i)
          if (!reasons[i].empty()) {
            diag << ": " << reasons[i];
            if (where[i])
              diag.attachNote(*where[i]) << "here";
            break;
          }
      }
      return WalkResult::interrupt();
    });
    return failure(walk.wasInterrupted());
  }

  Value constant(OpBuilder &b, Location loc, ElementsAttr attr) {
    return ConstantOp::create(b, loc, attr).getResult();
  }

  /// A 1-element i64 tensor (slice bounds).
  Value index(OpBuilder &b, Location loc, int64_t x) {
    auto type = RankedTensorType::get({1}, b.getI64Type());
    return constant(b, loc, cast<ElementsAttr>(DenseElementsAttr::get(
                                type, ArrayRef<int64_t>{x})));
  }

  /// [start, end) of |v| along |axis|, of type |type|.
  Value slice(OpBuilder &b, Location loc, RankedTensorType type, Value v,
              int64_t axis, int64_t start, int64_t end) {
    return SliceOp::create(b, loc, type, v, index(b, loc, start),
                           index(b, loc, end), index(b, loc, 1),
                           b.getDenseI64ArrayAttr({axis}))
        .getResult();
  }

  /// A contraction's [K, N] weight from its rank's share |w| of the
  /// constant, transposed back where the constant is [N, K].
  Value weightConstant(OpBuilder &b, Location loc, ElementsAttr w,
                       bool transposed) {
    Value weight = constant(b, loc, w);
    if (!transposed)
      return weight;
    auto type = cast<RankedTensorType>(w.getType());
    return TransposeOp::create(
        b, loc,
        RankedTensorType::get({type.getDimSize(1), type.getDimSize(0)},
                              type.getElementType()),
        weight, b.getDenseI64ArrayAttr({1, 0}));
  }

  /// The rank's share of |v| along |axis|: a sliced constant, or a slice.
  FailureOr<Value> share(OpBuilder &b, Location loc, Value v, int64_t axis,
                         ArrayRef<int64_t> parts, ConstantSlicer &slicer) {
    if (auto c = v.getDefiningOp<ConstantOp>()) {
      std::optional<ElementsAttr> sliced = slicer.slice(c.getValue(), axis, parts);
      if (!sliced)
        return failure();
      return constant(b, loc, *sliced);
    }
    if (parts.size() != 1)
      return failure();
    auto type = tensorType(v);
    const int64_t extent = parts[0] / ranks;
    return slice(b, loc, divided(type, axis, ranks), v, axis, rank * extent,
                 (rank + 1) * extent);
  }

  LogicalResult rewrite(func::FuncOp func, Analysis &a,
                        ConstantSlicer &slicer) {
    Block &body = func.getBody().front();
    // Operand slices first: they read the operands' old types.
    for (const OperandSlice &s : a.operandSlices) {
      Operation *owner = s.operand->getOwner();
      OpBuilder b(owner);
      FailureOr<Value> part =
          share(b, owner->getLoc(), s.operand->get(), s.axis, s.parts, slicer);
      if (failed(part))
        return emitError(owner->getLoc())
               << "tensor parallelism: an operand cannot be sliced";
      s.operand->set(*part);
    }
    // Column-parallel weights, their biases and results.
    for (auto &[op, parts] : a.columns) {
      Contraction c = *contractionOf(op);
      OpBuilder b(op);
      std::optional<ElementsAttr> w =
          slicer.slice(c.weight.attr, c.weight.transposed ? 0 : 1, parts);
      if (!w)
        return emitError(op->getLoc())
               << "tensor parallelism: a weight cannot be read";
      Value weight = weightConstant(b, op->getLoc(), *w, c.weight.transposed);
      op->setOperand(1, weight);
      op->setAttr(kTensorParallelAttr, b.getStringAttr("column"));
      if (c.bias) {
        FailureOr<Value> bias =
            share(b, op->getLoc(), c.bias, 0, parts, slicer);
        if (failed(bias))
          return emitError(op->getLoc())
                 << "tensor parallelism: a bias cannot be read";
        op->setOperand(2, *bias);
      }
      ++numColumnParallel;
    }
    // Ops that need a whole input: its type before the split.
    SmallVector<RankedTensorType> wholeInputs;
    for (const Analysis::Regather &g : a.regathered)
      wholeInputs.push_back(tensorType(g.op->getOperand(0)));
    // Result types along the split, split sizes, reshape targets.
    for (Operation *op : a.touched) {
      for (Value result : op->getResults()) {
        auto it = a.splits.find(result);
        if (it == a.splits.end())
          continue;
        result.setType(divided(tensorType(result), it->second.axis, ranks));
      }
      if (auto split = dyn_cast<SplitOp>(op)) {
        const Split &in = a.splits.find(split.getInput())->second;
        if (int64_t(split.getAxis()) == in.axis) {
          SmallVector<int64_t> sizes;
          for (int64_t size : split.getSizes())
            sizes.push_back(size / ranks);
          split.setSizes(sizes);
        }
      }
    }
    for (const ShapeEdit &edit : a.shapeEdits)
      if (failed(editShape(edit)))
        return failure();
    for (Analysis::SliceEdit edit : a.sliceEdits) {
      OpBuilder b(edit.slice);
      Location loc = edit.slice.getLoc();
      edit.slice.getStartsMutable().assign(index(b, loc, edit.start));
      edit.slice.getEndsMutable().assign(index(b, loc, edit.end));
    }
    for (auto [g, whole] : llvm::zip_equal(a.regathered, wholeInputs)) {
      Operation *op = g.op;
      OpBuilder b(op);
      Location loc = op->getLoc();
      op->setOperand(0, AllGatherOp::create(b, loc, whole, op->getOperand(0),
                                            b.getI64IntegerAttr(g.axis),
                                            b.getI64IntegerAttr(ranks))
                            .getResult());
      ++numAllGather;
      b.setInsertionPointAfter(op);
      Value result = op->getResult(0);
      auto type = tensorType(result);
      const int64_t share = type.getDimSize(g.axis) / ranks;
      Value cut = slice(b, loc, divided(type, g.axis, ranks), result, g.axis,
                        rank * share, (rank + 1) * share);
      result.replaceAllUsesExcept(cut, cut.getDefiningOp());
    }
    // Row-parallel: the rank's rows, then the sum over the ranks.
    for (Operation *op : a.rows) {
      Contraction c = *contractionOf(op);
      OpBuilder b(op);
      auto [k, n] = weightShape(c.weight);
      std::optional<ElementsAttr> w =
          slicer.slice(c.weight.attr, c.weight.transposed ? 1 : 0, {k});
      if (!w)
        return emitError(op->getLoc())
               << "tensor parallelism: a weight cannot be read";
      Value weight = weightConstant(b, op->getLoc(), *w, c.weight.transposed);
      Value result = op->getResult(0);
      Value partial;
      if (auto linear = dyn_cast<LinearOp>(op))
        partial = LinearOp::create(b, op->getLoc(), result.getType(),
                                   linear.getInput(), weight, Value())
                      .getResult();
      else
        partial = MatmulOp::create(b, op->getLoc(), result.getType(),
                                   c.input, weight)
                      .getResult();
      partial.getDefiningOp()->setAttr(kTensorParallelAttr,
                                       b.getStringAttr("row"));
      b.setInsertionPointAfterValue(partial);
      Value sum = AllReduceOp::create(b, op->getLoc(), partial,
                                      b.getI64IntegerAttr(ranks))
                      .getResult();
      if (c.bias)
        sum = AddOp::create(b, op->getLoc(), result.getType(), sum, c.bias)
                  .getResult();
      result.replaceAllUsesWith(sum);
      op->erase();
      ++numRowParallel;
      ++numAllReduce;
    }
    // Split outputs gathered; split states keep the rank's share.
    for (OpOperand *operand : a.gathers) {
      Operation *ret = operand->getOwner();
      OpBuilder b(ret);
      const Split &s = a.splits.find(operand->get())->second;
      auto type = cast<RankedTensorType>(
          func.getResultTypes()[operand->getOperandNumber()]);
      operand->set(AllGatherOp::create(b, ret->getLoc(), type, operand->get(),
                                       b.getI64IntegerAttr(s.axis),
                                       b.getI64IntegerAttr(ranks))
                       .getResult());
      ++numAllGather;
    }
    for (BlockArgument arg : a.states)
      arg.setType(divided(tensorType(arg), 1, ranks));
    func.setType(FunctionType::get(
        func.getContext(), body.getArgumentTypes(),
        body.getTerminator()->getOperandTypes()));
    return success();
  }

  /// Divides the target extent at |edit.index| of a reshape's shape
  /// operand (a new constant, or a new concatenation with a new piece).
  LogicalResult editShape(const ShapeEdit &edit) {
    ReshapeOp reshape = edit.reshape;
    Value shape = reshape.getShape();
    OpBuilder b(reshape);
    std::optional<int64_t> value = Analysis::shapeElement(shape, edit.index);
    if (!value || *value <= 0)
      return success();
    FailureOr<Value> edited = withElement(b, shape, edit.index,
                                          *value / ranks, reshape.getLoc());
    if (failed(edited))
      return emitError(reshape.getLoc())
             << "tensor parallelism: a reshape target cannot be edited";
    reshape.getShapeMutable().assign(*edited);
    return success();
  }

  FailureOr<Value> withElement(OpBuilder &b, Value shape, int64_t index,
                               int64_t value, Location loc) {
    DenseIntElementsAttr values;
    if (matchPattern(shape, m_Constant(&values))) {
      SmallVector<int64_t> v;
      for (APInt x : values)
        v.push_back(x.getSExtValue());
      v[index] = value;
      auto type = RankedTensorType::get({int64_t(v.size())}, b.getI64Type());
      return constant(b, loc,
                      cast<ElementsAttr>(DenseElementsAttr::get(
                          type, ArrayRef<int64_t>(v))));
    }
    auto concat = shape.getDefiningOp<ConcatOp>();
    if (!concat)
      return failure();
    SmallVector<Value> pieces(concat.getInputs());
    int64_t offset = 0;
    for (Value &piece : pieces) {
      const int64_t size = tensorType(piece).getDimSize(0);
      if (index < offset + size) {
        FailureOr<Value> edited =
            withElement(b, piece, index - offset, value, loc);
        if (failed(edited))
          return failure();
        piece = *edited;
        break;
      }
      offset += size;
    }
    return ConcatOp::create(b, loc, concat.getType(), pieces,
                            concat.getAxisAttr())
        .getResult();
  }
};

} // namespace

} // namespace strata
