//===- Bf16Contractions.cpp - Products of chosen entries in bf16 ----------===//
// SPDX-License-Identifier: Apache-2.0
// Prefill is compute-bound, and bf16 dot products (AVX512-BF16, AMX) run at
// twice the fp32 rate or more. This pass marks the linear layers of the
// chosen entries to compute their products in bf16: the weight stored as
// bf16 (rounded to nearest even at compile time), each activation rounded
// to bf16 where the kernel reads it, sums in fp32; and the chosen entries'
// attention, whose two products may then read bf16-rounded queries, keys,
// probabilities and values (the softmax between them stays fp32). Norms,
// the residual stream and the logits stay fp32 (docs/design/precision.md).
//
// The mark (strata.compute_type = bf16 on the op, carried to its
// contraction by the lowering) is a licence, not a change of the IR's
// values: a back end without a bf16 kernel computes the same product in
// fp32, more exactly.

#include "passes/Passes.h"
#include "passes/WeightContractions.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringSet.h"

namespace strata {

#define GEN_PASS_DEF_BF16CONTRACTIONSPASS
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

struct Bf16ContractionsPass
    : impl::Bf16ContractionsPassBase<Bf16ContractionsPass> {
  using Bf16ContractionsPassBase::Bf16ContractionsPassBase;

  void runOnOperation() override {
    llvm::StringSet<> chosen;
    for (const std::string &name : functions)
      chosen.insert(name);
    auto bf16 = TypeAttr::get(BFloat16Type::get(&getContext()));
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!chosen.contains(func.getSymName()))
        continue;
      for (Operation *op : weightContractions(func, keepFp32LmHead)) {
        if (!cast<RankedTensorType>(op->getResult(0).getType())
                 .getElementType()
                 .isF32())
          continue;
        op->setAttr(ir::kComputeTypeAttr, bf16);
        ++numMarked;
      }
      func.walk([&](Operation *op) {
        if (!isa<ir::AttentionOp, ir::CacheAttentionOp>(op) ||
            !cast<RankedTensorType>(op->getResult(0).getType())
                 .getElementType()
                 .isF32())
          return;
        op->setAttr(ir::kComputeTypeAttr, bf16);
        ++numMarked;
      });
    }
  }
};

} // namespace
} // namespace strata
