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

#include "passes/TensorParallelAnalysis.h"
#include "passes/WeightContractions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/BitVector.h"
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
using namespace strata::tensor_parallel;

namespace {

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
      Plan analysis;
      if (succeeded(analyze(func, ranks, banned, candidates, analysis))) {
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
  LogicalResult checkAttention(func::FuncOp func, const Plan &analysis,
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

  LogicalResult rewrite(func::FuncOp func, Plan &a,
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
    for (const Regather &g : a.regathered)
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
    for (SliceEdit edit : a.sliceEdits) {
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
    for (auto [operand, whole] : a.sendGathers) {
      Operation *send = operand->getOwner();
      OpBuilder b(send);
      const Split &s = a.splits.find(operand->get())->second;
      operand->set(AllGatherOp::create(b, send->getLoc(), whole,
                                       operand->get(),
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
    std::optional<int64_t> value = shapeElement(shape, edit.index);
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
