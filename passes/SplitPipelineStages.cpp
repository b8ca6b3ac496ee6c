//===- SplitPipelineStages.cpp - One stage of a pipeline-parallel model ---===//
// SPDX-License-Identifier: Apache-2.0
// Pipeline parallelism on the strata dialect: every entry is cut into
// `stages` consecutive parts, each run by its own process. Stage s receives
// the residual stream from stage s - 1, runs its part of the layers (and
// holds only their KV cache), and sends the stream on to stage s + 1; the
// entry's outputs go from the stage that computes them to every other, so
// every process returns the whole model's outputs and runs the same
// generation loop.
//
// Where to cut is read off the graph, not matched: a position in program
// order is a cut when exactly one value of the activation stream is
// defined before it and used after it (in a pre-norm decoder, after each
// attention's and each MLP's residual add). The stream is what depends on
// an attention, or feeds a contraction by a weight before the first one
// (the embeddings); the rest (masks, positions, rotary tables) is cheap
// bookkeeping computed from the inputs, which a stage that needs it
// computes again. Of the cuts, the pass takes those that divide the bytes
// of the weights most evenly (what a decode step reads), the same in every
// entry so that each KV cache lives on one stage.

#include "passes/Passes.h"

#include "passes/ShapeArithmetic.h"
#include "passes/WeightContractions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace strata {

#define GEN_PASS_DEF_SPLITPIPELINESTAGESPASS
#include "passes/Passes.h.inc"

using namespace mlir;
using namespace strata::ir;

namespace {

constexpr llvm::StringLiteral kStateAttr = "strata.state";

bool isAttention(Operation *op) {
  return isa<AttentionOp, CacheAttentionOp>(op);
}

/// The state name of result or argument attributes, or "".
StringRef stateName(DictionaryAttr attrs) {
  if (!attrs)
    return {};
  if (auto name = attrs.getAs<StringAttr>(kStateAttr))
    return name.getValue();
  return {};
}

/// Bytes a constant operand holds, 0 for anything else.
int64_t constantBytes(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return 0;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return 0;
  return type.getNumElements() *
         int64_t(std::max(1u, type.getElementType().getIntOrFloatBitWidth() / 8));
}

FailureOr<Value> materializeShape(OpBuilder &b, Location loc,
                                  ArrayRef<SymbolicIndex> extents);

/// One entry read as a sequence of top-level ops: where it can be cut and
/// what each part costs.
struct EntryGraph {
  func::FuncOp func;
  SmallVector<Operation *> ops; // the block's ops, terminator excluded
  DenseMap<Operation *, int64_t> position;
  /// Ops computed from an attention's result (transitively).
  DenseSet<Operation *> dependent;
  /// Values before the first attention that reach a weight contraction
  /// (the embeddings and what is computed from them).
  DenseSet<Value> feedsStream;
  /// prefix[p]: bytes of the weights ops[0, p) read.
  SmallVector<int64_t> prefix;
  int64_t firstAttention = -1;
  /// Positions p where exactly one stream value crosses, and that value.
  SmallVector<std::pair<int64_t, Value>> cuts;

  /// The position of the top-level op holding |op|, or -1 (the terminator).
  int64_t topPosition(Operation *op) {
    Operation *top = func.getBody().front().findAncestorOpInBlock(*op);
    auto it = top ? position.find(top) : position.end();
    return it == position.end() ? -1 : it->second;
  }

  bool isStream(Value v) const {
    Operation *def = v.getDefiningOp();
    return def && (dependent.contains(def) || feedsStream.contains(v));
  }

  /// Values used inside |op| but defined outside it.
  static SmallVector<Value> operandsFromAbove(Operation *op) {
    SmallVector<Value> values(op->getOperands());
    op->walk([&](Operation *inner) {
      if (inner == op)
        return;
      for (Value v : inner->getOperands())
        if (!op->isAncestor(v.getParentBlock()->getParentOp()))
          values.push_back(v);
    });
    return values;
  }

