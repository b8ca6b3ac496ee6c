//===- ImportContext.cpp - State shared by the ONNX op converters ---------===//
// SPDX-License-Identifier: Apache-2.0
// See ImportContext.h.

#include "compiler/import/ImportContext.h"

#include "dialects/strata/IR/ConstantValues.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

void ImportContext::beginNode(const onnx::NodeProto &node, Location loc,
                              int64_t opset) {
  node_ = &node;
  loc_ = loc;
  opset_ = opset;
}

InFlightDiagnostic ImportContext::error() {
  InFlightDiagnostic diag = emitError(loc_);
  if (node_)
    diag << "ONNX node '" << cast<NameLoc>(loc_).getName().getValue()
         << "' (" << node_->op_type() << ", opset " << opset_ << "): ";
  return diag;
}

bool ImportContext::hasInput(unsigned i) const {
  return (int)i < node_->input_size() && !node_->input(i).empty();
}

const ImportedValue *ImportContext::lookup(StringRef name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

Value ImportContext::input(unsigned i) const {
  if (!hasInput(i))
    return {};
  const ImportedValue *v = lookup(node_->input(i));
  return v ? v->value : Value();
}

RankedTensorType ImportContext::inputType(unsigned i) const {
  Value v = input(i);
  return v ? cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

const std::optional<KnownInts> &ImportContext::inputKnown(unsigned i) const {
  static const std::optional<KnownInts> kNone; // immutable, no hidden state
  if (!hasInput(i))
    return kNone;
  const ImportedValue *v = lookup(node_->input(i));
  return v ? v->known : kNone;
}

std::optional<SmallVector<int64_t>>
ImportContext::inputConstInts(unsigned i) const {
  const std::optional<KnownInts> &known = inputKnown(i);
  if (!known)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const std::optional<int64_t> &k : *known) {
    if (!k)
      return std::nullopt;
    values.push_back(*k);
  }
  return values;
}

std::optional<double> ImportContext::inputConstFloat(unsigned i) const {
  Value v = input(i);
  if (!v || !isa<FloatType>(getElementTypeOrSelf(v.getType())))
    return std::nullopt;
  return evaluateScalarConstant(v);
}

LogicalResult ImportContext::requireInputs(unsigned count) {
  for (unsigned i = 0; i < count; ++i)
    if (!hasInput(i))
      return error() << "expected at least " << count << " inputs, input " << i
                     << " is missing";
  return success();
}

bool ImportContext::outputUsed(unsigned i) const {
  return (int)i < node_->output_size() && !node_->output(i).empty() &&
         used_.contains(node_->output(i));
}

// Creates a constant holding |known| (all present) with |type|'s element type.
static Value materializeKnown(OpBuilder &b, Location loc,
                              RankedTensorType type, const KnownInts &known) {
  Type element = type.getElementType();
  if (element.isInteger(1)) {
    SmallVector<bool> bits;
    for (const std::optional<int64_t> &k : known)
      bits.push_back(*k != 0);
    return ConstantOp::create(b, loc, DenseElementsAttr::get(type, bits));
  }
  unsigned width = element.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  for (const std::optional<int64_t> &k : known)
    values.push_back(APInt(width, *k, /*isSigned=*/true, /*implicitTrunc=*/true));
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, values));
}

