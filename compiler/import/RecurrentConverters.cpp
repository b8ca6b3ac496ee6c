//===- RecurrentConverters.cpp - ONNX RNN, GRU and LSTM unrolled -----------===//
// SPDX-License-Identifier: Apache-2.0
// The recurrent layers unrolled over their static sequence length: the
// input projection of every step is one strata.linear over the whole
// sequence, each step one linear of the hidden state plus the gate formulas
// of the spec. Steps past a row's sequence_lens keep its state and output
// zeros (a where on the step's mask), which also makes the reverse
// direction start at each row's own last step. Layout 1 (batch first) is
// transposed in and out.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/Formula.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

namespace {

enum class Cell { Rnn, Gru, Lstm };

/// One activation of the `activations` list with its alpha and beta.
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

/// The activations the spec allows, with their default parameters; false
/// for an unknown name.
bool withDefaults(Activation &a, std::optional<double> alpha,
                  std::optional<double> beta) {
  struct Known {
    const char *name;
    int params; // 0: none, 1: alpha, 2: alpha and beta
    double alpha, beta;
  };
  static const Known kKnown[] = {
      {"Relu", 0, 0, 0},        {"Tanh", 0, 0, 0},
      {"Sigmoid", 0, 0, 0},     {"Softsign", 0, 0, 0},
      {"Softplus", 0, 0, 0},    {"LeakyRelu", 1, 0.01, 0},
      {"ThresholdedRelu", 1, 1.0, 0}, {"Elu", 1, 1.0, 0},
      {"HardSigmoid", 2, 0.2, 0.5},   {"ScaledTanh", 2, 1.0, 1.0},
      {"Affine", 2, 1.0, 0.0}};
  for (const Known &k : kKnown)
    if (StringRef(a.name).equals_insensitive(k.name)) {
      a.name = k.name;
      a.alpha = k.params >= 1 && alpha ? *alpha : k.alpha;
      a.beta = k.params >= 2 && beta ? *beta : k.beta;
      return true;
    }
  return false;
}

Value activate(Formula &f, const Activation &a, Value x) {
  const std::string &n = a.name;
  if (n == "Relu")
    return f.max(x, f.c(0));
  if (n == "Tanh")
    return f.unary<TanhOp>(x);
  if (n == "Sigmoid")
    return f.unary<SigmoidOp>(x);
  if (n == "Softsign")
    return f.div(x, f.add(f.c(1), f.abs(x)));
  if (n == "Softplus")
    return f.softplus(x);
  if (n == "LeakyRelu")
    return f.where(f.compare<LessOp>(x, f.c(0)), f.mul(x, f.c(a.alpha)), x);
  if (n == "ThresholdedRelu")
    return f.where(f.compare<GreaterOp>(x, f.c(a.alpha)), x, f.c(0));
  if (n == "Elu")
    return f.where(f.compare<LessOp>(x, f.c(0)),
                   f.mul(f.c(a.alpha), f.sub(f.exp(x), f.c(1))), x);
  if (n == "HardSigmoid")
    return f.max(f.c(0),
                 f.min(f.c(1), f.add(f.mul(x, f.c(a.alpha)), f.c(a.beta))));
  if (n == "ScaledTanh")
    return f.mul(f.c(a.alpha), f.unary<TanhOp>(f.mul(x, f.c(a.beta))));
  return f.add(f.mul(x, f.c(a.alpha)), f.c(a.beta)); // Affine
}

/// Reads `activations`, `activation_alpha` and `activation_beta`: |count|
/// functions per direction, the defaults of |cell| when absent. Alphas and
/// betas are consumed in order by the functions that take them.
FailureOr<SmallVector<Activation>> readActivations(ImportContext &ctx,
                                                   Cell cell,
                                                   int64_t directions) {
  static const char *kDefaults[][3] = {
      {"Tanh", "", ""}, {"Sigmoid", "Tanh", ""}, {"Sigmoid", "Tanh", "Tanh"}};
  const int count = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 2 : 3;
  SmallVector<Activation> out;
  const onnx::AttributeProto *names = ctx.attr("activations");
  if (!names || names->strings_size() == 0) {
    for (int64_t d = 0; d < directions; ++d)
      for (int i = 0; i < count; ++i)
        out.push_back({kDefaults[static_cast<int>(cell)][i], 0, 0});
  } else {
    if (names->strings_size() != count * directions)
      return ctx.error() << "expected " << count * directions
                         << " activations, got " << names->strings_size();
    for (const std::string &name : names->strings())
      out.push_back({name, 0, 0});
  }
  // The spec has alphas and betas "consumed in the order of activation
  // functions": the functions that take one consume them in order (as
  // onnxruntime's GRU and LSTM read them; its RNN reads value i for
  // function i, which agrees whenever every function takes one).
  const onnx::AttributeProto *alphas = ctx.attr("activation_alpha");
  const onnx::AttributeProto *betas = ctx.attr("activation_beta");
  const int n = static_cast<int>(out.size());
  int nextAlpha = 0, nextBeta = 0;
  for (int i = 0; i < n; ++i) {
    Activation &a = out[i];
    Activation probe = a;
    if (!withDefaults(probe, std::nullopt, std::nullopt))
      return ctx.error() << "unsupported activation '" << a.name << "'";
    const bool takesAlpha = probe.name != "Relu" && probe.name != "Tanh" &&
                            probe.name != "Sigmoid" &&
                            probe.name != "Softsign" &&
                            probe.name != "Softplus";
    const bool takesBeta = probe.name == "HardSigmoid" ||
                           probe.name == "ScaledTanh" ||
                           probe.name == "Affine";
    auto pick = [&](const onnx::AttributeProto *list, bool takes,
                    int &next) -> std::optional<double> {
      if (!list || !takes)
        return std::nullopt;
      if (next < list->floats_size())
        return list->floats(next++);
      return std::nullopt;
    };
    std::optional<double> alpha = pick(alphas, takesAlpha, nextAlpha);
    std::optional<double> beta = pick(betas, takesBeta, nextBeta);
    withDefaults(a, alpha, beta);
  }
  return out;
}

class Unroller {
public:
  Unroller(ImportContext &ctx, Type element)
      : ctx_(ctx), b_(ctx.b()), f_(ctx, element), element_(element) {}

