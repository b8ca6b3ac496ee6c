//===- QuantizedConstants.cpp - Constant data of quantized models ---------===//
// SPDX-License-Identifier: Apache-2.0
// See QuantizedConstants.h.

#include "compiler/import/QuantizedConstants.h"

#include "compiler/import/ConverterUtils.h"
#include "dialects/strata/IR/StrataOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"

#include <cstring>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

// The ElementsAttr of the strata.constant behind |v|, looking through
// reshapes (which keep the row-major element order).
static ElementsAttr constantAttr(Value v) {
  while (v) {
    Operation *op = v.getDefiningOp();
    if (auto reshape = dyn_cast_or_null<ReshapeOp>(op)) {
      v = reshape.getInput();
      continue;
    }
    if (auto constant = dyn_cast_or_null<ConstantOp>(op))
      return constant.getValue();
    return {};
  }
  return {};
}

// The raw bytes of a resource-blob attribute of |bytes| bytes, or empty.
static ArrayRef<char> blobBytes(ElementsAttr attr, size_t bytes) {
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!resource)
    return {};
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob || blob->getData().size() != bytes)
    return {};
  return blob->getData();
}

std::optional<std::vector<int64_t>> constantInts(Value v) {
  ElementsAttr attr = constantAttr(v);
  if (!attr)
    return std::nullopt;
  auto type = cast<ShapedType>(attr.getType());
  auto intType = dyn_cast<IntegerType>(type.getElementType());
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!intType || intType.getWidth() > 64 || !dense)
    return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(type.getNumElements());
  for (const APInt &x : dense.getValues<APInt>())
    out.push_back(intType.isUnsigned() ? int64_t(x.getZExtValue())
                                       : x.getSExtValue());
  return out;
}

std::optional<std::vector<int32_t>> constantInt8s(Value v) {
  ElementsAttr attr = constantAttr(v);
  if (!attr)
    return std::nullopt;
  auto type = cast<ShapedType>(attr.getType());
  auto intType = dyn_cast<IntegerType>(type.getElementType());
  if (!intType || intType.getWidth() != 8 || !type.hasStaticShape())
    return std::nullopt;
  bool isUnsigned = intType.isUnsigned();
  auto widen = [&](char c) {
    return isUnsigned ? int32_t(uint8_t(c)) : int32_t(int8_t(c));
  };
  size_t count = type.getNumElements();
  std::vector<int32_t> out(count);
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (dense && dense.isSplat()) {
    std::fill(out.begin(), out.end(), widen(dense.getRawData()[0]));
    return out;
  }
  ArrayRef<char> raw = dense ? dense.getRawData() : blobBytes(attr, count);
  if (raw.size() != count)
    return std::nullopt;
  for (size_t i = 0; i < count; ++i)
    out[i] = widen(raw[i]);
  return out;
}

std::optional<std::vector<float>> constantFloats(Value v) {
  ElementsAttr attr = constantAttr(v);
  if (!attr)
    return std::nullopt;
  auto type = cast<ShapedType>(attr.getType());
  if (!type.getElementType().isF32() || !type.hasStaticShape())
    return std::nullopt;
  std::vector<float> out(type.getNumElements());
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    size_t i = 0;
    for (float x : dense.getValues<float>())
      out[i++] = x;
    return out;
  }
  ArrayRef<char> raw = blobBytes(attr, out.size() * sizeof(float));
  if (raw.empty() && !out.empty())
    return std::nullopt;
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