void ImportContext::setOutput(unsigned i, Value value,
                              std::optional<KnownInts> known) {
  if ((int)i >= node_->output_size() || node_->output(i).empty())
    return;
  auto type = cast<RankedTensorType>(value.getType());
  bool trackable = type.hasStaticShape() && type.getRank() <= 1 &&
                   type.getNumElements() <= kKnownIntsLimit &&
                   isa<IntegerType>(type.getElementType());
  if (!trackable || (known && (int64_t)known->size() != type.getNumElements()))
    known.reset();
  // A constant integer tensor is known by definition.
  if (trackable && !known) {
    if (auto c = value.getDefiningOp<ConstantOp>()) {
      if (auto dense = dyn_cast<DenseIntElementsAttr>(c.getValue())) {
        known.emplace();
        for (const APInt &v : dense.getValues<APInt>())
          known->push_back(type.getElementType().isUnsignedInteger()
                               ? (int64_t)v.getZExtValue()
                               : v.getSExtValue());
      }
    }
  }
  if (known && !value.getDefiningOp<ConstantOp>() &&
      llvm::all_of(*known, [](auto &k) { return k.has_value(); }))
    value = materializeKnown(builder_, loc_, type, *known);
  values_[node_->output(i)] = ImportedValue{value, std::move(known)};
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *ImportContext::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : node_->attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

static StringRef attrTypeName(int type) {
  if (onnx::AttributeProto_AttributeType_IsValid(type))
    return onnx::AttributeProto_AttributeType_Name(
        static_cast<onnx::AttributeProto_AttributeType>(type));
  return "INVALID";
}

// The attribute |name| of |ctx|'s node read by |read| if it has |type|;
// |absent| if the node has no such attribute, an error otherwise.
template <typename T, typename ReadFn>
static FailureOr<T> typedAttr(ImportContext &ctx, StringRef name,
                              onnx::AttributeProto::AttributeType type,
                              T absent, ReadFn read) {
  const onnx::AttributeProto *a = ctx.attr(name);
  if (!a)
    return absent;
  if (a->type() != type)
    return ctx.error() << "attribute '" << name << "' must be "
                       << attrTypeName(type) << ", got "
                       << attrTypeName(a->type());
  return read(*a);
}

FailureOr<int64_t> ImportContext::intAttr(StringRef name, int64_t dflt) {
  return typedAttr<int64_t>(
      *this, name, onnx::AttributeProto::INT, dflt,
      [](const onnx::AttributeProto &a) { return a.i(); });
}

FailureOr<float> ImportContext::floatAttr(StringRef name, float dflt) {
  return typedAttr<float>(*this, name, onnx::AttributeProto::FLOAT, dflt,
                          [](const onnx::AttributeProto &a) { return a.f(); });
}

FailureOr<std::string> ImportContext::stringAttr(StringRef name,
                                                 StringRef dflt) {
  return typedAttr<std::string>(
      *this, name, onnx::AttributeProto::STRING, dflt.str(),
      [](const onnx::AttributeProto &a) { return a.s(); });
}

FailureOr<std::optional<SmallVector<int64_t>>>
ImportContext::intsAttr(StringRef name) {
  using Ints = std::optional<SmallVector<int64_t>>;
  return typedAttr<Ints>(
      *this, name, onnx::AttributeProto::INTS, Ints(),
      [](const onnx::AttributeProto &a) {
        return Ints(SmallVector<int64_t>(a.ints().begin(), a.ints().end()));
      });
}

FailureOr<std::optional<SmallVector<int64_t>>>
ImportContext::intsAttrOrInput(StringRef name, int64_t inputOpset) {
  if (opset() < inputOpset)
    return intsAttr(name);
  if (!hasInput(1))
    return std::optional<SmallVector<int64_t>>();
  std::optional<SmallVector<int64_t>> ints = inputConstInts(1);
  if (!ints)
    return error() << "'" << name << "' must be a constant";
  return ints;
}

FailureOr<const onnx::GraphProto *> ImportContext::graphAttr(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a || a->type() != onnx::AttributeProto::GRAPH)
    return error() << "expected GRAPH attribute '" << name << "'";
  return &a->g();
}

//===----------------------------------------------------------------------===//
// Building helpers
//===----------------------------------------------------------------------===//

Value ImportContext::constI64(ArrayRef<int64_t> values, bool scalar) {
  SmallVector<int64_t> shape;
  if (!scalar)
    shape.push_back(values.size());
  auto type = RankedTensorType::get(shape, builder_.getI64Type());
  return ConstantOp::create(builder_, loc_,
                            DenseElementsAttr::get(type, values));
}

Value ImportContext::constFloats(Type elementType, ArrayRef<int64_t> shape,
                                 ArrayRef<double> values) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(elementType).getFloatSemantics();
  SmallVector<APFloat> floats;
  for (double v : values) {
    APFloat f(v);
    bool lost;
    f.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
    floats.push_back(f);
  }
  return ConstantOp::create(
      builder_, loc_,
      DenseElementsAttr::get(RankedTensorType::get(shape, elementType),
                             floats));
}