  /// Piece |index| of |x| split into |count| equal parts along |axis|,
  /// with that axis dropped (static extents, or the batch from |x|).
  Value piece(Value x, int64_t axis, int64_t count, int64_t index) {
    RankedTensorType t = typeOf(x);
    SmallVector<int64_t> dims(t.getShape());
    dims[axis] = t.getDimSize(axis) / count;
    auto partType = RankedTensorType::get(dims, t.getElementType());
    auto split = SplitOp::create(
        b_, ctx_.loc(), SmallVector<Type>(count, partType), x,
        b_.getI64IntegerAttr(axis),
        b_.getDenseI64ArrayAttr(SmallVector<int64_t>(count, dims[axis])));
    Value part = split.getResult(index);
    if (dims[axis] != 1)
      return part;
    SmallVector<int64_t> squeezed;
    SmallVector<DimSource> sources;
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != axis) {
        squeezed.push_back(dims[d]);
        sources.push_back(ShapedType::isDynamic(dims[d])
                              ? DimSource::fromInput(d)
                              : DimSource::fixed(dims[d]));
      }
    return ctx_.reshapeTo(part, squeezed, sources);
  }
  /// The [K, N] transpose of a [N, K] matrix.
  Value transposed(Value w) {
    RankedTensorType t = typeOf(w);
    return TransposeOp::create(
        b_, ctx_.loc(),
        RankedTensorType::get({t.getDimSize(1), t.getDimSize(0)},
                              t.getElementType()),
        w, b_.getDenseI64ArrayAttr({1, 0}));
  }
  /// x [..., K] times w [K, N] plus |bias| [N] (may be null).
  Value linear(Value x, Value w, Value bias) {
    SmallVector<int64_t> dims(typeOf(x).getShape());
    dims.back() = typeOf(w).getDimSize(1);
    return LinearOp::create(b_, ctx_.loc(),
                            RankedTensorType::get(dims, element_), x, w, bias);
  }
  /// |x| with a leading dim of 1 per |ones|.
  Value withLeadingOnes(Value x, int ones) {
    RankedTensorType t = typeOf(x);
    SmallVector<int64_t> dims(ones, 1);
    llvm::append_range(dims, t.getShape());
    SmallVector<DimSource> sources(ones, DimSource::fixed(1));
    for (int64_t d = 0; d < t.getRank(); ++d)
      sources.push_back(t.isDynamicDim(d) ? DimSource::fromInput(d)
                                          : DimSource::fixed(t.getDimSize(d)));
    return ctx_.reshapeTo(x, dims, sources);
  }
  Value concat(ArrayRef<Value> parts, int64_t axis) {
    if (parts.size() == 1)
      return parts[0];
    SmallVector<int64_t> dims(typeOf(parts[0]).getShape());
    dims[axis] = 0;
    for (Value p : parts)
      dims[axis] += typeOf(p).getDimSize(axis);
    return ConcatOp::create(b_, ctx_.loc(),
                            RankedTensorType::get(dims, element_), parts,
                            b_.getI64IntegerAttr(axis));
  }
  Formula &f() { return f_; }

private:
  ImportContext &ctx_;
  OpBuilder &b_;
  Formula f_;
  Type element_;
};

} // namespace

