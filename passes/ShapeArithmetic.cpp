//===- ShapeArithmetic.cpp - Symbolic extents and shape values ------------===//
// SPDX-License-Identifier: Apache-2.0
// See ShapeArithmetic.h. Every rule assumes a valid model: operands that
// broadcast do broadcast, a reshape keeps the element count (the lowering
// checks both at run time).

#include "passes/ShapeArithmetic.h"

#include "dialects/strata/IR/StrataOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

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

// Deep enough for the residual stream of a large model (a few ops per
// layer), bounded so that a hostile graph cannot exhaust the stack.
constexpr int kMaxDepth = 1024;

/// Maps a possibly negative |index| into [0, n) (ONNX gather/slice rules for
/// one element); std::nullopt when out of range.
std::optional<int64_t> normalizeIndex(int64_t index, int64_t n) {
  if (index < 0)
    index += n;
  if (index < 0 || index >= n)
    return std::nullopt;
  return index;
}

/// One query's memo of the extents and elements it traced: graphs are
/// DAGs (a residual stream feeds every layer), so each (value, dim) is
/// traced once.
struct Tracer {
  llvm::DenseMap<std::pair<Value, int64_t>, SymbolicIndex> extents;
  llvm::DenseMap<std::pair<Value, int64_t>, std::optional<SymbolicIndex>>
      elements;
  int depth = 0;
};

SymbolicIndex extentOfImpl(Value v, int64_t dim, Tracer &t);
std::optional<SymbolicIndex> elementAt(Value v, int64_t index, Tracer &t);

/// The integer an attribute holds (an int, or a bool as 0/1).
std::optional<int64_t> intOf(Attribute a) {
  if (auto i = dyn_cast<IntegerAttr>(a))
    return i.getType().isInteger(1)
               ? static_cast<int64_t>(i.getValue().getBoolValue())
               : i.getValue().getSExtValue();
  return std::nullopt;
}

