//===- ResizeConverter.cpp - ONNX Resize and Upsample ---------------------===//
// SPDX-License-Identifier: Apache-2.0
// Resize is separable: along each resized axis an output element is a
// fixed combination of a few input elements, out[o] = sum_t W[o, t] *
// in[I[o, t]] (+ B[o] where tf_crop_and_resize extrapolates). With static
// extents and constant scales/sizes/roi the importer computes I, W and B
// as the spec's reference does (coordinate transformation, nearest
// rounding, linear/cubic/antialiased coefficients, edge-clamped
// neighbours, exclude_outside) and emits, per axis from the last to the
// first (the reference's order), strata.gather of the taps, a multiply by
// W and a sum over the taps; nearest mode is one gather.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "dialects/strata/IR/ConstantValues.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

namespace {

/// The values of a constant tensor, as doubles; std::nullopt unless |v| is
/// a strata.constant.
std::optional<SmallVector<double>> constantValues(Value v) {
  auto c = v ? v.getDefiningOp<ConstantOp>() : ConstantOp();
  if (!c)
    return std::nullopt;
  SmallVector<double> out;
  if (auto dense = dyn_cast<DenseElementsAttr>(c.getValue())) {
    for (Attribute a : dense.getValues<Attribute>()) {
      std::optional<double> x = getNumber(a);
      if (!x)
        return std::nullopt;
      out.push_back(*x);
    }
    return out;
  }
  if (auto f = dyn_cast<DenseF32ResourceElementsAttr>(c.getValue())) {
    std::optional<ArrayRef<float>> data = f.tryGetAsArrayRef();
    if (!data)
      return std::nullopt;
    out.assign(data->begin(), data->end());
    return out;
  }
  if (auto i = dyn_cast<DenseI64ResourceElementsAttr>(c.getValue())) {
    std::optional<ArrayRef<int64_t>> data = i.tryGetAsArrayRef();
    if (!data)
      return std::nullopt;
    for (int64_t x : *data)
      out.push_back(static_cast<double>(x));
    return out;
  }
  return std::nullopt;
}

struct ResizeMode {
  std::string mode, transform, nearest;
  double cubicA = -0.75, extrapolation = 0;
  bool excludeOutside = false, antialias = false;
};

/// One axis's map: |taps| input indices and weights per output, and a
/// constant per output (nonzero only where extrapolated).
struct AxisMap {
  int64_t taps = 0;
  SmallVector<int64_t> index;
  SmallVector<double> weight, bias;
};

SmallVector<double> coefficients(const ResizeMode &m, double ratio,
                                 double scale) {
  if (m.mode == "nearest") {
    if (ratio == std::floor(ratio))
      return {0, 1};
    bool second;
    if (m.nearest == "round_prefer_ceil")
      second = ratio >= 0.5;
    else if (m.nearest == "floor")
      second = false;
    else if (m.nearest == "ceil")
      second = true;
    else
      second = ratio > 0.5;
    return {second ? 0.0 : 1.0, second ? 1.0 : 0.0};
  }
  const double a = m.cubicA;
  if (m.mode == "linear" && !m.antialias)
    return {1 - ratio, ratio};
  if (m.mode == "linear") {
    const double s = std::min(scale, 1.0);
    const int64_t start = static_cast<int64_t>(std::floor(-1 / s) + 1);
    const int64_t footprint = 2 - 2 * start;
    SmallVector<double> c;
    double sum = 0;
    for (int64_t i = start; i < start + footprint; ++i) {
      double x = std::clamp(1 - std::abs((i - ratio) * s), 0.0, 1.0);
      c.push_back(x);
      sum += x;
    }
    for (double &x : c)
      x /= sum;
    return c;
  }
  if (!m.antialias) {
    const double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
    return {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a,
            ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
            ((a + 2) * q - (a + 3)) * q * q + 1,
            ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a};
  }
  const double s = std::min(scale, 1.0);
  auto coeff = [&](double x) {
    x = std::abs(x);
    if (x <= 1)
      return (a + 2) * x * x * x - (a + 3) * x * x + 1;
    if (x < 2)
      return a * x * x * x - 5 * a * x * x + 8 * a * x - 4 * a;
    return 0.0;
  };
  const int64_t start = static_cast<int64_t>(std::floor(-2 / s) + 1);
  SmallVector<double> c;
  double sum = 0;
  for (int64_t i = start; i < 2 - start; ++i) {
    c.push_back(coeff(s * (i - ratio)));
    sum += c.back();
  }
  for (double &x : c)
    x /= sum;
  return c;
}

/// The map of one axis from |in| to |out| elements at |scale|, |roi| the
/// axis's [start, end] (tf_crop_and_resize).
AxisMap axisMap(const ResizeMode &m, int64_t in, int64_t out, double scale,
                double roiStart, double roiEnd) {
  AxisMap map;
  const double outWidth = scale * static_cast<double>(in);
  for (int64_t o = 0; o < out; ++o) {
    const double x = static_cast<double>(o);
    double xo;
    bool extrapolate = false;
    if (m.transform == "align_corners") {
      xo = outWidth == 1 ? 0 : x * (in - 1) / (outWidth - 1);
    } else if (m.transform == "asymmetric") {
      xo = x / scale;
    } else if (m.transform == "tf_crop_and_resize") {
      xo = outWidth == 1 ? (roiEnd - roiStart) * (in - 1) / 2
                         : x * (roiEnd - roiStart) * (in - 1) / (outWidth - 1);
      xo += roiStart * (in - 1);
      extrapolate = xo < 0 || xo > in - 1;
    } else if (m.transform == "pytorch_half_pixel") {
      xo = outWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    } else if (m.transform == "half_pixel_symmetric") {
      const double adjustment = static_cast<double>(out) / outWidth;
      const double center = static_cast<double>(in) / 2;
      xo = center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    } else {
      xo = (x + 0.5) / scale - 0.5;
    }
    const double ratio = xo == std::floor(xo) ? 1 : xo - std::floor(xo);
    SmallVector<double> c = coefficients(m, ratio, scale);
    const int64_t n = c.size();
    // The n nearest positions of the edge-padded axis (ties to the lower),
    // back in input coordinates.
    const int64_t pad = (n + 1) / 2, limit = in + 2 * pad;
    const double xp = xo + pad;
    SmallVector<int64_t> near;
    for (int64_t i = std::max<int64_t>(0, static_cast<int64_t>(std::floor(xp)) - n - 1);
         i < limit && i <= static_cast<int64_t>(std::floor(xp)) + n + 1; ++i)
      near.push_back(i);
    std::stable_sort(near.begin(), near.end(), [&](int64_t a, int64_t b) {
      return std::abs(xp - a) < std::abs(xp - b);
    });
    near.resize(std::min<int64_t>(n, near.size()));
    std::sort(near.begin(), near.end());
    SmallVector<int64_t> idx;
    for (int64_t i : near)
      idx.push_back(i - pad);
    if (m.excludeOutside) {
      double sum = 0;
      for (int64_t t = 0; t < n; ++t) {
        if (idx[t] < 0 || idx[t] >= in)
          c[t] = 0;
        sum += c[t];
      }
      for (double &w : c)
        w /= sum;
    }
    map.taps = std::max<int64_t>(map.taps, n);
    for (int64_t t = 0; t < n; ++t) {
      map.index.push_back(std::clamp<int64_t>(idx[t], 0, in - 1));
      map.weight.push_back(extrapolate ? 0 : c[t]);
    }
    map.bias.push_back(extrapolate ? m.extrapolation : 0);
  }
  return map;
}

/// Applies |map| along |axis| of |x|.
Value applyAxis(ImportContext &ctx, Value x, int64_t axis, const AxisMap &map,
                int64_t out) {
  OpBuilder &b = ctx.b();
  Location loc = ctx.loc();
  RankedTensorType t = typeOf(x);
  const int64_t rank = t.getRank(), taps = map.taps;
  Type element = t.getElementType();
  auto indexType = RankedTensorType::get({out * taps}, b.getI64Type());
  Value indices = ConstantOp::create(
      b, loc, DenseElementsAttr::get(indexType, ArrayRef(map.index)));
  SmallVector<int64_t> gathered(t.getShape());
  gathered[axis] = out * taps;
  Value g = GatherOp::create(b, loc, RankedTensorType::get(gathered, element),
                             x, indices, b.getI64IntegerAttr(axis));
  // Nearest: one tap of weight 1 (the taps are equal, the weights 0/1).
  const bool oneTap =
      llvm::all_of(map.bias, [](double v) { return v == 0; }) &&
      [&] {
        for (int64_t o = 0; o < out; ++o) {
          int64_t ones = 0;
          for (int64_t k = 0; k < taps; ++k) {
            double w = map.weight[o * taps + k];
            if (w != 0 && w != 1)
              return false;
            ones += w == 1;
          }
          if (ones != 1)
            return false;
        }
        return true;
      }();
  if (oneTap) {
    SmallVector<int64_t> picked;
    for (int64_t o = 0; o < out; ++o)
      for (int64_t k = 0; k < taps; ++k)
        if (map.weight[o * taps + k] == 1)
          picked.push_back(map.index[o * taps + k]);
    auto pickedType = RankedTensorType::get({out}, b.getI64Type());
    SmallVector<int64_t> shape(t.getShape());
    shape[axis] = out;
    return GatherOp::create(
        b, loc, RankedTensorType::get(shape, element), x,
        ConstantOp::create(b, loc,
                           DenseElementsAttr::get(pickedType, ArrayRef(picked))),
        b.getI64IntegerAttr(axis));
  }
  // [..., out * taps, ...] -> [..., out, taps, ...], times W, summed.
  SmallVector<int64_t> split;
  SmallVector<DimSource> sources;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis) {
      split.append({out, taps});
      sources.append({DimSource::fixed(out), DimSource::fixed(taps)});
      continue;
    }
    split.push_back(t.getDimSize(d));
    sources.push_back(DimSource::fromInput(d));
  }
  g = ctx.reshapeTo(g, split, sources);
  auto floats = [&](ArrayRef<double> values, ArrayRef<int64_t> shape) {
    return ctx.constFloats(element, shape, values);
  };
  SmallVector<int64_t> wShape{out, taps};
  wShape.append(rank - axis - 1, 1);
  Value y = broadcastOp<MulOp>(ctx, g, floats(map.weight, wShape));
  RankedTensorType yt = typeOf(y);
  SmallVector<int64_t> reduced(yt.getShape());
  reduced.erase(reduced.begin() + axis + 1);
  y = ReduceSumOp::create(b, loc, RankedTensorType::get(reduced, element), y,
                          b.getDenseI64ArrayAttr({axis + 1}),
                          b.getBoolAttr(false));
  if (llvm::any_of(map.bias, [](double v) { return v != 0; })) {
    SmallVector<int64_t> bShape{out};
    bShape.append(rank - axis - 1, 1);
    y = broadcastOp<AddOp>(ctx, y, floats(map.bias, bShape));
  }
  return y;
}

} // namespace

