//===- FuseAttention.cpp - Fuse matmul/softmax/matmul attention -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Recognizes softmax(scale * Q K^T + mask) V as torch and HF exports spell it
// and replaces it with one strata.attention. The spellings:
// ../shared/docs/EXPORT-PATTERNS.md §4.4 (from the project root).

#include "passes/Passes.h"

#include "dialects/strata/IR/ConstantValues.h"
#include "dialects/strata/IR/StrataOps.h"
#include "passes/FusionPass.h"
#include "passes/MaskAnalysis.h"
#include "passes/PatternUtils.h"
#include "passes/RepeatedHeads.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <array>
#include <cmath>
#include <functional>

namespace strata {
#define GEN_PASS_DEF_FUSEATTENTIONPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

/// A rank-4 operand of the fused op: |source| permuted by |perm| (a new
/// transpose unless |perm| is the identity).
struct PermutedValue {
  Value source;
  std::array<int64_t, 4> perm = {0, 1, 2, 3};
};

/// A matched attention: operands, the scale, the final matmul and every op it
/// replaces (for the fused location).
struct AttentionMatch {
  struct Mask {
    Value value;
    MaskKind kind;
    /// Set for an additive mask left from splitting a causal one off: the
    /// mask is where(value, zero, fill), built by the rewrite.
    Value zero, fill;
  };
  PermutedValue query, key;
  Value value;
  /// The masks applied to the scores, outermost first; causal ones are
  /// removed once recognized.
  SmallVector<Mask, 2> masks;
  bool causal = false;
  /// A sliding window (and its sinks) the causal mask also had.
  std::optional<int64_t> window;
  int64_t sinks = 0;
  // The additive masks apply after the causal one (mask_hidden).
  bool maskHidden = false;
  /// The masked scores are clamped to the lowest float (transformers'
  /// `max(scores, finfo.min)`): a -inf becomes the lowest finite score.
  bool clamped = false;
  double scale = 1.0;
  Operation *root = nullptr;
  SmallVector<Operation *> ops;
};

/// For a mul or div |op| whose result has the type of one operand, the other
/// operand as a constant factor: `x * c`, `c * x` or `x / c` (as 1/c). Sets
/// |x| to the scaled operand.
std::optional<double> matchScaleOp(Operation *op, Value &x) {
  auto factor = [&](Value a, Value c) -> std::optional<double> {
    if (a.getType() != op->getResult(0).getType())
      return std::nullopt;
    std::optional<double> value = evaluateScalarConstant(c);
    if (value && std::isfinite(*value) && *value != 0.0) {
      x = a;
      return value;
    }
    return std::nullopt;
  };
  if (auto div = dyn_cast_if_present<DivOp>(op)) {
    if (std::optional<double> c = factor(div.getLhs(), div.getRhs()))
      return 1.0 / *c;
    return std::nullopt;
  }
  if (auto mul = dyn_cast_if_present<MulOp>(op)) {
    if (std::optional<double> c = factor(mul.getLhs(), mul.getRhs()))
      return c;
    if (std::optional<double> c = factor(mul.getRhs(), mul.getLhs()))
      return c;
  }
  return std::nullopt;
}

/// True if the static dims of |shape| broadcast to |target| (rank 4).
bool broadcastsTo(ArrayRef<int64_t> shape, ArrayRef<int64_t> target) {
  if (shape.size() > target.size())
    return false;
  ArrayRef<int64_t> tail = target.take_back(shape.size());
  for (auto [s, t] : llvm::zip(shape, tail))
    if (!ShapedType::isDynamic(s) && s != 1 && !ShapedType::isDynamic(t) &&
        s != t)
      return false;
  return true;
}

/// Extents |a| and |b| may be equal (equal, or one is dynamic).
bool compatible(int64_t a, int64_t b) {
  return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
}

/// True if |op| has one user other than `strata.shape` ops (which read
/// only its type, that of the value it scales).
bool hasOneUseBesidesShapes(Operation *op) {
  return llvm::count_if(op->getUsers(), [](Operation *user) {
           return !isa<ShapeOp>(user);
         }) == 1;
}

/// True if |op| scales a value from outside |chain| by a constant (a scale
/// on Q or K): shapes of its result may be read from that value instead.
bool isOperandScale(Operation *op,
                    const llvm::SmallPtrSetImpl<Operation *> &chain) {
  Value scaled;
  if (!isa<MulOp, DivOp>(op) || !matchScaleOp(op, scaled))
    return false;
  Operation *def = scaled.getDefiningOp();
  return !def || !chain.contains(def);
}

/// |v| with a constant scalar factor peeled off (`v * c`, `c * v` or `v / c`
/// of v's type, used once besides its shape), the factor multiplied into
/// |scale| and the op appended to |ops|; else |v|.
Value peelScale(Value v, double &scale, SmallVectorImpl<Operation *> &ops) {
  Operation *op = v.getDefiningOp();
  if (!isa_and_present<MulOp, DivOp>(op) || !hasOneUseBesidesShapes(op))
    return v;
  Value x = v;
  std::optional<double> s = matchScaleOp(op, x);
  if (!s)
    return v;
  scale *= *s;
  ops.push_back(op);
  return x;
}

/// For K^T = transpose(X, p) (rank 4), K as X permuted by p with its last
/// two entries swapped, a scalar scale on X (before the transpose) peeled
/// into |scale|. std::nullopt when |kt| is no such transpose.
std::optional<PermutedValue> keyOfTransposed(Value kt, double &scale,
                                             SmallVectorImpl<Operation *> &ops) {
  auto transpose = kt.getDefiningOp<TransposeOp>();
  if (!transpose || transpose.getPermutation().size() != 4)
    return std::nullopt;
  PermutedValue key;
  llvm::copy(transpose.getPermutation(), key.perm.begin());
  std::swap(key.perm[2], key.perm[3]);
  key.source = transpose.getInput();
  if (transpose->hasOneUse()) {
    ops.push_back(transpose);
    key.source = peelScale(key.source, scale, ops);
  }
  return key;
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (p != static_cast<int64_t>(i))
      return false;
  return true;
}

/// True if the heads of |a| and |b| repeat their sources alike in the way
/// strata.attention groups query heads.
bool groupedAlike(const RepeatedHeads &a, const RepeatedHeads &b) {
  auto heads = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getDimSize(1);
  };
  return a.grouped && b.grouped && a.copies == b.copies &&
         heads(a.source) == heads(b.source);
}

