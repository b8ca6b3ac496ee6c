//===- ExtentEvaluator.cpp - Extents as functions of input dims -----------===//
// SPDX-License-Identifier: Apache-2.0
// One pass in block order (SSA dominance makes every operand known before
// its user). The lowering computes a reshape's extents from an i64 shape
// vector (tensor.from_elements of tensor.dim, gathered and concatenated by
// small linalg.generics, read back by tensor.extract): those tensors are
// evaluated element by element, generic bodies point by point. ONNX's
// reshape rules (0 copies a dim, -1 is inferred) are selects and compares
// that the intervals decide, and the inferred dim is a quotient of
// products that divides exactly.

#include "compiler/pipeline/ExtentEvaluator.h"
#include "compiler/analysis/SymbolicInt.h"

#include "codegen/cpu/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExprVisitor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <functional>

using namespace mlir;

namespace strata {
namespace {

using namespace symbolic;

// Shape vectors have one element per dim; bigger integer tensors are data.
constexpr int64_t kMaxElements = 64;
constexpr int64_t kMaxPoints = 4096;

bool isIntegerLike(Type t) { return isa<IntegerType, IndexType>(t); }

// The elements of an integer constant: dense, or a dense_resource blob (an
// initializer or a --bind tensor, little-endian, i1 one byte each).
bool integerValues(Attribute attr, SmallVectorImpl<int64_t> &values) {
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr)) {
    bool isBool = dense.getElementType().isInteger(1);
    for (APInt v : dense.getValues<APInt>())
      values.push_back(isBool ? int64_t(v.getZExtValue()) : v.getSExtValue());
    return true;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  auto type = resource ? dyn_cast<IntegerType>(resource.getElementType())
                       : IntegerType();
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!type || !blob)
    return false;
  unsigned bytes = type.getWidth() == 1 ? 1 : type.getWidth() / 8;
  if (bytes == 0 || bytes > 8 || (type.getWidth() != 1 && type.getWidth() % 8))
    return false;
  ArrayRef<char> data = blob->getData();
  int64_t count = resource.getType().getNumElements();
  if (int64_t(data.size()) != count * int64_t(bytes))
    return false;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t raw = 0;
    for (unsigned b = 0; b < bytes; ++b)
      raw |= uint64_t(uint8_t(data[i * bytes + b])) << (8 * b);
    bool isSigned = !type.isUnsigned() && type.getWidth() > 1;
    if (isSigned && bytes < 8 && (raw >> (8 * bytes - 1)) & 1)
      raw |= ~uint64_t(0) << (8 * bytes); // sign-extend
    values.push_back(int64_t(raw));
  }
  return true;
}

// A static-shaped integer tensor small enough to be a shape vector.
std::optional<int64_t> smallIntTensor(Type t) {
  auto type = dyn_cast<RankedTensorType>(t);
  if (!type || !type.hasStaticShape() || !isIntegerLike(type.getElementType()))
    return std::nullopt;
  int64_t n = type.getNumElements();
  if (n > kMaxElements)
    return std::nullopt;
  return n;
}

// Row-major linear index of |index| in |shape|.
int64_t linearize(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    linear = linear * shape[d] + index[d];
  return linear;
}

SmallVector<int64_t> delinearize(int64_t linear, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? linear % shape[d] : 0;
    linear = shape[d] ? linear / shape[d] : 0;
  }
  return index;
}

} // namespace

ExtentEvaluator::ExtentEvaluator(func::FuncOp func)
    : func_(func), ctx_(func.getContext()) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return;
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<ShapedType>(arg.getType());
    if (!type || !type.hasRank())
      continue;
    auto &dims = dims_[arg];
    for (int64_t d = 0; d < type.getRank(); ++d)
      dims.push_back(type.isDynamicDim(d) ? inputDim(arg.getArgNumber(), d)
                                          : constant(type.getDimSize(d)));
  }
  for (Operation &op : body)
    visit(&op);
}

std::optional<SymbolicInt> ExtentEvaluator::constant(int64_t value) const {
  return make(getAffineConstantExpr(value, ctx_), value, value,
              Env{ctx_, ranges_});
}

