//===- ConvConverters.cpp - ONNX Conv, MaxPool, AveragePool, LpPool -------===//
// SPDX-License-Identifier: Apache-2.0
// Sliding-window ops onto strata.conv and strata.pool: the kernel from the
// weight (Conv) or `kernel_shape`, strides and dilations defaulting to 1,
// and `auto_pad` resolved to explicit pads (SAME_* need static spatial
// dims: the total pad makes ceil(S / stride) outputs, its odd unit at the
// end for SAME_UPPER and at the start for SAME_LOWER).

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include <onnx/onnx_pb.h>

#include <limits>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

namespace {

struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
  bool ceil = false;
};

// Window attributes beyond this magnitude are rejected: the extent
// arithmetic stays far from overflow.
constexpr int64_t kMaxWindowValue = int64_t{1} << 30;

/// An ints attribute of |size| entries, |dflt| in each when absent.
FailureOr<SmallVector<int64_t>> intsOr(ImportContext &ctx, StringRef name,
                                       int64_t size, int64_t dflt) {
  FailureOr<std::optional<SmallVector<int64_t>>> v = ctx.intsAttr(name);
  if (failed(v))
    return failure();
  if (!*v)
    return SmallVector<int64_t>(size, dflt);
  if (static_cast<int64_t>((*v)->size()) != size) {
    ctx.error() << "'" << name << "' has " << (*v)->size()
                << " entries, expected " << size;
    return failure();
  }
  for (int64_t x : **v)
    if (x > kMaxWindowValue || x < -kMaxWindowValue) {
      ctx.error() << "'" << name << "' value " << x << " is out of range";
      return failure();
    }
  return **v;
}

/// The window attributes of the current node over |in| [N, C, S...], the
/// kernel given (Conv's weight) or read from `kernel_shape`.
FailureOr<Window> readWindow(ImportContext &ctx, RankedTensorType in,
                             std::optional<SmallVector<int64_t>> kernel) {
  const int64_t spatial = in.getRank() - 2;
  if (spatial < 1) {
    ctx.error() << "expected an input [N, C, spatial...], got "
                << formatShape(in.getShape());
    return failure();
  }
  Window w;
  if (kernel) {
    w.kernel = *kernel;
  } else {
    FailureOr<std::optional<SmallVector<int64_t>>> k =
        ctx.intsAttr("kernel_shape");
    if (failed(k))
      return failure();
    if (!*k || static_cast<int64_t>((*k)->size()) != spatial) {
      ctx.error() << "expected 'kernel_shape' with " << spatial << " entries";
      return failure();
    }
    w.kernel = **k;
  }
  for (int64_t k : w.kernel)
    if (k > kMaxWindowValue) {
      ctx.error() << "kernel extent " << k << " is out of range";
      return failure();
    }
  FailureOr<SmallVector<int64_t>> strides = intsOr(ctx, "strides", spatial, 1);
  FailureOr<SmallVector<int64_t>> dilations =
      intsOr(ctx, "dilations", spatial, 1);
  FailureOr<SmallVector<int64_t>> pads = intsOr(ctx, "pads", 2 * spatial, 0);
  FailureOr<std::string> autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  FailureOr<int64_t> ceil = ctx.intAttr("ceil_mode", 0);
  if (failed(strides) || failed(dilations) || failed(pads) ||
      failed(autoPad) || failed(ceil))
    return failure();
  w.strides = *strides;
  w.dilations = *dilations;
  w.pads = *pads;
  w.ceil = *ceil != 0;
  for (int64_t d = 0; d < spatial; ++d)
    if (w.kernel[d] < 1 || w.strides[d] < 1 || w.dilations[d] < 1) {
      ctx.error() << "kernel, strides and dilations must be >= 1";
      return failure();
    }
  if (*autoPad == "VALID") {
    w.pads.assign(2 * spatial, 0);
  } else if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    for (int64_t d = 0; d < spatial; ++d) {
      const int64_t size = in.getDimSize(d + 2);
      if (ShapedType::isDynamic(size)) {
        ctx.error() << "auto_pad " << *autoPad
                    << " needs static spatial dims, got "
                    << formatShape(in.getShape());
        return failure();
      }
      const int64_t out = (size + w.strides[d] - 1) / w.strides[d];
      const int64_t total = std::max<int64_t>(
          0, (out - 1) * w.strides[d] + (w.kernel[d] - 1) * w.dilations[d] +
                 1 - size);
      const int64_t small = total / 2, large = total - small;
      const bool upper = *autoPad == "SAME_UPPER";
      w.pads[d] = upper ? small : large;
      w.pads[spatial + d] = upper ? large : small;
    }
  } else if (*autoPad != "NOTSET") {
    ctx.error() << "unknown auto_pad '" << *autoPad << "'";
    return failure();
  }
  return w;
}

