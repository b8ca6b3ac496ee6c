//===- SplitPrefillDecode.cpp - Prefill and decode entries of a decoder ---===//
// SPDX-License-Identifier: Apache-2.0
// From a causal decoder's `main` (token ids in, logits out, causal fused
// attention), two more entries over the same weights and a KV cache held in
// state tensors, with the inputs and outputs of the generation contract
// (docs/design/prefill-decode.md). Both start as copies of `main`:
// - each attention's new keys and values (the second operand of a
//   `concat(past, new)` on the sequence axis, or the key and value
//   themselves in a graph without past) are written into the layer's cache
//   at the rows' slots and positions, and the attention reads the cache;
// - the position ids the graph took as an input, or computed as
//   `range(past_length, past_length + sequence)`, become the rows' own
//   positions (rows of a decode call are at different positions);
// - past inputs, present outputs and the attention mask go: the contract
//   has no padding, and each row's key count comes from its position;
// - prefill returns the logits of the chunk's last token, decode one row of
//   logits per sequence, and the optional verify entry (speculative
//   decoding) every position's logits of a few tokens per sequence.
// A graph that does not look like a causal decoder is left alone; one that
// does but uses a past or mask input in a way the split cannot carry over
// (anything but the spellings above) keeps `main` only, with a warning
// naming the op.

#include "passes/Passes.h"
#include "passes/ShapeArithmetic.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>

namespace strata {

#define GEN_PASS_DEF_SPLITPREFILLDECODEPASS
#include "passes/Passes.h.inc"

using namespace mlir;
using namespace strata::ir;

namespace {

/// The entries the split makes, by the rows and tokens one call takes.
enum class Phase {
  Prefill, ///< one sequence, a chunk of its prompt
  Decode,  ///< one token of each of several sequences
  Verify,  ///< a few tokens of each of several sequences, every logit
};

StringRef phaseName(Phase phase) {
  switch (phase) {
  case Phase::Prefill:
    return "prefill";
  case Phase::Decode:
    return "decode";
  case Phase::Verify:
    return "verify";
  }
  return "";
}

StringRef argName(func::FuncOp f, unsigned i) {
  auto name = f.getArgAttrOfType<StringAttr>(i, "strata.name");
  return name ? name.getValue() : StringRef();
}

StringRef resultName(func::FuncOp f, unsigned i) {
  auto name = f.getResultAttrOfType<StringAttr>(i, "strata.name");
  return name ? name.getValue() : StringRef();
}

bool isRank(Type t, int64_t rank) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && r.getRank() == rank;
}

/// The block argument |v| is, looking through tensor.cast.
BlockArgument asArgument(Value v) {
  while (auto cast = v.getDefiningOp<tensor::CastOp>())
    v = cast.getSource();
  return dyn_cast<BlockArgument>(v);
}

/// Whether dims [start, end) of arguments |a| and |b| of |f| carry the
/// same dim names (an end past a rank, or none given, is the rank).
bool sameDimNames(func::FuncOp f, unsigned a, unsigned b, int64_t start,
                  std::optional<int64_t> end) {
  auto na = f.getArgAttrOfType<ArrayAttr>(a, "strata.dims");
  auto nb = f.getArgAttrOfType<ArrayAttr>(b, "strata.dims");
  if (!na || !nb)
    return false;
  int64_t stop = std::min<int64_t>(end.value_or(na.size()), na.size());
  if (start < 0 || stop > (int64_t)nb.size() || start >= stop)
    return false;
  for (int64_t d = start; d < stop; ++d) {
    auto x = dyn_cast<StringAttr>(na[d]), y = dyn_cast<StringAttr>(nb[d]);
    if (!x || !y || x.getValue().empty() || x.getValue() == "?" ||
        x != y)
      return false;
  }
  return true;
}

/// What the split found in `main`.
struct DecoderShape {
  unsigned inputIds;
  unsigned logits;
  std::optional<unsigned> positionIds, attentionMask;
  /// Arguments that are past keys or values (each consumed by a concat).
  llvm::SmallDenseSet<unsigned> pastArgs;
  /// Per attention, in program order: its key and value caches' shapes.
  SmallVector<std::pair<RankedTensorType, RankedTensorType>> caches;
  /// Per attention: the rows a ring cache keeps in place (its sinks), or
  /// nullopt for a cache of the whole context.
  SmallVector<std::optional<int64_t>> ringKept;
};

/// The new keys or values of an attention operand: the second operand of
/// a concat on the sequence axis whose first is a past argument, or the
/// operand itself.
Value newEntries(Value kv, const DecoderShape *shape = nullptr) {
  if (auto concat = kv.getDefiningOp<ConcatOp>()) {
    int64_t axis = concat.getAxis();
    if (concat.getInputs().size() == 2 && (axis == 2 || axis == -2)) {
      BlockArgument past = asArgument(concat.getInputs()[0]);
      if (past && (!shape || shape->pastArgs.contains(past.getArgNumber())))
        return concat.getInputs()[1];
    }
  }
  return kv;
}

/// Whether every path from |v| back to the function's arguments reaches
/// only |allowed| directly, and the others only through strata.shape: a
/// mask built from the attention mask input and extents.
bool dependsOnlyOn(Value v, std::optional<unsigned> allowed) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Value, 32> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (!allowed || arg.getArgNumber() != *allowed)
        return false;
      continue;
    }
    Operation *op = x.getDefiningOp();
    if (isa<ShapeOp>(op))
      continue;
    for (Value operand : op->getOperands())
      work.push_back(operand);
  }
  return true;
}

/// Whether |v| is computed from the extent of a value |counts| accepts
/// (an operand of a strata.shape on the way back from |v|).
bool derivesFromExtent(Value v, llvm::function_ref<bool(Value)> counts) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Value, 32> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second || isa<BlockArgument>(x))
      continue;
    Operation *op = x.getDefiningOp();
    if (auto s = dyn_cast<ShapeOp>(op)) {
      if (counts(s.getInput()))
        return true;
      continue;
    }
    for (Value operand : op->getOperands())
      work.push_back(operand);
  }
  return false;
}

/// Whether |v| is computed from an extent of a past argument (or of the
/// attention mask, whose length is past + new).
bool derivesFromPastLength(Value v, const DecoderShape &shape) {
  return derivesFromExtent(v, [&](Value measured) {
    BlockArgument arg = asArgument(measured);
    return arg && (shape.pastArgs.contains(arg.getArgNumber()) ||
                   arg.getArgNumber() == shape.attentionMask);
  });
}

