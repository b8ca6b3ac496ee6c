//===- CausalMask.cpp - Triangular attention masks ------------------------===//
// SPDX-License-Identifier: Apache-2.0
// See CausalMask.h.

#include "passes/CausalMask.h"

#include "dialects/strata/IR/StrataOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir;
using namespace strata::ir;

namespace strata {

namespace {

constexpr int kMaxDepth = 32;

/// Number of elements of a static-shaped tensor, else std::nullopt.
std::optional<int64_t> staticCount(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return type.getNumElements();
}

/// True if |v| has one element (a scalar broadcast against anything).
bool isOneElement(Value v) { return staticCount(v) == 1; }

//===----------------------------------------------------------------------===//
// Triangular masks
//===----------------------------------------------------------------------===//

/// A mask over the last two dims [rows, cols] whose query row i sees key
/// column j iff j <= i + offset. |kind| says how visibility is encoded.
struct Triangle {
  SymbolicIndex offset, rows, cols;
  MaskKind kind;
};

/// The value every element of |v| holds, if it is a splat (constant,
/// constant_of_shape, expand or cast of one).
std::optional<double> splatValue(Value v, int depth = 0) {
  Operation *op = v.getDefiningOp();
  if (!op || depth > kMaxDepth)
    return std::nullopt;
  auto asDouble = [](Attribute a) -> std::optional<double> {
    if (auto f = dyn_cast<FloatAttr>(a))
      return f.getValueAsDouble();
    if (auto i = dyn_cast<IntegerAttr>(a))
      return i.getType().isInteger(1)
                 ? static_cast<double>(i.getValue().getBoolValue())
                 : static_cast<double>(i.getValue().getSExtValue());
    if (auto b = dyn_cast<BoolAttr>(a))
      return b.getValue() ? 1.0 : 0.0;
    return std::nullopt;
  };
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !dense.isSplat())
      return std::nullopt;
    return asDouble(dense.getSplatValue<Attribute>());
  }
  if (auto fill = dyn_cast<ConstantOfShapeOp>(op))
    return asDouble(fill.getValue());
  if (auto expand = dyn_cast<ExpandOp>(op))
    return splatValue(expand.getInput(), depth + 1);
  if (auto cast = dyn_cast<CastOp>(op)) {
    std::optional<double> x = splatValue(cast.getInput(), depth + 1);
    Type to = getElementTypeOrSelf(cast.getType());
    if (!x)
      return std::nullopt;
    if (to.isInteger(1))
      return *x != 0.0 ? 1.0 : 0.0;
    if (isa<FloatType>(to) && std::isfinite(*x))
      return x;
    return std::nullopt;
  }
  return std::nullopt;
}

bool isHiddenFill(double x) { return x <= -1e4; }

/// Reads a dense constant of rank >= 2 whose leading extents are 1 as a
/// triangle: a bool/int one (nonzero visible or hidden) or a float additive
/// one (0 visible, <= -1e4 hidden).
std::optional<Triangle> constantTriangle(ConstantOp constant) {
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  auto type = dyn_cast<RankedTensorType>(constant.getType());
  if (!dense || dense.isSplat() || !type || type.getRank() < 2 ||
      !type.hasStaticShape())
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  if (llvm::any_of(shape.drop_back(2), [](int64_t e) { return e != 1; }))
    return std::nullopt;
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  if (rows == 0 || cols == 0)
    return std::nullopt;
  // Element (i, j) as 1 (set: nonzero, or hidden for floats), 0 or -1 (a
  // float that is neither 0 nor a hidden fill).
  Type et = type.getElementType();
  std::function<int(int64_t)> at;
  bool additive = isa<FloatType>(et);
  std::vector<bool> bits;
  std::vector<int8_t> cells;
  if (et.isInteger(1)) {
    bits.assign(dense.value_begin<bool>(), dense.value_end<bool>());
    at = [&](int64_t k) { return bits[k] ? 1 : 0; };
  } else if (isa<IntegerType>(et)) {
    for (APInt x : dense.getValues<APInt>())
      cells.push_back(x.isZero() ? 0 : 1);
    at = [&](int64_t k) { return static_cast<int>(cells[k]); };
  } else if (additive) {
    for (APFloat x : dense.getValues<APFloat>()) {
      double d = x.convertToDouble();
      cells.push_back(d == 0.0 ? 0 : isHiddenFill(d) ? 1 : -1);
    }
    at = [&](int64_t k) { return static_cast<int>(cells[k]); };
  } else {
    return std::nullopt;
  }
  // Row 0 fixes the offset; then every element must follow it. For bool
  // masks either polarity is accepted: set = visible (keep) or hidden.
  int setAtOrigin = at(0);
  if (setAtOrigin < 0)
    return std::nullopt;
  bool setIsVisible = !additive && setAtOrigin == 1;
  int64_t visibleInRow0 = 0;
  while (visibleInRow0 < cols && (at(visibleInRow0) == 1) == setIsVisible)
    ++visibleInRow0;
  int64_t offset = visibleInRow0 - 1;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      int cell = at(i * cols + j);
      if (cell < 0)
        return std::nullopt;
      bool visible = (cell == 1) == setIsVisible;
      if (visible != (j <= i + offset))
        return std::nullopt;
    }
  Triangle t{SymbolicIndex::of(offset), SymbolicIndex::of(rows),
             SymbolicIndex::of(cols),
             additive ? MaskKind::Additive
                      : (setIsVisible ? MaskKind::Keep : MaskKind::Drop)};
  return t;
}

