//===- OutlineKernels.cpp - One function per linalg op --------------------===//
// SPDX-License-Identifier: Apache-2.0
// A generic whose first loop is parallel and indexes its outputs directly
// becomes a *parallel kernel*: it takes a [begin, end) range of that loop
// (every operand indexed by it is sliced with a subview) and the call site
// passes the whole range plus a work estimate (`linalg.index 0` in the body
// is shifted by the slice's start); strata-cpu-dispatch-parallel-kernels
// then turns the call into strata_rt_parallel_for over the runtime's pool.
// Where its second loop (not the innermost) qualifies too, the kernel
// takes a range of each (a 2-D parallel kernel) and the pool splits
// whichever is longer at run time: a prefill's [batch, tokens, hidden]
// tensors have one batch row, and split by their first loop they had run
// on one thread. Copies, transposes and broadcasts are made generics first
// so that they split too.

#include "codegen/cpu/Passes.h"

#include "compiler/dispatch/DispatchRegions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace strata::codegen::cpu {
namespace {

// Values the kernel may rebuild instead of taking as arguments.
bool isCloneable(Value v) {
  Operation *def = v.getDefiningOp();
  return def && isa<arith::ConstantOp, memref::GetGlobalOp>(def);
}

// For a generic that can run in slices of loop |loop|: the operand dim that
// loop indexes, per operand (-1: not indexed). Empty if it cannot.
SmallVector<int64_t> sliceDims(linalg::GenericOp op, unsigned loop) {
  if (op.getNumLoops() <= loop ||
      op.getIteratorTypesArray()[loop] != utils::IteratorType::parallel ||
      op.getNumResults() != 0)
    return {};
  SmallVector<int64_t> dims;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      return {};
    AffineMap map = op.getMatchingIndexingMap(&operand);
    int64_t found = -1;
    for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
      if (!expr.isFunctionOfDim(loop))
        continue;
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim || found != -1)
        return {}; // the loop inside an expression, or twice
      found = static_cast<int64_t>(pos);
    }
    // Each slice must write its own part of every output.
    if (found == -1 && op.isDpsInit(&operand))
      return {};
    dims.push_back(found);
  }
  // A buffer used twice (in place: the same memref as input and output)
  // must be sliced the same way both times.
  for (auto [i, a] : llvm::enumerate(op->getOperands()))
    for (auto [j, b] : llvm::enumerate(op->getOperands()))
      if (i < j && a == b && dims[i] != dims[j])
        return {};
  return dims;
}

// Whether |fill| may move down to just before |user|: no op between them
// touches the buffer it fills.
bool canSinkTo(Operation *fill, Operation *user) {
  if (fill->getBlock() != user->getBlock() || !fill->isBeforeInBlock(user))
    return false;
  Value buffer = cast<linalg::FillOp>(fill).getDpsInits()[0];
  for (Operation *other : buffer.getUsers()) {
    if (other == fill || other == user)
      continue;
    Operation *ancestor = fill->getBlock()->findAncestorOpInBlock(*other);
    if (!ancestor || (fill->isBeforeInBlock(ancestor) &&
                      ancestor->isBeforeInBlock(user)))
      return false;
  }
  return true;
}

