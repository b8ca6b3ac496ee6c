//===- MergeIdenticalKernels.cpp - One function per distinct kernel body --===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-merge-identical-kernels). Kernels are bucketed
// by a structural hash and compared within a bucket, so the pass is about
// linear in the module; the first kernel of each class in module order
// stays, so the result does not depend on pointer values.

#include "codegen/cpu/Passes.h"

#include "compiler/dispatch/DispatchRegions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"

#include <unordered_map>

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_MERGEIDENTICALKERNELSPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

bool isKernel(func::FuncOp func) {
  return !func.isExternal() && (func->hasAttr(kKernelAttr) ||
                                func->hasAttr(kParallelKernelAttr));
}

// The attributes that must match: all but the name and the region the
// kernel was outlined from.
NamedAttrList comparedAttrs(func::FuncOp func) {
  NamedAttrList attrs = func->getAttrDictionary();
  attrs.erase(func.getSymNameAttrName());
  attrs.erase(dispatch::kDispatchAttr);
  return attrs;
}

llvm::hash_code kernelHash(func::FuncOp func) {
  llvm::hash_code hash = llvm::hash_combine(
      func.getFunctionType(), comparedAttrs(func).getDictionary(
                                  func.getContext()));
  func.getBody().walk([&](Operation *op) {
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(
                  op, OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

bool sameKernel(func::FuncOp a, func::FuncOp b) {
  if (a.getFunctionType() != b.getFunctionType() ||
      comparedAttrs(a) != comparedAttrs(b))
    return false;
  return OperationEquivalence::isRegionEquivalentTo(
      &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

struct MergeIdenticalKernelsPass
    : impl::MergeIdenticalKernelsPassBase<MergeIdenticalKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Keyed by the whole hash (a DenseMap<unsigned> reserves two keys any
    // hash could equal).
    std::unordered_map<size_t, SmallVector<func::FuncOp, 1>> classes;
    llvm::DenseMap<StringAttr, FlatSymbolRefAttr> kept;
    SmallVector<func::FuncOp> merged;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (!isKernel(func))
        continue;
      // The ops inside keep the region they were formed in; nothing after
      // outlining reads it, and it would keep every copy apart.
      func.getBody().walk(
          [](Operation *op) { op->removeAttr(dispatch::kDispatchAttr); });
      SmallVector<func::FuncOp, 1> &bucket =
          classes[static_cast<size_t>(kernelHash(func))];
      auto same = llvm::find_if(
          bucket, [&](func::FuncOp other) { return sameKernel(other, func); });
      if (same == bucket.end()) {
        bucket.push_back(func);
        continue;
      }
      kept[func.getSymNameAttr()] =
          FlatSymbolRefAttr::get(same->getSymNameAttr());
      merged.push_back(func);
    }
    if (merged.empty())
      return;
    // Kernels are reached only by calls from the entries (parallel ones
    // become function pointers later, in the LLVM dialect).
    module.walk([&](func::CallOp call) {
      auto it = kept.find(call.getCalleeAttr().getAttr());
      if (it != kept.end())
        call.setCalleeAttr(it->second);
    });
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(&module.getBodyRegion());
    if (!uses) {
      module.emitError("merging kernels: the module's symbol uses are unknown");
      return signalPassFailure();
    }
    llvm::DenseSet<StringAttr> used;
    for (const SymbolTable::SymbolUse &use : *uses)
      used.insert(use.getSymbolRef().getRootReference());
    for (func::FuncOp func : merged) {
      if (used.contains(func.getSymNameAttr())) {
        func.emitError("an outlined kernel is referenced other than by calls");
        return signalPassFailure();
      }
      func.erase();
    }
    numMerged += merged.size();
  }
};

} // namespace

} // namespace strata::codegen::cpu