SmallVector<int64_t> outputShape(RankedTensorType in, int64_t channels,
                                 const Window &w) {
  const int64_t spatial = in.getRank() - 2;
  SmallVector<int64_t> shape{in.getDimSize(0), channels};
  for (int64_t d = 0; d < spatial; ++d)
    shape.push_back(windowExtent(in.getDimSize(d + 2), w.kernel[d],
                                 w.strides[d], w.dilations[d], w.pads[d],
                                 w.pads[spatial + d], w.ceil));
  return shape;
}

LogicalResult checkFits(ImportContext &ctx, ArrayRef<int64_t> shape,
                        RankedTensorType in) {
  for (int64_t e : shape)
    if (e < 0 && !ShapedType::isDynamic(e))
      return ctx.error() << "the window does not fit the padded input "
                         << formatShape(in.getShape());
  return success();
}

} // namespace

LogicalResult convertConv(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType in = ctx.inputType(0), wt = ctx.inputType(1);
  if (!isa<FloatType>(in.getElementType()))
    return ctx.error() << "expected a float input, got " << in.getElementType();
  if (wt.getRank() != in.getRank() || !wt.hasStaticShape())
    return ctx.error() << "expected a static weight of rank " << in.getRank()
                       << ", got " << formatShape(wt.getShape());
  FailureOr<int64_t> group = ctx.intAttr("group", 1);
  if (failed(group))
    return failure();
  SmallVector<int64_t> kernel(wt.getShape().drop_front(2));
  FailureOr<std::optional<SmallVector<int64_t>>> given =
      ctx.intsAttr("kernel_shape");
  if (failed(given))
    return failure();
  if (*given && ArrayRef<int64_t>(**given) != ArrayRef<int64_t>(kernel))
    return ctx.error() << "'kernel_shape' disagrees with the weight "
                       << formatShape(wt.getShape());
  FailureOr<Window> w = readWindow(ctx, in, kernel);
  if (failed(w))
    return failure();
  SmallVector<int64_t> shape = outputShape(in, wt.getDimSize(0), *w);
  if (failed(checkFits(ctx, shape, in)))
    return failure();
  OpBuilder &b = ctx.b();
  Value bias = ctx.hasInput(2) ? ctx.input(2) : Value();
  ctx.setOutput(0, ConvOp::create(b, ctx.loc(),
                                  RankedTensorType::get(shape,
                                                        in.getElementType()),
                                  ctx.input(0), ctx.input(1), bias,
                                  b.getDenseI64ArrayAttr(w->strides),
                                  b.getDenseI64ArrayAttr(w->dilations),
                                  b.getDenseI64ArrayAttr(w->pads),
                                  b.getI64IntegerAttr(*group),
                                  DenseI64ArrayAttr()));
  return success();
}