LogicalResult convertRecurrent(ImportContext &ctx) {
  StringRef op = ctx.node().op_type();
  const Cell cell = op == "RNN" ? Cell::Rnn : op == "GRU" ? Cell::Gru
                                                          : Cell::Lstm;
  const int64_t gates = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4;
  if (failed(ctx.requireInputs(3)))
    return failure();
  FailureOr<int64_t> hidden = ctx.intAttr("hidden_size", 0);
  FailureOr<int64_t> layout = ctx.intAttr("layout", 0);
  FailureOr<std::string> direction = ctx.stringAttr("direction", "forward");
  FailureOr<int64_t> linearBeforeReset = ctx.intAttr("linear_before_reset", 0);
  FailureOr<int64_t> inputForget = ctx.intAttr("input_forget", 0);
  if (failed(hidden) || failed(layout) || failed(direction) ||
      failed(linearBeforeReset) || failed(inputForget))
    return failure();
  const onnx::AttributeProto *clipAttr = ctx.attr("clip");
  std::optional<double> clip;
  if (clipAttr)
    clip = clipAttr->f();
  if (*direction != "forward" && *direction != "reverse" &&
      *direction != "bidirectional")
    return ctx.error() << "unknown direction '" << *direction << "'";
  const int64_t directions = *direction == "bidirectional" ? 2 : 1;
  RankedTensorType xt = ctx.inputType(0), wt = ctx.inputType(1),
                   rt = ctx.inputType(2);
  Type element = xt.getElementType();
  if (!isa<FloatType>(element) || xt.getRank() != 3)
    return ctx.error() << "expected a rank-3 float input, got "
                       << formatShape(xt.getShape());
  const int64_t steps = xt.getDimSize(*layout ? 1 : 0);
  // The input size is W's: an input whose last dim the importer could not
  // resolve (a Reshape to [T, B, -1] with a dynamic batch) is reshaped to
  // it, which checks the element count at run time.
  const int64_t inputSize = wt.getRank() == 3 ? wt.getDimSize(2)
                                              : ShapedType::kDynamic;
  const int64_t h = *hidden;
  if (ShapedType::isDynamic(steps) || ShapedType::isDynamic(inputSize) ||
      steps > 4096)
    return ctx.error() << "expected a static sequence length (at most 4096) "
                       << "and input size to unroll, got "
                       << formatShape(xt.getShape());
  if (h < 1 || wt != RankedTensorType::get({directions, gates * h, inputSize},
                                           element) ||
      rt != RankedTensorType::get({directions, gates * h, h}, element))
    return ctx.error() << "expected W " << directions << "x" << gates * h
                       << "x" << inputSize << " and R " << directions << "x"
                       << gates * h << "x" << h << ", got "
                       << formatShape(wt.getShape()) << " and "
                       << formatShape(rt.getShape());
  FailureOr<SmallVector<Activation>> activations =
      readActivations(ctx, cell, directions);
  if (failed(activations))
    return failure();
  auto optionalInput = [&](unsigned i, ArrayRef<int64_t> dims) -> FailureOr<Value> {
    if (!ctx.hasInput(i))
      return Value();
    if (ctx.inputType(i).getShape() != dims &&
        failed(verifyCompatibleShape(ctx.inputType(i).getShape(), dims)))
      return ctx.error() << "input " << i << " has shape "
                         << formatShape(ctx.inputType(i).getShape())
                         << ", expected " << formatShape(dims);
    return ctx.input(i);
  };
  const int64_t batch = xt.getDimSize(*layout ? 0 : 1);
  SmallVector<int64_t> stateDims =
      *layout ? SmallVector<int64_t>{batch, directions, h}
              : SmallVector<int64_t>{directions, batch, h};
  FailureOr<Value> bias = optionalInput(3, {directions, 2 * gates * h});
  FailureOr<Value> lens = optionalInput(4, {batch});
  FailureOr<Value> initialH = optionalInput(5, stateDims);
  FailureOr<Value> initialC =
      cell == Cell::Lstm ? optionalInput(6, stateDims) : FailureOr<Value>();
  FailureOr<Value> peepholes =
      cell == Cell::Lstm ? optionalInput(7, {directions, 3 * h})
                         : FailureOr<Value>();
  if (failed(bias) || failed(lens) || failed(initialH) ||
      (cell == Cell::Lstm && (failed(initialC) || failed(peepholes))))
    return failure();

  Unroller u(ctx, element);
  Formula &f = u.f();
  OpBuilder &b = ctx.b();
  // [T, B, I] whatever the layout.
  Value x = ctx.input(0);
  if (xt.isDynamicDim(2)) {
    const int64_t batchAxis = *layout ? 0 : 1;
    SmallVector<int64_t> dims(xt.getShape());
    dims[2] = inputSize;
    SmallVector<DimSource> sources(3, DimSource::fixed(steps));
    sources[batchAxis] = ShapedType::isDynamic(dims[batchAxis])
                             ? DimSource::fromInput(batchAxis)
                             : DimSource::fixed(dims[batchAxis]);
    sources[2] = DimSource::fixed(inputSize);
    x = ctx.reshapeTo(x, dims, sources);
  }
  if (*layout)
    x = TransposeOp::create(
        b, ctx.loc(),
        RankedTensorType::get({steps, batch, inputSize}, element), x,
        b.getDenseI64ArrayAttr({1, 0, 2}));
  // Each step's mask: t < lens[b], as [B, 1].
  SmallVector<Value> masks(steps);
  if (*lens) {
    Value lengths = ctx.reshapeTo(
        ctx.asI64Vector(*lens), {batch, 1},
        {DimSource::fromInput(0), DimSource::fixed(1)});
    for (int64_t t = 0; t < steps; ++t)
      masks[t] = f.compare<LessOp>(ctx.constI64({t}, /*scalar=*/true),
                                   lengths);
  }
  // Zeros [B, H] for absent initial states.
  auto zeros = [&]() -> Value {
    Value shape = ctx.buildShape(
        x, {batch == ShapedType::kDynamic ? DimSource::fromInput(1)
                                          : DimSource::fixed(batch),
            DimSource::fixed(h)});
    return ExpandOp::create(b, ctx.loc(),
                            RankedTensorType::get({batch, h}, element),
                            f.c(0), shape);
  };
  const int64_t stateAxis = *layout ? 1 : 0;
  const int count = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 2 : 3;

  SmallVector<Value> outputs, finalH, finalC;
  for (int64_t d = 0; d < directions; ++d) {
    const bool reverse = *direction == "reverse" || d == 1;
    ArrayRef<Activation> act =
        ArrayRef<Activation>(*activations).slice(d * count, count);
    auto gate = [&](int i, Value pre) {
      if (clip)
        pre = f.max(f.c(-*clip), f.min(f.c(*clip), pre));
      return activate(f, act[i], pre);
    };
    Value w = u.transposed(u.piece(ctx.input(1), 0, directions, d));
    Value r = u.transposed(u.piece(ctx.input(2), 0, directions, d));
    Value wb, rb;
    if (*bias) {
      Value both = u.piece(*bias, 0, directions, d);
      wb = u.piece(both, 0, 2, 0);
      rb = u.piece(both, 0, 2, 1);
    }
    // GRU's hidden gate applies its recurrent weight after the reset gate:
    // its part of R and Rb is kept apart.
    Value rh, rbh;
    if (cell == Cell::Gru) {
      Value rAll = u.piece(ctx.input(2), 0, directions, d);
      rh = u.transposed(u.piece(rAll, 0, 3, 2));
      Value rzr = u.concat({u.piece(rAll, 0, 3, 0), u.piece(rAll, 0, 3, 1)}, 0);
      r = u.transposed(rzr);
      if (rb) {
        rbh = u.piece(rb, 0, 3, 2);
        rb = u.concat({u.piece(rb, 0, 3, 0), u.piece(rb, 0, 3, 1)}, 0);
      }
    }
    Value projected = u.linear(x, w, wb); // [T, B, G*H]
    Value hState = *initialH ? u.piece(*initialH, stateAxis, directions, d)
                             : zeros();
    Value cState;
    if (cell == Cell::Lstm)
      cState = *initialC ? u.piece(*initialC, stateAxis, directions, d)
                         : zeros();
    Value pi, po, pf;
    if (cell == Cell::Lstm && *peepholes) {
      Value p = u.piece(*peepholes, 0, directions, d);
      pi = u.piece(p, 0, 3, 0);
      po = u.piece(p, 0, 3, 1);
      pf = u.piece(p, 0, 3, 2);
    }
    SmallVector<Value> ys(steps);
    for (int64_t i = 0; i < steps; ++i) {
      const int64_t t = reverse ? steps - 1 - i : i;
      Value xp = u.piece(projected, 0, steps, t); // [B, G*H]
      Value hp = u.linear(hState, r, rb);
      auto part = [&](Value v, int64_t parts, int64_t k) {
        return u.piece(v, 1, parts, k);
      };
      Value hNew, cNew;
      if (cell == Cell::Rnn) {
        hNew = gate(0, f.add(xp, hp));
      } else if (cell == Cell::Gru) {
        Value z = gate(0, f.add(part(xp, 3, 0), part(hp, 2, 0)));
        Value reset = gate(0, f.add(part(xp, 3, 1), part(hp, 2, 1)));
        Value candidate;
        if (*linearBeforeReset) {
          Value recurrent = u.linear(hState, rh, rbh);
          candidate = f.add(part(xp, 3, 2), f.mul(reset, recurrent));
        } else {
          candidate = f.add(part(xp, 3, 2),
                            u.linear(f.mul(reset, hState), rh, rbh));
        }
        Value hh = gate(1, candidate);
        hNew = f.add(f.mul(f.sub(f.c(1), z), hh), f.mul(z, hState));
      } else {
        auto pre = [&](int64_t k) { return f.add(part(xp, 4, k), part(hp, 4, k)); };
        Value iPre = pre(0), oPre = pre(1), fPre = pre(2), cPre = pre(3);
        if (pi) {
          iPre = f.add(iPre, f.mul(pi, cState));
          fPre = f.add(fPre, f.mul(pf, cState));
        }
        Value in = gate(0, iPre);
        Value forget = *inputForget ? f.sub(f.c(1), in) : gate(0, fPre);
        cNew = f.add(f.mul(forget, cState), f.mul(in, gate(1, cPre)));
        if (po)
          oPre = f.add(oPre, f.mul(po, cNew));
        hNew = f.mul(gate(0, oPre), gate(2, cNew));
      }
      if (!hNew)
        return failure();
      if (masks[t]) {
        ys[t] = f.where(masks[t], hNew, f.c(0));
        hState = f.where(masks[t], hNew, hState);
        if (cNew)
          cState = f.where(masks[t], cNew, cState);
      } else {
        ys[t] = hState = hNew;
        if (cNew)
          cState = cNew;
      }
    }
    SmallVector<Value> stacked;
    for (Value y : ys)
      stacked.push_back(u.withLeadingOnes(y, 2)); // [1, 1, B, H]
    outputs.push_back(u.concat(stacked, 0));
    finalH.push_back(u.withLeadingOnes(hState, 1));
    if (cState)
      finalC.push_back(u.withLeadingOnes(cState, 1));
  }
  Value y = u.concat(outputs, 1); // [T, D, B, H]
  Value yh = u.concat(finalH, 0); // [D, B, H]
  Value yc = finalC.empty() ? Value() : u.concat(finalC, 0);
  if (*layout) {
    y = TransposeOp::create(
        b, ctx.loc(),
        RankedTensorType::get({batch, steps, directions, h}, element), y,
        b.getDenseI64ArrayAttr({2, 0, 1, 3}));
    auto batchFirst = [&](Value v) -> Value {
      return TransposeOp::create(
          b, ctx.loc(), RankedTensorType::get({batch, directions, h}, element),
          v, b.getDenseI64ArrayAttr({1, 0, 2}));
    };
    yh = batchFirst(yh);
    if (yc)
      yc = batchFirst(yc);
  }
  ctx.setOutput(0, y);
  ctx.setOutput(1, yh);
  if (yc)
    ctx.setOutput(2, yc);
  return success();
}

} // namespace strata::import
