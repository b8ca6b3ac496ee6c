//===- MaskAnalysis.cpp - The keys an attention mask hides ----------------===//
// SPDX-License-Identifier: Apache-2.0
// See MaskAnalysis.h.

#include "passes/MaskAnalysis.h"

#include "dialects/strata/IR/ConstantValues.h"
#include "dialects/strata/IR/StrataOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <functional>
#include <vector>

using namespace mlir;
using namespace strata::ir;

namespace strata {

namespace {

constexpr int kMaxDepth = 32;
// Sums and differences of position ids (`q - k`) branch at every level, so
// they are read to a small depth only.
constexpr int kMaxFormDepth = 4;

/// True if |v| has one element (a scalar broadcast against anything).
bool isOneElement(Value v) { return staticElementCount(v) == 1; }

SymbolicIndex constant(int64_t c) { return SymbolicIndex::of(c); }

//===----------------------------------------------------------------------===//
// Bands
//===----------------------------------------------------------------------===//

/// The positions a mask value marks (nonzero in an i1 or integer value, 0,
/// that is visible, in an additive one): |band|, or with |complemented|
/// every position outside it. Complements stay implicit because the
/// complement of a two-sided band is no band.
struct Reading {
  MaskBand band;
  bool complemented = false;
  bool additive = false;
};

/// |band| without the bounds that hide nothing within its extents: a
/// diagonal at or after the last key of row 0, a left edge at or before the
/// first key of the last row (sinks then say nothing either).
MaskBand normalized(MaskBand band) {
  if (band.diagonal &&
      isKnownLessEqual(band.cols - constant(1), *band.diagonal))
    band.diagonal.reset();
  if (band.leftEdge &&
      isKnownLessEqual(*band.leftEdge, constant(1) - band.rows))
    band.leftEdge.reset();
  if (!band.leftEdge)
    band.sinks = 0;
  return band;
}

/// The positions outside |band|, when they form a band: only a one-sided
/// band without sinks has a complement of that kind.
std::optional<MaskBand> complementOf(const MaskBand &band) {
  if (band.sinks != 0 || band.diagonal.has_value() == band.leftEdge.has_value())
    return std::nullopt;
  MaskBand c = band;
  if (band.diagonal) {
    c.diagonal.reset();
    c.leftEdge = *band.diagonal + constant(1);
  } else {
    c.leftEdge.reset();
    c.diagonal = *band.leftEdge - constant(1);
  }
  return normalized(c);
}

/// The positions |r| marks, as a band.
std::optional<MaskBand> markedBand(const Reading &r) {
  return r.complemented ? complementOf(r.band) : r.band;
}

/// The positions |r| does not mark, as a band.
std::optional<MaskBand> unmarkedBand(const Reading &r) {
  return r.complemented ? std::optional<MaskBand>(r.band)
                        : complementOf(r.band);
}

/// The positions in both |a| and |b|, when the bounds compare
/// (knownMin/knownMax) and at most one of them has a left edge with sinks.
std::optional<MaskBand> intersect(const MaskBand &a, const MaskBand &b) {
  if (a.rows != b.rows || a.cols != b.cols)
    return std::nullopt;
  MaskBand r = a;
  if (b.diagonal) {
    r.diagonal = a.diagonal ? knownMin(*a.diagonal, *b.diagonal) : b.diagonal;
    if (!r.diagonal)
      return std::nullopt;
  }
  if (b.leftEdge) {
    if (a.leftEdge && (a.sinks != 0 || b.sinks != 0))
      return std::nullopt;
    r.leftEdge = a.leftEdge ? knownMax(*a.leftEdge, *b.leftEdge) : b.leftEdge;
    r.sinks = a.leftEdge ? 0 : b.sinks;
    if (!r.leftEdge)
      return std::nullopt;
  }
  return normalized(r);
}

//===----------------------------------------------------------------------===//
// Constant masks
//===----------------------------------------------------------------------===//

/// Reads a dense constant of rank >= 2 whose leading extents are 1: a
/// bool/int one (marked: nonzero) or a float additive one (marked: 0, the
/// other elements hidden fills).
std::optional<Reading> constantReading(ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!dense || dense.isSplat() || !type || type.getRank() < 2 ||
      !type.hasStaticShape())
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  if (llvm::any_of(shape.drop_back(2), [](int64_t e) { return e != 1; }))
    return std::nullopt;
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  if (rows == 0 || cols == 0)
    return std::nullopt;
  // Element (i, j) as 1 (marked), 0 or -1 (a float neither 0 nor hidden).
  Type et = type.getElementType();
  bool additive = isa<FloatType>(et);
  std::vector<int8_t> cells;
  cells.reserve(rows * cols);
  if (et.isInteger(1)) {
    for (bool x : dense.getValues<bool>())
      cells.push_back(x ? 1 : 0);
  } else if (isa<IntegerType>(et)) {
    for (APInt x : dense.getValues<APInt>())
      cells.push_back(x.isZero() ? 0 : 1);
  } else if (additive) {
    for (APFloat x : dense.getValues<APFloat>()) {
      double d = x.convertToDouble();
      cells.push_back(d == 0.0 ? 1 : isHiddenFill(d) ? 0 : -1);
    }
  } else {
    return std::nullopt;
  }
  // The band of the cells equal to |want|: its diagonal from the first row
  // with such a cell, its left edge from the last, then every cell checked.
  auto fit = [&](int8_t want) -> std::optional<MaskBand> {
    int64_t first = -1, last = -1;
    for (int64_t i = 0; i < rows * cols; ++i) {
      if (cells[i] < 0)
        return std::nullopt;
      if (cells[i] == want) {
        if (first < 0)
          first = i / cols;
        last = i / cols;
      }
    }
    if (first < 0)
      return std::nullopt;
    int64_t hi = cols - 1, lo = 0;
    while (cells[first * cols + hi] != want)
      --hi;
    while (cells[last * cols + lo] != want)
      ++lo;
    int64_t diagonal = hi - first, leftEdge = lo - last;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        if ((cells[i * cols + j] == want) !=
            (j - i <= diagonal && j - i >= leftEdge))
          return std::nullopt;
    MaskBand band;
    band.diagonal = constant(diagonal);
    band.leftEdge = constant(leftEdge);
    band.rows = constant(rows);
    band.cols = constant(cols);
    return normalized(band);
  };
  if (std::optional<MaskBand> band = fit(1))
    return Reading{*band, /*complemented=*/false, additive};
  // A bool mask may mark the hidden keys instead.
  if (!additive)
    if (std::optional<MaskBand> band = fit(0))
      return Reading{*band, /*complemented=*/true, additive};
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Position ids
//===----------------------------------------------------------------------===//

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

/// An integer tensor of rank |rank| whose element at (..., i, j) is
/// `base + rowCoeff * i + colCoeff * j`: a query or key position, a scalar,
/// or sums and differences of them (`q - k`). The extents are those of the
/// ramps it is built from.
struct PositionForm {
  SymbolicIndex base;
  int64_t rowCoeff = 0, colCoeff = 0;
  std::optional<SymbolicIndex> rows, cols;
};

std::optional<PositionForm> formOf(Value x, int64_t rank, int depth) {
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type || depth > kMaxFormDepth)
    return std::nullopt;
  if (std::optional<Ramp> r = rampOf(x, depth + 1)) {
    int64_t axis = r->axis + rank - type.getRank();
    PositionForm f{r->base};
    if (axis == rank - 1) {
      f.colCoeff = 1;
      f.cols = r->extent;
    } else if (axis == rank - 2) {
      f.rowCoeff = 1;
      f.rows = r->extent;
    } else {
      return std::nullopt;
    }
    return f;
  }
  if (isOneElement(x)) {
    if (std::optional<SymbolicIndex> c = elementOf(x, 0))
      return PositionForm{*c};
    return std::nullopt;
  }
  Operation *op = x.getDefiningOp();
  if (!isa_and_present<AddOp, SubOp>(op))
    return std::nullopt;
  std::optional<PositionForm> a = formOf(op->getOperand(0), rank, depth + 1);
  std::optional<PositionForm> b = formOf(op->getOperand(1), rank, depth + 1);
  if (!a || !b)
    return std::nullopt;
  int64_t sign = isa<SubOp>(op) ? -1 : 1;
  a->base = a->base + b->base.scaled(sign);
  a->rowCoeff += sign * b->rowCoeff;
  a->colCoeff += sign * b->colCoeff;
  for (auto [mine, theirs] :
       {std::pair(&a->rows, &b->rows), std::pair(&a->cols, &b->cols)}) {
    if (!*theirs)
      continue;
    if (*mine && **mine != **theirs)
      return std::nullopt;
    *mine = *theirs;
  }
  return a;
}

/// A comparison of query and key positions as the band where it is true:
/// `k <= q + c` bounds the diagonal, `k > q - w` (or `q - k < w`) the left
/// edge; either operand order, strict or not.
std::optional<Reading> comparisonReading(Operation *op, int64_t rank) {
  std::optional<PositionForm> a = formOf(op->getOperand(0), rank, 0);
  std::optional<PositionForm> b = formOf(op->getOperand(1), rank, 0);
  if (!a || !b)
    return std::nullopt;
  // As a <= b, or a < b.
  bool strict = isa<LessOp, GreaterOp>(op);
  if (isa<GreaterEqualOp, GreaterOp>(op))
    std::swap(a, b);
  std::optional<SymbolicIndex> rows = a->rows ? a->rows : b->rows;
  std::optional<SymbolicIndex> cols = a->cols ? a->cols : b->cols;
  if (!rows || !cols || (a->rows && b->rows && *a->rows != *b->rows) ||
      (a->cols && b->cols && *a->cols != *b->cols))
    return std::nullopt;
  // rowCoeff * i + colCoeff * j <= bound.
  int64_t rowCoeff = a->rowCoeff - b->rowCoeff;
  int64_t colCoeff = a->colCoeff - b->colCoeff;
  SymbolicIndex bound = constant(strict ? -1 : 0) - (a->base - b->base);
  MaskBand band;
  band.rows = *rows;
  band.cols = *cols;
  if (colCoeff == 1 && rowCoeff == -1)
    band.diagonal = bound;
  else if (colCoeff == -1 && rowCoeff == 1)
    band.leftEdge = constant(0) - bound;
  else
    return std::nullopt;
  return Reading{normalized(band)};
}

//===----------------------------------------------------------------------===//
// Mask values
//===----------------------------------------------------------------------===//

std::optional<Reading> readingOf(Value v, int depth);

/// |slice|'s input with the slice applied to the band: rows and keys shift
/// it, ends past a known extent are clamped.
std::optional<Reading> sliceReading(SliceOp slice, int64_t rank, int depth) {
  std::optional<Reading> r = readingOf(slice.getInput(), depth + 1);
  auto inputType = cast<RankedTensorType>(slice.getInput().getType());
  if (!r)
    return std::nullopt;
  MaskBand &band = r->band;
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
    bool isRows = a == rank - 2;
    SymbolicIndex &extent = isRows ? band.rows : band.cols;
    if (std::optional<SymbolicIndex> clamped = knownMin(*end, extent))
      end = clamped;
    extent = *end - *start;
    // Row i of the slice is row i + start; key j is key j + start.
    SymbolicIndex shift = isRows ? *start : constant(0) - *start;
    for (std::optional<SymbolicIndex> *bound : {&band.diagonal, &band.leftEdge})
      if (*bound)
        *bound = **bound + shift;
    // Sinks are the first keys: a slice of the keys drops some of them.
    if (band.sinks != 0 && !isRows) {
      std::optional<int64_t> s = start->getConstant();
      if (!s)
        return std::nullopt;
      band.sinks = std::max<int64_t>(0, band.sinks - *s);
    }
  }
  band = normalized(band);
  return r;
}