/// True if |v| is a constant zero scalar (any element type).
bool isZeroSplat(Value v) {
  std::optional<double> x = splatValue(v);
  return x && *x == 0.0 && isOneElement(v);
}

/// An integer tensor whose element at index `idx` is `base + idx[axis]`
/// whatever its other dims: the position ids masks are built from.
struct Ramp {
  int64_t axis;
  SymbolicIndex base, extent;
};

/// |v| as a ramp: range(start, limit, 1), with unit dims added (reshape),
/// broadcast (expand), shifted by a scalar (add, sub) or cast.
std::optional<Ramp> rampOf(Value v, int depth) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  Operation *op = v.getDefiningOp();
  if (!type || !op || depth > kMaxDepth ||
      !isa<IntegerType>(type.getElementType()) ||
      type.getElementType().isInteger(1))
    return std::nullopt;
  int64_t rank = type.getRank();
  // A ramp of |x| (of lower or equal rank) broadcast into |v|.
  auto aligned = [&](Value x) -> std::optional<Ramp> {
    std::optional<Ramp> r = rampOf(x, depth + 1);
    if (!r)
      return std::nullopt;
    r->axis += rank - cast<RankedTensorType>(x.getType()).getRank();
    if (r->axis < 0 || extentOf(v, r->axis) != r->extent)
      return std::nullopt;
    return r;
  };
  if (auto range = dyn_cast<RangeOp>(op)) {
    std::optional<SymbolicIndex> start = elementOf(range.getStart(), 0);
    std::optional<SymbolicIndex> delta = elementOf(range.getDelta(), 0);
    if (!start || !delta || delta->getConstant() != 1)
      return std::nullopt;
    return Ramp{0, *start, extentOf(v, 0)};
  }
  if (auto cast = dyn_cast<CastOp>(op))
    return aligned(cast.getInput());
  if (isa<ExpandOp>(op))
    return aligned(op->getOperand(0));
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    // Only unit dims added or removed: one result dim is not 1, and the
    // input's dims other than the ramp's are 1.
    std::optional<Ramp> r = rampOf(reshape.getInput(), depth + 1);
    auto inputType = cast<RankedTensorType>(reshape.getInput().getType());
    if (!r)
      return std::nullopt;
    for (int64_t d = 0; d < inputType.getRank(); ++d)
      if (d != r->axis && inputType.getDimSize(d) != 1)
        return std::nullopt;
    int64_t axis = -1;
    for (int64_t d = 0; d < rank; ++d) {
      if (type.getDimSize(d) == 1)
        continue;
      if (axis >= 0)
        return std::nullopt;
      axis = d;
    }
    if (axis < 0)
      return std::nullopt;
    // The element count is kept, so the one dim has the ramp's extent.
    r->axis = axis;
    return r;
  }
  if (isa<AddOp, SubOp>(op)) {
    for (auto [x, c] : {std::pair(op->getOperand(0), op->getOperand(1)),
                        std::pair(op->getOperand(1), op->getOperand(0))}) {
      if (!isOneElement(c) || (isa<SubOp>(op) && x != op->getOperand(0)))
        continue;
      std::optional<SymbolicIndex> shift = elementOf(c, 0);
      std::optional<Ramp> r = shift ? aligned(x) : std::nullopt;
      if (!r)
        continue;
      r->base = isa<AddOp>(op) ? r->base + *shift : r->base - *shift;
      return r;
    }
  }
  return std::nullopt;
}

