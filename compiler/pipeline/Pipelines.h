//===- Pipelines.h - Strata pass pipelines ----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Named pipelines shared by strata-opt (for lit) and strata-compile.

#ifndef STRATA_COMPILER_PIPELINE_PIPELINES_H_
#define STRATA_COMPILER_PIPELINE_PIPELINES_H_

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace strata {

/// Options of strata-fusion-pipeline.
struct FusionPipelineOptions
    : public mlir::PassPipelineOptions<FusionPipelineOptions> {
  Option<bool> reportMissed{
      *this, "report-missed",
      llvm::cl::desc("every fusion pass emits a remark at each candidate "
                     "that did not fuse, with the reason"),
      llvm::cl::init(false)};
};

/// Canonicalizes imported IR and runs every fusion pass, so that all
/// exporter spellings converge before codegen.
void buildFusionPipeline(mlir::OpPassManager &pm,
                         const FusionPipelineOptions &options = {});

/// Registers the pipelines with the global registry (for strata-opt).
void registerPipelines();

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_PIPELINES_H_
