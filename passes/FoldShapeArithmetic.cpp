//===- FoldShapeArithmetic.cpp - Fold shape tensors, refine types ---------===//
// SPDX-License-Identifier: Apache-2.0
// Result types of strata ops recomputed from refined operand types and from
// the symbolic values of shape tensors (ShapeArithmetic.h), then constant
// shape tensors materialized, so head counts and head sizes that the
// weights fix become static dims.

#include "passes/Passes.h"

#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"
#include "passes/ShapeArithmetic.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

namespace strata {
#define GEN_PASS_DEF_FOLDSHAPEARITHMETICPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

using Shape = SmallVector<int64_t>;

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// The constant value of element |i| of shape tensor |v|, if known.
std::optional<int64_t> constantElement(Value v, int64_t i) {
  std::optional<SymbolicIndex> e = elementOf(v, i);
  return e ? e->getConstant() : std::nullopt;
}

/// Static length of a 1-D shape operand, else std::nullopt.
std::optional<int64_t> lengthOf(Value shapeOperand) {
  int64_t n = shapeOf(shapeOperand)[0];
  return ShapedType::isDynamic(n) ? std::nullopt : std::optional(n);
}

Shape inferReshape(ReshapeOp op) {
  Shape dims(shapeOf(op.getResult()));
  for (auto [i, d] : llvm::enumerate(dims)) {
    std::optional<SymbolicIndex> e = reshapeExtentOf(op, i);
    if (std::optional<int64_t> c = e ? e->getConstant() : std::nullopt;
        c && *c >= 0)
      d = *c;
  }
  return dims;
}

Shape inferExpand(ExpandOp op) {
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  int64_t rank = shapeOf(op.getResult()).size();
  std::optional<int64_t> n = lengthOf(op.getShape());
  Shape dims(rank, kDyn);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t id = d - (rank - (int64_t)in.size());
    int64_t inExtent = id >= 0 ? in[id] : 1;
    // The shape's entry for d; a dim before the shape's first is kept.
    std::optional<int64_t> s;
    if (n)
      s = d - (rank - *n) >= 0 ? constantElement(op.getShape(), d - (rank - *n))
                               : std::optional<int64_t>(1);
    // broadcast(in, s): in where s is 1; a static in other than 1 where s
    // is unknown or equal (a different s fails at run time); else s.
    if (s && *s == 1)
      dims[d] = inExtent;
    else if (!ShapedType::isDynamic(inExtent) && inExtent != 1)
      dims[d] = !s || *s == inExtent ? inExtent : kDyn;
    else if (s && *s >= 0)
      dims[d] = *s;
  }
  return dims;
}

Shape inferSlice(SliceOp op) {
  Shape dims(shapeOf(op.getInput()));
  int64_t rank = dims.size();
  for (auto [i, axis] : llvm::enumerate(op.getAxes())) {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
      return Shape(shapeOf(op.getResult()));
    std::optional<int64_t> start = constantElement(op.getStarts(), i);
    std::optional<int64_t> end = constantElement(op.getEnds(), i);
    std::optional<int64_t> step = constantElement(op.getSteps(), i);
    if (ShapedType::isDynamic(dims[a]) || !start || !end || !step || *step == 0)
      dims[a] = kDyn;
    else
      dims[a] = sliceExtent(dims[a], *start, *end, *step);
  }
  return dims;
}

Shape inferConcat(ConcatOp op) {
  Shape dims(shapeOf(op.getInputs().front()));
  int64_t rank = dims.size();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0)
    axis += rank;
  for (Value input : op.getInputs().drop_front()) {
    ArrayRef<int64_t> s = shapeOf(input);
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        dims[d] = ShapedType::isDynamic(dims[d]) || ShapedType::isDynamic(s[d])
                      ? kDyn
                      : dims[d] + s[d];
      else if (ShapedType::isDynamic(dims[d]))
        dims[d] = s[d];
    }
  }
  return dims;
}

Shape inferGather(GatherOp op) {
  ArrayRef<int64_t> data = shapeOf(op.getData());
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0)
    axis += data.size();
  if (axis < 0 || axis >= (int64_t)data.size())
    return Shape(shapeOf(op.getResult()));
  Shape dims(data.take_front(axis));
  llvm::append_range(dims, shapeOf(op.getIndices()));
  llvm::append_range(dims, data.drop_front(axis + 1));
  return dims;
}

std::optional<Shape> inferReduce(Operation *op, ArrayRef<int64_t> axes,
                                 bool keepDims) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  SmallVector<int64_t> normalized;
  for (int64_t axis : axes) {
    std::optional<int64_t> n = normalizeAxis(axis, in.size());
    if (!n)
      return std::nullopt;
    normalized.push_back(*n);
  }
  return inferReduceShape(in, normalized, keepDims);
}

Shape inferConstantOfShape(ConstantOfShapeOp op) {
  Shape dims(shapeOf(op.getResult()).size(), kDyn);
  for (auto [i, d] : llvm::enumerate(dims))
    if (std::optional<int64_t> c = constantElement(op.getShape(), i);
        c && *c >= 0)
      d = *c;
  return dims;
}

