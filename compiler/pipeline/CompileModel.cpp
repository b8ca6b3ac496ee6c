//===- CompileModel.cpp - A model to a .strata artifact -------------------===//
// SPDX-License-Identifier: Apache-2.0
// The phases in order, each stop of --emit after the phase that makes it.
// Entry inputs are described before lowering (their maxima bound the memory
// plan), outputs after it, where their extents are index math over inputs.

#include "compiler/pipeline/CompileModel.h"

#include "codegen/abi/strata_artifact_format.h"
#include "codegen/cpu/CpuCodegen.h"
#include "codegen/cpu/CpuPipeline.h"
#include "codegen/cuda/CudaKernels.h"
#include "codegen/cuda/Nvrtc.h"
#include "compiler/import/ModelLoader.h"
#include "compiler/import/OnnxImporter.h"
#include "compiler/pipeline/Calibration.h"
#include "compiler/pipeline/EntrySignature.h"
#include "compiler/pipeline/Pipelines.h"
#include "compiler/pipeline/SharedWeights.h"
#include "dialects/strata/IR/StrataDialect.h"
#include "dialects/strata/IR/StrataOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <limits>
#include <tuple>

using namespace mlir;

namespace strata {
namespace {

/// Reports each phase's wall time as it ends.
class PhaseClock {
public:
  explicit PhaseClock(const CompileCallbacks &callbacks)
      : callbacks(callbacks), start(std::chrono::steady_clock::now()) {}
  void done(llvm::StringRef phase) {
    auto now = std::chrono::steady_clock::now();
    if (callbacks.phaseDone)
      callbacks.phaseDone(phase,
                          std::chrono::duration<double>(now - start).count());
    start = now;
  }

private:
  const CompileCallbacks &callbacks;
  std::chrono::steady_clock::time_point start;
};

} // namespace

LogicalResult checkCompileOptions(const CompileOptions &options, Location loc) {
  if (options.target != "cpu")
    return emitError(loc) << "unsupported target '" << options.target
                          << "' (supported: cpu)";
  if (options.dims.maxBatch < 1 || options.dims.maxSeq < 1)
    return emitError(loc) << "the batch and sequence maxima must be >= 1, got "
                          << options.dims.maxBatch << " and "
                          << options.dims.maxSeq;
  const ParallelOptions &parallel = options.parallel;
  if (parallel.tensorRanks < 1 || parallel.tensorRank < 0 ||
      parallel.tensorRank >= parallel.tensorRanks)
    return emitError(loc) << "tensor-parallel rank " << parallel.tensorRank
                          << " of " << parallel.tensorRanks
                          << " ranks is not a rank of the group";
  if (parallel.pipelineStages < 1 || parallel.pipelineStage < 0 ||
      parallel.pipelineStage >= parallel.pipelineStages)
    return emitError(loc) << "pipeline stage " << parallel.pipelineStage
                          << " of " << parallel.pipelineStages
                          << " stages is not a stage of the model";
  if (parallel.worldSize() > STRATA_ARTIFACT_MAX_PARALLEL_RANKS)
    return emitError(loc) << parallel.tensorRanks << " tensor ranks x "
                          << parallel.pipelineStages
                          << " pipeline stages exceed the "
                          << STRATA_ARTIFACT_MAX_PARALLEL_RANKS
                          << " ranks an artifact may name";
  if (parallel.worldSize() > 1 && (options.emit == EmitKind::Cuda ||
                                   options.emit == EmitKind::CudaPtx))
    return emitError(loc) << "tensor and pipeline parallelism are not yet "
                             "available for CUDA kernels";
  const PrecisionOptions &precision = options.precision;
  if (precision.decode != "fp32" && precision.decode != "bf16" &&
      precision.decode != "int8" && precision.decode != "int4")
    return emitError(loc) << "unsupported decode precision '"
                          << precision.decode
                          << "' (supported: fp32, bf16, int8, int4)";
  if (precision.prefill != "fp32" && precision.prefill != "bf16" &&
      precision.prefill != "int8")
    return emitError(loc) << "unsupported prefill precision '"
                          << precision.prefill
                          << "' (supported: fp32, bf16, int8)";
  if (precision.prefill != "fp32" && precision.sharedPrefillWeights)
    return emitError(loc)
           << "prefill precision " << precision.prefill
           << " gives prefill its own weights; it cannot also share the "
              "decode entry's";
  if (precision.kvCache != "fp32" && precision.kvCache != "bf16" &&
      precision.kvCache != "int8")
    return emitError(loc) << "unsupported KV cache precision '"
                          << precision.kvCache
                          << "' (supported: fp32, bf16, int8)";
  if (precision.int4Group != 32 && precision.int4Group != 64 &&
      precision.int4Group != 128)
    return emitError(loc) << "unsupported int4 group size "
                          << precision.int4Group << " (supported: 32, 64, 128)";
  if (precision.calibrationFormat != "ids" &&
      precision.calibrationFormat != "bytes")
    return emitError(loc) << "unsupported calibration format '"
                          << precision.calibrationFormat
                          << "' (supported: ids, bytes)";
  if (!precision.calibrationData.empty() && precision.decode != "int4" &&
      precision.decode != "int8" && precision.prefill != "int8")
    return emitError(loc) << "--calibration-data scales quantized weights: "
                             "it needs --decode-precision int4 or int8, or "
                             "--prefill-precision int8";
  const AttentionSparsityOptions &sparsity = options.sparsity;
  if (sparsity.window < 0 || sparsity.sinks < 0)
    return emitError(loc) << "the attention window and sinks must be >= 0, "
                             "got "
                          << sparsity.window << " and " << sparsity.sinks;
  if (sparsity.window == 0 && (sparsity.sinks > 0 || !sparsity.layers.empty()))
    return emitError(loc) << "attention sinks and layers need a window "
                             "(--attention-window)";
  if (sparsity.globalTopk < 0 || sparsity.globalBlock < 1)
    return emitError(loc) << "the attention's global top-k must be >= 0 and "
                             "its block >= 1, got "
                          << sparsity.globalTopk << " and "
                          << sparsity.globalBlock;
  if (sparsity.window == 0 && sparsity.globalTopk > 0)
    return emitError(loc) << "global attention blocks are added to a window "
                             "(--attention-window)";
  for (int64_t layer : sparsity.layers)
    if (layer < 0)
      return emitError(loc) << "attention layer indices must be >= 0, got "
                            << layer;
  for (const auto &[name, max] : options.dims.explicitMaxima)
    if (name.empty() || max < 1)
      return emitError(loc) << "dim maximum '" << name << "=" << max
                            << "' needs a name and a maximum >= 1";
  const GenerationOptions &generation = options.generation;
  if (generation.kvBlockSize < 0 || generation.kvBlocks < 0 ||
      (generation.kvBlocks > 0 && generation.kvBlockSize == 0))
    return emitError(loc) << "--kv-block-size and --kv-blocks expect counts "
                             ">= 0, --kv-blocks only with --kv-block-size, "
                             "got "
                          << generation.kvBlockSize << " and "
                          << generation.kvBlocks;
  // The paged cache's other refusals (strata-split-prefill-decode makes
  // them too), here as option errors where the options alone decide them;
  // without generation entries the cache options are unused.
  if (!generation.entries || generation.kvBlockSize == 0)
    return success();
  if (sparsity.window > 0)
    return emitError(loc) << "a paged KV cache (--kv-block-size) does not "
                             "combine with windowed or global-block "
                             "attention (--attention-window)";
  // The context as generationDims takes it: a pool must hold one sequence
  // of it.
  auto contextMax = options.dims.explicitMaxima.find("context");
  const int64_t context = contextMax == options.dims.explicitMaxima.end()
                              ? options.dims.maxSeq
                              : contextMax->second;
  const int64_t perSequence = context / generation.kvBlockSize +
                              (context % generation.kvBlockSize != 0);
  if (generation.kvBlocks > 0 && generation.kvBlocks < perSequence)
    return emitError(loc) << generation.kvBlocks << " KV blocks of "
                          << generation.kvBlockSize
                          << " cannot hold one sequence of the context ("
                          << context << " tokens: " << perSequence
                          << " blocks)";
  return success();
}

namespace {

std::string printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  flags.elideLargeResourceString(64);
  module.print(os, flags);
  return text;
}

/// Strata IR from a .mlir file, or the imported ONNX model (whose weights
/// point into |storage|).
OwningOpRef<ModuleOp> loadModule(MLIRContext &context,
                                 const CompileInput &input,
                                 import::ModelStorage &storage, Location loc) {
  if (llvm::StringRef(input.modelPath).ends_with(".mlir")) {
    if (!input.bindings.empty()) {
      emitError(loc) << "input bindings apply to ONNX models, not to '"
                     << input.modelPath << "'";
      return nullptr;
    }
    return parseSourceFile<ModuleOp>(input.modelPath, ParserConfig(&context));
  }
  if (llvm::Error err = storage.load(input.modelPath)) {
    emitError(loc) << llvm::toString(std::move(err));
    return nullptr;
  }
  for (const auto &[name, file] : input.bindings) {
    if (llvm::Error err = storage.bindInput(name, file)) {
      emitError(loc) << llvm::toString(std::move(err));
      return nullptr;
    }
  }
  return import::importOnnxModel(context, storage);
}

constexpr llvm::StringLiteral kWithPastName = "main_with_past";

/// Imports the with-past export of |input| next to `main`, as the private
/// function main_with_past, and stores the weights both graphs hold once.
LogicalResult addWithPastGraph(MLIRContext &context, const CompileInput &input,
                               import::ModelStorage &storage, ModuleOp module) {
  Location loc = FileLineColLoc::get(&context, input.withPastPath, 0, 0);
  if (llvm::StringRef(input.modelPath).ends_with(".mlir"))
    return emitError(loc) << "a with-past export goes with an ONNX model, "
                          << "not with '" << input.modelPath << "'";
  if (llvm::Error err = storage.load(input.withPastPath))
    return emitError(loc) << llvm::toString(std::move(err));
  OwningOpRef<ModuleOp> twin = import::importOnnxModel(context, storage);
  if (!twin)
    return failure();
  auto graph = twin->lookupSymbol<func::FuncOp>("main");
  if (!graph)
    return emitError(loc) << "the with-past export has no graph";
  graph->remove();
  graph.setSymName(kWithPastName);
  graph.setPrivate();
  module.push_back(graph);
  shareIdenticalWeights(module);
  return success();
}

/// Runs the fusion pipeline; with |collect| its near-miss remarks go to
/// |missed| instead of the diagnostic handlers.
LogicalResult runFusion(ModuleOp module, const CompileOptions &options,
                        std::vector<MissedFusion> &missed) {
  MLIRContext *context = module.getContext();
  PassManager fusion(context);
  fusion.enableVerifier(true);
  FusionPipelineOptions fusionOptions;
  fusionOptions.reportMissed = options.collectMissedFusions;
  if (options.fusion)
    buildFusionPipeline(fusion, fusionOptions);
  ScopedDiagnosticHandler collect(context, [&](Diagnostic &diag) {
    if (!options.collectMissedFusions ||
        diag.getSeverity() != DiagnosticSeverity::Remark)
      return failure();
    missed.push_back({locationText(diag.getLocation()), diag.str()});
    return success();
  });
  return fusion.run(module);
}

/// Prompt tokens per prefill call when a sliding window is asked for and
/// --prefill-chunk is not: a windowed layer's ring cache holds its sinks,
/// its window and one call's tokens, and 512-token chunks cost prefill
/// little against whole prompts (their matmuls are already compute-bound).
constexpr int64_t kDefaultWindowedPrefillChunk = 512;

/// The maxima of the generation entries' dims: an explicit --dim, else the
/// batch maximum for the slots and the sequence maximum for the context.
struct GenerationDims {
  int64_t slots, context, prefillLength;
  /// 0: no verify entry.
  int64_t verifyLength;
};

/// The windows (and sinks) of |module|'s causal attention ops without
/// global blocks: the layers a ring cache can serve, whether the window
/// came from --attention-window or from the export's own mask.
SmallVector<std::pair<int64_t, int64_t>> ringableWindows(ModuleOp module) {
  SmallVector<std::pair<int64_t, int64_t>> windows;
  if (module)
    module.walk([&](ir::AttentionOp op) {
      if (op.getCausal() && op.getWindow() && !op.getGlobalTopk())
        windows.push_back({*op.getWindow(), op.getSinks().value_or(0)});
    });
  return windows;
}

GenerationDims generationDims(const CompileOptions &options,
                              ModuleOp module = {}) {
  const DimMaximaOptions &dims = options.dims;
  auto explicitOr = [&](const char *name, int64_t fallback) {
    auto it = dims.explicitMaxima.find(name);
    return it == dims.explicitMaxima.end() ? fallback : it->second;
  };
  std::optional<DimBinding> batch = bindDim("batch", dims);
  GenerationDims g;
  g.slots = explicitOr("slots", batch ? batch->max : dims.maxBatch);
  g.context = explicitOr("context", dims.maxSeq);
  // With a window the chunk defaults to kDefaultWindowedPrefillChunk where
  // that makes the windowed caches rings (sinks + window + chunk - 1 rows
  // below the context); otherwise whole prompts, as without a window.
  int64_t chunk = options.generation.prefillChunk;
  for (auto [window, sinks] : ringableWindows(module))
    if (chunk == 0 && sinks >= 0 && sinks < g.context &&
        window < g.context - sinks &&
        kDefaultWindowedPrefillChunk - 1 < g.context - sinks - window)
      chunk = kDefaultWindowedPrefillChunk;
  g.prefillLength = explicitOr(
      "prefill_length", chunk > 0 ? std::min(chunk, g.context) : g.context);
  // A verify call writes at most one prefill call's rows (ring caches have
  // room for no more).
  g.verifyLength =
      std::min(options.generation.verifyLength, g.prefillLength);
  return g;
}

/// Adds the prefill and decode entries to a causal decoder, and records
/// the maxima of their dims in |dims|.
LogicalResult addGenerationEntries(ModuleOp module,
                                   const CompileOptions &options,
                                   DimMaximaOptions &dims,
                                   llvm::StringRef source) {
  if (!options.generation.entries)
    return success();
  GenerationDims g = generationDims(options, module);
  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  SplitPrefillDecodePassOptions split;
  split.slots = g.slots;
  split.context = g.context;
  split.prefillLength = g.prefillLength;
  split.verifyLength = g.verifyLength;
  split.allLogits = options.generation.allLogits;
  split.source = source.str();
  split.kvCache = options.precision.kvCache;
  split.kvBlockSize = options.generation.kvBlockSize;
  split.kvBlocks = options.generation.kvBlocks;
  pm.addPass(createSplitPrefillDecodePass(split));
  // The new entries' shape arithmetic folds against their static extents.
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createFoldShapeArithmeticPass());
  fn.addPass(createCanonicalizerPass());
  fn.addPass(createCSEPass());
  if (failed(pm.run(module)))
    return failure();
  // The decode batch is the slots; the other dims are the entries' own.
  dims.explicitMaxima.emplace("batch", g.slots);
  dims.explicitMaxima.emplace("prefill_length", g.prefillLength);
  if (g.verifyLength > 0)
    dims.explicitMaxima.emplace("verify_length", g.verifyLength);
  return success();
}