LogicalResult convertResize(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  StringRef op = ctx.node().op_type();
  RankedTensorType in = ctx.inputType(0);
  const int64_t rank = in.getRank();
  ResizeMode m;
  FailureOr<std::string> mode = ctx.stringAttr("mode", "nearest");
  // Resize-10 and Upsample use asymmetric coordinates and floor rounding.
  const bool legacy = op == "Upsample" || ctx.opset() < 11;
  FailureOr<std::string> transform = ctx.stringAttr(
      "coordinate_transformation_mode", legacy ? "asymmetric" : "half_pixel");
  FailureOr<std::string> nearest = ctx.stringAttr(
      "nearest_mode", legacy ? "floor" : "round_prefer_floor");
  FailureOr<float> cubicA = ctx.floatAttr("cubic_coeff_a", -0.75f);
  FailureOr<float> extrapolation = ctx.floatAttr("extrapolation_value", 0.0f);
  FailureOr<int64_t> exclude = ctx.intAttr("exclude_outside", 0);
  FailureOr<int64_t> antialias = ctx.intAttr("antialias", 0);
  FailureOr<std::string> policy =
      ctx.stringAttr("keep_aspect_ratio_policy", "stretch");
  if (failed(mode) || failed(transform) || failed(nearest) || failed(cubicA) ||
      failed(extrapolation) || failed(exclude) || failed(antialias) ||
      failed(policy))
    return failure();
  m.mode = *mode == "bilinear" || *mode == "trilinear" ? "linear" : *mode;
  m.transform = *transform;
  m.nearest = *nearest;
  m.cubicA = *cubicA;
  m.extrapolation = *extrapolation;
  m.excludeOutside = *exclude != 0;
  m.antialias = *antialias != 0;
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic")
    return ctx.error() << "unknown mode '" << *mode << "'";
  if (m.mode == "nearest" && m.antialias)
    return ctx.error() << "antialias is not defined for nearest mode";
  if (!isa<FloatType>(in.getElementType()) && m.mode != "nearest")
    return ctx.error() << "mode '" << m.mode << "' needs a float input, got "
                       << in.getElementType();
  // The resized axes and their constant scales or sizes.
  SmallVector<int64_t> axes;
  FailureOr<std::optional<SmallVector<int64_t>>> axesAttr = ctx.intsAttr("axes");
  if (failed(axesAttr))
    return failure();
  if (*axesAttr) {
    FailureOr<SmallVector<int64_t>> n = ctx.normalizedAxes(**axesAttr, rank);
    if (failed(n))
      return failure();
    axes = *n;
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  std::optional<SmallVector<double>> scales, sizes, roi;
  if (op == "Upsample" && ctx.opset() < 9) {
    const onnx::AttributeProto *a = ctx.attr("scales");
    if (!a || a->floats_size() != rank)
      return ctx.error() << "expected 'scales' with " << rank << " entries";
    scales.emplace(a->floats().begin(), a->floats().end());
  } else {
    const unsigned scalesInput = legacy ? 1 : 2;
    if (!legacy && ctx.hasInput(1))
      roi = constantValues(ctx.input(1));
    if (ctx.hasInput(scalesInput)) {
      scales = constantValues(ctx.input(scalesInput));
      if (!scales)
        return ctx.error() << "'scales' must be a constant";
      if (scales->empty())
        scales.reset();
    }
    if (!legacy && ctx.hasInput(3)) {
      sizes = constantValues(ctx.input(3));
      if (!sizes)
        return ctx.error() << "'sizes' must be a constant";
    }
    if (!legacy && ctx.hasInput(1) && !roi && m.transform == "tf_crop_and_resize")
      return ctx.error() << "'roi' must be a constant";
  }
  if (!scales == !sizes)
    return ctx.error() << "expected exactly one of 'scales' and 'sizes'";
  const size_t given = scales ? scales->size() : sizes->size();
  if (given != axes.size())
    return ctx.error() << "expected " << axes.size() << " scales or sizes, got "
                       << given;
  // A dynamic dim may only keep its extent (a scale of 1).
  for (size_t i = 0; i < axes.size(); ++i)
    if (in.isDynamicDim(axes[i]) && !(scales && (*scales)[i] == 1.0))
      return ctx.error() << "resized dim " << axes[i]
                         << " must be static, got "
                         << formatShape(in.getShape());
  // Per axis: the scale and the output extent.
  SmallVector<double> scale(rank, 1.0);
  SmallVector<int64_t> out(in.getShape());
  // Every scale, size and resulting extent is checked as a double first: a
  // huge or NaN value must not reach an integer conversion.
  constexpr double kMaxExtent = double(int64_t{1} << 24);
  for (size_t i = 0; i < axes.size(); ++i) {
    const double v = scales ? (*scales)[i] : (*sizes)[i];
    const double extent =
        scales ? v * static_cast<double>(in.isDynamicDim(axes[i])
                                             ? 1
                                             : in.getDimSize(axes[i]))
               : v;
    if (!(v > 0) || !(extent < kMaxExtent))
      return ctx.error() << "invalid scale or size " << v << " for dim "
                         << axes[i];
  }
  if (sizes) {
    SmallVector<double> ratio;
    for (size_t i = 0; i < axes.size(); ++i)
      ratio.push_back((*sizes)[i] / static_cast<double>(in.getDimSize(axes[i])));
    if (*policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        scale[axes[i]] = ratio[i];
        out[axes[i]] = static_cast<int64_t>((*sizes)[i]);
      }
    } else if (*policy == "not_larger" || *policy == "not_smaller") {
      const double s = *policy == "not_larger"
                           ? *std::min_element(ratio.begin(), ratio.end())
                           : *std::max_element(ratio.begin(), ratio.end());
      for (int64_t a : axes) {
        scale[a] = s;
        const double extent = s * in.getDimSize(a) + 0.5;
        if (!(extent < kMaxExtent))
          return ctx.error() << "invalid size for dim " << a;
        out[a] = static_cast<int64_t>(extent);
      }
    } else {
      return ctx.error() << "unknown keep_aspect_ratio_policy '" << *policy
                         << "'";
    }
  } else {
    for (size_t i = 0; i < axes.size(); ++i) {
      scale[axes[i]] = (*scales)[i];
      if (in.isDynamicDim(axes[i]))
        continue;
      out[axes[i]] =
          static_cast<int64_t>((*scales)[i] * in.getDimSize(axes[i]));
    }
  }
  for (int64_t a : axes)
    if (!in.isDynamicDim(a) &&
        (!(scale[a] > 0) || out[a] < 1 || out[a] > (int64_t{1} << 24)))
      return ctx.error() << "invalid scale " << scale[a] << " or size "
                         << out[a] << " for dim " << a;
  // roi: [starts..., ends...] over the listed axes (default 0 and 1).
  SmallVector<double> roiStart(rank, 0.0), roiEnd(rank, 1.0);
  if (roi && roi->size() == 2 * axes.size())
    for (size_t i = 0; i < axes.size(); ++i) {
      roiStart[axes[i]] = (*roi)[i];
      roiEnd[axes[i]] = (*roi)[axes.size() + i];
    }
  // Antialiased downscaling reads about 4 / scale taps per output.
  if (m.antialias)
    for (int64_t a : axes)
      if (!in.isDynamicDim(a) && scale[a] < 1 &&
          !(static_cast<double>(out[a]) * (4.0 / scale[a] + 4) < kMaxExtent))
        return ctx.error() << "antialiasing dim " << a << " at scale "
                           << scale[a] << " needs too many taps";
  Value x = ctx.input(0);
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (!llvm::is_contained(axes, d) || in.isDynamicDim(d) ||
        (scale[d] == 1.0 && out[d] == in.getDimSize(d) &&
         m.transform != "tf_crop_and_resize"))
      continue;
    AxisMap map = axisMap(m, in.getDimSize(d), out[d], scale[d], roiStart[d],
                          roiEnd[d]);
    x = applyAxis(ctx, x, d, map, out[d]);
    if (!x)
      return failure();
  }
  ctx.setOutput(0, x);
  return success();
}