std::optional<SymbolicIndex> elementAtUncached(Value v, int64_t index,
                                               Tracer &t) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  std::optional<int64_t> n = staticElementCount(v);
  if (!type || !n || type.getRank() > 1 ||
      !isa<IntegerType>(type.getElementType()) ||
      type.getElementType().isInteger(1) || index < 0 || index >= *n)
    return std::nullopt;
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  // An operand broadcast against |v|: its only element or element |index|.
  auto operandAt = [&](Value x) -> std::optional<SymbolicIndex> {
    std::optional<int64_t> m = staticElementCount(x);
    if (!m)
      return std::nullopt;
    return elementAt(x, *m == 1 ? 0 : index, t);
  };
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto ints = dyn_cast<DenseIntElementsAttr>(constant.getValue());
    if (!ints)
      return std::nullopt;
    return SymbolicIndex::of(
        (*(ints.value_begin<APInt>() + index)).getSExtValue());
  }
  if (auto fill = dyn_cast<ConstantOfShapeOp>(op)) {
    if (std::optional<int64_t> x = intOf(fill.getValue()))
      return SymbolicIndex::of(*x);
    return std::nullopt;
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
    return extentOfImpl(shape.getInput(), start + index, t);
  }
  // Reshapes between 0-D and 1-D (Squeeze/Unsqueeze of one shape entry) and
  // casts between integer types keep the elements.
  if (isa<ReshapeOp, CastOp>(op)) {
    Value input = op->getOperand(0);
    auto inputType = dyn_cast<RankedTensorType>(input.getType());
    if (!inputType || inputType.getRank() > 1 || staticElementCount(input) != n)
      return std::nullopt;
    return elementAt(input, index, t);
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    for (Value input : concat.getInputs()) {
      std::optional<int64_t> m = staticElementCount(input);
      if (!m)
        return std::nullopt;
      if (index < *m)
        return elementAt(input, index, t);
      index -= *m;
    }
    return std::nullopt;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    std::optional<int64_t> m = staticElementCount(slice.getInput());
    std::optional<SymbolicIndex> start = elementAt(slice.getStarts(), 0, t);
    std::optional<SymbolicIndex> step = elementAt(slice.getSteps(), 0, t);
    if (!m || slice.getAxes().size() != 1 || !start || !step ||
        step->getConstant() != 1 || !start->getConstant())
      return std::nullopt;
    int64_t first = *start->getConstant();
    if (first < 0)
      first += *m;
    first = std::clamp<int64_t>(first, 0, *m);
    return elementAt(slice.getInput(), first + index, t);
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    std::optional<int64_t> m = staticElementCount(gather.getData());
    std::optional<SymbolicIndex> at = elementAt(gather.getIndices(), index, t);
    if (!m || gather.getAxis() != 0 || !at || !at->getConstant() ||
        cast<RankedTensorType>(gather.getData().getType()).getRank() != 1)
      return std::nullopt;
    std::optional<int64_t> i = normalizeIndex(*at->getConstant(), *m);
    if (!i)
      return std::nullopt;
    return elementAt(gather.getData(), *i, t);
  }
  // where(equal(a, b), t, f), as torch's expand(-1) shapes are spelled:
  // decided when a and b are constants, or one is an extent (>= 0) and the
  // other a negative constant.
  if (auto where = dyn_cast<WhereOp>(op)) {
    auto equal = where.getCondition().getDefiningOp<EqualOp>();
    if (!equal)
      return std::nullopt;
    std::optional<SymbolicIndex> a = operandAt(equal.getLhs());
    std::optional<SymbolicIndex> b = operandAt(equal.getRhs());
    if (!a || !b)
      return std::nullopt;
    auto negative = [](const SymbolicIndex &x) {
      return x.getConstant() && *x.getConstant() < 0;
    };
    std::optional<bool> same;
    if (a->getConstant() && b->getConstant())
      same = *a->getConstant() == *b->getConstant();
    else if ((a->isNonNegative() && negative(*b)) ||
             (b->isNonNegative() && negative(*a)))
      same = false;
    if (!same)
      return std::nullopt;
    return operandAt(*same ? where.getTrueValue() : where.getFalseValue());
  }
  // (x * y) / x = y: torch.export spells a view(batch, -1) of the
  // attention mask as (batch * length) / batch, the batches two extents
  // of one name.
  if (auto div = dyn_cast<DivOp>(op))
    if (auto product = div.getLhs().getDefiningOp<MulOp>()) {
      std::optional<SymbolicIndex> d = operandAt(div.getRhs());
      std::optional<SymbolicIndex> x = operandAt(product.getLhs());
      std::optional<SymbolicIndex> y = operandAt(product.getRhs());
      if (d && x && y && *x == *d)
        return y;
      if (d && x && y && *y == *d)
        return x;
    }
  if (isa<AddOp, SubOp, MulOp, DivOp>(op)) {
    std::optional<SymbolicIndex> a = operandAt(op->getOperand(0));
    std::optional<SymbolicIndex> b = operandAt(op->getOperand(1));
    if (!a || !b)
      return std::nullopt;
    if (isa<AddOp>(op))
      return *a + *b;
    if (isa<SubOp>(op))
      return *a - *b;
    if (isa<MulOp>(op)) {
      if (std::optional<int64_t> c = b->getConstant())
        return a->scaled(*c);
      if (std::optional<int64_t> c = a->getConstant())
        return b->scaled(*c);
      return std::nullopt;
    }
    // Integer division by a constant that divides every coefficient: exact,
    // so truncation and flooring agree.
    std::optional<int64_t> c = b->getConstant();
    if (!c || *c == 0 || a->constant % *c != 0 ||
        llvm::any_of(a->terms,
                     [&](const auto &t) { return std::get<2>(t) % *c != 0; }))
      return std::nullopt;
    SymbolicIndex q = SymbolicIndex::of(a->constant / *c);
    for (auto [value, d, coeff] : a->terms)
      q.terms.emplace_back(value, d, coeff / *c);
    return q;
  }
  return std::nullopt;
}