std::optional<SymbolicInt> ExtentEvaluator::inputDim(unsigned arg, int64_t d) {
  auto maxima = func_->getAttrOfType<ArrayAttr>(codegen::cpu::kInputMaximaAttr);
  auto dims = maxima && arg < maxima.size()
                  ? dyn_cast<DenseI64ArrayAttr>(maxima[arg])
                  : DenseI64ArrayAttr();
  if (!dims || d >= int64_t(dims.size()) || dims[d] < 1)
    return std::nullopt;
  symbols_.push_back({arg, d});
  ranges_.push_back({1, dims[d]});
  return make(getAffineSymbolExpr(symbols_.size() - 1, ctx_), 1, dims[d],
              Env{ctx_, ranges_});
}

std::optional<SymbolicInt> ExtentEvaluator::dim(Value v, int64_t d) const {
  auto it = dims_.find(v);
  if (it != dims_.end() && d >= 0 && d < int64_t(it->second.size()))
    return it->second[d];
  auto type = dyn_cast<ShapedType>(v.getType());
  if (type && type.hasRank() && d >= 0 && d < type.getRank() &&
      !type.isDynamicDim(d))
    return constant(type.getDimSize(d));
  return std::nullopt;
}

std::optional<SymbolicInt> ExtentEvaluator::scalar(Value v) const {
  auto it = scalars_.find(v);
  if (it != scalars_.end())
    return it->second;
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return constant(v.getType().isInteger(1) ? c.getZExtValue()
                                             : c.getSExtValue());
  return std::nullopt;
}

const ExtentEvaluator::Elements *ExtentEvaluator::elements(Value v) const {
  auto it = elements_.find(v);
  return it == elements_.end() ? nullptr : &it->second;
}

void ExtentEvaluator::visit(Operation *op) {
  Env env{ctx_, ranges_};
  // The runtime attention call reads its operands' extents this way.
  if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(op)) {
    for (auto [d, size] : llvm::enumerate(meta.getSizes()))
      if (Sym s = dim(meta.getSource(), d))
        scalars_[size] = *s;
    return;
  }
  if (op->getNumResults() == 1 && isIntegerLike(op->getResult(0).getType())) {
    Sym value;
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      value = constantOf(c.getValue(), env);
    } else if (auto dimOp = dyn_cast<tensor::DimOp>(op)) {
      Sym index = scalar(dimOp.getIndex());
      if (isConst(index))
        value = dim(dimOp.getSource(), index->lo);
    } else if (auto dimOp = dyn_cast<memref::DimOp>(op)) {
      Sym index = scalar(dimOp.getIndex());
      if (isConst(index))
        value = dim(dimOp.getSource(), index->lo);
    } else if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      auto type = cast<RankedTensorType>(extract.getTensor().getType());
      const Elements *elems = elements(extract.getTensor());
      SmallVector<int64_t> index;
      for (Value i : extract.getIndices())
        if (Sym s = scalar(i); isConst(s))
          index.push_back(s->lo);
      if (elems && index.size() == size_t(type.getRank()) &&
          llvm::all_of(llvm::zip(index, type.getShape()), [](auto p) {
            return std::get<0>(p) >= 0 && std::get<0>(p) < std::get<1>(p);
          }))
        value = (*elems)[linearize(index, type.getShape())];
    } else if (auto apply = dyn_cast<affine::AffineApplyOp>(op)) {
      SmallVector<Sym> operands;
      for (Value v : apply.getMapOperands())
        operands.push_back(scalar(v));
      // Evaluate the expression tree with the operands' values.
      std::function<Sym(AffineExpr)> eval = [&](AffineExpr e) -> Sym {
        if (auto c = dyn_cast<AffineConstantExpr>(e))
          return constant(c.getValue());
        if (auto d = dyn_cast<AffineDimExpr>(e))
          return operands[d.getPosition()];
        if (auto s = dyn_cast<AffineSymbolExpr>(e))
          return operands[apply.getMap().getNumDims() + s.getPosition()];
        auto bin = cast<AffineBinaryOpExpr>(e);
        Sym l = eval(bin.getLHS()), r = eval(bin.getRHS());
        switch (e.getKind()) {
        case AffineExprKind::Add:
          return add(l, r, env);
        case AffineExprKind::Mul:
          return mul(l, r, env);
        case AffineExprKind::FloorDiv:
          return divide(l, r, Rounding::Floor, env);
        case AffineExprKind::CeilDiv:
          return divide(l, r, Rounding::Ceil, env);
        case AffineExprKind::Mod:
          return remainder(l, r, env);
        default:
          return std::nullopt;
        }
      };
      if (apply.getMap().getNumResults() == 1)
        value = eval(apply.getMap().getResult(0));
    } else if (auto select = dyn_cast<arith::SelectOp>(op)) {
      value = pick(scalar(select.getCondition()),
                   checked(select.getCondition(), select.getTrueValue(),
                           /*whenTrue=*/true),
                   checked(select.getCondition(), select.getFalseValue(),
                           /*whenTrue=*/false),
                   env);
    } else {
      SmallVector<Sym> operands;
      for (Value v : op->getOperands())
        operands.push_back(scalar(v));
      value = applyScalar(op, operands, env);
    }
    if (value)
      scalars_[op->getResult(0)] = *value;
    return;
  }
  visitShapes(op);
  visitElements(op);
}

