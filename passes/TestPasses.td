//===- TestPasses.td - Passes that expose analyses to lit ---*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0
// Passes that only report what an analysis computes, so lit can check it.
// Registered in strata-opt only; no pipeline runs them.

#ifndef STRATA_PASSES_TESTPASSES_TD
#define STRATA_PASSES_TESTPASSES_TD

include "mlir/Pass/PassBase.td"

def TestMaskAnalysisPass : InterfacePass<"strata-test-mask-analysis",
                                         "mlir::FunctionOpInterface"> {
  let summary = "report the mask band of every returned value as remarks";
  let description = [{
    For each value a function returns, emits a remark at its defining op
    with the band `MaskAnalysis.h` reads: as a `keep` and a `drop` mask for
    `i1` values, as an `additive` mask for float values. When a value is no
    band as a whole, a further remark gives the band split off it
    (`splitMask`) and the op that defines the rest.

    ```mlir
    %m = strata.and %causal, %window : ...  // expected-remark: keep: rows 8, cols 8, diagonal 0, left edge -3, window 4, sinks 0
    ```
  }];
}

#endif // STRATA_PASSES_TESTPASSES_TD