/// Entry |i| of a reshape's target resolved against its input: ONNX's 0
/// copies the input extent (without allow_zero).
std::optional<SymbolicIndex> reshapeEntry(ReshapeOp op, int64_t i, Tracer &t) {
  std::optional<SymbolicIndex> e = elementAt(op.getShape(), i, t);
  if (!e || e->getConstant() != 0 || op.getAllowZero())
    return e;
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  if (i >= inputType.getRank())
    return std::nullopt;
  return extentOfImpl(op.getInput(), i, t);
}

std::optional<SymbolicIndex> reshapeExtent(ReshapeOp op, int64_t dim,
                                           Tracer &t) {
  auto type = cast<RankedTensorType>(op.getType());
  std::optional<SymbolicIndex> e = reshapeEntry(op, dim, t);
  if (!e || !e->getConstant() || *e->getConstant() >= 0)
    return e;
  if (*e->getConstant() != -1)
    return std::nullopt;
  // The inferred -1: the input's element count over the other entries'.
  // Products of symbolic extents are not linear: every symbolic entry must
  // cancel one input extent, and at most one input extent may remain.
  int64_t inConstant = 1, outConstant = 1;
  SmallVector<SymbolicIndex> atoms;
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  for (int64_t d = 0; d < inputType.getRank(); ++d) {
    SymbolicIndex x = extentOfImpl(op.getInput(), d, t);
    if (std::optional<int64_t> c = x.getConstant()) {
      if (llvm::MulOverflow(inConstant, *c, inConstant))
        return std::nullopt;
    } else {
      atoms.push_back(x);
    }
  }
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (i == dim)
      continue;
    std::optional<SymbolicIndex> x = reshapeEntry(op, i, t);
    if (!x)
      return std::nullopt;
    if (std::optional<int64_t> c = x->getConstant()) {
      if (*c < 0 || llvm::MulOverflow(outConstant, *c, outConstant))
        return std::nullopt;
      continue;
    }
    auto it = llvm::find(atoms, *x);
    if (it == atoms.end())
      return std::nullopt;
    atoms.erase(it);
  }
  if (atoms.size() > 1 || outConstant <= 0 || inConstant % outConstant != 0)
    return std::nullopt;
  int64_t ratio = inConstant / outConstant;
  return atoms.empty() ? SymbolicIndex::of(ratio) : atoms[0].scaled(ratio);
}

/// The canonical extent of a function argument's dim: the first argument
/// dim with the same ONNX dim name, or the dim itself.
SymbolicIndex argumentExtent(BlockArgument arg, int64_t dim) {
  SymbolicIndex self;
  self.terms.emplace_back(arg, dim, 1);
  Block *block = arg.getOwner();
  auto fn = dyn_cast_if_present<FunctionOpInterface>(block->getParentOp());
  if (!fn || !block->isEntryBlock())
    return self;
  auto nameOf = [&](unsigned i, int64_t d) -> StringRef {
    auto names = fn.getArgAttrOfType<ArrayAttr>(i, "strata.dims");
    auto type = dyn_cast<RankedTensorType>(block->getArgument(i).getType());
    if (!names || !type || (int64_t)names.size() != type.getRank() ||
        d >= type.getRank() || !type.isDynamicDim(d))
      return "";
    auto name = dyn_cast<StringAttr>(names[d]);
    return name && name.getValue() != "?" ? name.getValue() : "";
  };
  StringRef name = nameOf(arg.getArgNumber(), dim);
  if (name.empty())
    return self;
  for (unsigned i = 0; i <= arg.getArgNumber(); ++i) {
    auto type = dyn_cast<RankedTensorType>(block->getArgument(i).getType());
    for (int64_t d = 0, r = type ? type.getRank() : 0; d < r; ++d)
      if (nameOf(i, d) == name) {
        SymbolicIndex canonical;
        canonical.terms.emplace_back(block->getArgument(i), d, 1);
        return canonical;
      }
  }
  return self;
}