// The lowering guards an extent read from tensor data with
// select(x < lo || x > hi, fallback, x) (RuntimeChecks.cpp, next to the
// run-time check that refuses it): where the select yields x, x is within
// [lo, hi] even when nothing else is known about it.
std::optional<SymbolicInt> ExtentEvaluator::checked(Value cond, Value v,
                                                    bool whenTrue) const {
  Sym value = scalar(v);
  auto any = cond.getDefiningOp<arith::OrIOp>();
  if (whenTrue || !any)
    return value;
  std::optional<int64_t> lo, hi;
  for (Value side : any->getOperands()) {
    auto cmp = side.getDefiningOp<arith::CmpIOp>();
    Sym bound = cmp ? scalar(cmp.getRhs()) : Sym();
    if (!cmp || cmp.getLhs() != v || !isConst(bound))
      return value;
    if (cmp.getPredicate() == arith::CmpIPredicate::slt)
      lo = bound->lo; // x < lo fails the guard
    else if (cmp.getPredicate() == arith::CmpIPredicate::sgt)
      hi = bound->lo;
    else
      return value;
  }
  if (!lo || !hi)
    return value;
  Env env{ctx_, ranges_};
  if (!value)
    return make(AffineExpr(), *lo, *hi, env);
  return make(value->expr, std::max(value->lo, *lo), std::min(value->hi, *hi),
              env);
}