/// concat(block, T) along the keys, |block| a splat on T's side of the band
/// (keys every query sees, such as a past the mask was built without): the
/// band moves right by the block's width and, with a left edge, the block
/// becomes sinks.
std::optional<Reading> concatReading(ConcatOp concat, int64_t rank, int depth) {
  int64_t axis = static_cast<int64_t>(concat.getAxis());
  if (axis < 0)
    axis += rank;
  if (axis != rank - 1 || concat.getInputs().size() != 2)
    return std::nullopt;
  Value block = concat.getInputs()[0], tail = concat.getInputs()[1];
  std::optional<Reading> r = readingOf(tail, depth + 1);
  std::optional<double> fill = evaluateScalarConstant(block);
  if (!r || !fill || extentOf(block, rank - 2) != extentOf(tail, rank - 2))
    return std::nullopt;
  bool marked = r->additive ? *fill == 0.0 : *fill != 0.0;
  if (marked == r->complemented)
    return std::nullopt;
  SymbolicIndex width = extentOf(block, rank - 1);
  MaskBand &band = r->band;
  if (band.diagonal)
    band.diagonal = *band.diagonal + width;
  if (band.leftEdge) {
    std::optional<int64_t> w = width.getConstant();
    if (!w)
      return std::nullopt;
    band.leftEdge = *band.leftEdge + width;
    band.sinks += *w;
  }
  band.cols = band.cols + width;
  return r;
}