/// |v| before scalings by constants (Gemma's and Granite's embedding
/// multipliers) and casts, which keep its shape.
Value beforeConstantScaling(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (isa<CastOp>(op)) {
      v = op->getOperand(0);
      continue;
    }
    if (!isa<MulOp, DivOp>(op))
      break;
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    auto scalar = [](Value x) {
      auto t = cast<RankedTensorType>(x.getType());
      return x.getDefiningOp<ConstantOp>() && t.getNumElements() == 1;
    };
    if (scalar(rhs))
      v = lhs;
    else if (isa<MulOp>(op) && scalar(lhs))
      v = rhs;
    else
      break;
  }
  return v;
}

/// Whether |v| is computed from an input's extent (a token count), or
/// from the extent of an embedding lookup by an input (whose leading dims
/// are the ids'), scaled or not.
bool derivesFromInputExtent(Value v) {
  return derivesFromExtent(v, [](Value measured) {
    if (auto lookup = beforeConstantScaling(measured).getDefiningOp<GatherOp>())
      measured = lookup.getIndices();
    return bool(asArgument(measured));
  });
}

/// Whether |v| is computed from any tensor's extent.
bool derivesFromAnyExtent(Value v) {
  return derivesFromExtent(v, [](Value) { return true; });
}

/// Whether |v| is the integer constant |value| (any shape, all elements).
bool isConstantInt(Value v, int64_t value) {
  auto c = v.getDefiningOp<ConstantOp>();
  auto dense = c ? dyn_cast<DenseIntElementsAttr>(c.getValue()) : nullptr;
  return dense && llvm::all_of(dense.getValues<APInt>(), [&](const APInt &x) {
           return x.getSExtValue() == value;
         });
}

/// Whether |v| is a weight or another constant.
bool isConstant(Value v) { return v.getDefiningOp<ConstantOp>() != nullptr; }

/// The operand carrying the token rows through |op| if |op| computes each
/// row (position) from that row alone, else null: the ops of an LM head
/// (final norm, projection, casts and activations, reshapes that keep the
/// last dim).
Value rowWiseInput(Operation *op) {
  auto lastDim = [](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.getRank() ? t.getDimSize(t.getRank() - 1) : ShapedType::kDynamic;
  };
  if (auto r = dyn_cast<ReshapeOp>(op)) {
    int64_t in = lastDim(r.getInput()), out = lastDim(r.getResult());
    return !ShapedType::isDynamic(in) && in == out ? r.getInput() : Value();
  }
  if (isa<CastOp, GeluOp, SiluOp, TanhOp, SigmoidOp, ReluOp, NegOp>(op))
    return op->getOperand(0);
  auto lastAxis = [](Value input, int64_t axis) {
    int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
    return axis == -1 || axis == rank - 1;
  };
  if (auto n = dyn_cast<LayerNormOp>(op))
    return lastAxis(n.getInput(), n.getAxis()) ? n.getInput() : Value();
  if (auto n = dyn_cast<RmsNormOp>(op))
    return lastAxis(n.getInput(), n.getAxis()) ? n.getInput() : Value();
  if (auto m = dyn_cast<MatmulOp>(op))
    return isConstant(m.getRhs()) &&
                   cast<RankedTensorType>(m.getRhs().getType()).getRank() == 2
               ? m.getLhs()
               : Value();
  if (auto l = dyn_cast<LinearOp>(op))
    return isConstant(l.getWeight()) ? l.getInput() : Value();
  if (isa<AddOp, SubOp, MulOp, DivOp>(op)) {
    Value a = op->getOperand(0), b = op->getOperand(1);
    auto small = [](Value v) {
      return isConstant(v) &&
             cast<RankedTensorType>(v.getType()).getRank() <= 1;
    };
    if (small(b))
      return a;
    if (small(a))
      return b;
  }
  return Value();
}

/// Whether |op| only computes shapes (integer results of rank <= 1).
bool isShapeArithmetic(Operation *op) {
  return llvm::all_of(op->getResultTypes(), [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return r && r.getRank() <= 1 && r.getElementType().isInteger();
  });
}

/// Erases ops without uses or side effects (the graph is one block, so
/// one pass from the end frees whole chains).
void eraseDeadOps(func::FuncOp f, Value keep = {}) {
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(f.front())))
    if (isOpTriviallyDead(&op) && (!keep || keep.getDefiningOp() != &op))
      op.erase();
}

class Splitter {
public:
  Splitter(ModuleOp module, int64_t slots, int64_t context,
           int64_t prefillLength, int64_t verifyLength, bool ringCaches,
           bool allLogits, StringRef source, StringRef kvCache,
           int64_t blockSize, int64_t blocks)
      : module_(module), slots_(slots), context_(context),
        blockSize_(blockSize),
        blocksPerSequence_(blockSize > 0 ? (context + blockSize - 1) / blockSize
                                         : 0),
        blocks_(blocks > 0 ? blocks : slots * blocksPerSequence_),
        prefillLength_(prefillLength > 0 ? std::min(prefillLength, context)
                                         : context),
        // A verify call writes at most as many rows as a prefill call, the
        // most a ring cache has room for beyond its window.
        verifyLength_(std::min(verifyLength, prefillLength_)),
        ringCaches_(ringCaches), allLogits_(allLogits), source_(source),
        kvCache_(kvCache) {}

  /// Adds the entries; failure (with a warning emitted) leaves the module
  /// as it was.
  LogicalResult run() {
    func::FuncOp main = findSource();
    if (!main)
      return success();
    std::optional<DecoderShape> shape = analyze(main);
    if (!shape)
      return success();
    if (failed(checkSupported(main, *shape)))
      return failure();
    SmallVector<Phase> phases{Phase::Prefill, Phase::Decode};
    if (verifyLength_ > 0)
      phases.push_back(Phase::Verify);
    SmallVector<func::FuncOp> entries;
    for (Phase phase : phases) {
      func::FuncOp entry = buildEntry(main, *shape, phase);
      if (!entry) {
        for (func::FuncOp built : entries)
          built.erase();
        return failure();
      }
      entries.push_back(entry);
    }
    module_->setAttr(ir::kGenerationContextAttr,
                     IntegerAttr::get(IntegerType::get(module_.getContext(), 64),
                                      context_));
    return success();
  }

private:
  /// The graph the entries are made from: `main`, or the private
  /// function |source_| names (the with-past twin of `main`).
  func::FuncOp findSource() {
    for (auto f : module_.getOps<func::FuncOp>())
      if (!f.isPrivate() && !f.isExternal() &&
          (f.getSymName() == "prefill" || f.getSymName() == "decode" ||
           f.getSymName() == "verify"))
        return nullptr; // already split, or written by hand
    auto source = module_.lookupSymbol<func::FuncOp>(source_);
    return source && !source.isExternal() ? source : nullptr;
  }

