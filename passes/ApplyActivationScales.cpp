//===- ApplyActivationScales.cpp - Activation-aware weight scaling --------===//
// SPDX-License-Identifier: Apache-2.0
// x W = (x / s)(diag(s) W) for any per-channel s > 0: scaling the rows of W
// that meet large activations before quantization spends the weight grid
// where the output error is made (AWQ), or moves activation outliers into
// the weights (SmoothQuant, for W8A8). Calibration supplies the statistics.

#include "passes/ActivationStatistics.h"
#include "passes/Passes.h"
#include "passes/QuantizationGrid.h"
#include "passes/WeightContractions.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstring>
#include <map>

namespace strata {

#define GEN_PASS_DEF_APPLYACTIVATIONSCALESPASS
#include "passes/Passes.h.inc"

using namespace mlir;
using namespace strata::ir;

namespace {

/// One weight contraction that has statistics.
struct Candidate {
  Operation *op;
  std::string name;
  const ChannelStatistics *stats;
  ConstantOp weight;
  std::vector<float> w; // [k, n] row-major
  int64_t k, n;
};

Value inputOf(Operation *op) {
  if (auto linear = dyn_cast<LinearOp>(op))
    return linear.getInput();
  return cast<MatmulOp>(op).getLhs();
}

Value weightOf(Operation *op) {
  if (auto linear = dyn_cast<LinearOp>(op))
    return linear.getWeight();
  return cast<MatmulOp>(op).getRhs();
}

/// A reshape or slice that keeps the channel (last) dim |k|: the channels
/// it passes are the ones it received.
bool keepsChannels(Operation *op, int64_t k) {
  if (!isa_and_nonnull<ReshapeOp, SliceOp>(op))
    return false;
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return in && out && in.getRank() > 0 && out.getRank() > 0 &&
         in.getDimSize(in.getRank() - 1) == k &&
         out.getDimSize(out.getRank() - 1) == k;
}

/// The value |x| comes from through channel-keeping reshapes and slices.
Value channelRoot(Value x, int64_t k) {
  while (Operation *def = x.getDefiningOp()) {
    if (!keepsChannels(def, k))
      break;
    x = def->getOperand(0);
  }
  return x;
}

/// Every use of |v|, through channel-keeping ops, is the input of one of
/// |members|.
bool onlyFeeds(Value v, int64_t k,
               const llvm::SmallPtrSetImpl<Operation *> &members) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (members.contains(user) && use.getOperandNumber() == 0)
      continue;
    // Reading the shape only is not reading the values.
    if (isa<ShapeOp>(user))
      continue;
    if (use.getOperandNumber() == 0 && keepsChannels(user, k) &&
        onlyFeeds(user->getResult(0), k, members))
      continue;
    return false;
  }
  return true;
}

/// The diagonal proxy of the output error of quantizing diag(s) W and
/// dividing by s again: sum_k E[x_k^2] ||dq(q(w_k s_k)) / s_k - w_k||^2,
/// quantized as strata-quantize-weights will (symmetric absmax per group
/// of rows of each column, ties to even).
double quantizationError(const Candidate &c, const std::vector<float> &s,
                         const std::vector<double> &meanSq, int64_t bits,
                         int64_t groupSize) {
  const SymmetricGrid grid(bits);
  const int64_t group = groupSize > 0 ? std::min(groupSize, c.k) : c.k;
  std::vector<float> amax(c.n);
  double err = 0;
  for (int64_t k0 = 0; k0 < c.k; k0 += group) {
    const int64_t k1 = std::min(c.k, k0 + group);
    std::fill(amax.begin(), amax.end(), 0.0f);
    for (int64_t r = k0; r < k1; ++r)
      for (int64_t j = 0; j < c.n; ++j)
        amax[j] = std::max(amax[j], std::fabs(c.w[r * c.n + j] * s[r]));
    for (int64_t r = k0; r < k1; ++r) {
      double row = 0;
      for (int64_t j = 0; j < c.n; ++j) {
        const float scale = grid.scale(amax[j]);
        const float q = grid.quantize(c.w[r * c.n + j] * s[r], scale);
        const double d = double(q * scale / s[r]) - c.w[r * c.n + j];
        row += d * d;
      }
      err += meanSq[r] * row;
    }
  }
  return err;
}

