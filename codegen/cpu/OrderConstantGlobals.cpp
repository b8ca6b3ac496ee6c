//===- OrderConstantGlobals.cpp - Constant globals in a fixed order -------===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-order-constant-globals). One-shot bufferization
// visits a module's functions in an order that depends on pointer values
// when none calls another, and names the globals it makes for constants in
// the order it meets them: two compiles of one model would differ.

#include "codegen/cpu/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_ORDERCONSTANTGLOBALSPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kPrefix = "__constant_";

struct OrderConstantGlobalsPass
    : impl::OrderConstantGlobalsPassBase<OrderConstantGlobalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // The constant globals in the order of their first use, functions in
    // module order.
    llvm::MapVector<Operation *, unsigned> order;
    for (auto func : module.getOps<FunctionOpInterface>())
      func.walk([&](memref::GetGlobalOp get) {
        auto global = symbols.lookup<memref::GlobalOp>(get.getName());
        if (global && global.getSymName().starts_with(kPrefix))
          order.insert({global, order.size()});
      });
    // Two renames, so that no new name collides with an old one.
    for (int round = 0; round < 2; ++round)
      for (auto [op, index] : order) {
        auto global = cast<memref::GlobalOp>(op);
        std::string name = (round == 0 ? "__strata_renaming_" : kPrefix.str()) +
                           std::to_string(index);
        if (failed(symbols.rename(global, StringAttr::get(&getContext(), name))))
          return signalPassFailure();
      }
    // In that order, before the first function.
    Operation *first = nullptr;
    for (Operation &op : *module.getBody())
      if (isa<FunctionOpInterface>(op)) {
        first = &op;
        break;
      }
    if (!first)
      return;
    for (auto [op, index] : order)
      op->moveBefore(first);
  }
};

} // namespace
} // namespace strata::codegen::cpu