FailureOr<SmallVector<int64_t>>
ImportContext::normalizedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    std::optional<int64_t> n = normalizeAxis(a, rank);
    if (!n || llvm::is_contained(out, *n)) {
      error() << "invalid or repeated axis " << a << " for rank " << rank;
      return failure();
    }
    out.push_back(*n);
  }
  return out;
}

FailureOr<int64_t> ImportContext::axisAttr(StringRef name, int64_t dflt,
                                           int64_t rank) {
  FailureOr<int64_t> attr = intAttr(name, dflt);
  if (failed(attr))
    return failure();
  std::optional<int64_t> axis = normalizeAxis(*attr, rank);
  if (!axis) {
    error() << "'" << name << "' " << *attr << " is out of range for rank "
            << rank;
    return failure();
  }
  return *axis;
}

Value ImportContext::constScalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute attr;
  if (auto f = dyn_cast<FloatType>(elementType)) {
    APFloat v(value);
    bool lost;
    v.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    attr = DenseElementsAttr::get(type, v);
  } else if (elementType.isInteger(1)) {
    attr = DenseElementsAttr::get(type, value != 0.0);
  } else {
    attr = DenseElementsAttr::get(
        type, APInt(elementType.getIntOrFloatBitWidth(), (int64_t)value,
                    /*isSigned=*/true, /*implicitTrunc=*/true));
  }
  return ConstantOp::create(builder_, loc_, cast<ElementsAttr>(attr));
}

Value ImportContext::asI64Vector(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.getElementType().isInteger(64))
    value = CastOp::create(builder_, loc_,
                           RankedTensorType::get(type.getShape(),
                                                 builder_.getI64Type()),
                           value);
  if (type.getRank() == 0)
    value = ReshapeOp::create(
        builder_, loc_, RankedTensorType::get({1}, builder_.getI64Type()),
        value, Value());
  return value;
}

Value ImportContext::buildShape(Value source, ArrayRef<DimSource> dims) {
  if (llvm::all_of(dims, [](const DimSource &d) { return d.inputDim < 0; })) {
    SmallVector<int64_t> values;
    for (const DimSource &d : dims)
      values.push_back(d.constant);
    return constI64(values);
  }
  auto sourceType = cast<RankedTensorType>(source.getType());
  auto i64 = builder_.getI64Type();
  Value shape = ShapeOp::create(
      builder_, loc_, RankedTensorType::get({sourceType.getRank()}, i64),
      source, builder_.getI64IntegerAttr(0), IntegerAttr());
  SmallVector<Value> pieces;
  for (const DimSource &d : dims) {
    if (d.inputDim < 0) {
      pieces.push_back(constI64({d.constant}));
      continue;
    }
    Value start = constI64({d.inputDim}), end = constI64({d.inputDim + 1}),
          step = constI64({1});
    pieces.push_back(SliceOp::create(
        builder_, loc_, RankedTensorType::get({1}, i64), shape, start, end,
        step, builder_.getDenseI64ArrayAttr({0})));
  }
  if (pieces.size() == 1)
    return pieces.front();
  return ConcatOp::create(
      builder_, loc_, RankedTensorType::get({(int64_t)pieces.size()}, i64),
      pieces, builder_.getI64IntegerAttr(0));
}

Value ImportContext::reshapeTo(Value input, ArrayRef<int64_t> dims,
                               ArrayRef<DimSource> sources) {
  auto inType = cast<RankedTensorType>(input.getType());
  auto outType = RankedTensorType::get(dims, inType.getElementType());
  if (outType == inType)
    return input;
  Value shape;
  if (!outType.hasStaticShape())
    shape = buildShape(input, sources);
  // The shape holds real extents: a 0 is an empty dim, not a copy.
  auto reshape = ReshapeOp::create(builder_, loc_, outType, input, shape);
  if (shape)
    reshape.setAllowZero(true);
  return reshape;
}

} // namespace strata::import
