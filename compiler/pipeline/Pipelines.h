//===- Pipelines.h - Strata pass pipelines ----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Named pipelines shared by strata-opt (for lit) and strata-compile.

#ifndef STRATA_COMPILER_PIPELINE_PIPELINES_H_
#define STRATA_COMPILER_PIPELINE_PIPELINES_H_

#include "mlir/Pass/PassManager.h"

namespace strata {

/// Canonicalizes imported IR and runs every fusion pass, so that all
/// exporter spellings converge before codegen.
void buildFusionPipeline(mlir::OpPassManager &pm);

/// Registers the pipelines with the global registry (for strata-opt).
void registerPipelines();

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_PIPELINES_H_