/// A comparison of a key-position ramp (last dim) with a query-position
/// ramp (second to last dim) as a triangle: `k <= q + c` keeps, `q < k + c`
/// drops (either operand order, strict or not).
std::optional<Triangle> comparisonTriangle(Operation *op, int64_t rank,
                                           int depth) {
  auto aligned = [&](Value x) -> std::optional<Ramp> {
    std::optional<Ramp> r = rampOf(x, depth + 1);
    if (r)
      r->axis += rank - cast<RankedTensorType>(x.getType()).getRank();
    return r;
  };
  std::optional<Ramp> a = aligned(op->getOperand(0));
  std::optional<Ramp> b = aligned(op->getOperand(1));
  if (!a || !b)
    return std::nullopt;
  // As a <= b or a < b.
  bool strict = isa<LessOp, GreaterOp>(op);
  if (isa<GreaterEqualOp, GreaterOp>(op))
    std::swap(a, b);
  SymbolicIndex one = SymbolicIndex::of(1);
  if (a->axis == rank - 1 && b->axis == rank - 2) {
    // bk + j <= bq + i: key j visible iff j <= i + bq - bk (- 1 if strict).
    SymbolicIndex offset = b->base - a->base;
    if (strict)
      offset = offset - one;
    return Triangle{offset, b->extent, a->extent, MaskKind::Keep};
  }
  if (a->axis == rank - 2 && b->axis == rank - 1) {
    // bq + i < bk + j marks j hidden: visible iff j <= i + bq - bk (- 1 if
    // not strict).
    SymbolicIndex offset = a->base - b->base;
    if (!strict)
      offset = offset - one;
    return Triangle{offset, a->extent, b->extent, MaskKind::Drop};
  }
  return std::nullopt;
}