/// Marks the contractions strata-shard-tensor-parallel split ("column" or
/// "row").
constexpr llvm::StringLiteral kTensorParallelAttr = "strata.tensor_parallel";

/// Rewrites every entry into stage |parallel.pipelineStage|'s part
/// (strata-split-pipeline-stages) and counts its hand-overs.
LogicalResult splitPipelineStages(ModuleOp module,
                                  const ParallelOptions &parallel,
                                  CompileReport &rep) {
  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  SplitPipelineStagesPassOptions split;
  split.stages = parallel.pipelineStages;
  split.stage = parallel.pipelineStage;
  pm.addPass(createSplitPipelineStagesPass(split));
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createCanonicalizerPass());
  fn.addPass(createCSEPass());
  if (failed(pm.run(module)))
    return failure();
  module.walk([&](Operation *op) {
    if (isa<ir::SendOp>(op))
      ++rep.stageSends;
    if (isa<ir::RecvOp>(op))
      ++rep.stageRecvs;
  });
  return success();
}

/// Rewrites every entry into rank |parallel.tensorRank|'s share
/// (strata-shard-tensor-parallel) and counts what it split.
LogicalResult shardTensorParallel(ModuleOp module,
                                  const ParallelOptions &parallel,
                                  CompileReport &rep) {
  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  ShardTensorParallelPassOptions shard;
  shard.ranks = parallel.tensorRanks;
  shard.rank = parallel.tensorRank;
  pm.addPass(createShardTensorParallelPass(shard));
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createFoldShapeArithmeticPass());
  fn.addPass(createCanonicalizerPass());
  fn.addPass(createCSEPass());
  if (failed(pm.run(module)))
    return failure();
  module.walk([&](Operation *op) {
    if (isa<ir::AllReduceOp>(op))
      ++rep.allReduces;
    else if (isa<ir::AllGatherOp>(op))
      ++rep.allGathers;
    else if (auto how = op->getAttrOfType<StringAttr>(kTensorParallelAttr))
      ++(how.getValue() == "row" ? rep.rowParallel : rep.columnParallel);
  });
  return success();
}