/// AWQ: s = rms(x)^alpha normalized to a geometric mean of max and min of
/// 1, alpha from a grid; empty when alpha 0 (no scaling) is best.
std::vector<float> awqScales(llvm::ArrayRef<Candidate *> members,
                             const ActivationScaleOptions &options) {
  const ChannelStatistics &stats = *members.front()->stats;
  const int64_t k = members.front()->k;
  std::vector<double> meanSq(k), rms(k);
  double rmsMax = 0;
  for (int64_t i = 0; i < k; ++i) {
    meanSq[i] = stats.sumSq[i] / double(stats.tokens);
    rms[i] = std::sqrt(meanSq[i]);
    rmsMax = std::max(rmsMax, rms[i]);
  }
  if (!(rmsMax > 0))
    return {};
  // A channel that never fired would get s = 0; keep it within 1e-4 of
  // the largest so 1/s stays finite.
  for (double &r : rms)
    r = std::max(r, rmsMax * 1e-4);
  double bestErr = 0, bestAlpha = 0;
  std::vector<float> best, s(k);
  for (int step = 0; step <= 10; ++step) {
    const double alpha = step / 10.0;
    double lo = INFINITY, hi = 0;
    for (int64_t i = 0; i < k; ++i) {
      double v = std::pow(rms[i], alpha);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const double norm = std::sqrt(lo * hi);
    for (int64_t i = 0; i < k; ++i)
      s[i] = float(std::pow(rms[i], alpha) / norm);
    double err = 0;
    for (Candidate *c : members)
      err += quantizationError(*c, s, meanSq, options.bits, options.groupSize);
    if (step == 0 || err < bestErr) {
      bestErr = err;
      bestAlpha = alpha;
      best = s;
    }
  }
  return bestAlpha == 0 ? std::vector<float>() : best;
}

/// SmoothQuant: s = max|x|^a / max|w|^(1 - a) per input channel, the
/// weight maximum over every contraction sharing the input.
std::vector<float> smoothScales(llvm::ArrayRef<Candidate *> members,
                                double alpha) {
  const ChannelStatistics &stats = *members.front()->stats;
  const int64_t k = members.front()->k;
  std::vector<float> s(k, 1.0f);
  for (int64_t i = 0; i < k; ++i) {
    float wmax = 0;
    for (Candidate *c : members)
      for (int64_t j = 0; j < c->n; ++j)
        wmax = std::max(wmax, std::fabs(c->w[i * c->n + j]));
    const double v =
        std::pow(stats.maxAbs[i], alpha) / std::pow(double(wmax), 1.0 - alpha);
    // A dead channel or an all-zero weight row keeps s = 1.
    if (std::isfinite(v) && v > 0)
      s[i] = float(std::min(1e4, std::max(1e-4, v)));
  }
  return s;
}

/// A resource constant of |values| shaped like |type|.
ElementsAttr resourceAttr(RankedTensorType type, llvm::StringRef name,
                          llvm::ArrayRef<float> values) {
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      values.size() * sizeof(float), alignof(float), /*dataIsMutable=*/true);
  std::memcpy(blob.getMutableData().data(), values.data(),
              values.size() * sizeof(float));
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

class Scaler {
public:
  Scaler(const ActivationScaleOptions &options, ActivationScaleCounts &counts)
      : options(options), counts(counts) {}

  void apply(func::FuncOp func, llvm::MutableArrayRef<Candidate> candidates) {
    // Contractions reading one input (sibling projections) share one s.
    llvm::MapVector<Value, SmallVector<Candidate *>> groups;
    for (Candidate &c : candidates)
      groups[channelRoot(inputOf(c.op), c.k)].push_back(&c);
    for (auto &[root, members] : groups) {
      std::vector<float> s = options.method == "smooth"
                                 ? smoothScales(members, options.smoothAlpha)
                                 : awqScales(members, options);
      if (s.empty())
        continue;
      for (Candidate *c : members)
        scaleWeight(*c, members.front()->name, s);
      llvm::SmallPtrSet<Operation *, 4> ops;
      for (Candidate *c : members)
        ops.insert(c->op);
      if (foldIntoNorm(root, members.front()->k, ops, s))
        continue;
      for (Candidate *c : members)
        divideInput(*c, s);
    }
  }

private:
  /// W <- diag(s) W: one new weight per source weight and input (named
  /// by |group|), so entries cloned from one graph, and siblings reading
  /// one weight, keep sharing it.
  void scaleWeight(Candidate &c, const std::string &group,
                   const std::vector<float> &s) {
    auto key = std::make_pair(c.weight.getValue().getAsOpaquePointer(), group);
    auto it = scaledWeights.find(key);
    if (it == scaledWeights.end()) {
      std::vector<float> w = c.w;
      for (int64_t r = 0; r < c.k; ++r)
        for (int64_t j = 0; j < c.n; ++j)
          w[r * c.n + j] *= s[r];
      std::string name = "weight";
      if (auto resource =
              dyn_cast<DenseResourceElementsAttr>(c.weight.getValue()))
        name = resource.getRawHandle().getKey().str();
      auto type = cast<RankedTensorType>(c.weight.getType());
      it = scaledWeights
               .try_emplace(key,
                            resourceAttr(type, name + "_" + options.method, w))
               .first;
    }
    OpBuilder b(c.op);
    Value w = ConstantOp::create(b, c.weight.getLoc(), it->second);
    c.op->setOperand(1, w);
    if (c.weight->use_empty())
      c.weight->erase();
    ++counts.scaled;
  }

  /// A [k] constant of |values| / s.
  Value divided(OpBuilder &b, Location loc, ArrayRef<float> values,
                const std::vector<float> &s) {
    std::vector<float> out(values.begin(), values.end());
    for (size_t i = 0; i < out.size(); ++i)
      out[i] /= s[i];
    auto type = RankedTensorType::get({int64_t(out.size())}, b.getF32Type());
    return ConstantOp::create(b, loc,
                              DenseElementsAttr::get(type, ArrayRef(out)));
  }

  /// norm(x) * g + b, divided by s, is norm(x) * (g / s) + b / s: no
  /// extra op, when every reader of the norm is scaled by the same s.
  bool foldIntoNorm(Value root, int64_t k,
                    const llvm::SmallPtrSetImpl<Operation *> &members,
                    const std::vector<float> &s) {
    Operation *norm = root.getDefiningOp();
    if (!isa_and_nonnull<LayerNormOp, RmsNormOp>(norm))
      return false;
    auto type = cast<RankedTensorType>(root.getType());
    int64_t axis = isa<LayerNormOp>(norm) ? cast<LayerNormOp>(norm).getAxis()
                                          : cast<RmsNormOp>(norm).getAxis();
    if (axis < 0)
      axis += type.getRank();
    if (axis != type.getRank() - 1 || !onlyFeeds(root, k, members))
      return false;
    // The scale, and a layer norm's bias, must be [k] constants.
    SmallVector<std::pair<unsigned, std::vector<float>>> operands;
    for (unsigned i = 1; i < norm->getNumOperands(); ++i) {
      auto constant = norm->getOperand(i).getDefiningOp<ConstantOp>();
      auto ctype = dyn_cast<RankedTensorType>(norm->getOperand(i).getType());
      if (!constant || !ctype || ctype.getRank() != 1 ||
          ctype.getDimSize(0) != k)
        return false;
      std::optional<std::vector<float>> values =
          constantF32Elements(constant.getValue());
      if (!values)
        return false;
      operands.emplace_back(i, std::move(*values));
    }
    OpBuilder b(norm);
    for (auto &[index, values] : operands) {
      Operation *old = norm->getOperand(index).getDefiningOp();
      norm->setOperand(index, divided(b, old->getLoc(), values, s));
      if (old->use_empty())
        old->erase();
    }
    ++counts.folded;
    return true;
  }

  /// x -> x * (1 / s) right before the contraction.
  void divideInput(Candidate &c, const std::vector<float> &s) {
    OpBuilder b(c.op);
    Value x = inputOf(c.op);
    std::vector<float> ones(c.k, 1.0f);
    Value inv = divided(b, c.op->getLoc(), ones, s);
    Value scaled = MulOp::create(b, c.op->getLoc(), x.getType(), x, inv);
    c.op->setOperand(0, scaled);
    ++counts.multiplies;
  }

  const ActivationScaleOptions &options;
  ActivationScaleCounts &counts;
  std::map<std::pair<const void *, std::string>, ElementsAttr> scaledWeights;
};

} // namespace