std::optional<QuantizedWeight> matchDequantizedWeight(Value w,
                                                      bool transposed) {
  auto mul = w.getDefiningOp<MulOp>();
  RankedTensorType wt = typeOf(w);
  if (!mul || wt.getRank() != 2 || !wt.hasStaticShape() ||
      !wt.getElementType().isF32())
    return std::nullopt;
  auto cast = mul.getLhs().getDefiningOp<CastOp>();
  if (!cast || typeOf(cast.getInput()).getShape() != wt.getShape() ||
      !typeOf(cast.getInput()).getElementType().isSignlessInteger(8))
    return std::nullopt;
  std::optional<std::vector<int32_t>> q = constantInt8s(cast.getInput());
  std::optional<std::vector<float>> s = constantFloats(mul.getRhs());
  if (!q || !s)
    return std::nullopt;
  // The scale, right-aligned to rank 2, may vary along the output-channel
  // dim only.
  SmallVector<int64_t> sShape(typeOf(mul.getRhs()).getShape());
  if (sShape.size() > 2)
    return std::nullopt;
  while (sShape.size() < 2)
    sShape.insert(sShape.begin(), 1);
  int64_t rows = wt.getDimSize(0), cols = wt.getDimSize(1);
  int64_t kDim = transposed ? 1 : 0;
  if (sShape[kDim] != 1)
    return std::nullopt;
  QuantizedWeight out;
  out.k = transposed ? cols : rows;
  out.n = transposed ? rows : cols;
  out.bits = 8;
  out.groupSize = out.k;
  bool perChannel = sShape[1 - kDim] != 1;
  out.scales.resize(out.n);
  for (int64_t j = 0; j < out.n; ++j)
    out.scales[j] = (*s)[perChannel ? j : 0];
  out.values.resize(out.k * out.n);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      int64_t kk = transposed ? c : r, nn = transposed ? r : c;
      out.values[kk * out.n + nn] = int8_t((*q)[r * cols + c]);
    }
  return out;
}

// A resource-blob key from a value name: keys are printed bare, so keep to
// identifier characters.
static std::string blobKey(StringRef name, StringRef suffix) {
  std::string key = (name.empty() ? StringRef("weight") : name).str();
  for (char &c : key)
    if (!llvm::isAlnum(c) && c != '_' && c != '.')
      c = '_';
  if (llvm::isDigit(key[0]))
    key.insert(0, "w");
  return key + suffix.str();
}

Value buildFloatConstant(ImportContext &ctx, ArrayRef<int64_t> shape,
                         ArrayRef<float> data, StringRef name) {
  ArrayRef<char> bytes(reinterpret_cast<const char *>(data.data()),
                       data.size() * sizeof(float));
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      bytes, alignof(float), /*dataIsMutable=*/false);
  auto attr = DenseResourceElementsAttr::get(
      RankedTensorType::get(shape, ctx.b().getF32Type()), blobKey(name, ""),
      std::move(blob));
  return ConstantOp::create(ctx.b(), ctx.loc(), cast<ElementsAttr>(attr));
}

Value buildQuantizedLinear(ImportContext &ctx, Value x,
                           const QuantizedWeight &weight, Value bias,
                           StringRef name) {
  OpBuilder &b = ctx.b();
  std::string suffix = "_q" + std::to_string(weight.bits) + "g" +
                       std::to_string(weight.groupSize);
  ArrayRef<char> bytes(reinterpret_cast<const char *>(weight.values.data()),
                       weight.values.size());
  AsmResourceBlob qBlob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      bytes, alignof(int8_t), /*dataIsMutable=*/false);
  auto qAttr = DenseResourceElementsAttr::get(
      RankedTensorType::get({weight.k, weight.n}, b.getI8Type()),
      blobKey(name, suffix), std::move(qBlob));
  Value q = ConstantOp::create(b, ctx.loc(), cast<ElementsAttr>(qAttr));
  int64_t groups = (weight.k + weight.groupSize - 1) / weight.groupSize;
  Value s = buildFloatConstant(ctx, {groups, weight.n}, weight.scales,
                               (name + suffix + "_scales").str());
  RankedTensorType xt = typeOf(x);
  SmallVector<int64_t> dims(xt.getShape().drop_back());
  dims.push_back(weight.n);
  return QuantizedLinearOp::create(
      b, ctx.loc(), RankedTensorType::get(dims, xt.getElementType()), x, q, s,
      bias, b.getI64IntegerAttr(weight.bits),
      b.getI64IntegerAttr(weight.groupSize), b.getI64IntegerAttr(0));
}

} // namespace strata::import