/// The end E when |e| is the extent of a slice from 0 with step 1 along
/// its own dim (the single term naming the slice): the extent is min(E,
/// the input's), so at most E.
std::optional<SymbolicIndex> sliceBound(const SymbolicIndex &e, Tracer &t) {
  if (e.constant != 0 || e.terms.size() != 1 || std::get<2>(e.terms[0]) != 1)
    return std::nullopt;
  auto [v, d, coeff] = e.terms[0];
  auto slice = v.getDefiningOp<SliceOp>();
  if (!slice)
    return std::nullopt;
  int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
  for (auto [i, axis] : llvm::enumerate(slice.getAxes())) {
    if ((axis < 0 ? axis + rank : axis) != d)
      continue;
    std::optional<SymbolicIndex> start = elementAt(slice.getStarts(), i, t);
    std::optional<SymbolicIndex> step = elementAt(slice.getSteps(), i, t);
    std::optional<SymbolicIndex> end = elementAt(slice.getEnds(), i, t);
    if (!start || start->getConstant() != 0 || !step ||
        step->getConstant() != 1 || !end || !end->isNonNegative() ||
        end->getConstant())
      return std::nullopt;
    return end;
  }
  return std::nullopt;
}

/// The extent of a broadcast result at |dim| from the operands' extents at
/// that dim (aligned to the end): one extent that is not 1, if the others
/// are 1 or equal to it (or a table cut to at most it: sliceBound).
std::optional<SymbolicIndex> broadcastExtent(ValueRange operands, int64_t rank,
                                             int64_t dim, Tracer &t) {
  std::optional<SymbolicIndex> found;
  for (Value operand : operands) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      return std::nullopt;
    int64_t d = dim - (rank - type.getRank());
    if (d < 0)
      continue;
    SymbolicIndex e = extentOfImpl(operand, d, t);
    if (e.getConstant() == 1)
      continue;
    // A static extent other than 1 is the result's (valid broadcasting).
    if (e.getConstant())
      return e;
    if (found && *found != e) {
      // A table cut to the length E broadcast against an extent E (BERT's
      // position embeddings, exported by torch.export): min(E, N) <= E, so
      // a valid broadcast's extent is E.
      if (sliceBound(e, t) == found)
        continue;
      if (sliceBound(*found, t) == e) {
        found = e;
        continue;
      }
      return std::nullopt;
    }
    found = e;
  }
  return found ? found : SymbolicIndex::of(1);
}

