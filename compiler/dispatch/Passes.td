//===- Passes.td - Dispatch-region formation -------------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0
// Target-neutral: every back end consumes the regions these passes mark.
// Each has a lit test in test/dispatch/<flag without strata->.mlir.

#ifndef STRATA_COMPILER_DISPATCH_PASSES_TD
#define STRATA_COMPILER_DISPATCH_PASSES_TD

include "mlir/Pass/PassBase.td"

def FormDispatchRegionsPass : Pass<"strata-form-dispatch-regions",
                                   "mlir::ModuleOp"> {
  let summary = "mark the units of work a back end launches, on tensors";
  let description = [{
    Runs on linalg over tensors, before bufferization. Every structured op
    (`linalg.generic`, `linalg.transpose`, ...) and every call of a runtime
    import in a public function becomes the root of one dispatch region,
    numbered in program order per module; a `linalg.fill` whose only user
    takes it as its output init (a reduction's or a contraction's starting
    value) joins its user's region. Members carry `strata.dispatch =
    {id, kind}` with kind one of `elementwise` (parallel loops only, one
    output element per iteration), `reduction`, `contraction` (a matmul
    shape: one reduction feeding a product), `data_movement` (copies and
    transposes) or `runtime` (a call of a runtime kernel). Back ends launch
    one kernel per region: the CPU outlines each region into one function
    (strata-cpu-outline-kernels), the CUDA back end will emit one kernel per
    region.
  }];
}

#endif // STRATA_COMPILER_DISPATCH_PASSES_TD