// The kernels of |func|: the linalg ops of each dispatch region that can
// run as one function (a fill with the op it initializes), in block order;
// ops outside any region, or that cannot join theirs, run alone.
SmallVector<SmallVector<Operation *>> kernelGroups(func::FuncOp func) {
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    if (isa<linalg::LinalgOp>(op))
      ops.push_back(&op);
  llvm::DenseMap<Operation *, Operation *> sinksInto; // fill -> its user
  for (Operation *op : ops) {
    auto fill = dyn_cast<linalg::FillOp>(op);
    std::optional<int64_t> id = dispatch::dispatchId(op);
    if (!fill || !id)
      continue;
    for (Operation *user : fill.getDpsInits()[0].getUsers())
      if (user != op && isa<linalg::LinalgOp>(user) &&
          dispatch::dispatchId(user) == id && canSinkTo(op, user))
        sinksInto[op] = user;
  }
  llvm::DenseMap<Operation *, SmallVector<Operation *>> joined;
  for (auto [fill, user] : sinksInto)
    joined[user].push_back(fill);
  SmallVector<SmallVector<Operation *>> groups;
  for (Operation *op : ops) {
    if (sinksInto.count(op))
      continue;
    SmallVector<Operation *> group = joined.lookup(op);
    llvm::sort(group, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    group.push_back(op);
    groups.push_back(std::move(group));
  }
  return groups;
}

// Copies, transposes and broadcasts as generics (the same loops), which
// may run in slices; their dispatch attribute goes with them.
void generalizeDataMovement(func::FuncOp func) {
  SmallVector<linalg::LinalgOp> ops;
  for (Operation &op : func.getBody().front())
    if (isa<linalg::CopyOp, linalg::TransposeOp, linalg::BroadcastOp>(op))
      ops.push_back(cast<linalg::LinalgOp>(op));
  IRRewriter rewriter(func.getContext());
  for (linalg::LinalgOp op : ops) {
    DictionaryAttr attrs = op->getDiscardableAttrDictionary();
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic = linalg::generalizeNamedOp(rewriter, op);
    if (succeeded(generic))
      (*generic)->setDiscardableAttrs(attrs);
  }
}

unsigned outlineKernels(ModuleOp module) {
  SmallVector<SmallVector<Operation *>> kernels;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    generalizeDataMovement(func);
    llvm::append_range(kernels, kernelGroups(func));
  }
  OpBuilder moduleBuilder(module.getBodyRegion());
  moduleBuilder.setInsertionPointToEnd(module.getBody());
  unsigned count = 0;
  for (ArrayRef<Operation *> group : kernels) {
    // The last member is the region's root; the others (fills) run first.
    Operation *op = group.back();
    // Arguments: the operands, then values the regions use from outside.
    llvm::SetVector<Value> args;
    llvm::SetVector<Value> cloned;
    auto addValue = [&](Value v) {
      if (isCloneable(v))
        cloned.insert(v);
      else
        args.insert(v);
    };
    for (Operation *member : group) {
      for (Value v : member->getOperands())
        addValue(v);
      llvm::SetVector<Value> above;
      getUsedValuesDefinedAbove(member->getRegions(), above);
      for (Value v : above)
        addValue(v);
    }

    auto generic = dyn_cast<linalg::GenericOp>(op);
    // A fill in the group writes the root's init, which the slice covers.
    SmallVector<int64_t> slices =
        generic ? sliceDims(generic, 0) : SmallVector<int64_t>();
    const bool parallel = !slices.empty();
    // The second loop's slices too, if it qualifies and is not the
    // innermost (whose static extent the vectorized loop keeps): a 2-D
    // parallel kernel.
    SmallVector<int64_t> slices1 = parallel && generic.getNumLoops() >= 3
                                       ? sliceDims(generic, 1)
                                       : SmallVector<int64_t>();
    const bool twoD = !slices1.empty();
    Location loc = op->getLoc();

    SmallVector<Type> argTypes;
    Type index = moduleBuilder.getIndexType();
    if (twoD) // begin, end of loop 0 and of loop 1, work
      argTypes.append({index, index, index, index, index});
    else if (parallel)
      argTypes.append({index, index, index}); // begin, end, work
    for (Value v : args)
      argTypes.push_back(v.getType());
    // The names are for reading the IR; passes find kernels by attribute.
    std::string name =
        ((parallel ? "strata_pkernel_" : "strata_kernel_") + llvm::Twine(count++))
            .str();
    auto kernel = func::FuncOp::create(
        moduleBuilder, loc, name, moduleBuilder.getFunctionType(argTypes, {}));
    kernel.setPrivate();
    kernel->setAttr(parallel ? kParallelKernelAttr : kKernelAttr,
                    moduleBuilder.getUnitAttr());
    if (twoD)
      kernel->setAttr(kParallelKernel2DAttr, moduleBuilder.getUnitAttr());
    kernel->setAttr("passthrough",
                    moduleBuilder.getArrayAttr(
                        {moduleBuilder.getStringAttr("noinline")}));
    if (Attribute region = op->getAttr(dispatch::kDispatchAttr))
      kernel->setAttr(dispatch::kDispatchAttr, region);
    Block *body = kernel.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(body);
    IRMapping mapping;
    unsigned first = twoD ? 5 : parallel ? 3 : 0;
    for (auto [i, v] : llvm::enumerate(args))
      mapping.map(v, body->getArgument(first + i));
    for (Value v : cloned)
      mapping.map(v, b.clone(*v.getDefiningOp())->getResult(0));
    // The sliced loops: their begin arguments (begin, end pairs first).
    SmallVector<Value, 2> begins;
    if (parallel) {
      // Operands indexed by a sliced loop become their slice of it.
      SmallVector<std::pair<Value, Value>, 2> ranges; // offset, size
      for (unsigned l = 0; l < (twoD ? 2u : 1u); ++l) {
        Value begin = body->getArgument(2 * l);
        Value end = body->getArgument(2 * l + 1);
        begins.push_back(begin);
        ranges.push_back({begin, arith::SubIOp::create(b, loc, end, begin)});
      }
      llvm::SmallPtrSet<Value, 4> sliced;
      for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
        const int64_t dim0 = slices[i], dim1 = twoD ? slices1[i] : -1;
        // Slice each buffer once, even if the op uses it twice.
        if ((dim0 < 0 && dim1 < 0) || !sliced.insert(operand).second)
          continue;
        Value full = mapping.lookup(operand);
        auto type = cast<MemRefType>(full.getType());
        SmallVector<OpFoldResult> offsets, sizes, strides;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          strides.push_back(b.getIndexAttr(1));
          if (d == dim0 || d == dim1) {
            const auto &range = ranges[d == dim0 ? 0 : 1];
            offsets.push_back(range.first);
            sizes.push_back(range.second);
          } else {
            offsets.push_back(b.getIndexAttr(0));
            sizes.push_back(memref::getMixedSize(b, loc, full, d));
          }
        }
        Value slice =
            memref::SubViewOp::create(b, loc, full, offsets, sizes, strides);
        mapping.map(operand, slice);
      }
    }
    for (Operation *member : group.drop_back())
      b.clone(*member, mapping);
    Operation *clone = b.clone(*op, mapping);
    if (parallel) {
      // Inside a slice, linalg.index of a sliced loop counts from the
      // slice's start.
      clone->walk([&](linalg::IndexOp index) {
        if (index.getDim() >= begins.size())
          return;
        OpBuilder ib(index->getBlock(), std::next(index->getIterator()));
        Value global = arith::AddIOp::create(ib, index.getLoc(), index,
                                             begins[index.getDim()]);
        index.getResult().replaceAllUsesExcept(global,
                                               global.getDefiningOp());
      });
    }
    func::ReturnOp::create(b, loc);

    OpBuilder callBuilder(op);
    SmallVector<Value> callArgs;
    if (parallel) {
      // Ranges: the extent of each sliced loop (from the first output);
      // work: the elements of that output, for the runtime's serial
      // cut-off.
      Value out = generic.getDpsInits()[0];
      const unsigned outIndex = generic.getNumDpsInputs();
      const int64_t outDim0 = slices[outIndex];
      const int64_t outDim1 = twoD ? slices1[outIndex] : -1;
      auto type = cast<MemRefType>(out.getType());
      Value work = arith::ConstantIndexOp::create(callBuilder, loc, 1);
      Value extent0, extent1;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        Value size = memref::DimOp::create(callBuilder, loc, out, d);
        if (d == outDim0)
          extent0 = size;
        if (d == outDim1)
          extent1 = size;
        work = arith::MulIOp::create(callBuilder, loc, work, size);
      }
      Value zero = arith::ConstantIndexOp::create(callBuilder, loc, 0);
      callArgs.append({zero, extent0});
      if (twoD)
        callArgs.append({zero, extent1});
      callArgs.push_back(work);
    }
    callArgs.append(args.begin(), args.end());
    func::CallOp::create(callBuilder, loc, kernel, callArgs);
    for (Operation *member : group)
      member->erase();
  }
  return count;
}

} // namespace

#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "codegen/cpu/Passes.h.inc"

namespace {
struct OutlineKernelsPass : impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  OutlineKernelsPass() = default;
  explicit OutlineKernelsPass(CpuCodegenStats *stats) : stats(stats) {}
  void runOnOperation() override {
    if (stats)
      stats->dispatches = dispatch::countDispatches(getOperation());
    unsigned kernels = outlineKernels(getOperation());
    numKernels += kernels;
    if (stats)
      stats->kernels += kernels;
  }
  CpuCodegenStats *stats = nullptr;
};
} // namespace

std::unique_ptr<Pass> createOutlineKernelsPass(CpuCodegenStats *stats) {
  return std::make_unique<OutlineKernelsPass>(stats);
}

} // namespace strata::codegen::cpu