std::optional<Triangle> triangleOf(Value v, int depth) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  Operation *op = v.getDefiningOp();
  if (!type || type.getRank() < 2 || !op || depth > kMaxDepth)
    return std::nullopt;
  int64_t rank = type.getRank();
  auto flip = [](std::optional<Triangle> t) -> std::optional<Triangle> {
    if (!t || t->kind == MaskKind::Additive)
      return std::nullopt;
    t->kind = t->kind == MaskKind::Keep ? MaskKind::Drop : MaskKind::Keep;
    return t;
  };
  if (auto constant = dyn_cast<ConstantOp>(op))
    return constantTriangle(constant);
  if (isa<LessEqualOp, LessOp, GreaterEqualOp, GreaterOp>(op))
    return comparisonTriangle(op, rank, depth);
  if (auto notOp = dyn_cast<NotOp>(op))
    return flip(triangleOf(notOp.getInput(), depth + 1));
  // equal(x, 0) is not(x) for a 0/1 (or bool) x.
  if (auto equal = dyn_cast<EqualOp>(op)) {
    for (auto [x, zero] : {std::pair(equal.getLhs(), equal.getRhs()),
                           std::pair(equal.getRhs(), equal.getLhs())})
      if (isZeroSplat(zero))
        if (std::optional<Triangle> t = triangleOf(x, depth + 1);
            t && t->kind != MaskKind::Additive)
          return flip(t);
    return std::nullopt;
  }
  // A cast keeps zero/nonzero when it comes from or goes to i1.
  if (auto cast = dyn_cast<CastOp>(op)) {
    Type from = getElementTypeOrSelf(cast.getInput().getType());
    std::optional<Triangle> t = triangleOf(cast.getInput(), depth + 1);
    if (!t || t->kind == MaskKind::Additive ||
        !(from.isInteger(1) || type.getElementType().isInteger(1)))
      return std::nullopt;
    return t;
  }
  if (auto trilu = dyn_cast<TriluOp>(op)) {
    std::optional<double> fill = splatValue(trilu.getInput());
    if (!fill || *fill == 0.0)
      return std::nullopt;
    SymbolicIndex k = SymbolicIndex::of(0);
    if (Value kv = trilu.getK()) {
      std::optional<SymbolicIndex> e = elementOf(kv, 0);
      if (!e)
        return std::nullopt;
      k = *e;
    }
    Triangle t{k, extentOf(trilu.getInput(), rank - 2),
               extentOf(trilu.getInput(), rank - 1), MaskKind::Keep};
    bool additive =
        isa<FloatType>(type.getElementType()) && isHiddenFill(*fill);
    if (!trilu.getUpper()) {
      // Set where j - i <= k: visible there (a bool-like lower triangle).
      if (additive)
        return std::nullopt;
      return t;
    }
    // Set where j - i >= k: hidden there, visible iff j <= i + k - 1.
    t.offset = k - SymbolicIndex::of(1);
    t.kind = additive ? MaskKind::Additive : MaskKind::Drop;
    return t;
  }
  // where(c, 0, fill) / where(c, fill, 0): an additive mask from a bool one.
  if (auto where = dyn_cast<WhereOp>(op)) {
    std::optional<double> a = splatValue(where.getTrueValue());
    std::optional<double> b = splatValue(where.getFalseValue());
    std::optional<Triangle> t = triangleOf(where.getCondition(), depth + 1);
    if (!a || !b || !t || !isa<FloatType>(type.getElementType()))
      return std::nullopt;
    if ((*a == 0.0 && isHiddenFill(*b) && t->kind == MaskKind::Keep) ||
        (isHiddenFill(*a) && *b == 0.0 && t->kind == MaskKind::Drop)) {
      t->kind = MaskKind::Additive;
      return t;
    }
    return std::nullopt;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    std::optional<Triangle> t = triangleOf(slice.getInput(), depth + 1);
    auto inputType = cast<RankedTensorType>(slice.getInput().getType());
    if (!t)
      return std::nullopt;
    for (auto [i, axis] : llvm::enumerate(slice.getAxes())) {
      int64_t a = axis < 0 ? axis + rank : axis;
      std::optional<SymbolicIndex> start = elementOf(slice.getStarts(), i);
      std::optional<SymbolicIndex> end = elementOf(slice.getEnds(), i);
      std::optional<SymbolicIndex> step = elementOf(slice.getSteps(), i);
      if (!start || !end || !step || step->getConstant() != 1 ||
          (start->getConstant() && *start->getConstant() < 0) ||
          (end->getConstant() && *end->getConstant() < 0))
        return std::nullopt;
      if (a < rank - 2) {
        // A leading dim of extent 1: the same matrix either way.
        if (inputType.getDimSize(a) != 1)
          return std::nullopt;
        continue;
      }
      SymbolicIndex &extent = a == rank - 2 ? t->rows : t->cols;
      // An end past a static extent is clamped to it.
      if (end->getConstant() && extent.getConstant() &&
          *end->getConstant() > *extent.getConstant())
        end = extent;
      extent = *end - *start;
      if (a == rank - 2)
        t->offset = t->offset + *start;
      else
        t->offset = t->offset - *start;
    }
    return t;
  }
  // concat(visible, T) along the keys: a block of keys every query sees
  // before T (a past the causal mask was built without) shifts it.
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    int64_t axis = static_cast<int64_t>(concat.getAxis());
    if (axis < 0)
      axis += rank;
    if (axis != rank - 1 || concat.getInputs().size() != 2)
      return std::nullopt;
    Value block = concat.getInputs()[0];
    std::optional<Triangle> t = triangleOf(concat.getInputs()[1], depth + 1);
    std::optional<double> fill = splatValue(block);
    if (!t || !fill ||
        extentOf(block, rank - 2) != extentOf(concat.getInputs()[1], rank - 2))
      return std::nullopt;
    bool visible = t->kind == MaskKind::Additive ? *fill == 0.0
                   : t->kind == MaskKind::Keep   ? *fill != 0.0
                                                 : *fill == 0.0;
    if (!visible)
      return std::nullopt;
    SymbolicIndex width = extentOf(block, rank - 1);
    t->offset = t->offset + width;
    t->cols = t->cols + width;
    return t;
  }
  // Expand and reshape only add or broadcast leading dims: the last two
  // extents must be unchanged.
  if (isa<ExpandOp, ReshapeOp>(op)) {
    Value input = op->getOperand(0);
    auto inputType = cast<RankedTensorType>(input.getType());
    if (inputType.getRank() < 2)
      return std::nullopt;
    std::optional<Triangle> t = triangleOf(input, depth + 1);
    if (!t)
      return std::nullopt;
    if (isa<ReshapeOp>(op) && (llvm::any_of(inputType.getShape().drop_back(2),
                                            [](int64_t e) { return e != 1; }) ||
                               llvm::any_of(type.getShape().drop_back(2),
                                            [](int64_t e) { return e != 1; })))
      return std::nullopt;
    if (extentOf(v, rank - 2) != t->rows || extentOf(v, rank - 1) != t->cols)
      return std::nullopt;
    return t;
  }
  return std::nullopt;
}

} // namespace