/// The range of values |v| may hold, from constants, integer casts and
/// their arithmetic through data movement; std::nullopt when unknown. Tells
/// whether a mask can hold -inf.
std::optional<std::pair<double, double>> valueBounds(Value v, int depth = 0) {
  Operation *op = v.getDefiningOp();
  if (!op || depth > 12)
    return std::nullopt;
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto fp = dyn_cast<DenseFPElementsAttr>(constant.getValue());
    if (!fp || fp.getNumElements() > 4096)
      return std::nullopt;
    double lo = INFINITY, hi = -INFINITY;
    for (APFloat x : fp.getValues<APFloat>()) {
      double d = x.convertToDouble();
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    }
    if (std::isnan(lo) || std::isnan(hi))
      return std::nullopt;
    return std::pair(lo, hi);
  }
  if (auto cast = dyn_cast<CastOp>(op)) {
    auto from =
        dyn_cast<IntegerType>(getElementTypeOrSelf(cast.getInput().getType()));
    if (!from)
      return valueBounds(cast.getInput(), depth + 1);
    if (from.getWidth() == 1)
      return std::pair(0.0, 1.0);
    double m = std::ldexp(1.0, from.getWidth() - 1);
    return std::pair(-m, m);
  }
  if (isa<ReshapeOp, ExpandOp, TransposeOp, SliceOp>(op))
    return valueBounds(op->getOperand(0), depth + 1);
  auto both = [&](Value a, Value b)
      -> std::optional<std::pair<std::pair<double, double>,
                                 std::pair<double, double>>> {
    std::optional<std::pair<double, double>> x = valueBounds(a, depth + 1);
    std::optional<std::pair<double, double>> y = valueBounds(b, depth + 1);
    if (!x || !y)
      return std::nullopt;
    return std::pair(*x, *y);
  };
  if (auto where = dyn_cast<WhereOp>(op)) {
    auto xy = both(where.getTrueValue(), where.getFalseValue());
    if (!xy)
      return std::nullopt;
    return std::pair(std::min(xy->first.first, xy->second.first),
                     std::max(xy->first.second, xy->second.second));
  }
  if (!isa<AddOp, SubOp, MulOp>(op))
    return std::nullopt;
  auto xy = both(op->getOperand(0), op->getOperand(1));
  if (!xy)
    return std::nullopt;
  auto [x, y] = *xy;
  if (isa<AddOp>(op))
    return std::pair(x.first + y.first, x.second + y.second);
  if (isa<SubOp>(op))
    return std::pair(x.first - y.second, x.second - y.first);
  double p[] = {x.first * y.first, x.first * y.second, x.second * y.first,
                x.second * y.second};
  if (llvm::any_of(p, [](double d) { return std::isnan(d); }))
    return std::nullopt;
  return std::pair(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
}

