//===- MatMulNBitsConverter.cpp - onnxruntime MatMulNBits -----------------===//
// SPDX-License-Identifier: Apache-2.0
// com.microsoft MatMulNBits (int4/int8 block-quantized weights, as
// onnxruntime-genai and ORT's quantizer write them) onto
// strata.quantized_linear, or onto an exact fp32 strata.linear when the
// weight is asymmetric.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "compiler/import/QuantizedConstants.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include "llvm/Support/MathExtras.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

namespace {
/// MatMulNBits' attributes and derived sizes, all checked.
struct NBitsLayout {
  int64_t k, n, bits, block;
  int64_t blocks;   // ceil(k / block): blocks per column
  int64_t blobSize; // bytes per block: block * bits / 8
  int64_t zpBytes;  // bytes of packed uint8 zero points per column
  int64_t mid;      // the implied zero point, 2^(bits - 1)
};

/// The constant inputs, unpacked.
struct NBitsData {
  std::vector<int32_t> codes;               // B, [n, blocks, blobSize]
  std::vector<float> scales;                // [n * blocks]
  std::optional<std::vector<int32_t>> zpU8; // packed [n * zpBytes]
  std::optional<std::vector<float>> zpF32;  // [n * blocks]
  std::optional<std::vector<int64_t>> gIdx; // [k]
};
} // namespace

static FailureOr<NBitsLayout> readLayout(ImportContext &ctx) {
  FailureOr<int64_t> k = ctx.intAttr("K", -1), n = ctx.intAttr("N", -1),
                     bits = ctx.intAttr("bits", 4),
                     block = ctx.intAttr("block_size", -1);
  if (failed(k) || failed(n) || failed(bits) || failed(block))
    return failure();
  if (*k < 1 || *n < 1)
    return ctx.error() << "expected positive 'K' and 'N', got K=" << *k
                       << " and N=" << *n;
  if (*bits != 4 && *bits != 8)
    return ctx.error() << "expected 'bits' 4 or 8, got " << *bits;
  if (*block < 16 || !llvm::isPowerOf2_64(uint64_t(*block)))
    return ctx.error() << "expected 'block_size' a power of 2 >= 16, got "
                       << *block;
  NBitsLayout l{*k, *n, *bits, *block, 0, 0, 0, int64_t{1} << (*bits - 1)};
  l.blocks = *k / *block + (*k % *block != 0);
  l.blobSize = *block / 8 * *bits; // block >= 16: exact, no overflow
  l.zpBytes = (l.blocks / 8) * l.bits + ((l.blocks % 8) * l.bits + 7) / 8;
  return l;
}

// True if |shape| is [a * b] or [a, b].
static bool isFlatOr2D(ArrayRef<int64_t> shape, int64_t a, int64_t b) {
  int64_t ab;
  if (shape.size() == 2)
    return shape[0] == a && shape[1] == b;
  return shape.size() == 1 && !llvm::MulOverflow(a, b, ab) && shape[0] == ab;
}

// Checks the input types against |l| and reads the constant inputs.
static FailureOr<NBitsData> readData(ImportContext &ctx, const NBitsLayout &l) {
  RankedTensorType a = ctx.inputType(0), b = ctx.inputType(1),
                   s = ctx.inputType(2);
  if (!a.getElementType().isF32() || a.getRank() < 1 ||
      !isCompatibleShape({a.getShape().back()}, {l.k}))
    return ctx.error() << "expected float32 'A' of shape [..., " << l.k
                       << "], got " << a;
  SmallVector<int64_t> bShape = {l.n, l.blocks, l.blobSize};
  if (!b.getElementType().isUnsignedInteger(8) ||
      b.getShape() != ArrayRef<int64_t>(bShape))
    return ctx.error() << "expected uint8 'B' of shape " << formatShape(bShape)
                       << " for K=" << l.k << ", N=" << l.n
                       << ", bits=" << l.bits << ", block_size=" << l.block
                       << ", got " << b;
  if (!s.getElementType().isF32() || !isFlatOr2D(s.getShape(), l.n, l.blocks))
    return ctx.error() << "expected float32 'scales' of " << l.n << " x "
                       << l.blocks << " elements, got " << s;
  NBitsData d;
  std::optional<std::vector<int32_t>> codes = constantInt8s(ctx.input(1));
  std::optional<std::vector<float>> scales = constantFloats(ctx.input(2));
  if (!codes || !scales)
    return ctx.error() << "only constant 'B' and 'scales' are supported";
  d.codes = std::move(*codes);
  d.scales = std::move(*scales);
  if (ctx.hasInput(3)) {
    RankedTensorType z = ctx.inputType(3);
    if (z.getElementType().isUnsignedInteger(8) &&
        isFlatOr2D(z.getShape(), l.n, l.zpBytes))
      d.zpU8 = constantInt8s(ctx.input(3));
    else if (z.getElementType().isF32() &&
             isFlatOr2D(z.getShape(), l.n, l.blocks))
      d.zpF32 = constantFloats(ctx.input(3));
    else
      return ctx.error() << "expected 'zero_points' of uint8 [" << l.n << " x "
                         << l.zpBytes << "] or float32 [" << l.n << " x "
                         << l.blocks << "], got " << z;
    if (!d.zpU8 && !d.zpF32)
      return ctx.error() << "only constant 'zero_points' are supported";
  }
  if (ctx.hasInput(4)) {
    RankedTensorType g = ctx.inputType(4);
    if (!g.getElementType().isSignlessInteger(32) ||
        g.getShape() != ArrayRef<int64_t>{l.k})
      return ctx.error() << "expected int32 'g_idx' of shape [" << l.k
                         << "], got " << g;
    d.gIdx = constantInts(ctx.input(4));
    if (!d.gIdx)
      return ctx.error() << "only a constant 'g_idx' is supported";
    for (int64_t gi : *d.gIdx)
      if (gi < 0 || gi >= l.blocks)
        return ctx.error() << "'g_idx' holds " << gi << ", expected [0, "
                           << l.blocks << ")";
  }
  if (ctx.hasInput(5)) {
    RankedTensorType bias = ctx.inputType(5);
    if (!bias.getElementType().isF32() ||
        !isCompatibleShape(bias.getShape(), {l.n}))
      return ctx.error() << "expected float32 'bias' of shape [" << l.n
                         << "], got " << bias;
  }
  return d;
}