/// Trilu of a nonzero splat: lower keeps j - i <= k, upper j - i >= k, the
/// rest is 0. In an additive mask the kept fill is what hides keys.
std::optional<Reading> triluReading(TriluOp trilu, int64_t rank) {
  std::optional<double> fill = evaluateScalarConstant(trilu.getInput());
  if (!fill || *fill == 0.0)
    return std::nullopt;
  SymbolicIndex k = constant(0);
  if (Value kv = trilu.getK()) {
    std::optional<SymbolicIndex> e = elementOf(kv, 0);
    if (!e)
      return std::nullopt;
    k = *e;
  }
  MaskBand band;
  band.rows = extentOf(trilu.getInput(), rank - 2);
  band.cols = extentOf(trilu.getInput(), rank - 1);
  if (trilu.getUpper())
    band.leftEdge = k;
  else
    band.diagonal = k;
  bool additive = isa<FloatType>(getElementTypeOrSelf(trilu.getType())) &&
                  isHiddenFill(*fill);
  return Reading{normalized(band), /*complemented=*/additive, additive};
}

/// and / or of two bool masks, and the sum of two additive ones (a key is
/// visible where both add 0).
std::optional<Reading> combinedReading(Operation *op, int depth) {
  // and(x, true): x (transformers' mask functions and in a constant true).
  if (isa<AndOp>(op))
    for (int i = 0; i < 2; ++i)
      if (isOneElement(op->getOperand(i)) &&
          evaluateScalarConstant(op->getOperand(i)) ==
              std::optional<double>(1.0))
        return readingOf(op->getOperand(1 - i), depth + 1);
  std::optional<Reading> a = readingOf(op->getOperand(0), depth + 1);
  std::optional<Reading> b = readingOf(op->getOperand(1), depth + 1);
  if (!a || !b || a->additive != b->additive || a->additive != isa<AddOp>(op))
    return std::nullopt;
  // or(x, y) marks what neither complement marks.
  bool viaComplement = isa<OrOp>(op);
  auto sideOf = viaComplement ? unmarkedBand : markedBand;
  std::optional<MaskBand> x = sideOf(*a), y = sideOf(*b);
  std::optional<MaskBand> both = x && y ? intersect(*x, *y) : std::nullopt;
  if (!both)
    return std::nullopt;
  return Reading{*both, viaComplement, a->additive};
}

