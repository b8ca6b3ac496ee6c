//===- AddActivationStatistics.cpp - Calibration outputs of an entry ------===//
// SPDX-License-Identifier: Apache-2.0
// The calibration variant of a model: an entry that also returns, for each
// weight contraction, the per-channel sum of x^2 and max |x| of its input,
// so the compiled variant measures what activation-aware scaling needs.

#include "passes/ActivationStatistics.h"
#include "passes/Passes.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace strata {

#define GEN_PASS_DEF_ADDACTIVATIONSTATISTICSPASS
#include "passes/Passes.h.inc"

using namespace mlir;
using namespace strata::ir;

namespace {

/// The input (activation) operand of a weight contraction.
Value contractionInput(Operation *op) {
  if (auto linear = dyn_cast<LinearOp>(op))
    return linear.getInput();
  return cast<MatmulOp>(op).getLhs();
}

struct AddActivationStatisticsPass
    : impl::AddActivationStatisticsPassBase<AddActivationStatisticsPass> {
  using AddActivationStatisticsPassBase::AddActivationStatisticsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func || func.isExternal()) {
      module.emitError() << "strata-add-activation-statistics: no function '"
                         << function << "' with a body";
      return signalPassFailure();
    }
    SmallVector<Operation *> ops = calibratedContractions(func);
    std::vector<std::string> names = contractionNames(ops);
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    // The statistics go after the outputs and before the state results
    // (strata.state), which an entry returns last.
    unsigned numOutputs = 0;
    while (numOutputs < func.getNumResults() &&
           !func.getResultAttr(numOutputs, "strata.state"))
      ++numOutputs;
    auto attrsOf = [&](unsigned i) -> Attribute {
      DictionaryAttr dict = func.getResultAttrDict(i);
      return dict ? dict : DictionaryAttr::get(&getContext());
    };
    SmallVector<Value> results(ret.getOperands().take_front(numOutputs));
    SmallVector<Type> types(func.getResultTypes().take_front(numOutputs));
    SmallVector<Attribute> resultAttrs;
    for (unsigned i = 0; i < numOutputs; ++i)
      resultAttrs.push_back(attrsOf(i));
    OpBuilder b(ret);
    for (auto [i, op] : llvm::enumerate(ops)) {
      Value x = contractionInput(op);
      auto type = cast<RankedTensorType>(x.getType());
      const int64_t rank = type.getRank();
      const int64_t k = type.getDimSize(rank - 1);
      if (ShapedType::isDynamic(k) || !type.getElementType().isF32()) {
        op->emitOpError() << "calibration needs an fp32 input with a static "
                             "channel dim, got "
                          << type;
        return signalPassFailure();
      }
      // Every dim but the channel one is a token (batch and sequence).
      SmallVector<int64_t> axes;
      for (int64_t a = 0; a + 1 < rank; ++a)
        axes.push_back(a);
      auto channels = RankedTensorType::get({k}, type.getElementType());
      Location loc = op->getLoc();
      Value sq = MulOp::create(b, loc, type, x, x);
      Value sum = ReduceSumOp::create(b, loc, channels, sq,
                                      b.getDenseI64ArrayAttr(axes),
                                      b.getBoolAttr(false));
      Value abs = AbsOp::create(b, loc, type, x);
      Value max = ReduceMaxOp::create(b, loc, channels, abs,
                                      b.getDenseI64ArrayAttr(axes),
                                      b.getBoolAttr(false));
      for (auto [value, what] :
           {std::pair(sum, "sum_sq"), std::pair(max, "max_abs")}) {
        results.push_back(value);
        types.push_back(channels);
        resultAttrs.push_back(b.getDictionaryAttr(
            {b.getNamedAttr("strata.name",
                            b.getStringAttr("calibration." + std::to_string(i) +
                                            "." + what)),
             b.getNamedAttr("strata.dims", b.getStrArrayAttr({""}))}));
      }
    }
    for (unsigned i = numOutputs; i < func.getNumResults(); ++i) {
      results.push_back(ret.getOperand(i));
      types.push_back(func.getResultTypes()[i]);
      resultAttrs.push_back(attrsOf(i));
    }
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    func.setFunctionType(
        FunctionType::get(&getContext(), func.getArgumentTypes(), types));
    func.setAllResultAttrs(resultAttrs);
    SmallVector<StringRef> nameRefs(names.begin(), names.end());
    func->setAttr("strata.calibration", b.getStrArrayAttr(nameRefs));
  }
};

} // namespace
} // namespace strata
