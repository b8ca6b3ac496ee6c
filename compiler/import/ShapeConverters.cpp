//===- ShapeConverters.cpp - ONNX constant, shape and data-movement ops ---===//
// SPDX-License-Identifier: Apache-2.0
// Result types are computed here from static dims and known shape values,
// so a model whose inputs are static imports fully typed.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "compiler/import/TensorConversion.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include "llvm/Support/MathExtras.h"

#include <onnx/onnx_pb.h>

#include <cmath>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

static constexpr int64_t kDyn = ShapedType::kDynamic;
/// Largest extent a computed dim may have (2^40), as for graph inputs.
static constexpr int64_t kMaxExtent = int64_t{1} << 40;

// Known ints as dims: unknown entries become dynamic.
static SmallVector<int64_t> knownAsDims(const KnownInts &known) {
  SmallVector<int64_t> dims;
  for (const std::optional<int64_t> &k : known)
    dims.push_back(k ? *k : kDyn);
  return dims;
}

// A shape input: known entries (possibly partial), and its static length.
static FailureOr<KnownInts> shapeInput(ImportContext &ctx, unsigned i,
                                       StringRef what) {
  if (const std::optional<KnownInts> &known = ctx.inputKnown(i))
    return *known;
  RankedTensorType type = ctx.inputType(i);
  if (!type || type.getRank() != 1 || type.isDynamicDim(0))
    return ctx.error() << "'" << what
                       << "' must be a 1-D tensor of static length";
  return KnownInts(type.getDimSize(0), std::nullopt);
}

// The shape-like second operand |what| of an op on input 0 (Expand's
// shape, Tile's repeats), once both inputs are known to be there.
static FailureOr<KnownInts> shapeOperand(ImportContext &ctx, StringRef what) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  return shapeInput(ctx, 1, what);
}

// Sets the output to an |OpT| of input 0 with |dims| and input 1 (the shape
// operand) as an i64 vector.
template <typename OpT>
static LogicalResult setShapedOutput(ImportContext &ctx,
                                     ArrayRef<int64_t> dims) {
  auto type = RankedTensorType::get(dims, ctx.inputType(0).getElementType());
  ctx.setOutput(0, OpT::create(ctx.b(), ctx.loc(), type, ctx.input(0),
                               ctx.asI64Vector(ctx.input(1))));
  return success();
}

// A kept input dim |d| of |in| as a reshape source: fixed if static.
static DimSource keptDim(RankedTensorType in, int64_t d) {
  return in.isDynamicDim(d) ? DimSource::fromInput(d)
                            : DimSource::fixed(in.getDimSize(d));
}

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

LogicalResult convertConstant(ImportContext &ctx) {
  const onnx::NodeProto &node = ctx.node();
  if (node.attribute_size() != 1)
    return ctx.error() << "expected exactly one value attribute";
  const onnx::AttributeProto &a = node.attribute(0);
  OpBuilder &b = ctx.b();
  Value v;
  if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) {
    // Convert the attribute's tensor in place: the weight blob may point
    // into its raw_data, so it must not be a temporary copy.
    const onnx::TensorProto &tensor = a.t();
    std::string name = !tensor.name().empty() ? tensor.name()
                       : node.output_size()    ? node.output(0)
                                               : node.name();
    llvm::Expected<ElementsAttr> attr =
        convertTensor(tensor, ctx.storage(), ctx.context(), name);
    if (!attr)
      return ctx.error() << llvm::toString(attr.takeError());
    v = ConstantOp::create(b, ctx.loc(), *attr);
  } else if (a.name() == "value_float" &&
             a.type() == onnx::AttributeProto::FLOAT) {
    v = ctx.constScalar(b.getF32Type(), a.f());
  } else if (a.name() == "value_int" && a.type() == onnx::AttributeProto::INT) {
    v = ctx.constI64({a.i()}, /*scalar=*/true);
  } else if (a.name() == "value_ints" &&
             a.type() == onnx::AttributeProto::INTS) {
    v = ctx.constI64(SmallVector<int64_t>(a.ints().begin(), a.ints().end()));
  } else if (a.name() == "value_floats" &&
             a.type() == onnx::AttributeProto::FLOATS) {
    SmallVector<float> values(a.floats().begin(), a.floats().end());
    auto type = RankedTensorType::get({(int64_t)values.size()}, b.getF32Type());
    v = ConstantOp::create(b, ctx.loc(),
                           DenseElementsAttr::get(type, ArrayRef(values)));
  } else {
    return ctx.error() << "unsupported value attribute '" << a.name() << "'";
  }
  ctx.setOutput(0, v);
  return success();
}