std::optional<Reading> readingOf(Value v, int depth) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  Operation *op = v.getDefiningOp();
  if (!type || type.getRank() < 2 || !op || depth > kMaxDepth)
    return std::nullopt;
  int64_t rank = type.getRank();
  auto flipped = [](std::optional<Reading> r) -> std::optional<Reading> {
    if (!r || r->additive)
      return std::nullopt;
    r->complemented = !r->complemented;
    return r;
  };
  if (auto constant = dyn_cast<ConstantOp>(op))
    return constantReading(constant);
  if (isa<LessEqualOp, LessOp, GreaterEqualOp, GreaterOp>(op))
    return comparisonReading(op, rank);
  if (auto notOp = dyn_cast<NotOp>(op))
    return flipped(readingOf(notOp.getInput(), depth + 1));
  // equal(x, 0) is not(x) for a 0/1 (or bool) x.
  if (auto equal = dyn_cast<EqualOp>(op)) {
    for (auto [x, zero] : {std::pair(equal.getLhs(), equal.getRhs()),
                           std::pair(equal.getRhs(), equal.getLhs())})
      if (isOneElement(zero) && evaluateScalarConstant(zero) == 0.0)
        if (std::optional<Reading> r = flipped(readingOf(x, depth + 1)))
          return r;
    return std::nullopt;
  }
  if (isa<AndOp, OrOp>(op) ||
      (isa<AddOp>(op) && isa<FloatType>(type.getElementType())))
    return combinedReading(op, depth);
  // A cast keeps zero/nonzero when it comes from or goes to i1.
  if (auto cast = dyn_cast<CastOp>(op)) {
    Type from = getElementTypeOrSelf(cast.getInput().getType());
    std::optional<Reading> r = readingOf(cast.getInput(), depth + 1);
    if (!r || r->additive ||
        !(from.isInteger(1) || type.getElementType().isInteger(1)))
      return std::nullopt;
    return r;
  }
  if (auto trilu = dyn_cast<TriluOp>(op))
    return triluReading(trilu, rank);
  // where(c, 0, fill) / where(c, fill, 0): an additive mask from a bool one.
  if (auto where = dyn_cast<WhereOp>(op)) {
    std::optional<double> a = evaluateScalarConstant(where.getTrueValue());
    std::optional<double> b = evaluateScalarConstant(where.getFalseValue());
    std::optional<Reading> r = readingOf(where.getCondition(), depth + 1);
    if (!a || !b || !r || r->additive || !isa<FloatType>(type.getElementType()))
      return std::nullopt;
    if (*a == 0.0 && isHiddenFill(*b)) {
      r->additive = true;
      return r;
    }
    if (isHiddenFill(*a) && *b == 0.0) {
      r->additive = true;
      r->complemented = !r->complemented;
      return r;
    }
    return std::nullopt;
  }
  if (auto slice = dyn_cast<SliceOp>(op))
    return sliceReading(slice, rank, depth);
  if (auto concat = dyn_cast<ConcatOp>(op))
    return concatReading(concat, rank, depth);
  // Expand and reshape only add or broadcast leading dims: the last two
  // extents must be unchanged.
  if (isa<ExpandOp, ReshapeOp>(op)) {
    Value input = op->getOperand(0);
    auto inputType = cast<RankedTensorType>(input.getType());
    if (inputType.getRank() < 2)
      return std::nullopt;
    std::optional<Reading> r = readingOf(input, depth + 1);
    if (!r)
      return std::nullopt;
    auto unitLeading = [](RankedTensorType t) {
      return llvm::all_of(t.getShape().drop_back(2),
                          [](int64_t e) { return e == 1; });
    };
    if (isa<ReshapeOp>(op) && (!unitLeading(inputType) || !unitLeading(type)))
      return std::nullopt;
    if (extentOf(v, rank - 2) != r->band.rows ||
        extentOf(v, rank - 1) != r->band.cols)
      return std::nullopt;
    return r;
  }
  return std::nullopt;
}

} // namespace

