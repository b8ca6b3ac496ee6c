//===- OutputBounds.cpp - Maxima of an entry's dynamic output dims --------===//
// SPDX-License-Identifier: Apache-2.0
// ExtentEvaluator derives most extents (shape vectors included); MLIR's
// ValueBoundsConstraintSet, which walks the backward slice down to the
// entry's argument dims, covers ops it does not model. The maximum of an
// exact affine function is its interval over the box of input maxima.

#include "compiler/pipeline/OutputBounds.h"

#include "codegen/cpu/Passes.h"
#include "compiler/pipeline/ExtentEvaluator.h"
#include "compiler/analysis/SymbolicInt.h"

#include "mlir/IR/AffineExprVisitor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>

using namespace mlir;

namespace strata {
namespace {

// The maxima attribute's entry for |arg|'s dim |dim| (-1 if none).
int64_t inputMax(func::FuncOp func, unsigned arg, int64_t dim) {
  auto maxima = func->getAttrOfType<ArrayAttr>(codegen::cpu::kInputMaximaAttr);
  if (!maxima || arg >= maxima.size())
    return -1;
  auto dims = dyn_cast<DenseI64ArrayAttr>(maxima[arg]);
  if (!dims || dim < 0 || dim >= int64_t(dims.size()))
    return -1;
  return dims[dim];
}

// Computes a bound of kind |type| on |v|'s dim |dim| in terms of |func|'s
// argument dims; returns the map and its operands as input dims.
LogicalResult boundInArgs(func::FuncOp func, Value v, int64_t dim,
                          presburger::BoundType type, AffineMap &map,
                          SmallVector<InputDim> &operands) {
  Block *entry = &func.getBody().front();
  auto stopAtArguments = [entry](Value value, std::optional<int64_t>,
                                 ValueBoundsConstraintSet &) {
    auto arg = dyn_cast<BlockArgument>(value);
    return arg && arg.getOwner() == entry;
  };
  ValueDimList mapOperands;
  if (failed(ValueBoundsConstraintSet::computeBound(
          map, mapOperands, type, ValueBoundsConstraintSet::Variable(v, dim),
          stopAtArguments, /*closedUB=*/true)))
    return failure();
  operands.clear();
  for (auto &[value, d] : mapOperands) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != entry || !d)
      return failure();
    operands.push_back({arg.getArgNumber(), *d});
  }
  return success();
}

// The maximum of |map|'s single result with each operand (an input dim)
// over [0, its maximum].
std::optional<int64_t> maximumOver(func::FuncOp func, AffineMap map,
                                   ArrayRef<InputDim> operands) {
  if (map.getNumResults() != 1)
    return std::nullopt;
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  for (const InputDim &in : operands) {
    auto type = cast<RankedTensorType>(func.getArgument(in.input).getType());
    int64_t max = type.isDynamicDim(in.dim) ? inputMax(func, in.input, in.dim)
                                            : type.getDimSize(in.dim);
    if (max < 0)
      return std::nullopt;
    ranges.push_back({type.isDynamicDim(in.dim) ? 0 : max, max});
  }
  // The map's dims and symbols, all as symbols in operand order.
  SmallVector<AffineExpr> dimsAsSymbols;
  for (unsigned d = 0; d < map.getNumDims(); ++d)
    dimsAsSymbols.push_back(getAffineSymbolExpr(d, func.getContext()));
  AffineExpr e =
      map.getResult(0).shiftSymbols(map.getNumSymbols(), map.getNumDims());
  e = e.replaceDims(dimsAsSymbols);
  std::optional<std::pair<int64_t, int64_t>> r =
      symbolic::rangeOf(e, symbolic::Env{func.getContext(), ranges});
  if (!r)
    return std::nullopt;
  return std::max<int64_t>(r->second, 0);
}

// Prints |expr| with |names| for its operands.
class ExprPrinter {
public:
  ExprPrinter(unsigned numDims, ArrayRef<std::string> names)
      : numDims(numDims), names(names) {}