/// The back end's strata-level passes, then lowering to linalg on tensors.
LogicalResult lowerForCpu(ModuleOp module, const CompileOptions &options,
                          codegen::cpu::CpuCodegenStats *stats) {
  codegen::cpu::CpuPipelineOptions cpuOptions;
  cpuOptions.runtimeAttention = options.runtimeAttention;
  cpuOptions.winogradConvolutions = options.winogradConvolutions;
  cpuOptions.stats = stats;
  PassManager lower(module.getContext());
  lower.enableVerifier(true);
  codegen::cpu::buildCpuStrataPipeline(lower, cpuOptions);
  lower.addNestedPass<func::FuncOp>(createLowerToLinalgPass());
  return lower.run(module);
}

/// The CUDA C++ of |module|'s loop regions (or its PTX) in |result|.text,
/// every kernel compiled by NVRTC for the CUDA targets: a kernel NVRTC
/// rejects is an error with NVRTC's whole log.
LogicalResult emitCuda(ModuleOp module, const CompileOptions &options,
                       CompiledArtifact &result) {
  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  pm.addNestedPass<func::FuncOp>(createLowerToLinalgPass());
  codegen::cuda::buildCudaBufferizePipeline(pm);
  if (failed(pm.run(module)))
    return failure();
  FailureOr<codegen::cuda::CudaKernels> kernels =
      codegen::cuda::emitCudaKernels(module);
  if (failed(kernels))
    return failure();
  std::vector<codegen::cuda::NvrtcOutput> outputs;
  std::string log;
  const std::vector<std::string> &targets =
      options.cudaTargets.empty() ? codegen::cuda::defaultCudaTargets()
                                  : options.cudaTargets;
  if (!codegen::cuda::nvrtcCompile(kernels->source, "strata_kernels.cu",
                                   targets, &outputs, &log))
    return module.emitError() << "NVRTC rejected the CUDA kernels: " << log;
  if (options.emit == EmitKind::Cuda) {
    result.text = std::move(kernels->source);
    return success();
  }
  // The PTX: of the first compute_NN target.
  for (const codegen::cuda::NvrtcOutput &output : outputs)
    if (output.target.rfind("compute_", 0) == 0) {
      result.text = output.bytes;
      return success();
    }
  return module.emitError()
         << "--emit cuda-ptx needs a compute_NN target in --cuda-targets";
}

