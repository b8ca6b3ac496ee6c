//===- CausalMask.cpp - Symbolic extents and triangular masks -------------===//
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

//===----------------------------------------------------------------------===//
// SymbolicIndex
//===----------------------------------------------------------------------===//

namespace {

SymbolicIndex combine(const SymbolicIndex &a, const SymbolicIndex &b,
                      int64_t sign) {
  SymbolicIndex r;
  r.constant = a.constant + sign * b.constant;
  r.terms = a.terms;
  for (auto [value, dim, coeff] : b.terms) {
    auto it = llvm::find_if(r.terms, [&](const auto &t) {
      return std::get<0>(t) == value && std::get<1>(t) == dim;
    });
    if (it != r.terms.end())
      std::get<2>(*it) += sign * coeff;
    else
      r.terms.emplace_back(value, dim, sign * coeff);
  }
  llvm::erase_if(r.terms, [](const auto &t) { return std::get<2>(t) == 0; });
  llvm::sort(r.terms, [](const auto &x, const auto &y) {
    const void *px = std::get<0>(x).getAsOpaquePointer();
    const void *py = std::get<0>(y).getAsOpaquePointer();
    return px != py ? px < py : std::get<1>(x) < std::get<1>(y);
  });
  return r;
}

constexpr int kMaxDepth = 32;

/// Maps a possibly negative |index| into [0, n) (ONNX gather/slice rules for
/// one element); std::nullopt when out of range.
std::optional<int64_t> normalizeIndex(int64_t index, int64_t n) {
  if (index < 0)
    index += n;
  if (index < 0 || index >= n)
    return std::nullopt;
  return index;
}

/// Number of elements of a static-shaped tensor, else std::nullopt.
std::optional<int64_t> staticCount(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return type.getNumElements();
}

SymbolicIndex extentOfImpl(Value v, int64_t dim, int depth);

/// Element |index| of a 0-D or 1-D integer tensor computed from shapes and
/// constants (Shape, Gather, Slice, Concat, Reshape, Cast, Add, Sub).
std::optional<SymbolicIndex> elementAt(Value v, int64_t index, int depth) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  std::optional<int64_t> n = staticCount(v);
  if (!type || !n || type.getRank() > 1 || depth > kMaxDepth ||
      !isa<IntegerType>(type.getElementType()) ||
      type.getElementType().isInteger(1) || index < 0 || index >= *n)
    return std::nullopt;
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto ints = dyn_cast<DenseIntElementsAttr>(constant.getValue());
    if (!ints)
      return std::nullopt;
    return SymbolicIndex::of(
        (*(ints.value_begin<APInt>() + index)).getSExtValue());
  }
  if (auto shape = dyn_cast<ShapeOp>(op)) {
    auto inputType = cast<RankedTensorType>(shape.getInput().getType());
    int64_t rank = inputType.getRank();
    int64_t start = shape.getStart();
    if (start < 0)
      start += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    if (start + index >= rank)
      return std::nullopt;
    return extentOfImpl(shape.getInput(), start + index, depth + 1);
  }
  if (isa<ReshapeOp, CastOp>(op)) {
    Value input = op->getOperand(0);
    auto inputType = dyn_cast<RankedTensorType>(input.getType());
    if (!inputType || inputType.getRank() > 1 || staticCount(input) != n)
      return std::nullopt;
    return elementAt(input, index, depth + 1);
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    for (Value input : concat.getInputs()) {
      std::optional<int64_t> m = staticCount(input);
      if (!m)
        return std::nullopt;
      if (index < *m)
        return elementAt(input, index, depth + 1);
      index -= *m;
    }
    return std::nullopt;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    std::optional<int64_t> m = staticCount(slice.getInput());
    std::optional<SymbolicIndex> start =
        elementAt(slice.getStarts(), 0, depth + 1);
    std::optional<SymbolicIndex> step =
        elementAt(slice.getSteps(), 0, depth + 1);
    if (!m || slice.getAxes().size() != 1 || !start || !step ||
        step->getConstant() != 1 || !start->getConstant())
      return std::nullopt;
    int64_t first = *start->getConstant();
    if (first < 0)
      first += *m;
    first = std::clamp<int64_t>(first, 0, *m);
    return elementAt(slice.getInput(), first + index, depth + 1);
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    std::optional<int64_t> m = staticCount(gather.getData());
    std::optional<SymbolicIndex> at =
        elementAt(gather.getIndices(), index, depth + 1);
    if (!m || gather.getAxis() != 0 || !at || !at->getConstant() ||
        cast<RankedTensorType>(gather.getData().getType()).getRank() != 1)
      return std::nullopt;
    std::optional<int64_t> i = normalizeIndex(*at->getConstant(), *m);
    if (!i)
      return std::nullopt;
    return elementAt(gather.getData(), *i, depth + 1);
  }
  // where(equal(a, b), t, f), as torch's expand(-1) shapes are spelled:
  // decided when a and b are constants, or one is an extent (>= 0) and the
  // other a negative constant.
  if (auto where = dyn_cast<WhereOp>(op)) {
    auto equal = where.getCondition().getDefiningOp<EqualOp>();
    if (!equal || staticCount(equal.getLhs()) != n ||
        staticCount(equal.getRhs()) != n)
      return std::nullopt;
    std::optional<SymbolicIndex> a = elementAt(equal.getLhs(), index, depth + 1);
    std::optional<SymbolicIndex> b = elementAt(equal.getRhs(), index, depth + 1);
    if (!a || !b)
      return std::nullopt;
    auto nonNegative = [](const SymbolicIndex &x) {
      return x.constant >= 0 && llvm::all_of(x.terms, [](const auto &t) {
               return std::get<2>(t) > 0;
             });
    };
    auto negative = [](const SymbolicIndex &x) {
      return x.getConstant() && *x.getConstant() < 0;
    };
    std::optional<bool> same;
    if (a->getConstant() && b->getConstant())
      same = *a->getConstant() == *b->getConstant();
    else if ((nonNegative(*a) && negative(*b)) ||
             (nonNegative(*b) && negative(*a)))
      same = false;
    if (!same)
      return std::nullopt;
    Value chosen = *same ? where.getTrueValue() : where.getFalseValue();
    std::optional<int64_t> m = staticCount(chosen);
    if (!m)
      return std::nullopt;
    return elementAt(chosen, *m == 1 ? 0 : index, depth + 1);
  }
  if (isa<AddOp, SubOp>(op)) {
    auto operand = [&](Value x) -> std::optional<SymbolicIndex> {
      std::optional<int64_t> m = staticCount(x);
      if (!m)
        return std::nullopt;
      return elementAt(x, *m == 1 ? 0 : index, depth + 1);
    };
    std::optional<SymbolicIndex> a = operand(op->getOperand(0));
    std::optional<SymbolicIndex> b = operand(op->getOperand(1));
    if (!a || !b)
      return std::nullopt;
    return isa<AddOp>(op) ? *a + *b : *a - *b;
  }
  return std::nullopt;
}

