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
    // The new names, set on the globals and their uses in one walk
    // (SymbolTable::rename walks the whole module per symbol: quadratic,
    // seconds on a model with hundreds of constants). Constants nothing
    // reads are dropped, so no old name can collide with a new one.
    llvm::DenseMap<StringAttr, FlatSymbolRefAttr> renamed;
    for (auto [op, index] : order) {
      auto global = cast<memref::GlobalOp>(op);
      renamed[global.getSymNameAttr()] = FlatSymbolRefAttr::get(
          &getContext(), kPrefix.str() + std::to_string(index));
    }
    for (auto global :
         llvm::make_early_inc_range(module.getOps<memref::GlobalOp>()))
      if (global.getSymName().starts_with(kPrefix) &&
          !renamed.count(global.getSymNameAttr())) {
        if (!SymbolTable::symbolKnownUseEmpty(global, module))
          return signalPassFailure();
        global.erase();
      }
    module.walk([&](memref::GetGlobalOp get) {
      auto it = renamed.find(get.getNameAttr().getAttr());
      if (it != renamed.end())
        get.setNameAttr(it->second);
    });
    for (auto [op, index] : order) {
      auto global = cast<memref::GlobalOp>(op);
      global.setSymNameAttr(renamed.lookup(global.getSymNameAttr()).getAttr());
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