/// An artifact of generated |code| with the entries |signatures| describes.
void fillArtifact(CompiledArtifact &artifact, const EntrySignatures &signatures,
                  codegen::cpu::CpuCode &code) {
  signatures.addTo(artifact.signatures);
  artifact.weights = std::move(code.weights);
  artifact.sharedObject = std::move(code.sharedObject);
  artifact.cpuFeatures = code.cpuFeatures;
}

/// Per-channel statistics of every weight contraction's input over the
/// calibration sequences: a clone of the fused |module| gets generation
/// entries (prefill over the whole context, every position through the LM
/// head) and strata-add-activation-statistics on its prefill, is compiled
/// for this host and run by the runtime (Calibration.h).
FailureOr<ActivationStatistics> calibrate(ModuleOp module,
                                          const CompileOptions &options,
                                          llvm::StringRef source,
                                          Location loc) {
  OwningOpRef<ModuleOp> variant = module.clone();
  CompileOptions variantOptions = options;
  variantOptions.generation.entries = true;
  variantOptions.generation.allLogits = true;
  // Whole sequences in one call, so no windowed chunk default: the caches
  // of windowed layers then span the context.
  variantOptions.generation.prefillChunk =
      std::numeric_limits<int64_t>::max();
  DimMaximaOptions dims = options.dims;
  if (failed(addGenerationEntries(*variant, variantOptions, dims, source)))
    return failure();
  if (auto twin = variant->lookupSymbol<func::FuncOp>(kWithPastName))
    twin.erase();
  auto prefill = variant->lookupSymbol<func::FuncOp>("prefill");
  if (!prefill)
    return emitError(loc) << "--calibration-data needs a causal decoder (its "
                             "prefill entry runs the calibration sequences)";
  // The vocabulary is the logits' last dim.
  auto logits = dyn_cast<RankedTensorType>(prefill.getResultTypes().front());
  int64_t vocab = logits && logits.getRank() > 0
                      ? logits.getDimSize(logits.getRank() - 1)
                      : ShapedType::kDynamic;
  if (ShapedType::isDynamic(vocab))
    return emitError(loc) << "--calibration-data: the prefill entry's first "
                             "result is not logits with a static vocabulary";
  const PrecisionOptions &precision = options.precision;
  FailureOr<std::vector<std::vector<int64_t>>> sequences =
      readCalibrationSequences(precision.calibrationData,
                               precision.calibrationFormat == "bytes"
                                   ? CalibrationFormat::Bytes
                                   : CalibrationFormat::Ids,
                               vocab, generationDims(options).context, loc);
  if (failed(sequences))
    return failure();

  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  AddActivationStatisticsPassOptions add;
  add.function = "prefill";
  pm.addPass(createAddActivationStatisticsPass(add));
  if (failed(pm.run(*variant)))
    return failure();
  std::vector<std::string> names;
  if (auto list = prefill->getAttrOfType<ArrayAttr>("strata.calibration"))
    for (auto name : list.getAsValueRange<StringAttr>())
      names.push_back(name.str());

  EntrySignatures signatures;
  if (failed(signatures.describeInputs(*variant, dims)))
    return failure();
  if (failed(lowerForCpu(*variant, options, nullptr)) ||
      failed(signatures.describeOutputs(*variant)))
    return failure();
  // It runs here, so it is compiled for here.
  FailureOr<codegen::cpu::CpuCode> code =
      codegen::cpu::generateCpuCode(*variant, {"native"});
  if (failed(code))
    return failure();
  CompiledArtifact artifact;
  fillArtifact(artifact, signatures, *code);
  std::vector<uint8_t> bytes;
  std::string error;
  if (!artifact.assembled().writeToVector(&bytes, &error))
    return emitError(loc) << "calibration variant: " << error;
  return measureActivations(bytes, names, *sequences, loc);
}

