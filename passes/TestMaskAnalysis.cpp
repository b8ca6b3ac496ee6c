//===- TestMaskAnalysis.cpp - Mask bands as remarks ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Emits the band MaskAnalysis reads from every returned value as remarks,
// so lit tests show what the analysis recognizes beyond what fusion uses.

#include "passes/TestPasses.h"

#include "passes/MaskAnalysis.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

namespace strata {
#define GEN_PASS_DEF_TESTMASKANALYSISPASS
#include "passes/TestPasses.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

/// "<label>: <band>", or "<label>: no band".
std::string describe(llvm::StringRef label,
                     const std::optional<MaskBand> &band) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << label << ": ";
  if (band)
    band->print(os);
  else
    os << "no band";
  return text;
}

struct TestMaskAnalysisPass
    : impl::TestMaskAnalysisPassBase<TestMaskAnalysisPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *ret) {
      if (!ret->hasTrait<OpTrait::ReturnLike>())
        return;
      for (Value v : ret->getOperands()) {
        Operation *def = v.getDefiningOp();
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!def || !type)
          continue;
        SmallVector<std::pair<StringRef, MaskKind>, 2> kinds;
        if (type.getElementType().isInteger(1))
          kinds = {{"keep", MaskKind::Keep}, {"drop", MaskKind::Drop}};
        else if (isa<FloatType>(type.getElementType()))
          kinds = {{"additive", MaskKind::Additive}};
        for (auto [label, kind] : kinds) {
          std::optional<MaskBand> band = analyzeMask(v, kind);
          def->emitRemark(describe(label, band));
          if (band)
            continue;
          std::optional<MaskSplit> split =
              splitMask(v, kind, [](const MaskBand &) { return true; });
          if (!split)
            continue;
          std::string text = describe((label + " split").str(), split->band);
          if (Operation *rest =
                  split->rest ? split->rest.getDefiningOp() : nullptr)
            text +=
                ", rest from '" + rest->getName().getStringRef().str() + "'";
          else if (split->rest)
            text += ", rest from an argument";
          def->emitRemark(text);
        }
      }
    });
  }
};

} // namespace
} // namespace strata