/// True if every value of the float mask |v| is finite in its type.
bool isKnownFinite(Value v) {
  std::optional<std::pair<double, double>> b = valueBounds(v);
  if (!b)
    return false;
  auto et = dyn_cast<FloatType>(getElementTypeOrSelf(v.getType()));
  if (!et)
    return false;
  double largest =
      APFloat::getLargest(et.getFloatSemantics()).convertToDouble();
  return b->first >= -largest && b->second <= largest;
}

/// Tries to match attention around |softmax|; on failure |reason| says why
/// and |candidate| says whether |softmax| is over a rank-4 tensor.
std::optional<AttentionMatch>
matchAttention(SoftmaxOp softmax, std::string &reason, bool &candidate) {
  AttentionMatch match;
  auto scoresType = dyn_cast<RankedTensorType>(softmax.getType());
  candidate = scoresType && scoresType.getRank() == 4;
  if (!candidate)
    return std::nullopt;
  int64_t axis = static_cast<int64_t>(softmax.getAxis());
  if (axis != -1 && axis != 3) {
    reason = "the softmax is not over the last axis";
    return std::nullopt;
  }
  ArrayRef<int64_t> scoresShape = scoresType.getShape();
  // Masks: where(C, s, fill), where(C, fill, s) and s + M, nested in any
  // order (GPT-2: a causal where inside a padding add).
  Value x = softmax.getInput();
  auto isFill = [](Value v) {
    std::optional<double> fill = evaluateScalarConstant(v);
    return fill && isHiddenFill(*fill);
  };
  // The scores side of a where or an add: what leads to the QK matmul
  // rather than a mask built from constants.
  std::function<bool(Value, int)> isScoresSide = [&](Value v, int depth) {
    Operation *op = v.getDefiningOp();
    if (!op || depth > 6)
      return false;
    if (auto where = dyn_cast<WhereOp>(op))
      return (!evaluateScalarConstant(where.getTrueValue()) &&
              isScoresSide(where.getTrueValue(), depth + 1)) ||
             (!evaluateScalarConstant(where.getFalseValue()) &&
              isScoresSide(where.getFalseValue(), depth + 1));
    if (auto add = dyn_cast<AddOp>(op))
      return isScoresSide(add.getLhs(), depth + 1) ||
             isScoresSide(add.getRhs(), depth + 1);
    return isa<MatmulOp, MulOp, DivOp>(op);
  };
  // A clamp of the masked scores to the lowest float, max(s, lowest) (either
  // order): it only turns -inf into the lowest finite score. Clamping to -inf
  // changes nothing.
  auto scoresElement = dyn_cast<FloatType>(scoresType.getElementType());
  if (auto clamp = x.getDefiningOp<MaxOp>(); clamp && scoresElement) {
    FloatType et = scoresElement;
    double lowest =
        APFloat::getLargest(et.getFloatSemantics(), /*Negative=*/true)
            .convertToDouble();
    matchEitherOrder(clamp.getLhs(), clamp.getRhs(), true,
                     [&](Value s, Value c) {
                       std::optional<double> bound = evaluateScalarConstant(c);
                       if (s.getType() != clamp.getType() || !bound ||
                           *bound > lowest)
                         return false;
                       match.clamped = std::isfinite(*bound);
                       match.ops.push_back(clamp);
                       x = s;
                       return true;
                     });
  }
  for (int layer = 0; layer < 4; ++layer) {
    if (auto where = x.getDefiningOp<WhereOp>()) {
      auto condType =
          dyn_cast<RankedTensorType>(where.getCondition().getType());
      if (where.getType() != x.getType() || !condType ||
          !broadcastsTo(condType.getShape(), scoresShape))
        break;
      if (isFill(where.getFalseValue()) &&
          where.getTrueValue().getType() == where.getType()) {
        match.masks.push_back({where.getCondition(), MaskKind::Keep});
        x = where.getTrueValue();
      } else if (isFill(where.getTrueValue()) &&
                 where.getFalseValue().getType() == where.getType()) {
        match.masks.push_back({where.getCondition(), MaskKind::Drop});
        x = where.getFalseValue();
      } else {
        break;
      }
      match.ops.push_back(where);
      continue;
    }
    auto add = x.getDefiningOp<AddOp>();
    if (!add)
      break;
    bool peeled = matchEitherOrder(
        add.getLhs(), add.getRhs(), true, [&](Value s, Value m) {
          auto maskType = dyn_cast<RankedTensorType>(m.getType());
          if (s.getType() != add.getType() || !isScoresSide(s, 0) ||
              !maskType || !isa<FloatType>(maskType.getElementType()) ||
              !broadcastsTo(maskType.getShape(), scoresShape))
            return false;
          match.masks.push_back({m, MaskKind::Additive});
          match.ops.push_back(add);
          x = s;
          return true;
        });
    if (!peeled)
      break;
  }
  // Scale on the scores: s / c, s * c or c * s.
  if (isa_and_present<MulOp, DivOp>(x.getDefiningOp())) {
    Operation *op = x.getDefiningOp();
    std::optional<double> s = matchScaleOp(op, x);
    if (!s) {
      reason = "the scores are scaled by a value that is not a constant "
               "scalar";
      return std::nullopt;
    }
    match.scale *= *s;
    match.ops.push_back(op);
  }
  auto qk = x.getDefiningOp<MatmulOp>();
  if (!qk) {
    reason = x.getDefiningOp<TanhOp>()
                 ? "the scores are soft-capped (c * tanh(s / c), as Gemma 2 "
                   "spells it), which strata.attention does not take"
                 : "the softmax input is not built from 'strata.matmul(Q, "
                   "K^T)'";
    return std::nullopt;
  }
  match.ops.push_back(qk);
  // Scale on Q or K^T before the matmul (the split SDPA scale), on Q before
  // its heads were transposed into place, on K before its transpose; a
  // product with a non-constant, or one used elsewhere, is an operand
  // itself. Ops on the Q and K paths are checked apart from the chain: the
  // transposes may feed other users.
  SmallVector<Operation *> operandOps;
  Value q = peelScale(qk.getLhs(), match.scale, match.ops);
  match.query.source = q;
  if (auto transpose = q.getDefiningOp<TransposeOp>();
      transpose && transpose->hasOneUse() &&
      transpose.getPermutation().size() == 4) {
    double s = 1.0;
    SmallVector<Operation *> scaleOps;
    Value x = peelScale(transpose.getInput(), s, scaleOps);
    if (!scaleOps.empty()) {
      match.scale *= s;
      operandOps.append(scaleOps);
      operandOps.push_back(transpose);
      match.query.source = x;
      llvm::copy(transpose.getPermutation(), match.query.perm.begin());
    }
  }
  Value kt = peelScale(qk.getRhs(), match.scale, match.ops);
  // P V.
  auto pv = dyn_cast_if_present<MatmulOp>(
      softmax->hasOneUse() ? *softmax->getUsers().begin() : nullptr);
  if (!pv || pv.getLhs() != softmax.getResult()) {
    reason = "the softmax result is not the lhs of its only user, a "
             "'strata.matmul'";
    return std::nullopt;
  }
  Value v = pv.getRhs();
  match.value = v;
  // K^T = transpose(X, p) for any rank-4 p; K is then X permuted by p with
  // its last two entries swapped.
  double keyScale = 1.0;
  SmallVector<Operation *> keyOps;
  std::optional<PermutedValue> key = keyOfTransposed(kt, keyScale, keyOps);
  // Grouped-query attention: K and V repeated alike from fewer heads, K
  // before its transpose or K^T after it, are passed unrepeated (with a
  // scale on the unrepeated K peeled too).
  double groupedScale = 1.0;
  SmallVector<Operation *> groupedOps;
  std::optional<PermutedValue> groupedKey;
  std::optional<RepeatedHeads> repeatedValue = peelRepeatedHeads(v);
  if (repeatedValue && key && isIdentity(key->perm))
    if (std::optional<RepeatedHeads> r = peelRepeatedHeads(key->source);
        r && groupedAlike(*r, *repeatedValue)) {
      groupedScale = keyScale;
      groupedOps = keyOps;
      groupedKey = PermutedValue();
      groupedKey->source = peelScale(r->source, groupedScale, groupedOps);
    }
  if (repeatedValue && !groupedKey)
    if (std::optional<RepeatedHeads> r = peelRepeatedHeads(kt);
        r && groupedAlike(*r, *repeatedValue))
      groupedKey = keyOfTransposed(r->source, groupedScale, groupedOps);
  if (groupedKey) {
    key = groupedKey;
    keyScale = groupedScale;
    keyOps = groupedOps;
    match.value = repeatedValue->source;
  }
  if (!key) {
    reason = "the rhs of the scores matmul is not a rank-4 'strata.transpose'";
    return std::nullopt;
  }
  match.key = *key;
  match.scale *= keyScale;
  operandOps.append(keyOps);
  auto qType = dyn_cast<RankedTensorType>(q.getType());
  auto ktType = dyn_cast<RankedTensorType>(kt.getType());
  auto vType = dyn_cast<RankedTensorType>(v.getType());
  auto outType = dyn_cast<RankedTensorType>(pv.getType());
  if (!qType || !ktType || !vType || !outType || qType.getRank() != 4 ||
      ktType.getRank() != 4 || vType.getRank() != 4) {
    reason = "Q, K or V is not a rank-4 tensor";
    return std::nullopt;
  }
  ArrayRef<int64_t> qs = qType.getShape(), ks = ktType.getShape(),
                    vs = vType.getShape();
  // Batch dims must match; K/V heads may be 1 (matmul broadcasting is then
  // grouped-query attention with one KV head).
  bool heads = (compatible(qs[1], ks[1]) || ks[1] == 1) &&
               (compatible(qs[1], vs[1]) || vs[1] == 1) &&
               compatible(ks[1], vs[1]);
  if (!compatible(qs[0], ks[0]) || !compatible(qs[0], vs[0]) ||
      !compatible(ks[0], vs[0]) || !heads || !compatible(ks[3], vs[2]) ||
      !compatible(qs[3], ks[2])) {
    reason = "Q, K and V batch, head or sequence dims do not match";
    return std::nullopt;
  }
  // A causal mask becomes the `causal` attribute; what is left must be one
  // bool mask or any number of additive ones.
  // Masks were collected from the softmax inward: an additive mask listed
  // before a causal 'where' is added to the fill of the hidden keys (an
  // additive causal triangle is -inf, which no mask changes).
  // A mask that is a causal one and another (HF's causal-and-padding
  // masks) is split: the causal part becomes the attribute, the other part
  // stays a mask.
  SymbolicIndex sq = extentOf(q, 2), sk = extentOf(kt, 3);
  auto isCausal = [&](const MaskBand &band) {
    return band.isEndAlignedCausal(sq, sk);
  };
  // A causal band with or without a sliding window.
  auto isCausalOrWindow = [&](const MaskBand &band) {
    return isCausal(band) || band.endAlignedWindow(sq, sk).has_value();
  };
  bool additiveSeen = false;
  SmallVector<AttentionMatch::Mask, 2> kept;
  for (AttentionMatch::Mask m : match.masks) {
    std::optional<MaskBand> band = analyzeMask(m.value, m.kind);
    // A causal band with a sliding window (Mistral-style exports) becomes
    // the `window` and `sinks` attributes beside `causal`.
    std::optional<int64_t> window;
    if (band && !match.causal)
      window = band->endAlignedWindow(sq, sk);
    if (window) {
      match.window = window;
      match.sinks = band->sinks;
    }
    bool whole = band && (isCausal(*band) || window);
    std::optional<MaskSplit> split;
    if (!whole && !match.causal)
      split = splitMask(m.value, m.kind, isCausalOrWindow);
    if (split && split->rest &&
        !broadcastsTo(cast<RankedTensorType>(split->rest.getType()).getShape(),
                      scoresShape))
      split.reset();
    // A sliding window and a padding mask (Mistral-style exports with an
    // attention mask): the window becomes attributes, the padding a mask.
    if (split && !isCausal(split->band)) {
      match.window = split->band.endAlignedWindow(sq, sk);
      match.sinks = split->band.sinks;
    }
    // Under a clamp every hidden key scores the lowest float, whatever
    // mask is added to it: no mask_hidden.
    if (whole || split) {
      match.causal = true;
      match.maskHidden = !match.clamped &&
                         ((additiveSeen && m.kind != MaskKind::Additive) ||
                          (split && split->addedToHidden));
    }
    if (whole || (split && !split->rest))
      continue;
    if (split) {
      m.value = split->rest;
      m.zero = split->zero;
      m.fill = split->fill;
    }
    additiveSeen |= m.kind == MaskKind::Additive;
    kept.push_back(m);
  }
  match.masks = std::move(kept);
  int64_t bools = llvm::count_if(match.masks, [](const auto &m) {
    return m.kind != MaskKind::Additive;
  });
  if (bools > 1 || (bools == 1 && match.masks.size() > 1)) {
    reason = "the scores have a 'where' mask that is not causal and another "
             "mask";
    return std::nullopt;
  }
  match.ops.push_back(softmax);
  match.ops.push_back(pv);
  match.root = pv;
  // Every intermediate value is used only inside the chain (a scale's
  // shape aside: the rewrite reads it from the scaled value).
  llvm::SmallPtrSet<Operation *, 16> inChain(match.ops.begin(),
                                             match.ops.end());
  if (!usedOnlyInside(
          match.ops, match.root, [&](Operation *op, Operation *user) {
            return isa<ShapeOp>(user) && isOperandScale(op, inChain);
          })) {
    reason = "an intermediate value of the chain has other uses";
    return std::nullopt;
  }
  match.ops.append(operandOps);
  // Program order, for a readable fused location.
  Block *block = pv->getBlock();
  if (llvm::any_of(match.ops,
                   [&](Operation *op) { return op->getBlock() != block; })) {
    reason = "the chain spans more than one block";
    return std::nullopt;
  }
  llvm::sort(match.ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  // strata.attention needs its head counts and head dims static: shapes
  // the folds could not prove leave the chain as it is.
  auto staticHeads = [](ArrayRef<int64_t> dims) {
    return dims.size() == 4 && !ShapedType::isDynamic(dims[1]) &&
           !ShapedType::isDynamic(dims[3]);
  };
  auto permuted = [](const PermutedValue &v) {
    ArrayRef<int64_t> in = cast<RankedTensorType>(v.source.getType()).getShape();
    SmallVector<int64_t> dims;
    for (int64_t p : v.perm)
      dims.push_back(p < (int64_t)in.size() ? in[p] : ShapedType::kDynamic);
    return dims;
  };
  if (!staticHeads(permuted(match.query)) || !staticHeads(permuted(match.key)) ||
      !staticHeads(cast<RankedTensorType>(match.value.getType()).getShape())) {
    reason = "the head counts or head dims of Q, K or V are not static (the "
             "shapes that split the heads did not fold)";
    return std::nullopt;
  }
  return match;
}

/// |v|'s source permuted by its permutation, with a new transpose when that
/// is not the identity.
Value materialize(PatternRewriter &rewriter, Location loc,
                  const PermutedValue &v) {
  if (isIdentity(v.perm))
    return v.source;
  auto type = cast<RankedTensorType>(v.source.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : v.perm)
    shape.push_back(type.getDimSize(p));
  return TransposeOp::create(
             rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
             v.source, rewriter.getDenseI64ArrayAttr(v.perm))
      .getResult();
}

// softmax(scale * Q K^T + mask) V -> strata.attention
struct FuseMatmulSoftmaxMatmul : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp softmax,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    bool candidate;
    std::optional<AttentionMatch> match =
        matchAttention(softmax, reason, candidate);
    if (!match)
      return rewriter.notifyMatchFailure(softmax, reason);
    Location loc = fusedLocOf(rewriter, match->ops);
    rewriter.setInsertionPoint(match->root);
    Value query = materialize(rewriter, loc, match->query);
    Value key = materialize(rewriter, loc, match->key);
    Value value = match->value;
    // Omit the scale when it is the default 1/sqrt(D).
    FloatAttr scale =
        rewriter.getF32FloatAttr(static_cast<float>(match->scale));
    int64_t d = cast<RankedTensorType>(query.getType()).getDimSize(3);
    if (!ShapedType::isDynamic(d) && d > 0) {
      double expected = 1.0 / std::sqrt(static_cast<double>(d));
      if (std::fabs(match->scale - expected) <= 1e-6 * expected)
        scale = nullptr;
    }
    // One mask operand: the bool mask (negated when it marks hidden keys),
    // or the sum of the additive ones.
    Value mask;
    for (const AttentionMatch::Mask &m : match->masks) {
      if (m.kind == MaskKind::Keep) {
        mask = m.value;
        continue;
      }
      if (m.kind == MaskKind::Drop) {
        mask = NotOp::create(rewriter, loc, m.value.getType(), m.value);
        continue;
      }
      Value additive = m.value;
      if (m.fill) {
        auto keep = cast<RankedTensorType>(m.value.getType());
        auto zero = cast<RankedTensorType>(m.zero.getType());
        std::optional<SmallVector<int64_t>> shape =
            broadcastShapes(keep.getShape(), zero.getShape());
        if (shape)
          shape = broadcastShapes(
              *shape, cast<RankedTensorType>(m.fill.getType()).getShape());
        assert(shape && "a mask and two scalars broadcast");
        additive = WhereOp::create(
            rewriter, loc,
            RankedTensorType::get(*shape, zero.getElementType()), m.value,
            m.zero, m.fill);
      }
      // Under a clamp, s + max(M, lowest) is max(s + M, lowest) for any
      // score (|s| < 2^103, where adding it to the lowest float rounds back).
      if (match->clamped && !isKnownFinite(additive)) {
        auto type = cast<RankedTensorType>(additive.getType());
        auto et = cast<FloatType>(type.getElementType());
        auto lowest = ConstantOp::create(
            rewriter, loc,
            DenseElementsAttr::get(
                RankedTensorType::get({}, et),
                APFloat::getLargest(et.getFloatSemantics(), true)));
        additive = MaxOp::create(rewriter, loc, type, additive, lowest);
      }
      if (!mask) {
        mask = additive;
      } else {
        auto a = cast<RankedTensorType>(mask.getType());
        auto b = cast<RankedTensorType>(additive.getType());
        std::optional<SmallVector<int64_t>> shape =
            broadcastShapes(a.getShape(), b.getShape());
        assert(shape && "masks that broadcast to the scores broadcast");
        mask = AddOp::create(rewriter, loc,
                             RankedTensorType::get(*shape, a.getElementType()),
                             mask, additive);
      }
    }
    auto attention = AttentionOp::create(
        rewriter, loc, match->root->getResult(0).getType(), query, key,
        value, mask, scale,
        match->causal ? rewriter.getUnitAttr() : UnitAttr(),
        match->window ? rewriter.getI64IntegerAttr(*match->window)
                      : IntegerAttr(),
        match->window && match->sinks > 0
            ? rewriter.getI64IntegerAttr(match->sinks)
            : IntegerAttr(),
        match->maskHidden ? rewriter.getUnitAttr() : UnitAttr(),
        /*global_topk=*/IntegerAttr(), /*global_block=*/IntegerAttr());
    // Shapes of a folded scale are those of the value it scaled; done
    // before the root goes, while every op of the chain is still alive.
    llvm::SmallPtrSet<Operation *, 16> inChain(match->ops.begin(),
                                               match->ops.end());
    for (Operation *op : match->ops) {
      Value scaled;
      if (isOperandScale(op, inChain) && matchScaleOp(op, scaled))
        rewriter.replaceUsesWithIf(
            op->getResult(0), scaled,
            [](OpOperand &use) { return isa<ShapeOp>(use.getOwner()); });
    }
    rewriter.replaceOp(match->root, attention.getResult());
    return success();
  }
};

struct FuseAttentionPass : impl::FuseAttentionPassBase<FuseAttentionPass> {
  using FuseAttentionPassBase::FuseAttentionPassBase;
  void runOnOperation() override {
    // Remarks only at softmaxes over rank-4 tensors.
    if (failed(runFusion(getOperation(), populateFuseAttentionPatterns,
                         reportMissed,
                         missedAt<SoftmaxOp>(
                             matchAttention,
                             "softmax did not fuse into strata.attention: "))))
      signalPassFailure();
  }
};

} // namespace

void populateFuseAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseMatmulSoftmaxMatmul>(patterns.getContext());
}

} // namespace strata