SymbolicIndex extentOfUncached(Value v, int64_t dim, Tracer &t) {
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.isDynamicDim(dim))
    return SymbolicIndex::of(type.getDimSize(dim));
  if (auto arg = dyn_cast<BlockArgument>(v))
    return argumentExtent(arg, dim);
  SymbolicIndex self;
  self.terms.emplace_back(v, dim, 1);
  Operation *op = v.getDefiningOp();
  int64_t rank = type.getRank();
  if (!op)
    return self;
  if (auto transpose = dyn_cast<TransposeOp>(op))
    return extentOfImpl(transpose.getInput(), transpose.getPermutation()[dim],
                        t);
  // A cast that forgets static dims (the generation entries pass their
  // inputs to the graph's ops through them) keeps the extents.
  if (auto cast = dyn_cast<tensor::CastOp>(op))
    return extentOfImpl(cast.getSource(), dim, t);
  // A tensor another pipeline stage sends, of the extents its shape
  // operand computes (the message must have them).
  if (auto recv = dyn_cast<RecvOp>(op)) {
    if (Value shape = recv.getShape())
      if (std::optional<SymbolicIndex> e = elementAt(shape, dim, t))
        return *e;
    return self;
  }
  // Ops whose result has the shape of their first operand.
  if (isa<CastOp, LayerNormOp, RmsNormOp, TriluOp>(op) ||
      (op->getNumOperands() == 1 &&
       op->hasTrait<OpTrait::SameOperandsAndResultType>()))
    return extentOfImpl(op->getOperand(0), dim, t);
  if (isa<AddOp, SubOp, MulOp, DivOp, PowOp, ModOp, MaxOp, MinOp, EqualOp,
          LessOp, LessEqualOp, GreaterOp, GreaterEqualOp, AndOp, OrOp, WhereOp>(
          op)) {
    if (std::optional<SymbolicIndex> e =
            broadcastExtent(op->getOperands(), rank, dim, t))
      return *e;
    return self;
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    auto dataType = cast<RankedTensorType>(gather.getData().getType());
    int64_t axis = gather.getAxis();
    if (axis < 0)
      axis += dataType.getRank();
    int64_t indicesRank =
        cast<RankedTensorType>(gather.getIndices().getType()).getRank();
    if (dim < axis)
      return extentOfImpl(gather.getData(), dim, t);
    if (dim < axis + indicesRank)
      return extentOfImpl(gather.getIndices(), dim - axis, t);
    return extentOfImpl(gather.getData(), dim - indicesRank + 1, t);
  }
  // GatherElements: the result has the indices' extents (torch.export's
  // token_type_ids, a buffer slice read back by position).
  if (auto gather = dyn_cast<GatherElementsOp>(op))
    return extentOfImpl(gather.getIndices(), dim, t);
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
    auto rhs = cast<RankedTensorType>(matmul.getRhs().getType());
    if (lhs.getRank() < 2 || rhs.getRank() < 2)
      return self;
    if (dim == rank - 1)
      return extentOfImpl(matmul.getRhs(), rhs.getRank() - 1, t);
    if (dim == rank - 2)
      return extentOfImpl(matmul.getLhs(), lhs.getRank() - 2, t);
    // Batch dims broadcast; compare them without the matrix dims.
    std::optional<SymbolicIndex> found;
    for (auto [x, xr] : {std::pair(matmul.getLhs(), lhs.getRank()),
                         std::pair(matmul.getRhs(), rhs.getRank())}) {
      int64_t d = dim - (rank - xr);
      if (d < 0)
        continue;
      SymbolicIndex e = extentOfImpl(x, d, t);
      if (e.getConstant() == 1)
        continue;
      if (found && *found != e)
        return self;
      found = e;
    }
    return found ? *found : SymbolicIndex::of(1);
  }
  if (auto linear = dyn_cast<LinearOp>(op)) {
    if (dim == rank - 1)
      return extentOfImpl(linear.getWeight(), 1, t);
    return extentOfImpl(linear.getInput(), dim, t);
  }
  if (auto attention = dyn_cast<AttentionOp>(op))
    return extentOfImpl(dim == 3 ? attention.getValue() : attention.getQuery(),
                        dim, t);
  // The queries' batch, heads and tokens; the cached values' head size.
  if (auto attention = dyn_cast<CacheAttentionOp>(op))
    return extentOfImpl(dim == 3 ? attention.getValueCache()
                                 : attention.getQuery(),
                        dim, t);
  if (auto slice = dyn_cast<SliceOp>(op)) {
    for (int64_t axis : slice.getAxes())
      if ((axis < 0 ? axis + rank : axis) == dim)
        return self;
    return extentOfImpl(slice.getInput(), dim, t);
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    int64_t axis = concat.getAxis();
    if (axis < 0)
      axis += rank;
    if (axis != dim)
      return extentOfImpl(concat.getInputs().front(), dim, t);
    SymbolicIndex sum = SymbolicIndex::of(0);
    for (Value input : concat.getInputs())
      sum = sum + extentOfImpl(input, dim, t);
    return sum;
  }
  if (auto split = dyn_cast<SplitOp>(op)) {
    int64_t axis = split.getAxis();
    if (axis < 0)
      axis += rank;
    if (axis != dim)
      return extentOfImpl(split.getInput(), dim, t);
    return self;
  }
  if (auto range = dyn_cast<RangeOp>(op)) {
    // [start, limit) in steps of 1 has limit - start entries (a valid model
    // has limit >= start).
    std::optional<SymbolicIndex> start = elementAt(range.getStart(), 0, t);
    std::optional<SymbolicIndex> limit = elementAt(range.getLimit(), 0, t);
    std::optional<SymbolicIndex> delta = elementAt(range.getDelta(), 0, t);
    if (start && limit && delta && delta->getConstant() == 1)
      return *limit - *start;
    // [s, s + n): n entries, whatever the value s (a generation entry's
    // start position, an input).
    if (delta && delta->getConstant() == 1)
      if (auto add = range.getLimit().getDefiningOp<AddOp>())
        for (auto [mine, other] : {std::pair(add.getLhs(), add.getRhs()),
                                   std::pair(add.getRhs(), add.getLhs())})
          if (mine == range.getStart())
            if (std::optional<SymbolicIndex> n = elementAt(other, 0, t))
              return *n;
    return self;
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op); reshape && reshape.getShape()) {
    if (std::optional<SymbolicIndex> e = reshapeExtent(reshape, dim, t))
      return *e;
    return self;
  }
  if (auto fill = dyn_cast<ConstantOfShapeOp>(op)) {
    if (std::optional<SymbolicIndex> e = elementAt(fill.getShape(), dim, t))
      return *e;
    return self;
  }
  if (auto tile = dyn_cast<TileOp>(op)) {
    // The input extent times a constant repeat count.
    std::optional<SymbolicIndex> r = elementAt(tile.getRepeats(), dim, t);
    if (r && r->getConstant())
      return extentOfImpl(tile.getInput(), dim, t).scaled(*r->getConstant());
    return self;
  }
  if (auto expand = dyn_cast<ExpandOp>(op)) {
    // Aligned to the end: the input extent unless it is 1, else the shape's.
    auto inputType = cast<RankedTensorType>(expand.getInput().getType());
    int64_t inputDim = dim - (rank - inputType.getRank());
    std::optional<int64_t> shapeRank = staticElementCount(expand.getShape());
    if (!shapeRank)
      return self;
    int64_t shapeDim = dim - (rank - *shapeRank);
    std::optional<SymbolicIndex> s;
    if (shapeDim >= 0)
      s = elementAt(expand.getShape(), shapeDim, t);
    if (inputDim >= 0 && (shapeDim < 0 || (s && s->getConstant() == 1)))
      return extentOfImpl(expand.getInput(), inputDim, t);
    if (s && (inputDim < 0 || inputType.getDimSize(inputDim) == 1))
      return *s;
    // Both extents the same, or the input's a cut of the table to at most
    // the shape's (sliceBound): the broadcast is the shape's extent.
    if (s && inputDim >= 0) {
      SymbolicIndex in = extentOfImpl(expand.getInput(), inputDim, t);
      if (*s == in || sliceBound(in, t) == s)
        return *s;
    }
    return self;
  }
  return self;
}