/// True if |v| has one element (a scalar broadcast against anything).
bool isOneElement(Value v) { return staticCount(v) == 1; }

SymbolicIndex extentOfImpl(Value v, int64_t dim, int depth) {
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.isDynamicDim(dim))
    return SymbolicIndex::of(type.getDimSize(dim));
  SymbolicIndex self;
  self.terms.emplace_back(v, dim, 1);
  Operation *op = v.getDefiningOp();
  if (!op || depth > kMaxDepth)
    return self;
  if (auto transpose = dyn_cast<TransposeOp>(op))
    return extentOfImpl(transpose.getInput(), transpose.getPermutation()[dim],
                        depth + 1);
  // Ops whose result has the shape of their only operand.
  if (op->getNumOperands() == 1 &&
      (isa<CastOp>(op) ||
       op->hasTrait<OpTrait::SameOperandsAndResultType>()))
    return extentOfImpl(op->getOperand(0), dim, depth + 1);
  // x * c, x / c, x + c, x - c with a one-element c: the extents of x.
  if (isa<AddOp, SubOp, MulOp, DivOp>(op)) {
    for (auto [x, c] : {std::pair(op->getOperand(0), op->getOperand(1)),
                        std::pair(op->getOperand(1), op->getOperand(0))})
      if (isOneElement(c) && x.getType() == v.getType())
        return extentOfImpl(x, dim, depth + 1);
    return self;
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    int64_t axis = concat.getAxis();
    if (axis < 0)
      axis += type.getRank();
    if (axis != dim)
      return extentOfImpl(concat.getInputs().front(), dim, depth + 1);
    return self;
  }
  if (auto split = dyn_cast<SplitOp>(op)) {
    int64_t axis = split.getAxis();
    if (axis < 0)
      axis += type.getRank();
    if (axis != dim)
      return extentOfImpl(split.getInput(), dim, depth + 1);
    return self;
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op); reshape && reshape.getShape()) {
    std::optional<SymbolicIndex> e =
        elementAt(reshape.getShape(), dim, depth + 1);
    if (!e)
      return self;
    // ONNX: 0 copies the input extent at the same position.
    if (e->getConstant() == 0) {
      auto inputType = cast<RankedTensorType>(reshape.getInput().getType());
      if (dim < inputType.getRank())
        return extentOfImpl(reshape.getInput(), dim, depth + 1);
      return self;
    }
    if (e->getConstant() && *e->getConstant() < 0)
      return self; // the inferred -1
    return *e;
  }
  if (auto fill = dyn_cast<ConstantOfShapeOp>(op)) {
    if (std::optional<SymbolicIndex> e =
            elementAt(fill.getShape(), dim, depth + 1))
      return *e;
    return self;
  }
  if (auto expand = dyn_cast<ExpandOp>(op)) {
    // Aligned to the end: the input extent unless it is 1, else the shape's.
    auto inputType = cast<RankedTensorType>(expand.getInput().getType());
    int64_t inputDim = dim - (type.getRank() - inputType.getRank());
    std::optional<int64_t> shapeRank = staticCount(expand.getShape());
    if (!shapeRank)
      return self;
    int64_t shapeDim = dim - (type.getRank() - *shapeRank);
    std::optional<SymbolicIndex> s;
    if (shapeDim >= 0)
      s = elementAt(expand.getShape(), shapeDim, depth + 1);
    if (inputDim >= 0 && (shapeDim < 0 || (s && s->getConstant() == 1)))
      return extentOfImpl(expand.getInput(), inputDim, depth + 1);
    if (s && (inputDim < 0 || inputType.getDimSize(inputDim) == 1))
      return *s;
    // Both extents the same: the broadcast is that extent.
    if (s && inputDim >= 0 &&
        *s == extentOfImpl(expand.getInput(), inputDim, depth + 1))
      return *s;
    return self;
  }
  return self;
}

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
  while (visibleInRow0 < cols &&
         (at(visibleInRow0) == 1) == setIsVisible)
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
      std::optional<SymbolicIndex> e = elementAt(kv, 0, depth + 1);
      if (!e)
        return std::nullopt;
      k = *e;
    }
    Triangle t{k, extentOfImpl(trilu.getInput(), rank - 2, depth + 1),
               extentOfImpl(trilu.getInput(), rank - 1, depth + 1),
               MaskKind::Keep};
    bool additive = isa<FloatType>(type.getElementType()) &&
                    isHiddenFill(*fill);
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
      std::optional<SymbolicIndex> start =
          elementAt(slice.getStarts(), i, depth + 1);
      std::optional<SymbolicIndex> end =
          elementAt(slice.getEnds(), i, depth + 1);
      std::optional<SymbolicIndex> step =
          elementAt(slice.getSteps(), i, depth + 1);
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
    if (isa<ReshapeOp>(op) &&
        (llvm::any_of(inputType.getShape().drop_back(2),
                      [](int64_t e) { return e != 1; }) ||
         llvm::any_of(type.getShape().drop_back(2),
                      [](int64_t e) { return e != 1; })))
      return std::nullopt;
    if (extentOfImpl(v, rank - 2, depth + 1) != t->rows ||
        extentOfImpl(v, rank - 1, depth + 1) != t->cols)
      return std::nullopt;
    return t;
  }
  return std::nullopt;
}

} // namespace

SymbolicIndex SymbolicIndex::operator+(const SymbolicIndex &other) const {
  return combine(*this, other, 1);
}

SymbolicIndex SymbolicIndex::operator-(const SymbolicIndex &other) const {
  return combine(*this, other, -1);
}

bool SymbolicIndex::operator==(const SymbolicIndex &other) const {
  SymbolicIndex d = *this - other;
  return d.constant == 0 && d.terms.empty();
}

SymbolicIndex extentOf(Value v, int64_t dim) {
  return extentOfImpl(v, dim, 0);
}

bool isEndAlignedCausalMask(Value mask, MaskKind kind, const SymbolicIndex &sq,
                            const SymbolicIndex &sk) {
  std::optional<Triangle> t = triangleOf(mask, 0);
  return t && t->kind == kind && t->rows == sq && t->cols == sk &&
         t->offset == sk - sq;
}

} // namespace strata