// The code of element (column |n|, row |k|) of B.
static int32_t codeAt(const NBitsLayout &l, const NBitsData &d, int64_t n,
                      int64_t k) {
  int64_t in = k % l.block;
  int64_t base = (n * l.blocks + k / l.block) * l.blobSize;
  if (l.bits == 8)
    return d.codes[base + in];
  int32_t byte = d.codes[base + in / 2];
  return in % 2 ? byte >> 4 : byte & 15; // low nibble first
}

// The zero point of column |n|, block |g|.
static float zeroPointAt(const NBitsLayout &l, const NBitsData &d, int64_t n,
                         int64_t g) {
  if (d.zpF32)
    return (*d.zpF32)[n * l.blocks + g];
  if (!d.zpU8)
    return float(l.mid);
  if (l.bits == 8)
    return float((*d.zpU8)[n * l.zpBytes + g]);
  int32_t byte = (*d.zpU8)[n * l.zpBytes + g / 2];
  return float(g % 2 ? byte >> 4 : byte & 15);
}

// The block whose scale and zero point row |k| uses.
static int64_t groupOf(const NBitsLayout &l, const NBitsData &d, int64_t k) {
  return d.gIdx ? (*d.gIdx)[k] : k / l.block;
}

// True when every row uses its own block (g_idx absent or the identity)
// and every zero point is the implied 2^(bits - 1): the symmetric form
// strata.quantized_linear holds.
static bool isSymmetric(const NBitsLayout &l, const NBitsData &d) {
  for (int64_t k = 0; d.gIdx && k < l.k; ++k)
    if ((*d.gIdx)[k] != k / l.block)
      return false;
  for (int64_t n = 0; (d.zpU8 || d.zpF32) && n < l.n; ++n)
    for (int64_t g = 0; g < l.blocks; ++g)
      if (zeroPointAt(l, d, n, g) != float(l.mid))
        return false;
  return true;
}

// com.microsoft MatMulNBits(A, B, scales, [zero_points], [g_idx], [bias]):
// Y = A x dequant(B)^T + bias with dequant(B)[n, k] = (code - zero_point)
// * scale of k's block. B packs each column's codes along K in blocks of
// block_size, low nibble first; the last block of a K that is not a
// multiple of block_size is padding past K.
LogicalResult convertMatMulNBits(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  FailureOr<NBitsLayout> layout = readLayout(ctx);
  if (failed(layout))
    return failure();
  const NBitsLayout &l = *layout;
  FailureOr<NBitsData> data = readData(ctx, l);
  if (failed(data))
    return failure();
  const NBitsData &d = *data;
  int64_t count;
  if (llvm::MulOverflow(l.k, l.n, count) || count > (int64_t{1} << 40))
    return ctx.error() << "a " << l.k << " x " << l.n
                       << " weight has too many elements";
  Value bias = ctx.hasInput(5) ? ctx.input(5) : Value();
  StringRef name = ctx.node().input(1);
  Value x = ctx.input(0);
  if (isSymmetric(l, d)) {
    QuantizedWeight w;
    w.k = l.k;
    w.n = l.n;
    w.bits = l.bits;
    w.groupSize = l.block;
    w.values.resize(count);
    w.scales.resize(l.blocks * l.n);
    for (int64_t n = 0; n < l.n; ++n) {
      for (int64_t k = 0; k < l.k; ++k)
        w.values[k * l.n + n] = int8_t(codeAt(l, d, n, k) - l.mid);
      for (int64_t g = 0; g < l.blocks; ++g)
        w.scales[g * l.n + n] = d.scales[n * l.blocks + g];
    }
    ctx.setOutput(0, buildQuantizedLinear(ctx, x, w, bias, name));
    return success();
  }
  // Asymmetric or regrouped: dequantize now, exactly, to an fp32 weight.
  std::vector<float> weight(count);
  for (int64_t n = 0; n < l.n; ++n)
    for (int64_t k = 0; k < l.k; ++k) {
      int64_t g = groupOf(l, d, k);
      weight[k * l.n + n] =
          (float(codeAt(l, d, n, k)) - zeroPointAt(l, d, n, g)) *
          d.scales[n * l.blocks + g];
    }
  Value w = buildFloatConstant(ctx, {l.k, l.n}, weight,
                               (name + "_dequantized").str());
  RankedTensorType xt = typeOf(x);
  SmallVector<int64_t> dims(xt.getShape().drop_back());
  dims.push_back(l.n);
  ctx.setOutput(
      0, LinearOp::create(ctx.b(), ctx.loc(),
                          RankedTensorType::get(dims, xt.getElementType()), x,
                          w, bias));
  return success();
}

} // namespace strata::import