//===----------------------------------------------------------------------===//
// Shape, Size
//===----------------------------------------------------------------------===//

LogicalResult convertShape(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  int64_t rank = in.getRank();
  FailureOr<int64_t> start = ctx.intAttr("start", 0);
  FailureOr<int64_t> end = ctx.intAttr("end", rank);
  if (failed(start) || failed(end))
    return failure();
  auto clampBound = [&](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  int64_t s = clampBound(*start), e = std::max(clampBound(*end), s);
  KnownInts known;
  for (int64_t d = s; d < e; ++d)
    known.push_back(in.isDynamicDim(d) ? std::nullopt
                                       : std::optional(in.getDimSize(d)));
  auto type = RankedTensorType::get({e - s}, ctx.b().getI64Type());
  Value v = ShapeOp::create(ctx.b(), ctx.loc(), type, ctx.input(0),
                            ctx.b().getI64IntegerAttr(s),
                            ctx.b().getI64IntegerAttr(e));
  ctx.setOutput(0, v, known);
  return success();
}

LogicalResult convertSize(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  std::optional<int64_t> count =
      staticElementCount(ctx.inputType(0).getShape());
  if (!count)
    return ctx.error() << "the element count of a dynamic tensor is not "
                          "supported";
  ctx.setOutput(0, ctx.constI64({*count}, /*scalar=*/true));
  return success();
}

//===----------------------------------------------------------------------===//
// Reshape family
//===----------------------------------------------------------------------===//

// Resolves ONNX Reshape's target |known| against |in|: 0 copies the input
// dim (unless allowzero), -1 is inferred when everything else is static.
static FailureOr<SmallVector<int64_t>>
reshapeDims(ImportContext &ctx, RankedTensorType in, const KnownInts &known,
            bool allowZero) {
  SmallVector<int64_t> dims;
  int inferIndex = -1;
  for (auto [i, k] : llvm::enumerate(known)) {
    if (!k) {
      dims.push_back(kDyn);
    } else if (*k == 0 && !allowZero) {
      if ((int64_t)i >= in.getRank())
        return ctx.error() << "shape entry " << i
                           << " is 0 but the input has rank " << in.getRank();
      dims.push_back(in.getDimSize(i));
    } else if (*k == -1) {
      if (inferIndex >= 0)
        return ctx.error() << "shape has more than one -1";
      inferIndex = i;
      dims.push_back(kDyn);
    } else if (*k < 0) {
      return ctx.error() << "invalid shape entry " << *k;
    } else {
      dims.push_back(*k);
    }
  }
  std::optional<int64_t> total = staticElementCount(in.getShape());
  if (inferIndex >= 0 && total) {
    int64_t rest = 1;
    bool restStatic = true;
    for (auto [i, d] : llvm::enumerate(dims)) {
      if ((int)i == inferIndex)
        continue;
      if (ShapedType::isDynamic(d))
        restStatic = false;
      else if (llvm::MulOverflow(rest, d, rest))
        return ctx.error() << "cannot reshape " << formatShape(in.getShape())
                           << " to " << formatShape(dims)
                           << " (too many elements)";
    }
    if (restStatic) {
      if (rest == 0 || *total % rest != 0)
        return ctx.error() << "cannot reshape " << formatShape(in.getShape())
                           << " to " << formatShape(dims);
      dims[inferIndex] = *total / rest;
    }
  }
  std::optional<int64_t> outTotal = staticElementCount(dims);
  bool outStatic = llvm::none_of(dims, ShapedType::isDynamic);
  if (total && outStatic && !outTotal)
    return ctx.error() << "cannot reshape " << formatShape(in.getShape())
                       << " (" << *total << " elements) to "
                       << formatShape(dims) << " (too many elements)";
  if (total && outTotal && *total != *outTotal)
    return ctx.error() << "cannot reshape " << formatShape(in.getShape())
                       << " (" << *total << " elements) to "
                       << formatShape(dims) << " (" << *outTotal
                       << " elements)";
  return dims;
}

LogicalResult convertReshape(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  FailureOr<int64_t> allowZero = ctx.intAttr("allowzero", 0);
  FailureOr<KnownInts> target = shapeInput(ctx, 1, "shape");
  if (failed(allowZero) || failed(target))
    return failure();
  FailureOr<SmallVector<int64_t>> dims =
      reshapeDims(ctx, in, *target, *allowZero != 0);
  if (failed(dims))
    return failure();
  auto type = RankedTensorType::get(*dims, in.getElementType());
  Value shape;
  if (!type.hasStaticShape())
    shape = ctx.asI64Vector(ctx.input(1));
  auto v = ReshapeOp::create(ctx.b(), ctx.loc(), type, ctx.input(0), shape);
  if (shape && *allowZero)
    v.setAllowZero(true);
  ctx.setOutput(0, v, ctx.inputKnown(0));
  return success();
}

LogicalResult convertFlatten(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", 1);
  if (failed(axisAttr))
    return failure();
  int64_t rank = in.getRank();
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  if (axis < 0 || axis > rank)
    return ctx.error() << "'axis' " << *axisAttr << " is out of range for rank "
                       << rank;
  std::optional<int64_t> outer =
      staticElementCount(in.getShape().take_front(axis));
  std::optional<int64_t> inner =
      staticElementCount(in.getShape().drop_front(axis));
  SmallVector<int64_t> dims = {outer ? *outer : kDyn, inner ? *inner : kDyn};
  if (!outer && !inner)
    return ctx.error() << "flattening " << formatShape(in.getShape())
                       << " needs a run-time product of dims, which is not "
                          "supported";
  // One side is static; the other is inferred with -1 at run time.
  SmallVector<DimSource> sources = {
      DimSource::fixed(outer ? *outer : -1),
      DimSource::fixed(inner ? *inner : -1)};
  ctx.setOutput(0, ctx.reshapeTo(ctx.input(0), dims, sources));
  return success();
}

// Squeeze/Unsqueeze axes: attribute before opset 13, input since.
static FailureOr<std::optional<SmallVector<int64_t>>>
squeezeAxes(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  return ctx.intsAttrOrInput("axes", 13);
}

LogicalResult convertSqueeze(ImportContext &ctx) {
  auto axes = squeezeAxes(ctx);
  if (failed(axes))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  int64_t rank = in.getRank();
  SmallVector<bool> drop(rank, false);
  if (*axes) {
    for (int64_t a : **axes) {
      std::optional<int64_t> n = normalizeAxis(a, rank);
      if (!n)
        return ctx.error() << "axis " << a << " is out of range for rank "
                           << rank;
      if (!in.isDynamicDim(*n) && in.getDimSize(*n) != 1)
        return ctx.error() << "cannot squeeze dim " << *n << " of size "
                           << in.getDimSize(*n);
      drop[*n] = true;
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) {
      if (in.isDynamicDim(d))
        return ctx.error() << "squeezing without axes needs static dims";
      drop[d] = in.getDimSize(d) == 1;
    }
  }
  SmallVector<int64_t> dims;
  SmallVector<DimSource> sources;
  for (int64_t d = 0; d < rank; ++d) {
    if (drop[d])
      continue;
    dims.push_back(in.getDimSize(d));
    sources.push_back(keptDim(in, d));
  }
  std::optional<KnownInts> known = ctx.inputKnown(0);
  ctx.setOutput(0, ctx.reshapeTo(ctx.input(0), dims, sources), known);
  return success();
}

LogicalResult convertUnsqueeze(ImportContext &ctx) {
  auto axes = squeezeAxes(ctx);
  if (failed(axes))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  if (!*axes)
    return ctx.error() << "missing 'axes'";
  int64_t outRank = in.getRank() + (int64_t)(*axes)->size();
  SmallVector<bool> inserted(outRank, false);
  for (int64_t a : **axes) {
    std::optional<int64_t> n = normalizeAxis(a, outRank);
    if (!n || inserted[*n])
      return ctx.error() << "invalid or repeated axis " << a << " for rank "
                         << outRank;
    inserted[*n] = true;
  }
  SmallVector<int64_t> dims;
  SmallVector<DimSource> sources;
  int64_t next = 0;
  for (int64_t d = 0; d < outRank; ++d) {
    if (inserted[d]) {
      dims.push_back(1);
      sources.push_back(DimSource::fixed(1));
      continue;
    }
    dims.push_back(in.getDimSize(next));
    sources.push_back(keptDim(in, next));
    ++next;
  }
  ctx.setOutput(0, ctx.reshapeTo(ctx.input(0), dims, sources),
                ctx.inputKnown(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Transpose, Concat
//===----------------------------------------------------------------------===//

LogicalResult convertTranspose(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  auto permAttr = ctx.intsAttr("perm");
  if (failed(permAttr))
    return failure();
  SmallVector<int64_t> perm;
  if (*permAttr) {
    perm = **permAttr;
  } else {
    for (int64_t d = in.getRank() - 1; d >= 0; --d)
      perm.push_back(d);
  }
  if ((int64_t)perm.size() != in.getRank())
    return ctx.error() << "'perm' has " << perm.size()
                       << " entries for rank " << in.getRank();
  SmallVector<int64_t> dims;
  SmallVector<bool> seen(in.getRank(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return ctx.error() << "'perm' is not a permutation";
    seen[p] = true;
    dims.push_back(in.getDimSize(p));
  }
  auto type = RankedTensorType::get(dims, in.getElementType());
  ctx.setOutput(0, TransposeOp::create(ctx.b(), ctx.loc(), type, ctx.input(0),
                                       perm));
  return success();
}

// Pad: the pads from the attribute (before opset 11) or the constant input,
// for every dim or (opset 18) the dims listed in `axes`; the constant
// value from the attribute or the optional 0-D input.
LogicalResult convertPad(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  const int64_t rank = in.getRank();
  FailureOr<std::string> mode = ctx.stringAttr("mode", "constant");
  if (failed(mode))
    return failure();
  SmallVector<int64_t> given;
  Value value;
  OpBuilder &b = ctx.b();
  if (ctx.opset() < 11) {
    FailureOr<std::optional<SmallVector<int64_t>>> pads = ctx.intsAttr("pads");
    FailureOr<float> v = ctx.floatAttr("value", 0.0f);
    if (failed(pads) || failed(v))
      return failure();
    if (!*pads)
      return ctx.error() << "expected attribute 'pads'";
    given = **pads;
    if (*v != 0.0f)
      value = ctx.constScalar(in.getElementType(), *v);
  } else {
    if (!ctx.hasInput(1))
      return ctx.error() << "expected input 'pads'";
    std::optional<SmallVector<int64_t>> pads = ctx.inputConstInts(1);
    if (!pads)
      return ctx.error() << "'pads' must be a constant";
    given = *pads;
    if (ctx.hasInput(2)) {
      value = ctx.input(2);
      if (typeOf(value).getRank() != 0)
        value = ctx.reshapeTo(value, {}, {});
    }
  }
  SmallVector<int64_t> axes;
  if (ctx.hasInput(3)) {
    std::optional<SmallVector<int64_t>> a = ctx.inputConstInts(3);
    if (!a)
      return ctx.error() << "'axes' must be a constant";
    FailureOr<SmallVector<int64_t>> n = ctx.normalizedAxes(*a, rank);
    if (failed(n))
      return failure();
    axes = *n;
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  const int64_t n = axes.size();
  if (static_cast<int64_t>(given.size()) != 2 * n)
    return ctx.error() << "expected " << 2 * n << " pads, got " << given.size();
  for (int64_t p : given)
    if (p > (int64_t{1} << 30) || p < -(int64_t{1} << 30))
      return ctx.error() << "pad " << p << " is out of range";
  SmallVector<int64_t> pads(2 * rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    pads[axes[i]] = given[i];
    pads[rank + axes[i]] = given[n + i];
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t s = in.getDimSize(d);
    if (ShapedType::isDynamic(s)) {
      shape.push_back(s);
      continue;
    }
    const int64_t size = s + pads[d] + pads[rank + d];
    if (size < 0)
      return ctx.error() << "the pads of dim " << d << " remove more than its "
                         << s << " elements";
    shape.push_back(size);
  }
  ctx.setOutput(0, PadOp::create(b, ctx.loc(),
                                 RankedTensorType::get(shape,
                                                       in.getElementType()),
                                 ctx.input(0), value,
                                 b.getDenseI64ArrayAttr(pads),
                                 b.getStringAttr(*mode)));
  return success();
}

// CenterCropPad: each listed dim cropped around its center or padded with
// zeros on both sides (the odd element after), to the constant `shape`.
LogicalResult convertCenterCropPad(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  const int64_t rank = in.getRank();
  std::optional<SmallVector<int64_t>> target = ctx.inputConstInts(1);
  if (!target)
    return ctx.error() << "'shape' must be a constant";
  FailureOr<std::optional<SmallVector<int64_t>>> axesAttr =
      ctx.intsAttr("axes");
  if (failed(axesAttr))
    return failure();
  SmallVector<int64_t> axes;
  if (*axesAttr) {
    FailureOr<SmallVector<int64_t>> n = ctx.normalizedAxes(**axesAttr, rank);
    if (failed(n))
      return failure();
    axes = *n;
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (target->size() != axes.size())
    return ctx.error() << "'shape' has " << target->size() << " entries for "
                       << axes.size() << " axes";
  SmallVector<int64_t> pads(2 * rank, 0), shape(in.getShape());
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t d = axes[i], s = in.getDimSize(d), t = (*target)[i];
    if (ShapedType::isDynamic(s) || t < 0 || t > (int64_t{1} << 30))
      return ctx.error() << "expected a static dim " << d
                         << " and a non-negative target, got "
                         << formatShape(in.getShape()) << " and " << t;
    const int64_t begin = t >= s ? (t - s) / 2 : -((s - t) / 2);
    pads[d] = begin;
    pads[rank + d] = t - s - begin;
    shape[d] = t;
  }
  OpBuilder &b = ctx.b();
  ctx.setOutput(0, PadOp::create(b, ctx.loc(),
                                 RankedTensorType::get(shape,
                                                       in.getElementType()),
                                 ctx.input(0), Value(),
                                 b.getDenseI64ArrayAttr(pads),
                                 b.getStringAttr("constant")));
  return success();
}

// DepthToSpace and SpaceToDepth on [N, C, H, W] with block b: a reshape to
// 6-D, a transpose and a reshape back, as the spec defines them (DCR: the
// depth splits block-row, block-column, channel; CRD: channel first).
// C, H and W must be static; N may be dynamic.
LogicalResult convertDepthSpace(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  const bool toSpace = ctx.node().op_type() == "DepthToSpace";
  RankedTensorType in = ctx.inputType(0);
  FailureOr<int64_t> block = ctx.intAttr("blocksize", 0);
  FailureOr<std::string> mode = ctx.stringAttr("mode", "DCR");
  if (failed(block) || failed(mode))
    return failure();
  if (*mode != "DCR" && *mode != "CRD")
    return ctx.error() << "'mode' must be DCR or CRD, got '" << *mode << "'";
  if (in.getRank() != 4 || ShapedType::isDynamicShape(in.getShape().drop_front()))
    return ctx.error() << "expected [N, C, H, W] with static C, H, W, got "
                       << formatShape(in.getShape());
  const int64_t b = *block, n = in.getDimSize(0), c = in.getDimSize(1),
                h = in.getDimSize(2), w = in.getDimSize(3);
  if (b < 1 || (toSpace ? c % (b * b) != 0 : h % b != 0 || w % b != 0))
    return ctx.error() << "'blocksize' " << b << " does not divide "
                       << formatShape(in.getShape());
  SmallVector<int64_t> split, perm, merged;
  if (toSpace && *mode == "DCR") {
    split = {n, b, b, c / (b * b), h, w};
    perm = {0, 3, 4, 1, 5, 2};
  } else if (toSpace) {
    split = {n, c / (b * b), b, b, h, w};
    perm = {0, 1, 4, 2, 5, 3};
  } else {
    split = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
  }
  merged = toSpace ? SmallVector<int64_t>{n, c / (b * b), h * b, w * b}
                   : SmallVector<int64_t>{n, c * b * b, h / b, w / b};
  auto sources = [](ArrayRef<int64_t> dims) {
    SmallVector<DimSource> s{DimSource::fromInput(0)};
    for (int64_t d : dims.drop_front())
      s.push_back(DimSource::fixed(d));
    return s;
  };
  Value x = ctx.reshapeTo(ctx.input(0), split, sources(split));
  SmallVector<int64_t> permuted;
  for (int64_t p : perm)
    permuted.push_back(split[p]);
  x = TransposeOp::create(
      ctx.b(), ctx.loc(),
      RankedTensorType::get(permuted, in.getElementType()), x, perm);
  ctx.setOutput(0, ctx.reshapeTo(x, merged, sources(merged)));
  return success();
}

LogicalResult convertConcat(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", 0);
  if (failed(axisAttr))
    return failure();
  SmallVector<Value> inputs;
  std::optional<KnownInts> known = KnownInts();
  for (int i = 0; i < ctx.node().input_size(); ++i) {
    if (!ctx.hasInput(i))
      continue;
    // Empty pieces (ONNX allows 0-length inputs) contribute nothing.
    RankedTensorType t = ctx.inputType(i);
    if (t.hasStaticShape() && t.getNumElements() == 0 && t.getRank() == 1)
      continue;
    inputs.push_back(ctx.input(i));
    const std::optional<KnownInts> &k = ctx.inputKnown(i);
    if (known && k)
      known->append(k->begin(), k->end());
    else
      known.reset();
  }
  if (inputs.empty())
    inputs.push_back(ctx.input(0));
  RankedTensorType first = typeOf(inputs[0]);
  std::optional<int64_t> axis = normalizeAxis(*axisAttr, first.getRank());
  if (!axis)
    return ctx.error() << "'axis' " << *axisAttr
                       << " is out of range for rank " << first.getRank();
  SmallVector<int64_t> dims(first.getShape());
  for (Value v : llvm::drop_begin(inputs)) {
    RankedTensorType t = typeOf(v);
    if (t.getRank() != first.getRank())
      return ctx.error() << "inputs have different ranks";
    for (int64_t d = 0; d < t.getRank(); ++d) {
      int64_t e = t.getDimSize(d);
      if (d == *axis)
        dims[d] = ShapedType::isDynamic(dims[d]) || ShapedType::isDynamic(e)
                      ? kDyn
                      : dims[d] + e;
      else if (ShapedType::isDynamic(dims[d]))
        dims[d] = e;
      else if (!ShapedType::isDynamic(e) && e != dims[d])
        return ctx.error() << "input shapes " << formatShape(first.getShape())
                           << " and " << formatShape(t.getShape())
                           << " differ outside axis " << *axis;
    }
  }
  if (inputs.size() == 1) {
    ctx.setOutput(0, inputs[0], known);
    return success();
  }
  auto type = RankedTensorType::get(dims, first.getElementType());
  ctx.setOutput(0,
                ConcatOp::create(ctx.b(), ctx.loc(), type, inputs,
                                 ctx.b().getI64IntegerAttr(*axis)),
                known);
  return success();
}

//===----------------------------------------------------------------------===//
// Slice, Split
//===----------------------------------------------------------------------===//

LogicalResult convertSlice(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  int64_t rank = in.getRank();
  KnownInts starts, ends, steps;
  SmallVector<int64_t> axes;
  if (ctx.opset() < 10) {
    auto s = ctx.intsAttr("starts"), e = ctx.intsAttr("ends"),
         a = ctx.intsAttr("axes");
    if (failed(s) || failed(e) || failed(a) || !*s || !*e)
      return failed(s) || failed(e) || failed(a)
                 ? failure()
                 : LogicalResult(ctx.error() << "missing 'starts'/'ends'");
    for (int64_t v : **s)
      starts.push_back(v);
    for (int64_t v : **e)
      ends.push_back(v);
    if (*a)
      axes = **a;
  } else {
    if (failed(ctx.requireInputs(3)))
      return failure();
    FailureOr<KnownInts> s = shapeInput(ctx, 1, "starts");
    FailureOr<KnownInts> e = shapeInput(ctx, 2, "ends");
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (ctx.hasInput(3)) {
      std::optional<SmallVector<int64_t>> a = ctx.inputConstInts(3);
      if (!a)
        return ctx.error() << "'axes' must be a constant";
      axes = *a;
    }
    if (ctx.hasInput(4)) {
      FailureOr<KnownInts> st = shapeInput(ctx, 4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (axes.empty())
    for (int64_t i = 0; i < (int64_t)starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), std::optional<int64_t>(1));
  if (starts.size() != axes.size() || ends.size() != axes.size() ||
      steps.size() != axes.size())
    return ctx.error() << "'starts', 'ends', 'axes' and 'steps' must have the "
                          "same length";
  SmallVector<int64_t> dims(in.getShape());
  for (auto [i, a] : llvm::enumerate(axes)) {
    std::optional<int64_t> n = normalizeAxis(a, rank);
    if (!n)
      return ctx.error() << "axis " << a << " is out of range for rank "
                         << rank;
    a = *n;
    if (steps[i] && *steps[i] == 0)
      return ctx.error() << "'steps' must not be 0";
    if (starts[i] && ends[i] && steps[i] && !in.isDynamicDim(a))
      dims[a] = sliceExtent(in.getDimSize(a), *starts[i], *ends[i], *steps[i]);
    else
      dims[a] = kDyn;
  }
  // Known 1-D shape values slice at compile time.
  std::optional<KnownInts> known;
  const std::optional<KnownInts> &data = ctx.inputKnown(0);
  if (data && rank == 1 && starts[0] && ends[0] && steps[0]) {
    int64_t dim = data->size(), step = *steps[0];
    int64_t count = sliceExtent(dim, *starts[0], *ends[0], step);
    int64_t start = *starts[0] < 0 ? *starts[0] + dim : *starts[0];
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim)
                     : std::clamp<int64_t>(start, -1, dim - 1);
    known.emplace();
    for (int64_t k = 0; k < count; ++k)
      known->push_back((*data)[start + k * step]);
  }
  auto materialize = [&](const KnownInts &values, unsigned inputIndex) {
    if (ctx.opset() >= 10 && ctx.hasInput(inputIndex) &&
        !llvm::all_of(values, [](auto &v) { return v.has_value(); }))
      return ctx.asI64Vector(ctx.input(inputIndex));
    SmallVector<int64_t> v;
    for (const std::optional<int64_t> &k : values)
      v.push_back(k ? *k : 1);
    return ctx.constI64(v);
  };
  Value s = materialize(starts, 1), e = materialize(ends, 2),
        st = materialize(steps, 4);
  auto type = RankedTensorType::get(dims, in.getElementType());
  ctx.setOutput(0,
                SliceOp::create(ctx.b(), ctx.loc(), type, ctx.input(0), s, e,
                                st, ctx.b().getDenseI64ArrayAttr(axes)),
                known);
  return success();
}

LogicalResult convertSplit(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", 0);
  if (failed(axisAttr))
    return failure();
  std::optional<int64_t> axis = normalizeAxis(*axisAttr, in.getRank());
  if (!axis)
    return ctx.error() << "'axis' " << *axisAttr
                       << " is out of range for rank " << in.getRank();
  auto splitOrNone = ctx.intsAttrOrInput("split", 13);
  if (failed(splitOrNone))
    return failure();
  SmallVector<int64_t> sizes = splitOrNone->value_or(SmallVector<int64_t>());
  int64_t outputs = ctx.node().output_size();
  int64_t dim = in.getDimSize(*axis);
  if (sizes.empty()) {
    if (ShapedType::isDynamic(dim))
      return ctx.error() << "an even split of a dynamic dim is not supported";
    FailureOr<int64_t> numOutputs = ctx.intAttr("num_outputs", outputs);
    if (failed(numOutputs))
      return failure();
    if (*numOutputs <= 0 || *numOutputs != outputs)
      return ctx.error() << "expected " << outputs << " outputs";
    // Opset 18: the last chunk may be smaller.
    int64_t chunk = (dim + outputs - 1) / outputs;
    for (int64_t i = 0; i < outputs; ++i)
      sizes.push_back(std::min(chunk, std::max<int64_t>(dim - i * chunk, 0)));
  }
  if ((int64_t)sizes.size() != outputs)
    return ctx.error() << "'split' has " << sizes.size() << " entries for "
                       << outputs << " outputs";
  SmallVector<Type> types;
  for (int64_t size : sizes) {
    SmallVector<int64_t> dims(in.getShape());
    dims[*axis] = size;
    types.push_back(RankedTensorType::get(dims, in.getElementType()));
  }
  auto split = SplitOp::create(ctx.b(), ctx.loc(), types, ctx.input(0),
                               ctx.b().getI64IntegerAttr(*axis),
                               ctx.b().getDenseI64ArrayAttr(sizes));
  for (int64_t i = 0; i < outputs; ++i)
    ctx.setOutput(i, split.getResult(i));
  return success();
}

//===----------------------------------------------------------------------===//
// Expand, Tile, ConstantOfShape, Range
//===----------------------------------------------------------------------===//

LogicalResult convertExpand(ImportContext &ctx) {
  FailureOr<KnownInts> shape = shapeOperand(ctx, "shape");
  if (failed(shape))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  // Expand is bidirectional numpy broadcasting: a 1 in `shape` keeps the
  // input's extent, an unknown entry is dynamic unless the input fixes it.
  std::optional<SmallVector<int64_t>> dims =
      broadcastShapes(in.getShape(), knownAsDims(*shape));
  if (!dims)
    return ctx.error() << "cannot expand " << formatShape(in.getShape())
                       << " to " << formatShape(knownAsDims(*shape));
  return setShapedOutput<ExpandOp>(ctx, *dims);
}

LogicalResult convertTile(ImportContext &ctx) {
  FailureOr<KnownInts> repeats = shapeOperand(ctx, "repeats");
  if (failed(repeats))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  if ((int64_t)repeats->size() != in.getRank())
    return ctx.error() << "'repeats' has " << repeats->size()
                       << " entries for rank " << in.getRank();
  SmallVector<int64_t> dims;
  for (auto [d, r] : llvm::zip_equal(in.getShape(), *repeats)) {
    if (r && *r < 0)
      return ctx.error() << "'repeats' must be non-negative, got " << *r;
    int64_t extent = kDyn;
    if (r && !ShapedType::isDynamic(d) &&
        (llvm::MulOverflow(d, *r, extent) || extent > kMaxExtent)) {
      std::string list;
      for (auto [i, k] : llvm::enumerate(*repeats))
        list += (i ? ", " : "") + (k ? std::to_string(*k) : std::string("?"));
      return ctx.error() << "cannot tile " << formatShape(in.getShape())
                         << " by [" << list
                         << "]: the result has too many elements";
    }
    dims.push_back(extent);
  }
  return setShapedOutput<TileOp>(ctx, dims);
}

LogicalResult convertConstantOfShape(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<KnownInts> shape = shapeInput(ctx, 0, "input");
  if (failed(shape))
    return failure();
  Attribute value = ctx.b().getF32FloatAttr(0.0f);
  Type element = ctx.b().getF32Type();
  if (const onnx::AttributeProto *a = ctx.attr("value")) {
    if (a->type() != onnx::AttributeProto::TENSOR)
      return ctx.error() << "attribute 'value' must be TENSOR";
    llvm::Expected<ElementsAttr> attr =
        convertTensor(a->t(), ctx.storage(), ctx.context());
    if (!attr)
      return ctx.error() << llvm::toString(attr.takeError());
    if (attr->getNumElements() != 1)
      return ctx.error() << "attribute 'value' must hold one element";
    element = attr->getElementType();
    value = *attr->value_begin<Attribute>();
  }
  SmallVector<int64_t> dims = knownAsDims(*shape);
  for (int64_t d : dims)
    if (!ShapedType::isDynamic(d) && (d < 0 || d > kMaxExtent))
      return ctx.error() << "'input' must hold non-negative dims, got " << d;
  auto type = RankedTensorType::get(dims, element);
  if (type.hasStaticShape() && staticElementCount(dims)) {
    // A splat constant: stored once however large, visible to folding.
    auto splat = DenseElementsAttr::get(type, value);
    std::optional<KnownInts> known;
    auto i = dyn_cast<IntegerAttr>(value);
    if (i && type.getRank() <= 1 && type.getNumElements() <= kKnownIntsLimit)
      known = KnownInts(type.getNumElements(), i.getValue().getSExtValue());
    ctx.setOutput(0, ConstantOp::create(ctx.b(), ctx.loc(), splat), known);
    return success();
  }
  ctx.setOutput(0, ConstantOfShapeOp::create(ctx.b(), ctx.loc(), type,
                                             ctx.asI64Vector(ctx.input(0)),
                                             cast<TypedAttr>(value)));
  return success();
}

LogicalResult convertRange(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  Type element = ctx.inputType(0).getElementType();
  int64_t length = kDyn;
  std::optional<KnownInts> known;
  auto s = ctx.inputConstInts(0), l = ctx.inputConstInts(1),
       d = ctx.inputConstInts(2);
  std::optional<double> fs = ctx.inputConstFloat(0), fl = ctx.inputConstFloat(1),
                        fd = ctx.inputConstFloat(2);
  if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1) {
    int64_t start = (*s)[0], limit = (*l)[0], delta = (*d)[0];
    if (delta == 0)
      return ctx.error() << "'delta' must not be 0";
    // ceil((limit - start) / delta) in 128 bits: int64 extremes overflow.
    __int128 span = (__int128)limit - start;
    __int128 count = (span + delta + (delta > 0 ? -1 : 1)) / delta;
    if (count > kMaxExtent)
      return ctx.error() << "the range has " << (int64_t)std::min<__int128>(
                                                   count, INT64_MAX)
                         << " elements, more than supported";
    length = count < 0 ? 0 : (int64_t)count;
    if (length <= kKnownIntsLimit) {
      known.emplace();
      // Every element lies between start and limit, but i * delta alone
      // may not fit in 64 bits (start near INT64_MIN, a huge delta).
      for (int64_t i = 0; i < length; ++i)
        known->push_back((int64_t)((__int128)start + (__int128)i * delta));
    }
  } else if (fs && fl && fd) {
    if (*fd == 0.0)
      return ctx.error() << "'delta' must not be 0";
    double count = std::ceil((*fl - *fs) / *fd);
    if (!std::isfinite(count))
      return ctx.error() << "the number of elements (limit - start) / delta "
                            "is not finite";
    if (count > (double)kMaxExtent)
      return ctx.error() << "the range has more than " << kMaxExtent
                         << " elements";
    length = count < 0 ? 0 : (int64_t)count;
  }
  auto type = RankedTensorType::get({length}, element);
  ctx.setOutput(0,
                RangeOp::create(ctx.b(), ctx.loc(), type, ctx.input(0),
                                ctx.input(1), ctx.input(2)),
                known);
  return success();
}

} // namespace strata::import