/// Activation-aware scales before quantization: AWQ for the weight-only
/// entries (searched for their bits and groups), SmoothQuant for W8A8.
LogicalResult scaleActivations(ModuleOp module, const CompileOptions &options,
                               const ActivationStatistics &stats,
                               CompileReport &rep) {
  const PrecisionOptions &precision = options.precision;
  ActivationScaleCounts counts;
  if (precision.decode == "int4" || precision.decode == "int8") {
    ActivationScaleOptions awq;
    awq.functions = {"decode", "verify"};
    if (precision.sharedPrefillWeights)
      awq.functions = {"decode", "verify", "prefill", "main"};
    awq.method = "awq";
    awq.bits = precision.decode == "int4" ? 4 : 8;
    awq.groupSize = awq.bits == 4 ? precision.int4Group : 0;
    awq.keepFp32LmHead = precision.keepFp32LmHead;
    if (failed(applyActivationScales(module, stats, awq, &counts)))
      return failure();
  }
  if (precision.prefill == "int8") {
    ActivationScaleOptions smooth;
    smooth.functions = {"prefill"};
    smooth.method = "smooth";
    smooth.keepFp32LmHead = precision.keepFp32LmHead;
    if (failed(applyActivationScales(module, stats, smooth, &counts)))
      return failure();
  }
  rep.scaledContractions = counts.scaled;
  rep.scaleFolds = counts.folded;
  rep.scaleMultiplies = counts.multiplies;
  return success();
}

