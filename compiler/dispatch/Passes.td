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

def FuseElementwisePass : Pass<"strata-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "fuse chains of elementwise linalg.generic ops into one";
  let description = [{
    Runs on linalg over tensors, before dispatch regions are formed. An
    elementwise `linalg.generic` (parallel loops only) whose result has one
    user, itself an elementwise `linalg.generic`, is folded into that user
    (upstream linalg elementwise fusion), so a chain such as a rotary
    embedding's slices, negation, multiplies and add becomes one loop nest
    and one kernel instead of one each with a temporary between them.
    Reductions and contractions are neither fused into nor fused away
    (the runtime kernels recognize a contraction by its exact shape), and a
    producer with several users stays (fusing it would compute it once per
    user). Named ops (transposes, copies, fills used as inits) are left.
  }];
}

#endif // STRATA_COMPILER_DISPATCH_PASSES_TD
