//===- strata-opt.cpp - Strata's mlir-opt -----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// MlirOptMain with the strata dialect, the upstream dialects the pipeline
// lowers through, and every strata pass and pipeline (codegen included).

#include "codegen/cpu/CpuPipeline.h"
#include "compiler/pipeline/Pipelines.h"
#include "dialects/strata/IR/StrataDialect.h"
#include "passes/Passes.h"
#include "passes/TestPasses.h"
#include "tools/compiler-common/HelpOptions.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  // Every option registered before MlirOptMain registers its own belongs to
  // a library (LLVM's back ends, passes, MC): --help-hidden lists those, and
  // --help lists mlir-opt's options and the passes.
  strata::tools::hideUnrelatedOptionsFromHelp({});
  mlir::registerTransformsPasses(); // canonicalize, cse, ...
  strata::registerStrataPasses();
  strata::registerStrataTestPasses(); // analyses shown to lit tests
  strata::registerPipelines();
  strata::codegen::cpu::registerCpuCodegenPasses();

  mlir::DialectRegistry registry;
  registry.insert<strata::ir::StrataDialect>();
  // Every upstream dialect with its bufferization and LLVM-conversion
  // interfaces, for the codegen passes.
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Strata optimizer driver\n", registry));
}