bool isEndAlignedCausalMask(Value mask, MaskKind kind, const SymbolicIndex &sq,
                            const SymbolicIndex &sk) {
  std::optional<Triangle> t = triangleOf(mask, 0);
  return t && t->kind == kind && t->rows == sq && t->cols == sk &&
         t->offset == sk - sq;
}

std::optional<CausalSplit> splitEndAlignedCausalMask(Value mask, MaskKind kind,
                                                     const SymbolicIndex &sq,
                                                     const SymbolicIndex &sk) {
  CausalSplit split;
  Value keep = mask;
  if (kind == MaskKind::Additive) {
    // causal + other, either order.
    if (auto add = mask.getDefiningOp<AddOp>()) {
      for (auto [causal, other] : {std::pair(add.getLhs(), add.getRhs()),
                                   std::pair(add.getRhs(), add.getLhs())})
        if (isa<FloatType>(getElementTypeOrSelf(other.getType())) &&
            isEndAlignedCausalMask(causal, MaskKind::Additive, sq, sk)) {
          split.rest = other;
          split.addedToHidden = true;
          return split;
        }
      return std::nullopt;
    }
    // where(keep, 0, fill)
    auto where = mask.getDefiningOp<WhereOp>();
    if (!where)
      return std::nullopt;
    std::optional<double> zero = splatValue(where.getTrueValue());
    std::optional<double> fill = splatValue(where.getFalseValue());
    if (!zero || *zero != 0.0 || !fill || !isHiddenFill(*fill) ||
        !isOneElement(where.getTrueValue()) ||
        !isOneElement(where.getFalseValue()))
      return std::nullopt;
    keep = where.getCondition();
    split.zero = where.getTrueValue();
    split.fill = where.getFalseValue();
  } else if (kind != MaskKind::Keep) {
    return std::nullopt;
  }
  // A broadcast of the condition: the attention broadcasts the rest itself.
  while (auto expand = keep.getDefiningOp<ExpandOp>())
    keep = expand.getInput();
  // The conjuncts of and(...) trees, without constant true ones.
  SmallVector<Value> parts, pending = {keep};
  while (!pending.empty() && parts.size() + pending.size() <= 8) {
    Value v = pending.pop_back_val();
    if (auto conj = v.getDefiningOp<AndOp>()) {
      pending.push_back(conj.getRhs());
      pending.push_back(conj.getLhs());
    } else if (splatValue(v) != std::optional<double>(1.0)) {
      parts.push_back(v);
    }
  }
  if (!pending.empty())
    return std::nullopt;
  auto causal = llvm::find_if(parts, [&](Value part) {
    return isEndAlignedCausalMask(part, MaskKind::Keep, sq, sk);
  });
  if (causal == parts.end())
    return std::nullopt;
  parts.erase(causal);
  if (parts.size() > 1)
    return std::nullopt;
  split.rest = parts.empty() ? Value() : parts.front();
  return split;
}

} // namespace strata