SymbolicIndex extentOfImpl(Value v, int64_t dim, Tracer &t) {
  auto key = std::make_pair(v, dim);
  if (auto it = t.extents.find(key); it != t.extents.end())
    return it->second;
  SymbolicIndex e;
  if (t.depth > kMaxDepth) {
    e.terms.emplace_back(v, dim, 1);
    return e;
  }
  ++t.depth;
  e = extentOfUncached(v, dim, t);
  --t.depth;
  t.extents[key] = e;
  return e;
}

std::optional<SymbolicIndex> elementAt(Value v, int64_t index, Tracer &t) {
  auto key = std::make_pair(v, index);
  if (auto it = t.elements.find(key); it != t.elements.end())
    return it->second;
  if (t.depth > kMaxDepth)
    return std::nullopt;
  ++t.depth;
  std::optional<SymbolicIndex> e = elementAtUncached(v, index, t);
  --t.depth;
  t.elements[key] = e;
  return e;
}

} // namespace

SymbolicIndex SymbolicIndex::operator+(const SymbolicIndex &other) const {
  return combine(*this, other, 1);
}

SymbolicIndex SymbolicIndex::operator-(const SymbolicIndex &other) const {
  return combine(*this, other, -1);
}

SymbolicIndex SymbolicIndex::scaled(int64_t factor) const {
  if (factor == 0)
    return SymbolicIndex::of(0);
  SymbolicIndex r = *this;
  r.constant *= factor;
  for (auto &t : r.terms)
    std::get<2>(t) *= factor;
  return r;
}