void ExtentEvaluator::visitShapes(Operation *op) {
  Env env{ctx_, ranges_};
  for (OpResult result : op->getResults()) {
    auto type = dyn_cast<ShapedType>(result.getType());
    if (!type || !type.hasRank())
      continue;
    SmallVector<Sym> dims(type.getRank());
    auto fromSizes = [&](ArrayRef<OpFoldResult> sizes) {
      if (sizes.size() != dims.size())
        return;
      for (auto [d, size] : llvm::enumerate(sizes)) {
        if (auto attr = dyn_cast<Attribute>(size))
          dims[d] = constantOf(attr, env);
        else
          dims[d] = scalar(cast<Value>(size));
      }
    };
    auto fromDynamic = [&](ValueRange dynamic) {
      unsigned next = 0;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d) && next < dynamic.size())
          dims[d] = scalar(dynamic[next++]);
    };
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
      if (result.getResultNumber() < unsigned(dps.getNumDpsInits()))
        for (int64_t d = 0; d < type.getRank(); ++d)
          dims[d] = dim(dps.getDpsInits()[result.getResultNumber()], d);
    } else if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
      fromDynamic(empty.getDynamicSizes());
    } else if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      fromDynamic(alloc.getDynamicSizes());
    } else if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
      fromDynamic(alloca.getDynamicSizes());
    } else if (isa<tensor::CastOp, memref::CastOp, bufferization::ToTensorOp,
                   bufferization::ToBufferOp>(op)) {
      for (int64_t d = 0; d < type.getRank(); ++d)
        dims[d] = dim(op->getOperand(0), d);
    } else if (auto reshape = dyn_cast<tensor::ReshapeOp>(op)) {
      if (const Elements *shape = elements(reshape.getShape()))
        if (shape->size() == dims.size())
          for (size_t d = 0; d < dims.size(); ++d)
            dims[d] = (*shape)[d];
      // The run-time count check makes the element counts equal, so an
      // extent read from data is at most the source's count when the
      // source is not empty (then no other extent is 0).
      Sym count = constant(1);
      auto source = cast<ShapedType>(reshape.getSource().getType());
      for (int64_t d = 0; d < source.getRank(); ++d)
        count = mul(count, dim(reshape.getSource(), d), env);
      bool nonEmpty = count && count->lo >= 1;
      for (Sym &d : dims)
        if (nonEmpty && (!d || !d->expr) && (!d || d->hi > count->hi))
          d = make(AffineExpr(), d ? std::max<int64_t>(d->lo, 0) : 0, count->hi,
                   env);
    } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      fromSizes(expand.getMixedOutputShape());
    } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
      for (auto [d, group] :
           llvm::enumerate(collapse.getReassociationIndices())) {
        Sym product = constant(1);
        for (int64_t src : group)
          product = mul(product, dim(collapse.getSrc(), src), env);
        dims[d] = product;
      }
    } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
      llvm::SmallBitVector dropped = slice.getDroppedDims();
      SmallVector<OpFoldResult> kept;
      for (auto [d, size] : llvm::enumerate(slice.getMixedSizes()))
        if (!dropped.test(d))
          kept.push_back(size);
      fromSizes(kept);
    } else if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (d != int64_t(concat.getDim())) {
          dims[d] = dim(concat.getInputs().front(), d);
          continue;
        }
        Sym sum = constant(0);
        for (Value input : concat.getInputs())
          sum = add(sum, dim(input, d), env);
        dims[d] = sum;
      }
    } else if (auto pad = dyn_cast<tensor::PadOp>(op)) {
      auto valueOf = [&](OpFoldResult f) -> Sym {
        if (auto attr = dyn_cast<Attribute>(f))
          return constantOf(attr, env);
        return scalar(cast<Value>(f));
      };
      for (int64_t d = 0; d < type.getRank(); ++d)
        dims[d] = add(
            add(dim(pad.getSource(), d), valueOf(pad.getMixedLowPad()[d]), env),
            valueOf(pad.getMixedHighPad()[d]), env);
    } else if (auto generate = dyn_cast<tensor::GenerateOp>(op)) {
      fromDynamic(generate.getDynamicExtents());
    } else if (auto splat = dyn_cast<tensor::SplatOp>(op)) {
      fromDynamic(splat.getDynamicSizes());
    }
    // What the type says wins over what was derived.
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (!type.isDynamicDim(d))
        dims[d] = constant(type.getDimSize(d));
    dims_[result] = std::move(dims);
  }
}

void ExtentEvaluator::visitElements(Operation *op) {
  if (op->getNumResults() != 1)
    return;
  Value result = op->getResult(0);
  std::optional<int64_t> count = smallIntTensor(result.getType());
  if (!count)
    return;
  auto type = cast<RankedTensorType>(result.getType());
  Elements out;
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    SmallVector<int64_t> values;
    if (!integerValues(c.getValue(), values))
      return;
    for (int64_t x : values)
      out.push_back(constant(x));
  } else if (auto from = dyn_cast<tensor::FromElementsOp>(op)) {
    for (Value v : from.getElements())
      out.push_back(scalar(v));
  } else if (isa<tensor::ReshapeOp, tensor::ExpandShapeOp,
                 tensor::CollapseShapeOp, tensor::CastOp>(op)) {
    // Same elements, same row-major order.
    const Elements *src = elements(op->getOperand(0));
    if (!src || int64_t(src->size()) != *count)
      return;
    out = *src;
  } else if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    // Walk the result in order, taking each element from its input.
    out.assign(*count, std::nullopt);
    int64_t axis = concat.getDim(), offset = 0;
    for (Value input : concat.getInputs()) {
      const Elements *src = elements(input);
      auto inType = cast<RankedTensorType>(input.getType());
      if (!src)
        return;
      for (int64_t i = 0; i < int64_t(src->size()); ++i) {
        SmallVector<int64_t> index = delinearize(i, inType.getShape());
        index[axis] += offset;
        out[linearize(index, type.getShape())] = (*src)[i];
      }
      offset += inType.getDimSize(axis);
    }
  } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    const Elements *src = elements(slice.getSource());
    auto srcType = cast<RankedTensorType>(slice.getSource().getType());
    if (!src || !slice.hasUnitStride() ||
        ShapedType::isDynamicShape(slice.getStaticOffsets()))
      return;
    ArrayRef<int64_t> offsets = slice.getStaticOffsets();
    ArrayRef<int64_t> sizes = slice.getStaticSizes();
    for (int64_t i = 0, n = ShapedType::getNumElements(sizes); i < n; ++i) {
      SmallVector<int64_t> index = delinearize(i, sizes);
      for (size_t d = 0; d < index.size(); ++d)
        index[d] += offsets[d];
      out.push_back((*src)[linearize(index, srcType.getShape())]);
    }
  } else if (isa<linalg::LinalgOp>(op)) {
    std::optional<Elements> values = evaluateLinalg(op);
    if (!values)
      return;
    out = std::move(*values);
  } else {
    return;
  }
  if (int64_t(out.size()) == *count)
    elements_[result] = std::move(out);
}

