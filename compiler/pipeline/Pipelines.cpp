//===- Pipelines.cpp - Strata pass pipelines ------------------------------===//
// SPDX-License-Identifier: Apache-2.0
// Pipeline contents live here once, so strata-opt and strata-compile agree.

#include "compiler/pipeline/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "passes/Passes.h"

namespace strata {

void buildFusionPipeline(mlir::OpPassManager &pm,
                         const FusionPipelineOptions &options) {
  mlir::OpPassManager &fn = pm.nest<mlir::func::FuncOp>();
  bool report = options.reportMissed;
  fn.addPass(createFoldShapeArithmeticPass());
  // Canonicalize first so that constant spellings and reduce axes converge.
  fn.addPass(mlir::createCanonicalizerPass());
  // Layer norms before RMS norms: the variance of a layer norm is itself an
  // RMS norm of 'x - mean'.
  fn.addPass(createFuseLayerNormPass(FuseLayerNormPassOptions{report}));
  fn.addPass(createFuseRmsNormPass(FuseRmsNormPassOptions{report}));
  fn.addPass(createFuseSiluPass(FuseSiluPassOptions{report}));
  fn.addPass(createFuseGeluPass(FuseGeluPassOptions{report}));
  fn.addPass(createFuseAttentionPass(FuseAttentionPassOptions{report}));
  fn.addPass(mlir::createCanonicalizerPass());
  fn.addPass(mlir::createCSEPass());
}

void registerPipelines() {
  mlir::PassPipelineRegistration<FusionPipelineOptions>(
      "strata-fusion-pipeline",
      "canonicalize imported strata IR and run every fusion pass",
      buildFusionPipeline);
}

} // namespace strata