/// The precision policy: the decode entry's weights bf16 or quantized (and
/// the verify entry's, which stands in for decode steps and must give the
/// same tokens), the
/// prefill entry's contractions bf16 or W8A8 (strata-bf16-contractions,
/// strata-quantize-weights); a model without the entry a policy names is
/// told so.
LogicalResult applyPrecision(ModuleOp module, const CompileOptions &options) {
  const PrecisionOptions &precision = options.precision;
  auto needs = [&](llvm::StringRef entry, llvm::StringRef option,
                   llvm::StringRef value) -> LogicalResult {
    if (module.lookupSymbol<func::FuncOp>(entry))
      return success();
    return emitError(module.getLoc())
           << "--" << option << " " << value << " needs a " << entry
           << " entry, and this model has none (not a causal decoder, or "
              "--no-generation-entries)";
  };
  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  auto bf16 = [&](llvm::StringRef entry, llvm::StringRef option) {
    if (failed(needs(entry, option, "bf16")))
      return failure();
    Bf16ContractionsPassOptions marks;
    marks.functions = {entry.str()};
    if (precision.sharedPrefillWeights && entry == "decode")
      marks.functions = {"decode", "verify", "prefill", "main"};
    marks.keepFp32LmHead = precision.keepFp32LmHead;
    pm.addPass(createBf16ContractionsPass(marks));
    return success();
  };
  if (precision.decode == "bf16" && failed(bf16("decode", "decode-precision")))
    return failure();
  if (precision.prefill == "bf16" &&
      failed(bf16("prefill", "prefill-precision")))
    return failure();
  if (precision.decode != "fp32" && precision.decode != "bf16") {
    if (failed(needs("decode", "decode-precision", precision.decode)))
      return failure();
    QuantizeWeightsPassOptions quantize;
    quantize.functions = {"decode", "verify"};
    if (precision.sharedPrefillWeights)
      quantize.functions = {"decode", "verify", "prefill", "main"};
    const bool int4 = precision.decode == "int4";
    quantize.bits = int4 ? 4 : 8;
    quantize.groupSize = int4 ? precision.int4Group : 0;
    // int8: activations rounded per block of 32 k, so that the kernel
    // multiplies in integers (int4's kernel does so whatever the op says).
    if (!int4) {
      quantize.activationBits = 8;
      quantize.activationBlock = 32;
    }
    quantize.keepFp32LmHead = precision.keepFp32LmHead;
    pm.addPass(createQuantizeWeightsPass(quantize));
  }
  if (precision.prefill == "int8") {
    if (failed(needs("prefill", "prefill-precision", precision.prefill)))
      return failure();
    QuantizeWeightsPassOptions quantize;
    quantize.functions = {"prefill"};
    quantize.bits = 8;
    quantize.activationBits = 8;
    quantize.keepFp32LmHead = precision.keepFp32LmHead;
    pm.addPass(createQuantizeWeightsPass(quantize));
  }
  return pm.run(module);
}

} // namespace

void registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<ir::StrataDialect>();
}

codegen::ArtifactWriter CompiledArtifact::assembled() const {
  codegen::ArtifactWriter writer = signatures;
  writer.setWeights(weights.data(), weights.size());
  writer.setCpuCode(sharedObject.data(), sharedObject.size());
  writer.setCpuFeatures(cpuFeatures);
  return writer;
}

bool CompiledArtifact::write(const codegen::ArtifactSink &sink,
                             std::string *error) const {
  return assembled().write(sink, error);
}

bool CompiledArtifact::writeToFile(const std::string &path,
                                   std::string *error) const {
  return assembled().writeToFile(path, error);
}

namespace {

/// Windows the causal attention ops the options choose (the pass's own
/// file: passes/SparseAttention.cpp).
LogicalResult applySparsity(ModuleOp module,
                            const AttentionSparsityOptions &sparsity) {
  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  SparseAttentionPassOptions pass;
  pass.window = sparsity.window;
  pass.sinks = sparsity.sinks;
  pass.layers.assign(sparsity.layers.begin(), sparsity.layers.end());
  pass.globalTopk = sparsity.globalTopk;
  pass.globalBlock = sparsity.globalBlock;
  pm.addPass(createSparseAttentionPass(pass));
  return pm.run(module);
}

/// The attention ops of |module| with a window, and all of them.
std::pair<int64_t, int64_t> countWindowed(ModuleOp module) {
  int64_t windowed = 0, all = 0;
  module.walk([&](Operation *op) {
    if (!isa<ir::AttentionOp, ir::CacheAttentionOp>(op))
      return;
    ++all;
    windowed += op->hasAttr("window");
  });
  return {windowed, all};
}

/// Fills the report's counts of folded per-channel ops and of convolutions.
void countLayerFolds(ModuleOp module, CompileReport &rep) {
  module.walk([&](Operation *op) {
    if (auto conv = dyn_cast<ir::ConvOp>(op)) {
      ++rep.convolutions;
      rep.convolutionsWithBias += conv.getBias() != nullptr;
    }
    if (auto folds = op->getAttrOfType<IntegerAttr>(ir::kFoldedChannelOpsAttr)) {
      rep.foldedChannelOps += folds.getInt();
      ++rep.foldedLayers;
    }
  });
}

} // namespace