  /// The decoder's parts, or nullopt if |main| is not a causal decoder.
  std::optional<DecoderShape> analyze(func::FuncOp main) {
    DecoderShape shape;
    std::optional<unsigned> ids, logits;
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      StringRef name = argName(main, i);
      Type t = main.getArgument(i).getType();
      if (name == "input_ids" && isRank(t, 2) &&
          cast<RankedTensorType>(t).getElementType().isInteger())
        ids = i;
      else if (name == "position_ids" && isRank(t, 2))
        shape.positionIds = i;
      else if (name == "attention_mask")
        shape.attentionMask = i;
    }
    for (unsigned i = 0; i < main.getNumResults(); ++i)
      if (resultName(main, i) == "logits" && isRank(main.getResultTypes()[i], 3))
        logits = i;
    if (!ids || !logits)
      return std::nullopt;
    shape.inputIds = *ids;
    shape.logits = *logits;
    SmallVector<AttentionOp> attentions;
    main.walk([&](AttentionOp op) { attentions.push_back(op); });
    if (attentions.empty() ||
        !llvm::all_of(attentions, [](AttentionOp op) { return op.getCausal(); }))
      return std::nullopt;
    for (AttentionOp op : attentions) {
      for (Value kv : {op.getKey(), op.getValue()})
        if (Value fresh = newEntries(kv); fresh != kv)
          shape.pastArgs.insert(
              asArgument(kv.getDefiningOp<ConcatOp>().getInputs()[0])
                  .getArgNumber());
      // A window's cache is a ring when that is smaller than the context:
      // its sinks, then the window and one prefill call's new rows. Global
      // blocks may pick any earlier key: the whole cache stays.
      std::optional<int64_t> kept;
      int64_t rows = blockSize_ > 0 ? blockSize_ : context_;
      if (std::optional<int64_t> window = op.getWindow();
          window && ringCaches_ && !op.getGlobalTopk() && blockSize_ == 0) {
        // Compared term by term: a window far past the context must not
        // overflow the sum (every term here is at most the context).
        const int64_t sinks = op.getSinks().value_or(0);
        if (sinks < context_ && *window < context_ - sinks &&
            prefillLength_ - 1 < context_ - sinks - *window) {
          kept = sinks;
          rows = sinks + *window + prefillLength_ - 1;
        }
      }
      shape.ringKept.push_back(kept);
      auto cacheType = [&](Value kv) {
        auto t = cast<RankedTensorType>(kv.getType());
        int64_t dim = t.getDimSize(3);
        Type element = t.getElementType();
        // A compressed cache holds fp32 keys and values; int8 rows carry
        // their scale in 4 more bytes, aligned when the head dim is a
        // multiple of 4 (any other head dim keeps fp32).
        if (element.isF32() && kvCache_ == "bf16") {
          element = BFloat16Type::get(t.getContext());
        } else if (element.isF32() && kvCache_ == "int8" &&
                   !ShapedType::isDynamic(dim) && dim % 4 == 0) {
          element = IntegerType::get(t.getContext(), 8);
          dim += 4;
        }
        return RankedTensorType::get(
            {blockSize_ > 0 ? blocks_ : slots_, t.getDimSize(1), rows, dim},
            element);
      };
      shape.caches.push_back({cacheType(op.getKey()), cacheType(op.getValue())});
    }
    return shape;
  }

  /// Emits a warning and fails unless every attention and input is one the
  /// split carries over.
  LogicalResult checkSupported(func::FuncOp main, const DecoderShape &shape) {
    auto refuse = [&](Location loc, const Twine &why) {
      emitWarning(loc) << "no prefill/decode entries (the artifact keeps "
                       << "'main' only): " << why;
      return failure();
    };
    LogicalResult result = success();
    main.walk([&](AttentionOp op) {
      if (failed(result))
        return;
      auto k = cast<RankedTensorType>(op.getKey().getType());
      auto v = cast<RankedTensorType>(op.getValue().getType());
      if (k.isDynamicDim(1) || k.isDynamicDim(3) || v.isDynamicDim(3))
        result = refuse(op.getLoc(), "an attention's key/value heads or head "
                                     "dims are not static");
      else if (Value mask = op.getMask();
               mask && !dependsOnlyOn(mask, shape.attentionMask))
        result = refuse(op.getLoc(),
                        "an attention's mask is not computed from the "
                        "attention_mask input alone");
    });
    if (failed(result))
      return failure();
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      if (i == shape.inputIds || i == shape.positionIds ||
          i == shape.attentionMask || shape.pastArgs.contains(i))
        continue;
      return refuse(main.getLoc(), "input '" + argName(main, i) +
                                       "' has no counterpart in generation");
    }
    return success();
  }

  /// The contract's inputs and what the copied graph needs from them.
  struct PhaseValues {
    /// The token ids, as the graph's input_ids type.
    Value ids;
    /// [B, S] token positions (i64).
    Value positions;
    /// [B] per-row slot, first written position, keys seen after the call.
    Value slots, writeStarts, lengths;
    /// The offsets 0 .. n - 1 of a verify call's tokens: a range of the
    /// entry's own that the rewrite of the graph's ranges leaves alone.
    Operation *tokenOffsets = nullptr;
  };

  Value i64Constant(OpBuilder &b, Location loc, ArrayRef<int64_t> values,
                    ArrayRef<int64_t> shape) {
    auto type = RankedTensorType::get(shape, b.getI64Type());
    return ConstantOp::create(b, loc, DenseElementsAttr::get(type, values));
  }

  Value reshape(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> shape) {
    auto t = cast<RankedTensorType>(x.getType());
    auto type = RankedTensorType::get(shape, t.getElementType());
    if (type.hasStaticShape())
      return ReshapeOp::create(b, loc, type, x, Value(), false);
    SmallVector<int64_t> target(shape);
    for (int64_t &d : target)
      if (ShapedType::isDynamic(d))
        d = -1;
    Value s = i64Constant(b, loc, target, {int64_t(target.size())});
    return ReshapeOp::create(b, loc, type, x, s, false);
  }

  Value castTo(OpBuilder &b, Location loc, Value x, Type type) {
    if (x.getType() == type)
      return x;
    return tensor::CastOp::create(b, loc, type, x);
  }

  PhaseValues phaseInputs(OpBuilder &b, Location loc, func::FuncOp entry,
                          unsigned first, Type idsType, Phase phase) {
    PhaseValues v;
    Value ids = entry.getArgument(first);
    Value a1 = entry.getArgument(first + 1), a2 = entry.getArgument(first + 2);
    v.ids = castTo(b, loc, ids, idsType);
    int64_t dyn = ShapedType::kDynamic;
    auto i64 = b.getI64Type();
    if (phase == Phase::Verify) {
      // slots [B], positions [B]: row b's n tokens at positions[b] ..
      // positions[b] + n - 1.
      Value extent = ShapeOp::create(b, loc, RankedTensorType::get({1}, i64),
                                     ids, b.getI64IntegerAttr(1),
                                     b.getI64IntegerAttr(2));
      Value n = reshape(b, loc, extent, {});
      Value offsets = RangeOp::create(b, loc, RankedTensorType::get({dyn}, i64),
                                      i64Constant(b, loc, {0}, {}), n,
                                      i64Constant(b, loc, {1}, {}));
      v.tokenOffsets = offsets.getDefiningOp();
      v.positions = AddOp::create(b, loc, RankedTensorType::get({dyn, dyn}, i64),
                                  reshape(b, loc, a2, {dyn, 1}),
                                  reshape(b, loc, offsets, {1, dyn}));
      v.slots = a1;
      v.writeStarts = a2;
      v.lengths = AddOp::create(b, loc, a2.getType(), a2, extent);
      return v;
    }
    if (phase == Phase::Decode) {
      // slots [B], positions [B]: one new token per row.
      v.slots = a1;
      v.writeStarts = a2;
      v.positions = reshape(b, loc, a2, {dyn, 1});
      v.lengths = AddOp::create(b, loc, a2.getType(), a2,
                                i64Constant(b, loc, {1}, {1}));
      return v;
    }
    // slot [], start []: the chunk's n tokens at start .. start + n - 1.
    auto scalar = RankedTensorType::get({}, b.getI64Type());
    Value extent = ShapeOp::create(b, loc, RankedTensorType::get({1}, b.getI64Type()),
                                   ids, b.getI64IntegerAttr(1),
                                   b.getI64IntegerAttr(2));
    Value n = reshape(b, loc, extent, {});
    Value end = AddOp::create(b, loc, scalar, a2, n);
    Value range = RangeOp::create(b, loc, RankedTensorType::get({dyn}, b.getI64Type()),
                                  a2, end, i64Constant(b, loc, {1}, {}));
    v.positions = reshape(b, loc, range, {1, dyn});
    // A block table is already one row ([1, N]).
    v.slots = blockSize_ > 0 ? a1 : reshape(b, loc, a1, {1});
    v.writeStarts = reshape(b, loc, a2, {1});
    v.lengths = reshape(b, loc, end, {1});
    return v;
  }

  /// Replaces the gathers indexed by |range| (through reshapes) with
  /// gathers of |positions|; false if a use is not such a chain.
  bool replacePositionGathers(OpBuilder &b, Value range, Value positions) {
    SmallVector<Value> work{range};
    llvm::SmallPtrSet<Value, 8> seen;
    llvm::SetVector<GatherOp> gathers;
    while (!work.empty()) {
      Value x = work.pop_back_val();
      if (!seen.insert(x).second)
        continue;
      for (OpOperand &use : x.getUses()) {
        Operation *user = use.getOwner();
        if (auto r = dyn_cast<ReshapeOp>(user); r && use.getOperandNumber() == 0)
          work.push_back(r.getResult());
        else if (auto c = dyn_cast<CastOp>(user))
          work.push_back(c.getResult());
        else if (auto g = dyn_cast<GatherOp>(user);
                 g && use.getOperandNumber() == 1 && g.getAxis() == 0)
          gathers.insert(g);
        else if (!isa<ShapeOp>(user))
          return false;
      }
    }
    for (GatherOp g : gathers) {
      b.setInsertionPoint(g);
      auto data = cast<RankedTensorType>(g.getData().getType());
      auto pos = cast<RankedTensorType>(positions.getType());
      SmallVector<int64_t> shape(pos.getShape());
      shape.append(data.getShape().begin() + 1, data.getShape().end());
      auto type = RankedTensorType::get(shape, data.getElementType());
      auto fresh = GatherOp::create(b, g.getLoc(), type, g.getData(), positions,
                                    b.getI64IntegerAttr(0));
      g.getResult().replaceAllUsesWith(fresh.getResult());
      g.erase();
    }
    return true;
  }

  /// A range of token positions the graph shares by the batch (a
  /// transformers export without position_ids computes its rotary angles
  /// from cache_position viewed as [1, S, 1]): each such view becomes the
  /// rows' own positions [B, S, 1...], and the types after it widen to the
  /// batch (recomputed op by op until they stop changing). False, with the
  /// entry possibly half rewritten (the caller drops it), when a use is
  /// not such a view or an op on the way has no shape rule.
  bool replaceSharedPositions(OpBuilder &b, Value range, Value positions) {
    SmallVector<ReshapeOp> views;
    for (Operation *user : range.getUsers()) {
      if (isa<ShapeOp>(user))
        continue;
      auto view = dyn_cast<ReshapeOp>(user);
      if (!view || view.getInput() != range)
        return false;
      ArrayRef<int64_t> dims =
          cast<RankedTensorType>(view.getType()).getShape();
      // [1, S] or [1, S, 1, ...]: the batch dim a broadcast 1.
      if (dims.size() < 2 || dims[0] != 1 ||
          llvm::any_of(dims.drop_front(2), [](int64_t d) { return d != 1; }))
        return false;
      views.push_back(view);
    }
    SmallVector<Operation *> changed;
    for (ReshapeOp view : views) {
      b.setInsertionPoint(view);
      Location loc = view.getLoc();
      auto type = cast<RankedTensorType>(view.getType());
      // [B, S] -> [B, S, 1, ...]: zeros copy the positions' own extents.
      SmallVector<int64_t> target(type.getRank(), 1);
      target[0] = target[1] = 0;
      SmallVector<int64_t> shape(type.getShape());
      shape[0] = shape[1] = ShapedType::kDynamic;
      Value rows = ReshapeOp::create(
          b, loc, RankedTensorType::get(shape, type.getElementType()),
          positions, i64Constant(b, loc, target, {type.getRank()}), false);
      view.getResult().replaceAllUsesWith(rows);
      for (Operation *user : rows.getUsers())
        changed.push_back(user);
      view.erase();
    }
    return widenTypes(b, changed);
  }

  /// Recomputes the result types of |ops| from their operands, and of
  /// their users in turn while a type changes. A reshape that kept the
  /// shared batch dim as a constant 1 (the tracer's unsqueeze of a [1, S,
  /// D] table) takes the batch from its input instead.
  bool widenTypes(OpBuilder &b, SmallVector<Operation *> work) {
    llvm::SetVector<Operation *> touched;
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (isa<func::ReturnOp>(op))
        return false;
      touched.insert(op);
      if (auto view = dyn_cast<ReshapeOp>(op))
        keepBatchOf(b, view);
      SmallVector<SmallVector<int64_t>> shapes;
      if (failed(inferResultShapes(op, shapes)) ||
          shapes.size() != op->getNumResults())
        return false;
      for (auto [result, shape] : llvm::zip_equal(op->getResults(), shapes)) {
        auto old = cast<RankedTensorType>(result.getType());
        auto type = RankedTensorType::get(shape, old.getElementType());
        if (type == old)
          continue;
        result.setType(type);
        for (Operation *user : result.getUsers())
          work.push_back(user);
      }
    }
    // An op whose rule kept a 1 where the batch now is does not verify:
    // the split is refused rather than the compile failed.
    ScopedDiagnosticHandler quiet(b.getContext(),
                                  [](Diagnostic &) { return success(); });
    return llvm::all_of(touched, [](Operation *op) {
      return succeeded(mlir::verify(op, /*verifyRecursively=*/false));
    });
  }

  /// Makes |view| take its leading extent from its input's where the input's
  /// became dynamic (a batch) and the target shape still says 1.
  void keepBatchOf(OpBuilder &b, ReshapeOp view) {
    auto in = cast<RankedTensorType>(view.getInput().getType());
    auto out = cast<RankedTensorType>(view.getType());
    Value target = view.getShape();
    if (!target || in.getRank() < 1 || out.getRank() < 1 ||
        !in.isDynamicDim(0) || out.getDimSize(0) != 1)
      return;
    std::optional<SymbolicIndex> lead = elementOf(target, 0);
    if (!lead || lead->getConstant() != std::optional<int64_t>(1))
      return;
    b.setInsertionPoint(view);
    Location loc = view.getLoc();
    auto i64 = b.getI64Type();
    int64_t rank = out.getRank();
    Value batch = ShapeOp::create(b, loc, RankedTensorType::get({1}, i64),
                                  view.getInput(), b.getI64IntegerAttr(0),
                                  b.getI64IntegerAttr(1));
    SmallVector<Value> parts{batch};
    if (rank > 1)
      parts.push_back(SliceOp::create(
          b, loc, RankedTensorType::get({rank - 1}, i64), target,
          i64Constant(b, loc, {1}, {1}), i64Constant(b, loc, {rank}, {1}),
          i64Constant(b, loc, {1}, {1}), b.getDenseI64ArrayAttr({0})));
    Value shape = parts.size() == 1
                      ? parts[0]
                      : ConcatOp::create(b, loc,
                                         RankedTensorType::get({rank}, i64),
                                         ValueRange(parts),
                                         b.getI64IntegerAttr(0))
                            .getResult();
    view.getShapeMutable().assign(shape);
    SmallVector<int64_t> dims(out.getShape());
    dims[0] = ShapedType::kDynamic;
    view.getResult().setType(
        RankedTensorType::get(dims, out.getElementType()));
  }

  /// Positions counted from the attention mask, as OPT's learned position
  /// table is indexed: cumsum(mask) * mask along the sequence (1-based at
  /// the kept tokens, 0 at padding), cut to the new tokens by a slice from
  /// the past length where the graph has a past. An entry's rows have no
  /// padding, so the count is the rows' own positions + 1.
  void replaceMaskCountedPositions(OpBuilder &b, Value mask, Value positions,
                                   const DecoderShape &shape) {
    auto isMask = [&](Value v) {
      while (auto c = v.getDefiningOp<CastOp>())
        v = c.getInput();
      return v == mask;
    };
    auto isCount = [&](Value v) {
      auto c = v.getDefiningOp<CumsumOp>();
      return c && isMask(c.getInput()) && !c.getExclusive() &&
             !c.getReverse() &&
             (c.getAxis() == 1 || c.getAxis() == -1) &&
             cast<RankedTensorType>(c.getType()).getRank() == 2;
    };
    SmallVector<MulOp> counts;
    mask.getParentRegion()->walk([&](MulOp m) {
      if ((isCount(m.getLhs()) && isMask(m.getRhs())) ||
          (isCount(m.getRhs()) && isMask(m.getLhs())))
        counts.push_back(m);
    });
    for (MulOp m : counts) {
      Value counted = m.getResult();
      // With a past: the new tokens' part, [past_length:] of the sequence;
      // a count over past and new tokens used otherwise stays (and the
      // mask's use refuses the split).
      if (counted.hasOneUse())
        if (auto cut = dyn_cast<SliceOp>(*counted.getUsers().begin());
            cut && cut.getInput() == counted &&
            llvm::equal(cut.getAxes(), ArrayRef<int64_t>{1}) &&
            isConstantInt(cut.getSteps(), 1) &&
            derivesFromPastLength(cut.getStarts(), shape))
          counted = cut.getResult();
      if (counted == m.getResult() && !shape.pastArgs.empty())
        continue;
      b.setInsertionPoint(m);
      Location loc = m.getLoc();
      Value next = AddOp::create(b, loc, positions.getType(), positions,
                                 i64Constant(b, loc, {1}, {}));
      auto type = cast<RankedTensorType>(counted.getType());
      Value asCounted = next;
      if (type.getElementType() != b.getI64Type())
        asCounted = CastOp::create(
            b, loc, RankedTensorType::get(
                        cast<RankedTensorType>(positions.getType()).getShape(),
                        type.getElementType()), next);
      counted.replaceAllUsesWith(castTo(b, loc, asCounted, type));
    }
  }

  /// Whether every use of |table| (through reshapes and casts) is the data
  /// of a gather along axis 0, or its shape.
  static bool indexesTablesOnly(Value table) {
    SmallVector<Value> work{table};
    while (!work.empty()) {
      Value x = work.pop_back_val();
      for (OpOperand &use : x.getUses()) {
        Operation *user = use.getOwner();
        if (auto r = dyn_cast<ReshapeOp>(user); r && use.getOperandNumber() == 0)
          work.push_back(r.getResult());
        else if (isa<tensor::CastOp>(user))
          work.push_back(user->getResult(0));
        else if (auto g = dyn_cast<GatherOp>(user);
                 g && use.getOperandNumber() == 0 && g.getAxis() == 0)
          continue;
        else if (!isa<ShapeOp>(user))
          return false;
      }
    }
    return true;
  }

  /// |logits| ([1, n, V]) computed for the last position only: the LM
  /// head (the row-wise ops between the last hidden state and the logits)
  /// is copied after a slice of that state's last row. |logits| itself if
  /// the head is not row-wise.
  Value lastPositionLogits(OpBuilder &b, Value logits) {
    // The deepest rank-3 value the row-wise chain starts from.
    Value hidden;
    for (Value v = logits; Operation *op = v.getDefiningOp();) {
      Value in = rowWiseInput(op);
      if (!in)
        break;
      if (cast<RankedTensorType>(in.getType()).getRank() == 3)
        hidden = in;
      v = in;
    }
    if (!hidden)
      return logits;
    // Everything between: the head and the shape arithmetic of its
    // reshapes.
    SetVector<Operation *> forward, backward;
    getForwardSlice(hidden, &forward);
    BackwardSliceOptions options;
    options.inclusive = true;
    if (failed(getBackwardSlice(logits, &backward, options)))
      return logits;
    SmallVector<Operation *> head;
    for (Operation *op : forward)
      if (backward.contains(op)) {
        if (!rowWiseInput(op) && !isShapeArithmetic(op))
          return logits;
        head.push_back(op);
      }
    llvm::sort(head, [](Operation *x, Operation *y) {
      return x->isBeforeInBlock(y);
    });
    Location loc = logits.getLoc();
    auto t = cast<RankedTensorType>(hidden.getType());
    auto lastType = RankedTensorType::get({t.getDimSize(0), 1, t.getDimSize(2)},
                                          t.getElementType());
    Value last = SliceOp::create(
        b, loc, lastType, hidden, i64Constant(b, loc, {-1}, {1}),
        i64Constant(b, loc, {std::numeric_limits<int64_t>::max()}, {1}),
        i64Constant(b, loc, {1}, {1}), b.getDenseI64ArrayAttr({1}));
    IRMapping map;
    map.map(hidden, castTo(b, loc, last, t));
    for (Operation *op : head)
      b.clone(*op, map);
    return map.lookup(logits);
  }

  func::FuncOp buildEntry(func::FuncOp main, const DecoderShape &shape,
                          Phase phase) {
    StringRef name = phaseName(phase);
    auto entry = main.clone();
    entry.setSymName(name);
    entry.setPublic();
    module_.push_back(entry);
    MLIRContext *ctx = module_.getContext();
    OpBuilder b(ctx);
    Location loc = NameLoc::get(StringAttr::get(ctx, name));
    auto fail = [&](Location at, const Twine &why) {
      emitWarning(at) << "no prefill/decode entries (the artifact keeps "
                      << "'main' only): in the " << name << " entry, " << why;
      entry.erase();
      return func::FuncOp();
    };
    auto strings = [&](ArrayRef<StringRef> names) {
      SmallVector<Attribute> attrs;
      for (StringRef n : names)
        attrs.push_back(StringAttr::get(ctx, n));
      return ArrayAttr::get(ctx, attrs);
    };
    auto argAttrs = [&](StringRef argName, ArrayRef<StringRef> dims) {
      return DictionaryAttr::get(
          ctx, {b.getNamedAttr("strata.name", StringAttr::get(ctx, argName)),
                b.getNamedAttr("strata.dims", strings(dims))});
    };

    // Where each row of a decode or verify call writes and reads: its slot,
    // or with a paged cache its block table row.
    auto rowsWhere = [&]() -> Type {
      int64_t d = ShapedType::kDynamic;
      if (blockSize_ > 0)
        return RankedTensorType::get({d, blocksPerSequence_}, b.getI64Type());
      return RankedTensorType::get({d}, b.getI64Type());
    };
    auto rowsWhereAttrs = [&]() {
      return blockSize_ > 0 ? argAttrs("block_tables", {"batch", ""})
                            : argAttrs("slots", {"batch"});
    };

    // The contract's inputs, then one key and one value cache per layer.
    unsigned oldArgs = entry.getNumArguments();
    bool argumentsAdded = true;
    auto addArgument = [&](unsigned index, Type type, DictionaryAttr attrs,
                           Location at) {
      if (failed(entry.insertArgument(index, type, attrs, at)))
        argumentsAdded = false;
    };
    int64_t dyn = ShapedType::kDynamic;
    auto i64 = b.getI64Type();
    if (phase == Phase::Verify) {
      addArgument(oldArgs, RankedTensorType::get({dyn, dyn}, i64),
                  argAttrs("input_ids", {"batch", "verify_length"}), loc);
      addArgument(oldArgs + 1, rowsWhere(), rowsWhereAttrs(), loc);
      addArgument(oldArgs + 2, RankedTensorType::get({dyn}, i64),
                  argAttrs("positions", {"batch"}), loc);
    } else if (phase == Phase::Decode) {
      addArgument(oldArgs, RankedTensorType::get({dyn, 1}, i64),
                           argAttrs("input_ids", {"batch", ""}), loc);
      addArgument(oldArgs + 1, rowsWhere(), rowsWhereAttrs(), loc);
      addArgument(oldArgs + 2, RankedTensorType::get({dyn}, i64),
                           argAttrs("positions", {"batch"}), loc);
    } else {
      addArgument(oldArgs, RankedTensorType::get({1, dyn}, i64),
                           argAttrs("input_ids", {"", "prefill_length"}), loc);
      // A paged cache: the sequence's block table row.
      if (blockSize_ > 0)
        addArgument(oldArgs + 1,
                    RankedTensorType::get({1, blocksPerSequence_}, i64),
                    argAttrs("block_table", {"", ""}), loc);
      else
        addArgument(oldArgs + 1, RankedTensorType::get({}, i64),
                    argAttrs("slot", {}), loc);
      addArgument(oldArgs + 2, RankedTensorType::get({}, i64),
                           argAttrs("start", {}), loc);
    }
    SmallVector<Value> cacheArgs;
    SmallVector<StringAttr> stateNames;
    for (auto [layer, types] : llvm::enumerate(shape.caches)) {
      // A ring's rows are its own extent, not the context; a paged cache's
      // are one block's, and its pool is shared by every sequence.
      const char *rowsName =
          shape.ringKept[layer] || blockSize_ > 0 ? "" : "context";
      const char *poolName = blockSize_ > 0 ? "kv_blocks" : "slots";
      for (auto [kind, type] : {std::pair{"key", types.first},
                                std::pair{"value", types.second}}) {
        std::string state =
            "kv_cache." + std::to_string(layer) + "." + kind;
        unsigned index = entry.getNumArguments();
        SmallVector<NamedAttribute> attrs = {
            b.getNamedAttr("strata.state", b.getStringAttr(state)),
            b.getNamedAttr("strata.dims",
                           strings({poolName, "", rowsName, ""}))};
        if (blockSize_ > 0)
          attrs.push_back(
              b.getNamedAttr("strata.state_scope", b.getStringAttr("shared")));
        addArgument(index, type, DictionaryAttr::get(ctx, attrs), loc);
        cacheArgs.push_back(entry.getArgument(index));
        stateNames.push_back(b.getStringAttr(state));
      }
    }

    if (!argumentsAdded)
      return fail(entry.getLoc(), "its inputs could not be added");
    Block &body = entry.front();
    b.setInsertionPointToStart(&body);
    Value oldIds = entry.getArgument(shape.inputIds);
    PhaseValues in =
        phaseInputs(b, loc, entry, oldArgs, oldIds.getType(), phase);
    // Extents read from the attention mask where its dims carry the token
    // ids' names (a graph without past: the same batch and length) are
    // read from the ids: the mask goes, the ids stay.
    if (shape.attentionMask)
      entry.walk([&](ShapeOp op) {
        if (asArgument(op.getInput()) ==
                entry.getArgument(*shape.attentionMask) &&
            sameDimNames(main, *shape.attentionMask, shape.inputIds,
                         op.getStart(), op.getEnd()))
          op.getInputMutable().assign(oldIds);
      });
    oldIds.replaceAllUsesWith(in.ids);
    if (shape.positionIds) {
      Value old = entry.getArgument(*shape.positionIds);
      old.replaceAllUsesWith(castTo(b, loc, in.positions, old.getType()));
    }

    // Attention over the cache.
    SmallVector<AttentionOp> attentions;
    entry.walk([&](AttentionOp op) { attentions.push_back(op); });
    SmallVector<Value> updatedCaches;
    for (auto [layer, op] : llvm::enumerate(attentions)) {
      b.setInsertionPoint(op);
      Location at = op.getLoc();
      Value k = newEntries(op.getKey(), &shape);
      Value v = newEntries(op.getValue(), &shape);
      Value kc = cacheArgs[2 * layer], vc = cacheArgs[2 * layer + 1];
      IntegerAttr kept, ringContext, blockSize;
      if (blockSize_ > 0)
        blockSize = b.getI64IntegerAttr(blockSize_);
      if (std::optional<int64_t> ringKept = shape.ringKept[layer]) {
        kept = b.getI64IntegerAttr(*ringKept);
        ringContext = b.getI64IntegerAttr(context_);
      }
      Value k1 = CacheWriteOp::create(b, at, kc.getType(), kc, k, in.slots,
                                      in.writeStarts, kept, ringContext,
                                      blockSize);
      Value v1 = CacheWriteOp::create(b, at, vc.getType(), vc, v, in.slots,
                                      in.writeStarts, kept, ringContext,
                                      blockSize);
      auto attended = CacheAttentionOp::create(
          b, at, op.getType(), op.getQuery(), k1, v1, in.slots, in.lengths,
          op.getScaleAttr(), op.getWindowAttr(), op.getSinksAttr(), kept,
          ringContext, op.getGlobalTopkAttr(), op.getGlobalBlockAttr(),
          blockSize);
      op.getResult().replaceAllUsesWith(attended.getResult());
      op.erase();
      updatedCaches.push_back(k1);
      updatedCaches.push_back(v1);
    }

    // The outputs: the logits, then the caches.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value logits = ret.getOperand(shape.logits);
    b.setInsertionPoint(ret);
    auto lt = cast<RankedTensorType>(logits.getType());
    int64_t vocab = lt.getDimSize(2);
    if (ShapedType::isDynamic(vocab))
      return fail(ret.getLoc(), "the logits' vocabulary dim is not static");
    SmallVector<Value> results;
    SmallVector<DictionaryAttr> resultAttrs;
    if (phase == Phase::Verify) {
      // Already [rows, tokens, V]: the graph's own logits.
      results.push_back(logits);
      resultAttrs.push_back(argAttrs("logits", {"batch", "verify_length", ""}));
    } else if (phase == Phase::Decode) {
      results.push_back(reshape(b, loc, logits, {dyn, vocab}));
      resultAttrs.push_back(argAttrs("logits", {"batch", ""}));
    } else {
      Value all = logits;
      // The head runs on the last position only, unless every position's
      // logits are asked for.
      if (!allLogits_)
        logits = lastPositionLogits(b, logits);
      lt = cast<RankedTensorType>(logits.getType());
      // The last position: slice [-1:] of the sequence axis.
      auto last = SliceOp::create(
          b, loc, RankedTensorType::get({lt.getDimSize(0), 1, vocab},
                                        lt.getElementType()),
          logits, i64Constant(b, loc, {-1}, {1}),
          i64Constant(b, loc, {std::numeric_limits<int64_t>::max()}, {1}),
          i64Constant(b, loc, {1}, {1}), b.getDenseI64ArrayAttr({1}));
      results.push_back(reshape(b, loc, last, {1, vocab}));
      resultAttrs.push_back(argAttrs("logits", {"", ""}));
      if (allLogits_) {
        results.push_back(reshape(b, loc, all, {1, dyn, vocab}));
        resultAttrs.push_back(
            argAttrs("all_logits", {"", "prefill_length", ""}));
      }
    }
    for (auto [i, cache] : llvm::enumerate(updatedCaches)) {
      results.push_back(cache);
      resultAttrs.push_back(DictionaryAttr::get(
          ctx, {b.getNamedAttr("strata.state", stateNames[i])}));
    }
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    // The rows' positions stay for the position rewrite below.
    eraseDeadOps(entry, in.positions);

    // Position ids the graph computes (range(past, past + n), or
    // range(0, n) without past) become the rows' own; tables cut to the
    // token count (rotary caches) are read whole, by position.
    SmallVector<RangeOp> ranges;
    entry.walk([&](RangeOp r) {
      if (r != in.tokenOffsets && isConstantInt(r.getDelta(), 1) &&
          (derivesFromPastLength(r.getStart(), shape) ||
           (isConstantInt(r.getStart(), 0) &&
            derivesFromInputExtent(r.getLimit()))))
        ranges.push_back(r);
    });
    for (RangeOp r : ranges)
      if (!replacePositionGathers(b, r.getResult(), in.positions) &&
          !replaceSharedPositions(b, r.getResult(), in.positions))
        return fail(r.getLoc(), "a range of token positions is used other "
                                "than to index a table or as positions "
                                "shared by the batch");
    if (shape.attentionMask)
      replaceMaskCountedPositions(b, entry.getArgument(*shape.attentionMask),
                                  in.positions, shape);
    SmallVector<SliceOp> cuts;
    entry.walk([&](SliceOp s) {
      if (s.getInput().getDefiningOp<ConstantOp>() &&
          isConstantInt(s.getStarts(), 0) &&
          derivesFromAnyExtent(s.getEnds()))
        cuts.push_back(s);
    });
    for (SliceOp s : cuts) {
      if (!indexesTablesOnly(s.getResult()))
        return fail(s.getLoc(), "a table cut to the token count is used other "
                                "than through a gather by position");
      b.setInsertionPoint(s);
      s.getResult().replaceAllUsesWith(
          castTo(b, s.getLoc(), s.getInput(), s.getType()));
      s.erase();
    }
    eraseDeadOps(entry);


    // The graph's own inputs must be gone now.
    for (unsigned i = 0; i < oldArgs; ++i) {
      Value old = entry.getArgument(i);
      if (!old.use_empty())
        return fail(old.getUses().begin()->getOwner()->getLoc(),
                    "input '" + argName(main, i) + "' is still used by " +
                        old.getUses().begin()->getOwner()->getName()
                            .getStringRef());
    }
    llvm::BitVector erase(entry.getNumArguments());
    erase.set(0, oldArgs);
    if (failed(entry.eraseArguments(erase)))
      return fail(entry.getLoc(), "its old inputs could not be removed");
    SmallVector<Type> resultTypes;
    for (Value r : results)
      resultTypes.push_back(r.getType());
    entry.setType(FunctionType::get(ctx, entry.getArgumentTypes(), resultTypes));
    entry.setAllResultAttrs(resultAttrs);
    entry->setAttr("strata.entry_kind", b.getStringAttr(name));
    std::string problem;
    {
      ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &diag) {
        if (problem.empty())
          problem = diag.str();
        return success();
      });
      if (succeeded(verify(entry)))
        problem.clear();
      else if (problem.empty())
        problem = "unknown";
    }
    if (!problem.empty())
      return fail(entry.getLoc(), "the rewritten entry does not verify: " +
                                      problem);
    return entry;
  }

  ModuleOp module_;
  int64_t slots_, context_;
  // A paged cache: positions per block, blocks one sequence's table names
  // (enough for the context) and blocks in each pool; 0: contiguous.
  int64_t blockSize_, blocksPerSequence_, blocks_;
  int64_t prefillLength_;  // the most new rows one prefill call writes
  int64_t verifyLength_;   // the most tokens per row of a verify call; 0: none
  bool ringCaches_;
  bool allLogits_;
  std::string source_;
  std::string kvCache_;
};

