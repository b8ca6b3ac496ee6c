//===- EarlyDealloc.cpp - Free buffers after their last use ---------------===//
// SPDX-License-Identifier: Apache-2.0
// Runs right after bufferization, on straight-line entry functions. A
// buffer's uses are the uses of the alloc and of every memref derived from
// it (views, reshapes, casts: any op that takes one and returns a memref),
// lifted to their ancestor op in the alloc's block. A buffer whose address
// escapes into an integer (memref.extract_aligned_pointer_as_index, as the
// runtime calls' parameter blocks take it) stays live up to and including
// the next func.call after each store of a value computed from it.

#include "codegen/cpu/Passes.h"
#include "codegen/cpu/RuntimeCall.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace strata::codegen::cpu {
namespace {

// The last op of |block| that may read memory through |address| (an
// integer address): the call after each store or call that consumes a
// value computed from it. Null if one cannot be placed.
Operation *addressLastUse(Block *block, Value address) {
  Operation *last = nullptr;
  SmallVector<Value> worklist = {address};
  llvm::SmallPtrSet<Value, 8> seen = {address};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *at = ancestorIn(block, user);
      if (!at)
        return nullptr;
      if (isa<memref::StoreOp, func::CallOp>(user)) {
        at = nextCall(at);
        if (!at)
          return nullptr;
      } else {
        for (Value result : user->getResults())
          if (seen.insert(result).second)
            worklist.push_back(result);
      }
      if (!last || last->isBeforeInBlock(at))
        last = at;
    }
  }
  return last;
}

// The last op of |block| that must run before |alloc| may be freed, or
// null if a use cannot be placed (then the dealloc stays where it is).
Operation *lastUse(memref::AllocOp alloc, memref::DeallocOp dealloc) {
  Block *block = alloc->getBlock();
  Operation *last = alloc;
  SmallVector<Value> worklist = {alloc.getResult()};
  llvm::SmallPtrSet<Value, 8> seen = {alloc.getResult()};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == dealloc)
        continue;
      Operation *at = ancestorIn(block, user);
      if (!at)
        return nullptr;
      if (isa<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        // The address goes into parameter blocks (possibly several: CSE
        // shares one extract between calls): live through the call after
        // every store of a value computed from it.
        Operation *escape = addressLastUse(block, user->getResult(0));
        if (!escape)
          return nullptr;
        at = escape;
      }
      if (last->isBeforeInBlock(at))
        last = at;
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()) && seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return last;
}

unsigned freeBuffersEarly(ModuleOp module) {
  unsigned moved = 0;
  SmallVector<memref::DeallocOp> deallocs;
  module.walk([&](memref::DeallocOp op) { deallocs.push_back(op); });
  for (memref::DeallocOp dealloc : deallocs) {
    auto alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc->getBlock() != dealloc->getBlock())
      continue;
    Operation *last = lastUse(alloc, dealloc);
    if (!last || last->getNextNode() == dealloc ||
        !last->isBeforeInBlock(dealloc))
      continue;
    dealloc->moveAfter(last);
    ++moved;
  }
  return moved;
}

} // namespace

#define GEN_PASS_DEF_EARLYDEALLOCPASS
#include "codegen/cpu/Passes.h.inc"

namespace {
struct EarlyDeallocPass : impl::EarlyDeallocPassBase<EarlyDeallocPass> {
  EarlyDeallocPass() = default;
  explicit EarlyDeallocPass(CpuCodegenStats *stats) : stats(stats) {}
  void runOnOperation() override {
    unsigned moved = freeBuffersEarly(getOperation());
    numMoved += moved;
    if (stats)
      stats->earlyFrees += moved;
  }
  CpuCodegenStats *stats = nullptr;
};
} // namespace

std::unique_ptr<Pass> createEarlyDeallocPass(CpuCodegenStats *stats) {
  return std::make_unique<EarlyDeallocPass>(stats);
}

} // namespace strata::codegen::cpu
