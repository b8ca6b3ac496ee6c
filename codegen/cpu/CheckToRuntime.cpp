//===- CheckToRuntime.cpp - strata.check -> the runtime's check import ----===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-checks-to-runtime). The good path costs one
// compare and branch per check; the call, and the string constants it
// passes, are off that path.

#include "codegen/cpu/Passes.h"
#include "codegen/cpu/RuntimeCall.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace strata::codegen::cpu {

namespace {

constexpr llvm::StringLiteral kCheckFailed = "strata_rt_check_failed";

unsigned lowerChecksToRuntime(ModuleOp module) {
  SmallVector<ir::CheckOp> checks;
  module.walk([&](ir::CheckOp check) { checks.push_back(check); });
  if (checks.empty())
    return 0;
  MLIRContext *ctx = module.getContext();
  OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
  Location unknown = UnknownLoc::get(ctx);
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = top.getI64Type();
  auto calleeType = FunctionType::get(ctx, {ptr, ptr, i64, i64, i64, i64}, {});
  SymbolTable symbols(module);
  declareRuntimeImport(module, symbols, kCheckFailed, calleeType);
  // One constant per distinct string, named by order of first use so that
  // the artifact is reproducible.
  llvm::StringMap<LLVM::GlobalOp> strings;
  auto stringConstant = [&](StringRef text) {
    auto [it, inserted] = strings.try_emplace(text);
    if (inserted) {
      std::string bytes = text.str();
      bytes.push_back('\0');
      auto type = LLVM::LLVMArrayType::get(top.getI8Type(), bytes.size());
      it->second = LLVM::GlobalOp::create(
          top, unknown, type, /*isConstant=*/true, LLVM::Linkage::Internal,
          "__strata_check_text_" + std::to_string(strings.size() - 1),
          top.getStringAttr(bytes));
    }
    return it->second;
  };
  for (ir::CheckOp check : checks) {
    LLVM::GlobalOp node = stringConstant(check.getNode());
    LLVM::GlobalOp input = stringConstant(check.getInput().value_or(""));
    OpBuilder b(check);
    Location loc = check.getLoc();
    scf::IfOp::create(b, loc, check.getFailed(), [&](OpBuilder &nb, Location l) {
      Value nodePtr = LLVM::AddressOfOp::create(nb, l, node);
      Value inputPtr = LLVM::AddressOfOp::create(nb, l, input);
      Value kind = arith::ConstantIntOp::create(nb, l, i64, check.getKind());
      func::CallOp::create(nb, l, kCheckFailed, TypeRange{},
                           ValueRange{nodePtr, inputPtr, kind, check.getA(),
                                      check.getB(), check.getC()});
      scf::YieldOp::create(nb, l);
    });
    check.erase();
  }
  return checks.size();
}

} // namespace

#define GEN_PASS_DEF_CHECKSTORUNTIMEPASS
#include "codegen/cpu/Passes.h.inc"

namespace {
struct ChecksToRuntimePass
    : impl::ChecksToRuntimePassBase<ChecksToRuntimePass> {
  ChecksToRuntimePass() = default;
  explicit ChecksToRuntimePass(CpuCodegenStats *stats) : stats(stats) {}
  void runOnOperation() override {
    unsigned checks = lowerChecksToRuntime(getOperation());
    numChecks += checks;
    if (stats)
      stats->checks += checks;
  }
  CpuCodegenStats *stats = nullptr;
};
} // namespace

std::unique_ptr<Pass> createChecksToRuntimePass(CpuCodegenStats *stats) {
  return std::make_unique<ChecksToRuntimePass>(stats);
}

} // namespace strata::codegen::cpu
