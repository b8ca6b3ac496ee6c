//===- Passes.td - Strata pass definitions ---------------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0
// Every strata pass, grouped by stage and alphabetical within a group
// (STYLE.md §6). Each has a lit test in test/passes/<flag without strata->.mlir.

#ifndef STRATA_PASSES_PASSES_TD
#define STRATA_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def FuseGeluPass : InterfacePass<"strata-fuse-gelu",
                                 "mlir::FunctionOpInterface"> {
  let summary = "fuse the erf form of GELU into strata.gelu";
  let description = [{
    Matches `x * 0.5 * (1 + erf(x / sqrt(2)))` in the spellings torch and
    Keras exports use: division by `1.4142...` or multiplication by
    `0.7071...`, the `0.5` applied to `x` or to the product, and either
    operand order of each commutative op. Constants are compared with a
    relative tolerance of 1e-3, as exporters round them differently.

    ```mlir
    %0 = strata.div %x, %sqrt2 ...   %1 = strata.erf %0 ...
    %2 = strata.add %1, %one ...     %3 = strata.mul %x, %2 ...
    %4 = strata.mul %3, %half ...
    // becomes
    %4 = strata.gelu %x : tensor<...>
    ```
  }];
  let options = [
    Option<"reportMissed", "report-missed", "bool", /*default=*/"false",
           "emit a remark at every erf that did not fuse, with the reason">,
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

def LowerToLinalgPass : InterfacePass<"strata-lower-to-linalg",
                                      "mlir::FunctionOpInterface"> {
  let summary = "lower strata ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Every strata op becomes linalg/tensor ops on tensors: elementwise ops one
    broadcasting `linalg.generic`, contractions `linalg.generic`s with
    reduction iterators, norms and softmax reductions plus elementwise
    generics (norms accumulate in fp32), attention two contractions around a
    masked softmax, data movement `tensor`/`linalg` ops with ONNX index
    semantics. Weights stay `dense_resource` constants. An op that cannot be
    lowered is an error at its location (`signalPassFailure`).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif // STRATA_PASSES_PASSES_TD
