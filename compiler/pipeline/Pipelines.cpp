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
  // Before the passes that read constant weights (sibling linears, channel
  // affine folding) and the precision passes after the pipeline.
  fn.addPass(createFoldConstantTransposesPass());
  // Layer norms before RMS norms: the variance of a layer norm is itself an
  // RMS norm of 'x - mean'.
  fn.addPass(createFuseLayerNormPass(FuseLayerNormPassOptions{report}));
  fn.addPass(createFuseRmsNormPass(FuseRmsNormPassOptions{report}));
  // A fused norm keeps its input's shape where the decomposed one
  // broadcast, so shapes computed from a norm's input (the head split
  // after a norm over a whole projection, as OLMo-2 spells it) fold now,
  // before attention fusion reads the heads.
  fn.addPass(createFoldShapeArithmeticPass());
  fn.addPass(mlir::createCanonicalizerPass());
  fn.addPass(createFuseSiluPass(FuseSiluPassOptions{report}));
  fn.addPass(createFuseGeluPass(FuseGeluPassOptions{report}));
  fn.addPass(createFuseAttentionPass(FuseAttentionPassOptions{report}));
  // After the fusions that read projections' results (attention), so they
  // still see one linear per projection; before the entries are split off
  // and weights quantized, which then see the fused weights once.
  fn.addPass(createFuseSiblingLinearsPass());
  // After attention fusion, which reads a scale multiplied after a query
  // projection as the attention's own.
  fn.addPass(createFoldChannelAffinePass());
  // After BatchNorm folding, which reads the NCHW weights; the weight
  // transposes it adds fold into constants.
  fn.addPass(createConvChannelsLastPass());
  fn.addPass(createFoldConstantTransposesPass());
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