LogicalResult applyActivationScales(ModuleOp module,
                                    const ActivationStatistics &stats,
                                    const ActivationScaleOptions &options,
                                    ActivationScaleCounts *counts) {
  if (options.method != "awq" && options.method != "smooth")
    return module.emitError() << "activation scaling method must be awq or "
                                 "smooth, got '"
                              << options.method << "'";
  if (options.method == "awq" && options.bits != 4 && options.bits != 8)
    return module.emitError() << "activation scaling for " << options.bits
                              << "-bit weights; expected 4 or 8";
  if (options.smoothAlpha < 0 || options.smoothAlpha > 1)
    return module.emitError()
           << "smooth-alpha must be in [0, 1], got " << options.smoothAlpha;
  llvm::StringSet<> chosen, known;
  for (const std::string &name : options.functions)
    chosen.insert(name);
  // Check everything first, so a mismatch leaves the module as it was.
  std::vector<std::pair<func::FuncOp, std::vector<Candidate>>> work;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!chosen.contains(func.getSymName()))
      continue;
    SmallVector<Operation *> ops = calibratedContractions(func);
    std::vector<std::string> names = contractionNames(ops);
    llvm::SmallPtrSet<Operation *, 4> lmHeads;
    if (options.keepFp32LmHead)
      lmHeads = contractionsReturned(func);
    std::vector<Candidate> candidates;
    for (auto [op, name] : llvm::zip(ops, names)) {
      known.insert(name);
      auto it = stats.find(name);
      if (it == stats.end() || lmHeads.contains(op))
        continue;
      auto xType = cast<RankedTensorType>(inputOf(op).getType());
      const int64_t k = xType.getDimSize(xType.getRank() - 1);
      if (int64_t(it->second.sumSq.size()) != k)
        return op->emitOpError()
               << "activation statistics of '" << name << "' have "
               << it->second.sumSq.size()
               << " channels, the contraction's input has " << k;
      auto weight = weightOf(op).getDefiningOp<ConstantOp>();
      auto wType = dyn_cast<RankedTensorType>(weightOf(op).getType());
      if (!weight || !wType || wType.getRank() != 2)
        continue;
      std::optional<std::vector<float>> w =
          constantF32Elements(weight.getValue());
      if (!w)
        continue;
      candidates.push_back({op, name, &it->second, weight, std::move(*w),
                            wType.getDimSize(0), wType.getDimSize(1)});
    }
    work.emplace_back(func, std::move(candidates));
  }
  for (const auto &[name, unused] : stats)
    if (!known.contains(name))
      return module.emitError()
             << "activation statistics name '" << name
             << "', which is no weight contraction of the scaled functions";
  ActivationScaleCounts local;
  Scaler scaler(options, counts ? *counts : local);
  for (auto &[func, candidates] : work)
    scaler.apply(func, candidates);
  return success();
}

namespace {

struct ApplyActivationScalesPass
    : impl::ApplyActivationScalesPassBase<ApplyActivationScalesPass> {
  using ApplyActivationScalesPassBase::ApplyActivationScalesPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto file = llvm::MemoryBuffer::getFile(statistics);
    if (!file) {
      module.emitError() << "cannot read activation statistics '" << statistics
                         << "': " << file.getError().message();
      return signalPassFailure();
    }
    FailureOr<ActivationStatistics> stats =
        parseActivationStatistics((*file)->getBuffer(), module.getLoc());
    if (failed(stats))
      return signalPassFailure();
    ActivationScaleOptions scaleOptions;
    scaleOptions.functions.assign(functions.begin(), functions.end());
    scaleOptions.method = method;
    scaleOptions.bits = bits;
    scaleOptions.groupSize = groupSize;
    scaleOptions.smoothAlpha = smoothAlpha;
    scaleOptions.keepFp32LmHead = keepFp32LmHead;
    if (failed(applyActivationScales(module, *stats, scaleOptions, nullptr)))
      signalPassFailure();
  }
};

} // namespace
} // namespace strata