// Runs a small linalg op point by point: operands from their elements
// through the indexing maps, the body on those values.
std::optional<ExtentEvaluator::Elements>
ExtentEvaluator::evaluateLinalg(Operation *op) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  if (linalgOp.getNumDpsInits() != 1 || !linalgOp.hasPureTensorSemantics())
    return std::nullopt;
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  int64_t points = 1;
  for (int64_t r : ranges) {
    if (ShapedType::isDynamic(r) || r < 0)
      return std::nullopt;
    points *= r;
    if (points > kMaxPoints)
      return std::nullopt;
  }
  Value init = linalgOp.getDpsInits()[0];
  auto initType = cast<RankedTensorType>(init.getType());
  Elements out(initType.getNumElements());
  if (const Elements *initial = elements(init))
    out = *initial;
  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  Block *body = linalgOp.getBlock();
  Env env{ctx_, ranges_};
  for (int64_t p = 0; p < points; ++p) {
    SmallVector<int64_t> point = delinearize(p, ranges);
    llvm::DenseMap<Value, Sym> values; // the body's, at this point
    auto valueOf = [&](Value v) -> Sym {
      auto it = values.find(v);
      if (it != values.end())
        return it->second;
      return scalar(v);
    };
    int64_t outIndex = 0;
    for (OpOperand &operand : op->getOpOperands()) {
      unsigned n = operand.getOperandNumber();
      SmallVector<int64_t> index = llvm::to_vector(maps[n].compose(point));
      auto operandType = dyn_cast<RankedTensorType>(operand.get().getType());
      Value arg = body->getArgument(n);
      if (!operandType) { // a scalar operand
        values[arg] = scalar(operand.get());
        continue;
      }
      int64_t linear = linearize(index, operandType.getShape());
      if (linalgOp.isDpsInit(&operand)) {
        outIndex = linear;
        values[arg] = out[linear];
        continue;
      }
      const Elements *elems = elements(operand.get());
      if (!elems || !isIntegerLike(operandType.getElementType()))
        return std::nullopt;
      values[arg] = (*elems)[linear];
    }
    for (Operation &inner : *body) {
      if (auto yield = dyn_cast<linalg::YieldOp>(inner)) {
        out[outIndex] = valueOf(yield.getOperand(0));
        break;
      }
      if (inner.getNumResults() != 1)
        return std::nullopt;
      Sym value;
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        value = constant(point[index.getDim()]);
      } else if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
        const Elements *elems = elements(extract.getTensor());
        auto type = cast<RankedTensorType>(extract.getTensor().getType());
        SmallVector<int64_t> index;
        for (Value i : extract.getIndices())
          if (Sym s = valueOf(i); isConst(s))
            index.push_back(s->lo);
        if (!elems || index.size() != size_t(type.getRank()))
          return std::nullopt;
        for (auto [i, extent] : llvm::zip(index, type.getShape()))
          if (i < 0 || i >= extent)
            return std::nullopt; // the run-time check's business
        value = (*elems)[linearize(index, type.getShape())];
      } else if (auto c = dyn_cast<arith::ConstantOp>(inner)) {
        value = constantOf(c.getValue(), env);
      } else {
        SmallVector<Sym> operands;
        for (Value v : inner.getOperands())
          operands.push_back(valueOf(v));
        value = applyScalar(&inner, operands, env);
      }
      values[inner.getResult(0)] = value;
    }
  }
  return out;
}

} // namespace strata