/// Paged caches hold whole contexts: a windowed attention's ring cache
/// and global blocks stay with contiguous caches.
LogicalResult checkPageable(ModuleOp module) {
  LogicalResult result = success();
  module.walk([&](AttentionOp op) {
    if (op.getCausal() && (op.getWindow() || op.getGlobalTopk())) {
      op.emitError() << "a paged KV cache (kv-block-size) does not combine "
                        "with windowed or global-block attention (their ring "
                        "and block choices need contiguous caches)";
      result = failure();
    }
  });
  return result;
}

struct SplitPrefillDecodePass
    : impl::SplitPrefillDecodePassBase<SplitPrefillDecodePass> {
  using SplitPrefillDecodePassBase::SplitPrefillDecodePassBase;
  void runOnOperation() override {
    if (slots < 1 || context < 1) {
      getOperation().emitError()
          << "strata-split-prefill-decode needs slots and context >= 1";
      return signalPassFailure();
    }
    if (kvCache != "fp32" && kvCache != "bf16" && kvCache != "int8") {
      getOperation().emitError()
          << "strata-split-prefill-decode: unsupported kv-cache precision '"
          << kvCache << "' (supported: fp32, bf16, int8)";
      return signalPassFailure();
    }
    if (kvBlockSize < 0 || kvBlocks < 0) {
      getOperation().emitError()
          << "strata-split-prefill-decode: kv-block-size and kv-blocks must "
             "be >= 0";
      return signalPassFailure();
    }
    // A paged pool must hold at least one sequence of the whole context.
    const int64_t perSequence =
        kvBlockSize > 0 ? (context + kvBlockSize - 1) / kvBlockSize : 0;
    if (kvBlockSize > 0 && kvBlocks > 0 && kvBlocks < perSequence) {
      getOperation().emitError()
          << "strata-split-prefill-decode: " << int64_t(kvBlocks)
          << " KV blocks of " << int64_t(kvBlockSize)
          << " cannot hold one sequence of the context ("
          << int64_t(context) << " tokens: " << perSequence << " blocks)";
      return signalPassFailure();
    }
    if (kvBlockSize > 0 && failed(checkPageable(getOperation())))
      return signalPassFailure();
    // A failed split warned and left 'main' alone: not a pass failure.
    (void)Splitter(getOperation(), slots, context, prefillLength, verifyLength,
                   ringCaches, allLogits, source, kvCache, kvBlockSize,
                   kvBlocks)
        .run();
  }
};

} // namespace
} // namespace strata