FailureOr<CompiledArtifact> compileModel(MLIRContext &context,
                                         const CompileInput &input,
                                         const CompileOptions &options,
                                         CompileReport *report,
                                         const CompileCallbacks &callbacks) {
  CompileReport unused;
  CompileReport &rep = report ? *report : unused;
  rep = CompileReport();
  Location modelLoc = FileLineColLoc::get(&context, input.modelPath, 0, 0);
  if (failed(checkCompileOptions(options, modelLoc)))
    return failure();
  PhaseClock clock(callbacks);
  CompiledArtifact result;

  // The storage holds the weights the module's blobs point into; the
  // artifact's weights image is a copy, so it may go at the end.
  import::ModelStorage storage;
  OwningOpRef<ModuleOp> module = loadModule(context, input, storage, modelLoc);
  if (!module)
    return failure();
  import::ModelStorage withPastStorage;
  bool withPast = !input.withPastPath.empty();
  if (withPast &&
      failed(addWithPastGraph(context, input, withPastStorage, *module)))
    return failure();
  rep.importedOps = countOps(*module);
  clock.done("import");

  if (failed(runFusion(*module, options, rep.missedFusions)))
    return failure();
  if (options.sparsity.window > 0 &&
      failed(applySparsity(*module, options.sparsity)))
    return failure();
  std::optional<ActivationStatistics> stats;
  if (!options.precision.calibrationData.empty()) {
    FailureOr<ActivationStatistics> measured = calibrate(
        *module, options, withPast ? kWithPastName : "main", modelLoc);
    if (failed(measured))
      return failure();
    stats = std::move(*measured);
    for (const auto &[name, s] : *stats)
      rep.calibrationTokens = std::max(rep.calibrationTokens, s.tokens);
    clock.done("calibration");
  }
  DimMaximaOptions dims = options.dims;
  if (failed(addGenerationEntries(*module, options, dims,
                                  withPast ? kWithPastName : "main")))
    return failure();
  // The with-past graph served the entries; it is not one.
  if (withPast)
    if (auto twin = module->lookupSymbol<func::FuncOp>(kWithPastName))
      twin.erase();
  if (stats && failed(scaleActivations(*module, options, *stats, rep)))
    return failure();
  if (options.parallel.pipelineStages > 1 &&
      failed(splitPipelineStages(*module, options.parallel, rep)))
    return failure();
  if (options.parallel.tensorRanks > 1 &&
      failed(shardTensorParallel(*module, options.parallel, rep)))
    return failure();
  if (failed(applyPrecision(*module, options)))
    return failure();
  rep.fusedOps = countOps(*module);
  std::tie(rep.windowedAttention, rep.attentionOps) = countWindowed(*module);
  countLayerFolds(*module, rep);
  rep.fusionDone = true;
  clock.done("fusion");
  if (options.emit == EmitKind::Mlir) {
    result.text = printModule(*module);
    return result;
  }

  if (options.emit == EmitKind::Cuda || options.emit == EmitKind::CudaPtx) {
    if (failed(emitCuda(*module, options, result)))
      return failure();
    return result;
  }

  EntrySignatures signatures;
  if (failed(signatures.describeInputs(*module, dims)))
    return failure();
  codegen::cpu::CpuCodegenStats strataLevel;
  if (failed(lowerForCpu(*module, options, &strataLevel)))
    return failure();
  clock.done("lower");
  if (options.emit == EmitKind::Linalg) {
    result.text = printModule(*module);
    return result;
  }
  if (options.emit == EmitKind::Llvm) {
    if (failed(codegen::cpu::lowerToLLVMDialect(*module)))
      return failure();
    result.text = printModule(*module);
    return result;
  }

  // Before codegen, which bufferizes the tensors the bounds are read from.
  if (options.emit == EmitKind::Artifact) {
    if (failed(signatures.describeOutputs(*module)))
      return failure();
    rep.outputDims = signatures.outputDims();
  }
  codegen::cpu::CpuTarget target{options.targetCpu};
  target.emitAssembly = options.emit == EmitKind::Kernels;
  FailureOr<codegen::cpu::CpuCode> code =
      codegen::cpu::generateCpuCode(*module, target);
  if (failed(code))
    return failure();
  if (callbacks.phaseDone)
    for (const auto &[step, seconds] : code->phaseSeconds)
      callbacks.phaseDone("codegen/" + step, seconds);
  clock.done("codegen");
  if (options.emit == EmitKind::Kernels) {
    result.text = std::move(code->assembly);
    return result;
  }

  rep.codegen = code->stats;
  fillArtifact(result, signatures, *code);
  if (options.parallel.worldSize() > 1) {
    strata_parallel_section_t parallel{};
    parallel.tensor_rank = uint32_t(options.parallel.tensorRank);
    parallel.tensor_ranks = uint32_t(options.parallel.tensorRanks);
    parallel.pipeline_stage = uint32_t(options.parallel.pipelineStage);
    parallel.pipeline_stages = uint32_t(options.parallel.pipelineStages);
    result.signatures.setParallel(parallel);
  }
  rep.codegen.attentionCalls = strataLevel.attentionCalls;
  rep.codegen.convCalls = strataLevel.convCalls;
  rep.codegen.convReluCalls = strataLevel.convReluCalls;
  rep.codegen.convResidualCalls = strataLevel.convResidualCalls;
  rep.codegen.convInPlaceCalls = strataLevel.convInPlaceCalls;
  rep.codegen.convWinogradCalls = strataLevel.convWinogradCalls;
  rep.weightsBytes = result.weights.size();
  rep.codeBytes = result.sharedObject.size();
  rep.codegenDone = true;
  // The loader's rules, checked here so a violation is a diagnostic.
  std::string error;
  if (!result.assembled().validate(&error))
    return emitError(modelLoc) << "the artifact would not load: " << error;
  return result;
}

} // namespace strata
