//===- ApproximateMath.cpp - Transcendentals as inline polynomials --------===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-approximate-math).

#include "codegen/cpu/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

struct ApproximateMathPass
    : impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](llvm::StringRef name) {
          return name == "math.tanh" || name == "math.erf" ||
                 name == "math.exp" || name == "math.expm1" ||
                 name == "math.log" || name == "math.log1p" ||
                 name == "math.log2";
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError() << "math approximation did not converge";
      signalPassFailure();
    }
  }
};

} // namespace
} // namespace strata::codegen::cpu