// ConvTranspose as the convolution it is the adjoint of: the input's
// elements `strides` apart, padded by dilation * (K - 1) - pad at the start
// (and to the requested output extent at the end), convolved at stride 1
// with the weight [C, M / G, K...] regrouped to [M, C / G, K...] and
// flipped along its spatial dims. Output extent and pads as the
// reference: output_shape (with auto_pad splitting the total padding) or
// stride * (S - 1) + output_padding + dilation * (K - 1) + 1 - pads.
LogicalResult convertConvTranspose(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType in = ctx.inputType(0), wt = ctx.inputType(1);
  if (!isa<FloatType>(in.getElementType()))
    return ctx.error() << "expected a float input, got " << in.getElementType();
  const int64_t rank = in.getRank(), spatial = rank - 2;
  if (spatial < 1 || wt.getRank() != rank || !wt.hasStaticShape())
    return ctx.error() << "expected a static weight of rank " << rank
                       << ", got " << formatShape(wt.getShape());
  if (llvm::any_of(in.getShape().drop_front(2), ShapedType::isDynamic))
    return ctx.error() << "expected static spatial dims, got "
                       << formatShape(in.getShape());
  FailureOr<int64_t> group = ctx.intAttr("group", 1);
  FailureOr<SmallVector<int64_t>> strides = intsOr(ctx, "strides", spatial, 1);
  FailureOr<SmallVector<int64_t>> dilations =
      intsOr(ctx, "dilations", spatial, 1);
  FailureOr<SmallVector<int64_t>> outputPadding =
      intsOr(ctx, "output_padding", spatial, 0);
  FailureOr<std::optional<SmallVector<int64_t>>> padsAttr = ctx.intsAttr("pads");
  FailureOr<std::optional<SmallVector<int64_t>>> outputShape =
      ctx.intsAttr("output_shape");
  FailureOr<std::string> autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  if (failed(group) || failed(strides) || failed(dilations) ||
      failed(outputPadding) || failed(padsAttr) || failed(outputShape) ||
      failed(autoPad))
    return failure();
  const int64_t g = *group, c = wt.getDimSize(0), mg = wt.getDimSize(1);
  if (g < 1 || c % g != 0 || (!in.isDynamicDim(1) && in.getDimSize(1) != c))
    return ctx.error() << "weight " << formatShape(wt.getShape())
                       << " does not match input " << formatShape(in.getShape())
                       << " with group " << g;
  SmallVector<int64_t> kernel(wt.getShape().drop_front(2)), pads, out;
  for (const auto &list : {*padsAttr, *outputShape})
    if (list && llvm::any_of(*list, [](int64_t x) {
          return x > kMaxWindowValue || x < -kMaxWindowValue;
        }))
      return ctx.error() << "a pad or output extent is out of range";
  for (int64_t d = 0; d < spatial; ++d)
    if (in.getDimSize(d + 2) > kMaxWindowValue || kernel[d] > kMaxWindowValue)
      return ctx.error() << "extents out of range";
  for (int64_t d = 0; d < spatial; ++d)
    if ((*strides)[d] < 1 || (*dilations)[d] < 1)
      return ctx.error() << "strides and dilations must be >= 1";
  auto natural = [&](int64_t d) {
    return (*strides)[d] * (in.getDimSize(d + 2) - 1) + (*outputPadding)[d] +
           (kernel[d] - 1) * (*dilations)[d] + 1;
  };
  const bool same = *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER";
  if (*outputShape && static_cast<int64_t>((*outputShape)->size()) != spatial)
    return ctx.error() << "'output_shape' needs " << spatial << " entries";
  if (!same) {
    // Explicit pads (default 0); an output_shape past the natural extent
    // only adds bias-valued elements at the end.
    if (*padsAttr && static_cast<int64_t>((*padsAttr)->size()) != 2 * spatial)
      return ctx.error() << "'pads' has " << (*padsAttr)->size()
                         << " entries, expected " << 2 * spatial;
    pads = *padsAttr ? **padsAttr : SmallVector<int64_t>(2 * spatial, 0);
    for (int64_t d = 0; d < spatial; ++d)
      out.push_back(*outputShape ? (**outputShape)[d]
                                 : natural(d) - pads[d] - pads[spatial + d]);
  } else {
    pads.assign(2 * spatial, 0);
    for (int64_t d = 0; d < spatial; ++d) {
      const int64_t target = *outputShape
                                 ? (**outputShape)[d]
                                 : in.getDimSize(d + 2) * (*strides)[d];
      const int64_t total = natural(d) - target;
      const int64_t half = total / 2;
      pads[d] = *autoPad == "SAME_UPPER" ? half : total - half;
      pads[spatial + d] = total - pads[d];
      out.push_back(target);
    }
  }
  // The equivalent convolution's pads.
  SmallVector<int64_t> convPads(2 * spatial);
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t reach = (kernel[d] - 1) * (*dilations)[d];
    const int64_t dilated = (in.getDimSize(d + 2) - 1) * (*strides)[d] + 1;
    convPads[d] = reach - pads[d];
    convPads[spatial + d] = out[d] - dilated - convPads[d] + reach;
    if (out[d] < 1)
      return ctx.error() << "output extent " << out[d] << " for dim " << d + 2;
  }
  // [C, M/G, K...] -> [G, C/G, M/G, K...] -> [G, M/G, C/G, K...] ->
  // [M, C/G, K...], flipped along K.
  OpBuilder &b = ctx.b();
  Location loc = ctx.loc();
  Type et = wt.getElementType();
  SmallVector<int64_t> grouped{g, c / g, mg};
  llvm::append_range(grouped, kernel);
  Value w = ctx.reshapeTo(ctx.input(1), grouped, {});
  SmallVector<int64_t> perm{0, 2, 1}, permuted{g, mg, c / g};
  for (int64_t d = 0; d < spatial; ++d) {
    perm.push_back(3 + d);
    permuted.push_back(kernel[d]);
  }
  w = TransposeOp::create(b, loc, RankedTensorType::get(permuted, et), w, perm);
  SmallVector<int64_t> regrouped{g * mg, c / g};
  llvm::append_range(regrouped, kernel);
  w = ctx.reshapeTo(w, regrouped, {});
  SmallVector<int64_t> starts, ends, steps, axes;
  for (int64_t d = 0; d < spatial; ++d) {
    starts.push_back(kernel[d] - 1);
    ends.push_back(std::numeric_limits<int64_t>::min());
    steps.push_back(-1);
    axes.push_back(d + 2);
  }
  w = SliceOp::create(b, loc, RankedTensorType::get(regrouped, et), w,
                      ctx.constI64(starts), ctx.constI64(ends),
                      ctx.constI64(steps), b.getDenseI64ArrayAttr(axes));
  SmallVector<int64_t> shape{in.getDimSize(0), g * mg};
  llvm::append_range(shape, out);
  Value bias = ctx.hasInput(2) ? ctx.input(2) : Value();
  ctx.setOutput(0, ConvOp::create(
                       b, loc, RankedTensorType::get(shape, in.getElementType()),
                       ctx.input(0), w, bias,
                       b.getDenseI64ArrayAttr(SmallVector<int64_t>(spatial, 1)),
                       b.getDenseI64ArrayAttr(*dilations),
                       b.getDenseI64ArrayAttr(convPads), b.getI64IntegerAttr(g),
                       b.getDenseI64ArrayAttr(*strides)));
  return success();
}