Shape inferTile(TileOp op) {
  Shape dims(shapeOf(op.getInput()));
  for (auto [i, d] : llvm::enumerate(dims)) {
    std::optional<int64_t> r = constantElement(op.getRepeats(), i);
    if (ShapedType::isDynamic(d) || !r || *r < 0 || llvm::MulOverflow(d, *r, d))
      d = kDyn;
  }
  return dims;
}

Shape inferRange(RangeOp op) {
  std::optional<int64_t> start = constantElement(op.getStart(), 0);
  std::optional<int64_t> limit = constantElement(op.getLimit(), 0);
  std::optional<int64_t> delta = constantElement(op.getDelta(), 0);
  // Bounded like graph extents, so the arithmetic below cannot overflow.
  constexpr int64_t kMax = int64_t{1} << 40;
  auto bounded = [&](std::optional<int64_t> x) {
    return x && *x >= -kMax && *x <= kMax;
  };
  if (!bounded(start) || !bounded(limit) || !bounded(delta) || *delta == 0)
    return Shape(shapeOf(op.getResult()));
  int64_t span = *limit - *start;
  int64_t n = *delta > 0 ? (span + *delta - 1) / *delta
                         : (-span + -*delta - 1) / -*delta;
  return {std::max<int64_t>(n, 0)};
}

/// The result shapes of |op| computed from its operands, or failure when
/// the op has no rule here (its refined operands then get their old types
/// back).
LogicalResult inferShapes(Operation *op, SmallVectorImpl<Shape> &shapes) {
  auto one = [&](std::optional<Shape> s) {
    if (!s)
      return failure();
    shapes.push_back(std::move(*s));
    return success();
  };
  if (isa<AddOp, SubOp, MulOp, DivOp, PowOp, ModOp, MaxOp, MinOp, EqualOp,
          LessOp, LessEqualOp, GreaterOp, GreaterEqualOp, AndOp, OrOp>(op))
    return one(broadcastShapes(shapeOf(op->getOperand(0)),
                               shapeOf(op->getOperand(1))));
  if (auto where = dyn_cast<WhereOp>(op)) {
    std::optional<Shape> s = broadcastShapes(shapeOf(where.getCondition()),
                                             shapeOf(where.getTrueValue()));
    if (s)
      s = broadcastShapes(*s, shapeOf(where.getFalseValue()));
    return one(s);
  }
  if (isa<CastOp, LayerNormOp, RmsNormOp, TriluOp>(op) ||
      (op->getNumOperands() == 1 && op->getNumResults() == 1 &&
       op->hasTrait<OpTrait::SameOperandsAndResultType>()))
    return one(Shape(shapeOf(op->getOperand(0))));
  if (isa<ConstantOp, ShapeOp>(op))
    return one(Shape(shapeOf(op->getResult(0))));
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return one(
        inferMatmulShape(shapeOf(matmul.getLhs()), shapeOf(matmul.getRhs())));
  if (auto linear = dyn_cast<LinearOp>(op)) {
    Shape s(shapeOf(linear.getInput()));
    ArrayRef<int64_t> w = shapeOf(linear.getWeight());
    if (s.empty() || w.size() != 2)
      return failure();
    s.back() = w[1];
    return one(s);
  }
  if (auto reduce = dyn_cast<ReduceSumOp>(op))
    return one(inferReduce(op, reduce.getAxes(), reduce.getKeepdims()));
  if (auto reduce = dyn_cast<ReduceMeanOp>(op))
    return one(inferReduce(op, reduce.getAxes(), reduce.getKeepdims()));
  if (auto reduce = dyn_cast<ReduceMaxOp>(op))
    return one(inferReduce(op, reduce.getAxes(), reduce.getKeepdims()));
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    ArrayRef<int64_t> q = shapeOf(attention.getQuery());
    ArrayRef<int64_t> v = shapeOf(attention.getValue());
    if (q.size() != 4 || v.size() != 4)
      return failure();
    return one(Shape{q[0], q[1], q[2], v[3]});
  }
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    ArrayRef<int64_t> in = shapeOf(transpose.getInput());
    Shape s;
    for (int64_t p : transpose.getPermutation()) {
      if (p < 0 || p >= (int64_t)in.size())
        return failure();
      s.push_back(in[p]);
    }
    return one(s);
  }
  if (auto split = dyn_cast<SplitOp>(op)) {
    ArrayRef<int64_t> in = shapeOf(split.getInput());
    std::optional<int64_t> axis = normalizeAxis(split.getAxis(), in.size());
    if (!axis || split.getSizes().size() != split.getNumResults())
      return failure();
    for (int64_t size : split.getSizes()) {
      Shape s(in);
      s[*axis] = size;
      shapes.push_back(s);
    }
    return success();
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    return one(inferReshape(reshape));
  if (auto expand = dyn_cast<ExpandOp>(op))
    return one(inferExpand(expand));
  if (auto slice = dyn_cast<SliceOp>(op))
    return one(inferSlice(slice));
  if (auto concat = dyn_cast<ConcatOp>(op))
    return one(inferConcat(concat));
  if (auto gather = dyn_cast<GatherOp>(op))
    return one(inferGather(gather));
  if (auto gather = dyn_cast<GatherElementsOp>(op))
    return one(Shape(shapeOf(gather.getIndices())));
  if (auto fill = dyn_cast<ConstantOfShapeOp>(op))
    return one(inferConstantOfShape(fill));
  if (auto tile = dyn_cast<TileOp>(op))
    return one(inferTile(tile));
  if (auto range = dyn_cast<RangeOp>(op))
    return one(inferRange(range));
  if (op->getNumResults() == 0)
    return success();
  return failure();
}

