//===- CpuPipeline.cpp - The CPU back end's pass order --------------------===//
// SPDX-License-Identifier: Apache-2.0
// Why this order: the memory plan needs the frees at their last use and
// must run before matmul/attention calls take raw addresses; weights leave
// the module before outlining so kernels take views, not globals; checks
// are lowered after outlining so they stay in the entry function; the
// parallel dispatch and import binding need LLVM-dialect functions.

#include "codegen/cpu/CpuPipeline.h"

#include "compiler/dispatch/DispatchRegions.h"
#include "passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace strata::codegen::cpu {

void buildCpuStrataPipeline(OpPassManager &pm,
                            const CpuPipelineOptions &options) {
  if (options.runtimeAttention)
    pm.addPass(createAttentionToRuntimePass(options.stats));
  pm.addPass(createConvToRuntimePass(options.stats,
                                     options.winogradConvolutions));
  pm.addPass(createCollectivesToRuntimePass());
}

void addBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
}

void buildCpuLLVMPipeline(OpPassManager &pm, const CpuPipelineOptions &options) {
  pm.addPass(createEntryAbiPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(dispatch::createFuseElementwisePass());
  pm.addPass(createUnshareFillsPass());
  pm.addPass(dispatch::createFormDispatchRegionsPass());

  // Results are returned (the caller frees them); the deallocation pipeline
  // frees intermediates at the end of the function, early-dealloc moves
  // each free to the buffer's last use.
  addBufferization(pm);
  pm.addPass(createOrderConstantGlobalsPass());
  // State results are their arguments' buffers now (strata-cpu-entry-abi):
  // the ABI has no result for them.
  pm.addPass(createDropStateResultsPass());
  pm.addPass(createCanonicalizerPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());

  pm.addPass(createCopiesToLinalgPass());
  pm.addPass(createEarlyDeallocPass(options.stats));
  pm.addPass(createMemoryPlanPass(options.stats));
  pm.addPass(createMatmulToRuntimePass(options.stats));
  pm.addPass(createApproximateMathPass());
  pm.addPass(createExternalizeWeightsPass());
  pm.addPass(createOutlineKernelsPass(options.stats));
  pm.addPass(createChecksToRuntimePass(options.stats));
  pm.addPass(createMergeIdenticalKernelsPass());

  // From here on the functions are lowered independently: the passes that
  // need no module-level view run nested on each function, in parallel
  // over the context's threads (a model has hundreds of kernels).
  OpPassManager &loops = pm.nest<func::FuncOp>();
  loops.addPass(createConvertLinalgToLoopsPass());
  loops.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  OpPassManager &cfg = pm.nest<func::FuncOp>();
  cfg.addPass(memref::createExpandStridedMetadataPass());
  cfg.addPass(createLowerAffinePass());
  cfg.addPass(createSCFToControlFlowPass());
  cfg.addPass(createCanonicalizerPass());
  // bf16 conversions as integer arithmetic: without AVX512-BF16 (the
  // portable default target) LLVM would call compiler-rt's __truncsfbf2,
  // which the artifact's code cannot resolve.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  cfg.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  OpPassManager &arith = pm.nest<func::FuncOp>();
  arith.addPass(createArithToLLVMConversionPass());
  arith.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addNestedPass<LLVM::LLVMFuncOp>(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());

  pm.addPass(createDispatchParallelKernelsPass());
  pm.addPass(createPassRunContextPass());
  pm.addPass(createBindRuntimeImportsPass());
}

void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options) {
  buildCpuStrataPipeline(pm, options);
  pm.addNestedPass<func::FuncOp>(strata::createLowerToLinalgPass());
  buildCpuLLVMPipeline(pm, options);
}

namespace {
struct CpuPipelineCliOptions
    : public PassPipelineOptions<CpuPipelineCliOptions> {
  Option<bool> runtimeAttention{
      *this, "runtime-attention",
      llvm::cl::desc("fp32 attention calls the runtime's kernel"),
      llvm::cl::init(true)};
};
} // namespace

void registerCpuCodegenPasses() {
  registerStrataCpuPasses();
  dispatch::registerStrataDispatchPasses();
  PassPipelineRegistration<CpuPipelineCliOptions>(
      "strata-cpu-pipeline",
      "the strata dialect after fusion -> the LLVM dialect, for the CPU",
      [](OpPassManager &pm, const CpuPipelineCliOptions &cli) {
        CpuPipelineOptions options;
        options.runtimeAttention = cli.runtimeAttention;
        buildCpuPipeline(pm, options);
      });
  PassPipelineRegistration<>(
      "strata-cpu-llvm-pipeline",
      "linalg on tensors -> the LLVM dialect, for the CPU",
      [](OpPassManager &pm) { buildCpuLLVMPipeline(pm, {}); });
}

} // namespace strata::codegen::cpu
