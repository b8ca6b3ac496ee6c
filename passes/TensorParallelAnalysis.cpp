//===- TensorParallelAnalysis.cpp - Which ops a rank splits how ----------===//
// SPDX-License-Identifier: Apache-2.0
// The rules: how each op carries a split of one of its operands (or why it
// cannot), applied in program order from the contractions that start
// splits.

#include "passes/TensorParallelAnalysis.h"

#include "dialects/strata/IR/ConstantValues.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>

namespace strata::tensor_parallel {

using namespace mlir;
using namespace strata::ir;

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

namespace {

/// Which ops of one function split how.
class Analysis : public Plan {
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
    if (isa<SendOp>(op))
      return visitSend(op);
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

  /// A split value handed to another pipeline stage goes whole, as an
  /// output does.
  LogicalResult visitSend(Operation *op) {
    OpOperand &operand = op->getOpOperand(0);
    const Split *s = splitOf(operand.get());
    if (s->parts.size() != 1)
      return fail(op, "a hand-over of fused parts");
    sendGathers.push_back({&operand, operand.get().getType()});
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

} // namespace

std::optional<int64_t> shapeElement(Value shape, int64_t index) {
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

std::optional<std::pair<int64_t, int64_t>> sliceRange(SliceOp slice,
                                                      int64_t axis,
                                                      int64_t n) {
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

LogicalResult analyze(func::FuncOp func, int64_t ranks,
                      const llvm::BitVector &banned,
                      ArrayRef<Operation *> candidates, Plan &plan) {
  Analysis analysis(func, ranks, banned, candidates);
  LogicalResult result = analysis.run();
  plan = std::move(static_cast<Plan &>(analysis));
  return result;
}

} // namespace strata::tensor_parallel