bool isHiddenFill(double x) { return x <= -1e4; }

std::optional<SymbolicIndex> MaskBand::window() const {
  if (!diagonal || !leftEdge)
    return std::nullopt;
  return *diagonal - *leftEdge + constant(1);
}

bool MaskBand::isEndAlignedCausal(const SymbolicIndex &sq,
                                  const SymbolicIndex &sk) const {
  if (rows != sq || cols != sk || leftEdge || sinks != 0)
    return false;
  SymbolicIndex causal = sk - sq;
  // An unset diagonal hides nothing: causal too when the causal bound
  // hides nothing either (one query).
  return diagonal ? *diagonal == causal
                  : isKnownLessEqual(cols - constant(1), causal);
}

std::optional<int64_t>
MaskBand::endAlignedWindow(const SymbolicIndex &sq,
                           const SymbolicIndex &sk) const {
  if (rows != sq || cols != sk || !diagonal || *diagonal != sk - sq ||
      sinks < 0)
    return std::nullopt;
  std::optional<SymbolicIndex> w = window();
  std::optional<int64_t> width = w ? w->getConstant() : std::nullopt;
  if (!width || *width < 1)
    return std::nullopt;
  return width;
}

void MaskBand::print(llvm::raw_ostream &os) const {
  auto bound = [&](const std::optional<SymbolicIndex> &b) {
    if (b)
      b->print(os);
    else
      os << "none";
  };
  os << "rows ";
  rows.print(os);
  os << ", cols ";
  cols.print(os);
  os << ", diagonal ";
  bound(diagonal);
  os << ", left edge ";
  bound(leftEdge);
  os << ", window ";
  bound(window());
  os << ", sinks " << sinks;
}