LogicalResult convertPool(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  StringRef op = ctx.node().op_type();
  RankedTensorType in = ctx.inputType(0);
  if (!isa<FloatType>(in.getElementType()))
    return ctx.error() << "expected a float input, got " << in.getElementType();
  if (op == "MaxPool" && ctx.outputUsed(1))
    return ctx.error() << "the 'Indices' output is not supported";
  FailureOr<Window> w = readWindow(ctx, in, std::nullopt);
  FailureOr<int64_t> includePad = ctx.intAttr("count_include_pad", 0);
  FailureOr<int64_t> p = ctx.intAttr("p", 2);
  if (failed(w) || failed(includePad) || failed(p))
    return failure();
  if (*p < 1)
    return ctx.error() << "'p' must be >= 1, got " << *p;
  SmallVector<int64_t> shape = outputShape(in, in.getDimSize(1), *w);
  if (failed(checkFits(ctx, shape, in)))
    return failure();
  OpBuilder &b = ctx.b();
  StringRef kind = op == "MaxPool" ? "max" : op == "LpPool" ? "lp" : "avg";
  ctx.setOutput(0, PoolOp::create(b, ctx.loc(),
                                  RankedTensorType::get(shape,
                                                        in.getElementType()),
                                  ctx.input(0), b.getStringAttr(kind),
                                  b.getDenseI64ArrayAttr(w->kernel),
                                  b.getDenseI64ArrayAttr(w->strides),
                                  b.getDenseI64ArrayAttr(w->dilations),
                                  b.getDenseI64ArrayAttr(w->pads),
                                  b.getI64IntegerAttr(*p),
                                  *includePad ? b.getUnitAttr() : UnitAttr(),
                                  w->ceil ? b.getUnitAttr() : UnitAttr()));
  return success();
}

} // namespace strata::import