  void analyze() {
    Block &body = func.getBody().front();
    readShapesFromInputs();
    for (Operation &op : body.without_terminator()) {
      position[&op] = int64_t(ops.size());
      ops.push_back(&op);
    }
    for (Operation *op : ops) {
      bool dep = isAttention(op);
      if (dep && firstAttention < 0)
        firstAttention = position[op];
      for (Value v : operandsFromAbove(op))
        if (Operation *def = v.getDefiningOp())
          dep |= dependent.contains(body.findAncestorOpInBlock(*def));
      if (dep)
        dependent.insert(op);
    }
    // The stream before the first attention: what weight contractions read.
    SmallVector<Value> work;
    for (Operation *c : weightContractions(func, /*skipLmHead=*/false))
      for (Value v : c->getOperands())
        if (!constantBytes(v))
          work.push_back(v);
    while (!work.empty()) {
      Value v = work.pop_back_val();
      Operation *def = v.getDefiningOp();
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!def || dependent.contains(def) || isa<ConstantOp>(def) || !type ||
          !isa<FloatType>(type.getElementType()) ||
          !feedsStream.insert(v).second)
        continue;
      for (Value operand : operandsFromAbove(def))
        work.push_back(operand);
    }
    prefix.assign(ops.size() + 1, 0);
    for (size_t i = 0; i < ops.size(); ++i) {
      int64_t bytes = 0;
      // An embedding lookup reads a few rows of its table.
      if (!isa<GatherOp>(ops[i]))
        for (Value v : ops[i]->getOperands())
          bytes += constantBytes(v);
      prefix[i + 1] = prefix[i] + bytes;
    }
    findCuts();
  }

  /// Replaces the extents read off activations (`strata.shape` of a
  /// value computed in the entry) by the inputs' extents they equal, so
  /// that a stage computes them without the activation.
  void readShapesFromInputs() {
    SmallVector<ShapeOp> shapes;
    func.walk([&](ShapeOp op) {
      if (!isa<BlockArgument>(op.getInput()))
        shapes.push_back(op);
    });
    for (ShapeOp op : shapes) {
      std::optional<SmallVector<SymbolicIndex>> extents =
          elementsOf(op.getResult());
      if (!extents || extents->empty())
        continue;
      OpBuilder b(op);
      FailureOr<Value> shape = materializeShape(b, op.getLoc(), *extents);
      if (failed(shape))
        continue;
      op.getResult().replaceAllUsesWith(*shape);
      op.erase();
    }
  }

  void findCuts() {
    if (firstAttention < 0)
      return;
    // The last position (terminator excluded) each stream value is used at.
    DenseMap<Value, int64_t> lastUse;
    for (Operation *op : ops)
      for (Value v : op->getResults()) {
        if (!isStream(v))
          continue;
        int64_t last = -1;
        for (Operation *user : v.getUsers())
          last = std::max(last, topPosition(user));
        if (last > position[op])
          lastUse[v] = last;
      }
    // Sweep: after ops[0, p), the stream values still to be used.
    llvm::SmallSetVector<Value, 8> live;
    for (int64_t p = 1; p < int64_t(ops.size()); ++p) {
      for (Value v : ops[p - 1]->getResults())
        if (lastUse.count(v))
          live.insert(v);
      live.remove_if([&](Value v) { return lastUse[v] < p; });
      if (p <= firstAttention || live.size() != 1)
        continue;
      auto type = dyn_cast<RankedTensorType>(live.front().getType());
      if (type && type.getElementType().isF32())
        cuts.push_back({p, live.front()});
    }
  }

  /// The stage of the op at |pos| under stage boundaries |bounds| (0, ...,
  /// ops.size()).
  static int64_t stageAt(ArrayRef<int64_t> bounds, int64_t pos) {
    return int64_t(std::upper_bound(bounds.begin(), bounds.end(), pos) -
                   bounds.begin()) -
           1;
  }
};