std::optional<MaskBand> analyzeMask(Value mask, MaskKind kind) {
  std::optional<Reading> r = readingOf(mask, 0);
  if (!r || r->additive != (kind == MaskKind::Additive))
    return std::nullopt;
  return kind == MaskKind::Drop ? unmarkedBand(*r) : markedBand(*r);
}

std::optional<MaskSplit>
splitMask(Value mask, MaskKind kind,
          llvm::function_ref<bool(const MaskBand &)> wanted) {
  auto wantedBand = [&](Value part, MaskKind partKind) {
    std::optional<MaskBand> band = analyzeMask(part, partKind);
    return band && wanted(*band) ? band : std::nullopt;
  };
  MaskSplit split;
  Value keep = mask;
  if (kind == MaskKind::Additive) {
    // band + other, either order.
    if (auto add = mask.getDefiningOp<AddOp>()) {
      for (auto [part, other] : {std::pair(add.getLhs(), add.getRhs()),
                                 std::pair(add.getRhs(), add.getLhs())})
        if (isa<FloatType>(getElementTypeOrSelf(other.getType())))
          if (std::optional<MaskBand> band =
                  wantedBand(part, MaskKind::Additive)) {
            split.band = *band;
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
    std::optional<double> zero = evaluateScalarConstant(where.getTrueValue());
    std::optional<double> fill = evaluateScalarConstant(where.getFalseValue());
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
  // and(band, other) where the band is itself a conjunction (a causal
  // mask and a sliding window) the flattening below would take apart.
  if (auto conj = keep.getDefiningOp<AndOp>())
    for (auto [part, other] : {std::pair(conj.getLhs(), conj.getRhs()),
                               std::pair(conj.getRhs(), conj.getLhs())})
      if (std::optional<MaskBand> band = wantedBand(part, MaskKind::Keep)) {
        split.band = *band;
        split.rest = other;
        return split;
      }
  // The conjuncts of and(...) trees, without constant true ones.
  SmallVector<Value> parts, pending = {keep};
  while (!pending.empty() && parts.size() + pending.size() <= 8) {
    Value v = pending.pop_back_val();
    if (auto conj = v.getDefiningOp<AndOp>()) {
      pending.push_back(conj.getRhs());
      pending.push_back(conj.getLhs());
    } else if (evaluateScalarConstant(v) != std::optional<double>(1.0)) {
      parts.push_back(v);
    }
  }
  if (!pending.empty())
    return std::nullopt;
  for (auto *it = parts.begin(); it != parts.end(); ++it) {
    std::optional<MaskBand> band = wantedBand(*it, MaskKind::Keep);
    if (!band)
      continue;
    split.band = *band;
    parts.erase(it);
    if (parts.size() > 1)
      return std::nullopt;
    split.rest = parts.empty() ? Value() : parts.front();
    return split;
  }
  return std::nullopt;
}

} // namespace strata
