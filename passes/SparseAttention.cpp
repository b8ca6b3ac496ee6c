//===- SparseAttention.cpp - Sliding-window + sink attention ------------===//
// SPDX-License-Identifier: Apache-2.0
// Gives causal attention a window and sinks (Mistral's sliding window,
// StreamingLLM's attention sinks) and optionally top-k global key blocks,
// as strata-compile's --attention-window, --attention-sinks,
// --attention-global-topk, --attention-block and --attention-layers ask.
// The ops already carry the attributes and every lowering honours them
// (the runtime kernel's blocks stop at the keys a window hides); this pass
// only chooses them.

#include "passes/Passes.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/DenseSet.h"

namespace strata {

#define GEN_PASS_DEF_SPARSEATTENTIONPASS
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

struct SparseAttentionPass
    : impl::SparseAttentionPassBase<SparseAttentionPass> {
  using SparseAttentionPassBase::SparseAttentionPassBase;

  void runOnOperation() override {
    const int64_t w = window, s = sinks, topk = globalTopk,
                  block = globalBlock;
    if (w < 0 || s < 0) {
      getOperation().emitError()
          << "attention window and sinks must be >= 0, got " << w << " and "
          << s;
      return signalPassFailure();
    }
    if (topk < 0 || block < 1) {
      getOperation().emitError()
          << "global top-k must be >= 0 and the global block >= 1, got "
          << topk << " and " << block;
      return signalPassFailure();
    }
    if (w == 0) {
      if (topk > 0) {
        getOperation().emitError()
            << "global blocks need a window (--attention-window)";
        return signalPassFailure();
      }
      if (s > 0) {
        getOperation().emitError()
            << "attention sinks need a window (--attention-window)";
        return signalPassFailure();
      }
      return;
    }
    llvm::DenseSet<int64_t> chosen(layers.begin(), layers.end());
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      int64_t layer = 0;
      func.walk([&](Operation *op) {
        auto attention = dyn_cast<ir::AttentionOp>(op);
        auto cached = dyn_cast<ir::CacheAttentionOp>(op);
        if (!attention && !cached)
          return;
        const int64_t index = layer++;
        if (!chosen.empty() && !chosen.contains(index))
          return;
        // A cache attention is causal by definition.
        if (attention && !attention.getCausal())
          return;
        if (op->hasAttr("window"))
          return;
        op->setAttr("window", b.getI64IntegerAttr(w));
        if (s > 0)
          op->setAttr("sinks", b.getI64IntegerAttr(s));
        if (topk > 0) {
          op->setAttr("global_topk", b.getI64IntegerAttr(topk));
          op->setAttr("global_block", b.getI64IntegerAttr(block));
        }
        ++numWindowed;
      });
    }
  }
};

} // namespace
} // namespace strata