/// |current| with its dynamic dims replaced by static ones of |inferred|;
/// std::nullopt when the two disagree (then the IR is left as it is).
std::optional<Shape> meet(ArrayRef<int64_t> current,
                          ArrayRef<int64_t> inferred) {
  if (current.size() != inferred.size())
    return std::nullopt;
  Shape s(current);
  for (auto [d, x] : llvm::zip_equal(s, inferred)) {
    if (ShapedType::isDynamic(x))
      continue;
    if (!ShapedType::isDynamic(d) && d != x)
      return std::nullopt;
    d = x;
  }
  return s;
}

struct FoldShapeArithmeticPass
    : impl::FoldShapeArithmeticPassBase<FoldShapeArithmeticPass> {
  void runOnOperation() override {
    FunctionOpInterface fn = getOperation();
    if (fn.isExternal())
      return;
    Region &body = fn.getFunctionBody();
    // The type each refined value had before this pass.
    llvm::DenseMap<Value, Type> original;
    llvm::DenseMap<Value, Value> restored;
    // An op that cannot take refined operands gets them cast back, one cast
    // per value right after its definition.
    auto restoreOperands = [&](Operation *op) {
      for (OpOperand &use : op->getOpOperands()) {
        auto it = original.find(use.get());
        if (it == original.end())
          continue;
        Value &cast = restored[use.get()];
        if (!cast) {
          OpBuilder b(op->getContext());
          b.setInsertionPointAfterValue(use.get());
          Location loc = use.get().getDefiningOp()
                             ? use.get().getDefiningOp()->getLoc()
                             : op->getLoc();
          cast = tensor::CastOp::create(b, loc, it->second, use.get());
        }
        use.set(cast);
      }
    };
    SmallVector<Operation *> ops;
    body.walk<WalkOrder::PreOrder>([&](Operation *op) { ops.push_back(op); });
    for (Operation *op : ops) {
      if (!isa_and_present<StrataDialect>(op->getDialect())) {
        restoreOperands(op);
        continue;
      }
      SmallVector<Shape> shapes;
      if (failed(inferShapes(op, shapes)) ||
          shapes.size() != op->getNumResults()) {
        restoreOperands(op);
        continue;
      }
      SmallVector<std::optional<Shape>> refined;
      for (auto [result, shape] : llvm::zip_equal(op->getResults(), shapes))
        refined.push_back(meet(shapeOf(result), shape));
      if (llvm::any_of(refined, [](const auto &s) { return !s; })) {
        restoreOperands(op);
        continue;
      }
      for (auto [result, shape] : llvm::zip_equal(op->getResults(), refined)) {
        auto type = cast<RankedTensorType>(result.getType());
        if (ArrayRef<int64_t>(*shape) == type.getShape())
          continue;
        original.try_emplace(result, type);
        result.setType(type.clone(*shape));
      }
    }
    materializeConstants(body);
  }

  /// Replaces every 0-D/1-D integer value computed from shapes whose
  /// elements are all constant with a strata.constant.
  void materializeConstants(Region &body) {
    SmallVector<Operation *> ops;
    body.walk([&](Operation *op) {
      if (isa_and_present<StrataDialect>(op->getDialect()) &&
          !isa<ConstantOp>(op) && op->getNumResults() == 1)
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      Value v = op->getResult(0);
      auto type = cast<RankedTensorType>(v.getType());
      auto et = dyn_cast<IntegerType>(type.getElementType());
      if (!et || et.getWidth() == 1 || type.getRank() > 1 ||
          !type.hasStaticShape() || v.use_empty())
        continue;
      std::optional<SmallVector<SymbolicIndex>> elements = elementsOf(v);
      if (!elements)
        continue;
      SmallVector<APInt> values;
      for (const SymbolicIndex &e : *elements) {
        std::optional<int64_t> c = e.getConstant();
        if (!c || !llvm::isIntN(et.getWidth(), *c))
          break;
        values.push_back(APInt(et.getWidth(), *c, /*isSigned=*/true));
      }
      if (values.size() != elements->size())
        continue;
      OpBuilder b(op);
      auto constant = ConstantOp::create(
          b, op->getLoc(), DenseElementsAttr::get(type, ArrayRef(values)));
      v.replaceAllUsesWith(constant.getResult());
    }
  }
};

} // namespace

LogicalResult inferResultShapes(Operation *op,
                                SmallVectorImpl<SmallVector<int64_t>> &shapes) {
  return inferShapes(op, shapes);
}

} // namespace strata