bool SymbolicIndex::operator==(const SymbolicIndex &other) const {
  SymbolicIndex d = *this - other;
  return d.constant == 0 && d.terms.empty();
}

bool SymbolicIndex::isNonNegative() const {
  return constant >= 0 &&
         llvm::all_of(terms, [](const auto &t) { return std::get<2>(t) > 0; });
}

void SymbolicIndex::print(llvm::raw_ostream &os) const {
  bool first = true;
  for (auto [value, dim, coeff] : terms) {
    os << (coeff < 0 ? (first ? "-" : " - ") : (first ? "" : " + "));
    if (coeff != 1 && coeff != -1)
      os << (coeff < 0 ? -coeff : coeff) << "*";
    if (auto arg = dyn_cast<BlockArgument>(value))
      os << "%arg" << arg.getArgNumber();
    else
      os << "'" << value.getDefiningOp()->getName() << "'";
    os << "[" << dim << "]";
    first = false;
  }
  if (first)
    os << constant;
  else if (constant != 0)
    os << (constant < 0 ? " - " : " + ")
       << (constant < 0 ? -constant : constant);
}

bool isKnownLessEqual(const SymbolicIndex &a, const SymbolicIndex &b) {
  return (b - a).isNonNegative();
}

std::optional<SymbolicIndex> knownMin(const SymbolicIndex &a,
                                      const SymbolicIndex &b) {
  if (isKnownLessEqual(a, b))
    return a;
  if (isKnownLessEqual(b, a))
    return b;
  return std::nullopt;
}

std::optional<SymbolicIndex> knownMax(const SymbolicIndex &a,
                                      const SymbolicIndex &b) {
  // The one that is not the minimum.
  if (std::optional<SymbolicIndex> min = knownMin(a, b))
    return a + b - *min;
  return std::nullopt;
}

std::optional<int64_t> staticElementCount(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return type.getNumElements();
}

SymbolicIndex extentOf(Value v, int64_t dim) {
  Tracer t;
  return extentOfImpl(v, dim, t);
}

std::optional<SymbolicIndex> elementOf(Value v, int64_t index) {
  Tracer t;
  return elementAt(v, index, t);
}

std::optional<SymbolicIndex> reshapeExtentOf(ReshapeOp op, int64_t dim) {
  if (!op.getShape())
    return extentOf(op.getResult(), dim);
  Tracer t;
  return reshapeExtent(op, dim, t);
}

std::optional<SmallVector<SymbolicIndex>> elementsOf(Value v,
                                                     int64_t maxCount) {
  std::optional<int64_t> n = staticElementCount(v);
  if (!n || *n > maxCount)
    return std::nullopt;
  SmallVector<SymbolicIndex> elements;
  Tracer t;
  for (int64_t i = 0; i < *n; ++i) {
    std::optional<SymbolicIndex> e = elementAt(v, i, t);
    if (!e)
      return std::nullopt;
    elements.push_back(*e);
  }
  return elements;
}

} // namespace strata