  std::string print(AffineExpr expr) {
    if (auto c = dyn_cast<AffineConstantExpr>(expr))
      return std::to_string(c.getValue());
    if (auto d = dyn_cast<AffineDimExpr>(expr))
      return names[d.getPosition()];
    if (auto s = dyn_cast<AffineSymbolExpr>(expr))
      return names[numDims + s.getPosition()];
    auto bin = cast<AffineBinaryOpExpr>(expr);
    AffineExpr lhs = bin.getLHS(), rhs = bin.getRHS();
    switch (expr.getKind()) {
    case AffineExprKind::Add: {
      // x + -1 * y and x + -3 read as x - y and x - 3.
      if (auto c = dyn_cast<AffineConstantExpr>(rhs); c && c.getValue() < 0)
        return print(lhs) + " - " + std::to_string(-c.getValue());
      if (auto mul = dyn_cast<AffineBinaryOpExpr>(rhs);
          mul && mul.getKind() == AffineExprKind::Mul)
        if (auto c = dyn_cast<AffineConstantExpr>(mul.getRHS());
            c && c.getValue() == -1)
          return print(lhs) + " - " + atom(mul.getLHS());
      return print(lhs) + " + " + print(rhs);
    }
    case AffineExprKind::Mul:
      return atom(lhs) + " * " + atom(rhs);
    case AffineExprKind::FloorDiv:
      return atom(lhs) + " / " + atom(rhs);
    case AffineExprKind::CeilDiv:
      return "ceil(" + print(lhs) + " / " + atom(rhs) + ")";
    case AffineExprKind::Mod:
      return atom(lhs) + " % " + atom(rhs);
    default:
      return "?";
    }
  }

private:
  std::string atom(AffineExpr expr) {
    std::string text = print(expr);
    return isa<AffineBinaryOpExpr>(expr) ? "(" + text + ")" : text;
  }
  unsigned numDims;
  ArrayRef<std::string> names;
};

} // namespace

OutputBounds::OutputBounds(func::FuncOp func)
    : func(func), evaluator(std::make_unique<ExtentEvaluator>(func)) {}

OutputBounds::~OutputBounds() = default;

FailureOr<ResultDimBound> OutputBounds::bound(unsigned result, int64_t dim) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return failure();
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (!ret || result >= ret.getNumOperands())
    return failure();
  Value v = ret.getOperand(result);
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || dim < 0 || dim >= type.getRank())
    return failure();
  ResultDimBound bound;
  if (!type.isDynamicDim(dim)) {
    bound.max = type.getDimSize(dim);
    return bound;
  }
  auto setExact = [&](AffineMap map, ArrayRef<InputDim> operands) {
    bound.exact = map;
    bound.operands.assign(operands.begin(), operands.end());
    AffineExpr e = map.getResult(0);
    if (auto d = dyn_cast<AffineDimExpr>(e))
      bound.sameAs = operands[d.getPosition()];
    else if (auto s = dyn_cast<AffineSymbolExpr>(e))
      bound.sameAs = operands[map.getNumDims() + s.getPosition()];
  };

  // The evaluator first: it sees through the shape vectors reshapes read
  // their extents from, in one linear pass.
  // An extent above 2^42 is no bound anyone can allocate for.
  std::optional<SymbolicInt> value = evaluator->dim(v, dim);
  if (value && value->hi <= (int64_t{1} << 42)) {
    bound.max = std::max<int64_t>(value->hi, 0);
    if (value->expr) {
      // Renumber the symbols the expression uses as 0..n-1.
      SmallVector<InputDim> operands;
      SmallVector<AffineExpr> replacements;
      ArrayRef<InputDim> all = evaluator->symbols();
      llvm::SmallBitVector used(all.size());
      value->expr.walk([&](AffineExpr e) {
        if (auto s = dyn_cast<AffineSymbolExpr>(e))
          used.set(s.getPosition());
      });
      for (unsigned k = 0; k < all.size(); ++k) {
        replacements.push_back(getAffineSymbolExpr(
            used.test(k) ? operands.size() : 0, func.getContext()));
        if (used.test(k))
          operands.push_back(all[k]);
      }
      AffineExpr e = value->expr.replaceSymbols(replacements);
      setExact(AffineMap::get(0, operands.size(), e), operands);
    }
    return bound;
  }

  // Ops the evaluator does not model: MLIR's value-bounds analysis, exact
  // if it can, else an upper bound.
  AffineMap map;
  SmallVector<InputDim> operands;
  for (auto type : {presburger::BoundType::EQ, presburger::BoundType::UB}) {
    if (failed(boundInArgs(func, v, dim, type, map, operands)))
      continue;
    std::optional<int64_t> max = maximumOver(func, map, operands);
    if (!max)
      continue;
    bound.max = *max;
    if (type == presburger::BoundType::EQ)
      setExact(map, operands);
    return bound;
  }
  return failure();
}

std::string exactText(const ResultDimBound &bound,
                      llvm::function_ref<std::string(const InputDim &)> names) {
  if (!bound.exact || bound.exact.getNumResults() != 1)
    return "";
  SmallVector<std::string> operandNames;
  for (const InputDim &in : bound.operands)
    operandNames.push_back(names(in));
  return ExprPrinter(bound.exact.getNumDims(), operandNames)
      .print(bound.exact.getResult(0));
}

} // namespace strata