/// True if every term of |e| is an extent of an entry input.
bool fromInputs(const SymbolicIndex &e) {
  return llvm::all_of(e.terms, [](const auto &term) {
    return isa<BlockArgument>(std::get<0>(term));
  });
}

/// Extent |dim| of |v|, the entry's result |result|: as computed from the
/// inputs where the ops show it, else as the output's declared dim name
/// (`strata.dims`) names an input's dim, else symbolic in |v|.
SymbolicIndex outputExtent(func::FuncOp func, unsigned result, Value v,
                           int64_t dim) {
  SymbolicIndex e = extentOf(v, dim);
  if (fromInputs(e))
    return e;
  auto names = [](DictionaryAttr attrs) {
    return attrs ? attrs.getAs<ArrayAttr>("strata.dims") : ArrayAttr();
  };
  ArrayAttr declared = names(func.getResultAttrDict(result));
  if (!declared || dim >= int64_t(declared.size()))
    return e;
  auto name = dyn_cast<StringAttr>(declared[dim]);
  if (!name || name.getValue().empty())
    return e;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    ArrayAttr dims = names(func.getArgAttrDict(i));
    for (int64_t d = 0; dims && d < int64_t(dims.size()); ++d)
      if (dims[d] == name) {
        SymbolicIndex input;
        input.terms.emplace_back(func.getArgument(i), d, 1);
        return input;
      }
  }
  return e;
}

/// The 1-D i64 shape tensor of |extents|, built from the entry's inputs'
/// extents; failure when one is not a sum of input extents.
FailureOr<Value> materializeShape(OpBuilder &b, Location loc,
                                  ArrayRef<SymbolicIndex> extents) {
  Type i64 = b.getI64Type();
  auto piece = RankedTensorType::get({1}, i64);
  auto constant = [&](ArrayRef<int64_t> values) -> Value {
    auto type = RankedTensorType::get({int64_t(values.size())}, i64);
    return ConstantOp::create(b, loc, DenseElementsAttr::get(type, values));
  };
  SmallVector<int64_t> known;
  for (const SymbolicIndex &e : extents)
    if (std::optional<int64_t> c = e.getConstant())
      known.push_back(*c);
  if (known.size() == extents.size())
    return constant(known);
  SmallVector<Value> pieces;
  for (const SymbolicIndex &e : extents) {
    if (std::optional<int64_t> c = e.getConstant()) {
      pieces.push_back(constant({*c}));
      continue;
    }
    Value sum;
    for (const auto &[value, dim, coeff] : e.terms) {
      auto arg = dyn_cast<BlockArgument>(value);
      if (!arg)
        return failure();
      Value term = ShapeOp::create(b, loc, piece, arg,
                                   b.getI64IntegerAttr(dim),
                                   b.getI64IntegerAttr(dim + 1));
      if (coeff != 1)
        term = MulOp::create(b, loc, piece, term, constant({coeff}));
      sum = sum ? Value(AddOp::create(b, loc, piece, sum, term)) : term;
    }
    if (e.constant != 0)
      sum = AddOp::create(b, loc, piece, sum, constant({e.constant}));
    pieces.push_back(sum);
  }
  if (pieces.size() == 1)
    return pieces.front();
  auto type = RankedTensorType::get({int64_t(pieces.size())}, i64);
  return ConcatOp::create(b, loc, type, pieces, b.getI64IntegerAttr(0))
      .getResult();
}