// AffineGrid(theta [N, D, D + 1], size [N, C, spatial...]): the normalized
// coordinates of every output position in [-1, 1] (pixel centers, or the
// corners with align_corners), x first, as a constant [D + 1, positions]
// with a row of ones; theta times it, moved to [N, spatial..., D].
LogicalResult convertAffineGrid(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType theta = ctx.inputType(0);
  std::optional<SmallVector<int64_t>> size = ctx.inputConstInts(1);
  if (!size)
    return ctx.error() << "'size' must be a constant";
  FailureOr<int64_t> alignCorners = ctx.intAttr("align_corners", 0);
  if (failed(alignCorners))
    return failure();
  const int64_t spatial = static_cast<int64_t>(size->size()) - 2;
  if ((spatial != 2 && spatial != 3) || theta.getRank() != 3 ||
      theta.getDimSize(1) != spatial || theta.getDimSize(2) != spatial + 1 ||
      !isa<FloatType>(theta.getElementType()))
    return ctx.error() << "expected theta [N, " << spatial << ", "
                       << spatial + 1 << "] of floats for a size of "
                       << size->size() << " entries, got " << theta;
  SmallVector<int64_t> extents(size->begin() + 2, size->end());
  int64_t positions = 1;
  for (int64_t e : extents) {
    if (e < 1 || e > (int64_t{1} << 14))
      return ctx.error() << "invalid grid extent " << e;
    positions *= e;
  }
  if (positions > (int64_t{1} << 22))
    return ctx.error() << "the grid of " << positions << " positions is too large";
  auto coordinate = [&](int64_t i, int64_t n) {
    if (*alignCorners)
      return n == 1 ? -1.0 : -1.0 + i * (2.0 / (n - 1));
    return -1.0 + (2.0 / n) / 2 + i * (2.0 / n);
  };
  // Rows x, y[, z], 1 over positions in row-major (z, y, x) order.
  SmallVector<double> base((spatial + 1) * positions);
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p;
    for (int64_t d = spatial - 1; d >= 0; --d) {
      const int64_t i = rest % extents[d];
      rest /= extents[d];
      // Dim d of the extents is coordinate spatial - 1 - d (x is last).
      base[(spatial - 1 - d) * positions + p] = coordinate(i, extents[d]);
    }
    base[spatial * positions + p] = 1.0;
  }
  OpBuilder &b = ctx.b();
  Location loc = ctx.loc();
  Type et = theta.getElementType();
  Value grid = ctx.constFloats(et, {spatial + 1, positions}, base);
  const int64_t n = theta.getDimSize(0);
  Value product = MatmulOp::create(
      b, loc, RankedTensorType::get({n, spatial, positions}, et), ctx.input(0),
      grid);
  Value moved = TransposeOp::create(
      b, loc, RankedTensorType::get({n, positions, spatial}, et), product,
      ArrayRef<int64_t>{0, 2, 1});
  SmallVector<int64_t> shape{n};
  llvm::append_range(shape, extents);
  shape.push_back(spatial);
  SmallVector<DimSource> sources{DimSource::fromInput(0)};
  for (int64_t e : extents)
    sources.push_back(DimSource::fixed(e));
  sources.push_back(DimSource::fixed(spatial));
  ctx.setOutput(0, ctx.reshapeTo(moved, shape, sources));
  return success();
}

} // namespace strata::import