struct SplitPipelineStagesPass
    : impl::SplitPipelineStagesPassBase<SplitPipelineStagesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (stages < 1 || stage < 0 || stage >= stages) {
      emitError(module.getLoc())
          << "pipeline stage " << int64_t(stage) << " of " << int64_t(stages)
          << " is not a stage of the model";
      return signalPassFailure();
    }
    if (stages == 1)
      return;
    SmallVector<func::FuncOp> entries(module.getOps<func::FuncOp>());
    std::vector<EntryGraph> graphs(entries.size());
    SmallVector<SmallVector<int64_t>> bounds(entries.size());
    // Which stage holds each state, from the first entry that has it.
    std::map<std::string, std::pair<int64_t, std::string>> stateStage;
    for (size_t e = 0; e < entries.size(); ++e) {
      EntryGraph &g = graphs[e];
      g.func = entries[e];
      if (g.func.isExternal())
        continue;
      g.analyze();
      if (failed(chooseBounds(g, bounds[e])) ||
          failed(checkStates(g, bounds[e], stateStage)))
        return signalPassFailure();
    }
    recordSlots(module, entries);
    for (size_t e = 0; e < entries.size(); ++e)
      if (!entries[e].isExternal() &&
          failed(rewrite(graphs[e], bounds[e])))
        return signalPassFailure();
  }

  /// The generation contract's sequence slots, from a state's `slots` dim,
  /// recorded on every stage for the one that may keep no state.
  void recordSlots(ModuleOp module, ArrayRef<func::FuncOp> entries) {
    for (func::FuncOp func : entries)
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        DictionaryAttr attrs = func.getArgAttrDict(i);
        auto dims = attrs ? attrs.getAs<ArrayAttr>("strata.dims") : ArrayAttr();
        auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
        if (stateName(attrs).empty() || !dims || dims.empty() || !type ||
            type.isDynamicDim(0) || dims[0] != StringAttr::get(module.getContext(), "slots"))
          continue;
        module->setAttr(ir::kGenerationSlotsAttr,
                        IntegerAttr::get(IntegerType::get(module.getContext(), 64),
                                         type.getDimSize(0)));
        return;
      }
  }

  /// Stage boundaries 0 < c1 < ... < ops.size(): the cuts nearest to
  /// dividing the weights' bytes evenly.
  LogicalResult chooseBounds(EntryGraph &g,
                             SmallVector<int64_t> &bounds) {
    const int64_t need = stages - 1;
    if (g.firstAttention < 0)
      return g.func.emitError()
             << "pipeline parallelism: entry '" << g.func.getSymName()
             << "' has no attention layer to cut the stages at";
    if (int64_t(g.cuts.size()) < need)
      return g.func.emitError()
             << "pipeline parallelism: entry '" << g.func.getSymName()
             << "' can be cut in " << g.cuts.size()
             << " places (where one activation crosses), " << int64_t(stages)
             << " stages need " << need;
    const int64_t total = g.prefix.back();
    bounds.assign({0});
    int64_t next = 0; // first candidate still free
    for (int64_t k = 1; k <= need; ++k) {
      const double target = double(total) * double(k) / double(stages);
      // Leave a cut for each boundary after this one.
      const int64_t last = int64_t(g.cuts.size()) - (need - k) - 1;
      int64_t best = next;
      for (int64_t i = next; i <= last; ++i)
        if (std::abs(double(g.prefix[g.cuts[i].first]) - target) <
            std::abs(double(g.prefix[g.cuts[best].first]) - target))
          best = i;
      bounds.push_back(g.cuts[best].first);
      next = best + 1;
    }
    bounds.push_back(int64_t(g.ops.size()));
    return success();
  }

  /// The stage holding each state result of |g|; the same state on two
  /// stages in two entries is an error (each KV cache lives on one stage).
  LogicalResult
  checkStates(EntryGraph &g, ArrayRef<int64_t> bounds,
              std::map<std::string, std::pair<int64_t, std::string>> &seen) {
    Operation *ret = g.func.getBody().front().getTerminator();
    for (unsigned i = 0; i < ret->getNumOperands(); ++i) {
      StringRef name = stateName(g.func.getResultAttrDict(i));
      Operation *def = ret->getOperand(i).getDefiningOp();
      if (name.empty() || !def)
        continue;
      const int64_t s = EntryGraph::stageAt(
          bounds, g.position.lookup(
                      g.func.getBody().front().findAncestorOpInBlock(*def)));
      auto [it, fresh] = seen.insert(
          {name.str(), {s, g.func.getSymName().str()}});
      if (!fresh && it->second.first != s)
        return g.func.emitError()
               << "pipeline parallelism: entry '" << g.func.getSymName()
               << "' computes state '" << name << "' on stage " << s
               << ", entry '" << it->second.second << "' on stage "
               << it->second.first;
    }
    return success();
  }

  /// Rewrites |g|'s entry into stage `stage`'s part.
  LogicalResult rewrite(EntryGraph &g, ArrayRef<int64_t> bounds) {
    func::FuncOp func = g.func;
    Block &body = func.getBody().front();
    Operation *ret = body.getTerminator();
    const int64_t lo = bounds[stage], hi = bounds[stage + 1];
    auto crossing = [&](int64_t boundary) -> Value {
      for (const auto &[p, v] : g.cuts)
        if (p == bounds[boundary])
          return v;
      return {};
    };
    Value streamIn = stage > 0 ? crossing(stage) : Value();
    Value streamOut = stage + 1 < stages ? crossing(stage + 1) : Value();

    // The ops this stage runs: its own, and the bookkeeping they read
    // from before its first (computed again here).
    DenseSet<Operation *> keep;
    SmallVector<Operation *> work;
    for (int64_t i = lo; i < hi; ++i) {
      keep.insert(g.ops[i]);
      work.push_back(g.ops[i]);
    }
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      for (Value v : EntryGraph::operandsFromAbove(op)) {
        Operation *def = v.getDefiningOp();
        if (!def || v == streamIn)
          continue;
        def = body.findAncestorOpInBlock(*def);
        if (!def || keep.contains(def))
          continue;
        if (g.isStream(v))
          return emitError(op->getLoc())
                 << "pipeline parallelism: stage " << int64_t(stage)
                 << " needs a second activation from an earlier stage";
        keep.insert(def);
        work.push_back(def);
      }
    }

    struct Output {
      int64_t owner = -1; // -1: an input, returned as it is
      bool state = false;
      SmallVector<SymbolicIndex> extents;
    };
    SmallVector<Output> outputs(ret->getNumOperands());
    for (unsigned i = 0; i < ret->getNumOperands(); ++i) {
      Value v = ret->getOperand(i);
      Output &out = outputs[i];
      out.state = !stateName(func.getResultAttrDict(i)).empty();
      if (Operation *def = v.getDefiningOp())
        out.owner = EntryGraph::stageAt(bounds, g.position.lookup(
                                                    body.findAncestorOpInBlock(*def)));
      if (out.owner < 0 || out.state)
        continue;
      auto type = cast<RankedTensorType>(v.getType());
      for (int64_t d = 0; d < type.getRank(); ++d)
        out.extents.push_back(outputExtent(func, i, v, d));
      if (out.owner != stage) {
        if (!type.getElementType().isF32())
          return emitError(ret->getLoc())
                 << "pipeline parallelism: output " << i << " of entry '"
                 << func.getSymName() << "' (" << v.getType()
                 << ") is computed on stage " << out.owner
                 << "; only fp32 tensors are handed between stages";
      }
    }

    OpBuilder b(&body, body.begin());
    if (streamIn) {
      // The stream's extents from the inputs where the ops show them, so
      // that the shapes read off it stay known (the tensor-parallel split
      // of the stage's heads needs them).
      SmallVector<SymbolicIndex> extents;
      for (int64_t d = 0; d < cast<RankedTensorType>(streamIn.getType()).getRank(); ++d)
        extents.push_back(extentOf(streamIn, d));
      Value shape;
      if (llvm::all_of(extents, fromInputs)) {
        FailureOr<Value> built = materializeShape(b, streamIn.getLoc(), extents);
        if (succeeded(built))
          shape = *built;
      }
      Value received = RecvOp::create(b, streamIn.getLoc(), streamIn.getType(),
                                      shape, b.getI64IntegerAttr(stage - 1));
      streamIn.replaceUsesWithIf(received, [&](OpOperand &use) {
        Operation *top = body.findAncestorOpInBlock(*use.getOwner());
        return top && top != ret && keep.contains(top) &&
               g.position.lookup(top) >= lo;
      });
      ++numRecvs;
    }
    b.setInsertionPoint(ret);
    if (streamOut) {
      SendOp::create(b, streamOut.getLoc(), streamOut,
                     b.getI64IntegerAttr(stage + 1));
      ++numSends;
    }
    llvm::BitVector dropResults(ret->getNumOperands());
    for (unsigned i = 0; i < ret->getNumOperands(); ++i) {
      const Output &out = outputs[i];
      Value v = ret->getOperand(i);
      if (out.owner < 0)
        continue;
      if (out.owner == stage) {
        if (out.state)
          continue;
        // A reshape to the extents the inputs give where the ops do not
        // show them (the same ones: a stream of other extents ends the run
        // there).
        auto type = cast<RankedTensorType>(v.getType());
        bool known = true;
        for (int64_t d = 0; d < type.getRank(); ++d)
          known &= fromInputs(extentOf(v, d));
        FailureOr<Value> shape =
            known ? FailureOr<Value>(failure())
                  : materializeShape(b, v.getLoc(), out.extents);
        if (succeeded(shape)) {
          v = ReshapeOp::create(b, v.getLoc(), v.getType(), v, *shape,
                                UnitAttr())
                  .getResult();
          ret->setOperand(i, v);
        }
        for (int64_t other = 0; other < stages; ++other)
          if (other != stage) {
            SendOp::create(b, v.getLoc(), v, b.getI64IntegerAttr(other));
            ++numSends;
          }
        continue;
      }
      if (out.state) {
        dropResults.set(i);
        continue;
      }
      // The output's extents from the inputs, so that the entry's
      // signature describes it as the whole model's does (a received
      // tensor's extents otherwise come from data).
      FailureOr<Value> shape = materializeShape(b, v.getLoc(), out.extents);
      ret->setOperand(i, RecvOp::create(b, v.getLoc(), v.getType(),
                                        succeeded(shape) ? *shape : Value(),
                                        b.getI64IntegerAttr(out.owner)));
      ++numRecvs;
    }

    // States this stage does not compute leave its results, then the other
    // stages' ops go, users first.
    SmallVector<std::string> droppedStates;
    for (unsigned i : dropResults.set_bits())
      droppedStates.push_back(stateName(func.getResultAttrDict(i)).str());
    SmallVector<Value> kept;
    for (unsigned i = 0; i < ret->getNumOperands(); ++i)
      if (!dropResults.test(i))
        kept.push_back(ret->getOperand(i));
    ret->setOperands(kept);
    if (failed(func.eraseResults(dropResults)))
      return func.emitError("pipeline parallelism: outputs not removed");
    for (Operation *op : llvm::reverse(g.ops)) {
      if (keep.contains(op))
        continue;
      if (!op->use_empty())
        return emitError(op->getUses().begin()->getOwner()->getLoc())
               << "pipeline parallelism: an op of another stage is still "
                  "used on stage "
               << int64_t(stage);
      op->erase();
    }
    llvm::BitVector dropArgs(func.getNumArguments());
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      StringRef name = stateName(func.getArgAttrDict(i));
      if (name.empty() || !llvm::is_contained(droppedStates, name.str()))
        continue;
      if (!func.getArgument(i).use_empty())
        return emitError(func.getArgument(i).getLoc())
               << "pipeline parallelism: state '" << name
               << "' is read on stage " << int64_t(stage) << " but computed on another";
      dropArgs.set(i);
    }
    if (failed(func.eraseArguments(dropArgs)))
      return func.emitError("pipeline parallelism: inputs not removed");
    return success();
  }
};

} // namespace

} // namespace strata
