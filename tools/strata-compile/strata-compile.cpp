//===- strata-compile.cpp - A model -> .strata artifact ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// strata-compile MODEL -o OUT.strata [--target-cpu CPU] [--max-batch N]
// [--max-seq N] [--dim NAME=MAX] [--bind NAME=FILE.pb] [--report]
// [--emit mlir|linalg|llvm|kernels] [--no-fusion] [--no-runtime-attention]
// [--quiet]. Options in, the driver (compiler/pipeline/CompileModel.h) in
// one process with no external compiler or linker, the report out.

#include "codegen/abi/strata_artifact_format.h"
#include "compiler/pipeline/CompileModel.h"
#include "tools/common/RankPath.h"
#include "tools/compiler-common/HelpOptions.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;

namespace {
// --help lists these; LLVM's and MLIR's own options (such as
// --mlir-print-debuginfo) still work but are not listed.
cl::OptionCategory compileOptions("strata-compile options");
cl::list<std::string> inputPaths(
    cl::cat(compileOptions), cl::Positional,
    cl::desc("<model.onnx|model.onnxtext|model.mlir> [with-past.onnx]"),
    cl::OneOrMore);
cl::opt<std::string> outputPath(cl::cat(compileOptions), "o",
                                cl::desc("output file"), cl::value_desc("file"),
                                cl::Required);
cl::opt<std::string> targetCpu(
    cl::cat(compileOptions), "target-cpu",
    cl::desc("x86-64-v3 (default: AVX2+FMA, runs on any x86-64 CPU since "
             "2015), x86-64-v4 (AVX-512), native (this host) or an LLVM CPU "
             "name"),
    cl::init("x86-64-v3"));
cl::list<std::string> cudaTargets(
    cl::cat(compileOptions), "cuda-targets", cl::CommaSeparated,
    cl::desc("what NVRTC compiles the CUDA kernels for: sm_NN (a cubin) "
             "and compute_NN (PTX) (default: sm_80,sm_89,sm_90,compute_80)"));
cl::opt<std::string> target(cl::cat(compileOptions), "target",
                            cl::desc("back end: cpu"), cl::init("cpu"));
cl::opt<int64_t> maxBatch(cl::cat(compileOptions), "max-batch",
                          cl::desc("maximum of the batch dims"), cl::init(8));
cl::opt<int64_t> maxSeq(cl::cat(compileOptions), "max-seq",
                        cl::desc("maximum of the sequence-length dims (new, "
                                 "past and total lengths)"),
                        cl::init(1024));
cl::list<std::string> dimMaxima(cl::cat(compileOptions), "dim",
                                cl::desc("maximum of a symbolic dim"),
                                cl::value_desc("NAME=MAX"));
cl::list<std::string>
    bindings(cl::cat(compileOptions), "bind",
             cl::desc("freeze graph input NAME to the TensorProto in FILE"),
             cl::value_desc("NAME=FILE"));
cl::opt<bool> report(
    cl::cat(compileOptions), "report",
    cl::desc("print fusion statistics (fused ops, every candidate that did "
             "not fuse with its reason and location), ops before/after "
             "fusion, output dim maxima and code sizes"));
cl::opt<std::string> emit(
    cl::cat(compileOptions), "emit",
    cl::desc("write IR instead of an artifact: mlir (strata after fusion), "
             "linalg (after lowering), llvm (LLVM dialect), kernels "
             "(target assembly of the generated code), cuda (CUDA C++ of "
             "the loop regions, compiled by NVRTC for sm_80/89/90 and "
             "compute_80 as a check) or cuda-ptx (its compute_80 PTX)"),
    cl::init(""));
cl::opt<bool> quiet(cl::cat(compileOptions), "quiet",
                    cl::desc("no progress lines"));
cl::opt<bool> noFusion(
    cl::cat(compileOptions), "no-fusion",
    cl::desc("skip the fusion pipeline (to measure what fusion buys)"));
cl::opt<bool> noRuntimeAttention(
    cl::cat(compileOptions), "no-runtime-attention",
    cl::desc("lower fused attention to generic loops and matmuls instead of "
             "the runtime's attention kernel (to measure what it buys)"));

cl::opt<bool> noWinograd(
    cl::cat(compileOptions), "no-winograd",
    cl::desc("3x3 convolutions multiply their columns directly instead of "
             "with Winograd's F(2x2, 3x3) (to measure what it buys, or for "
             "the last bits of accuracy)"));

cl::opt<bool> noGenerationEntries(
    cl::cat(compileOptions), "no-generation-entries",
    cl::desc("leave out the prefill and decode entries a causal decoder gets "
             "(docs/design/prefill-decode.md): the artifact has 'main' only"));
cl::opt<int64_t> prefillChunk(
    cl::cat(compileOptions), "prefill-chunk",
    cl::desc("the most prompt tokens one prefill call takes (default: "
             "--max-seq); longer prompts run in chunks"),
    cl::init(0));
cl::opt<int64_t> tensorParallel(
    cl::cat(compileOptions), "tensor-parallel",
    cl::desc("processes each layer is split over (Megatron-style tensor "
             "parallelism): one artifact per rank, -o X.strata writing "
             "X.rank0.strata, X.rank1.strata, ..., run together under "
             "mpirun (docs/distributed.md)"),
    cl::init(1));
cl::opt<int64_t> pipelineParallel(
    cl::cat(compileOptions), "pipeline-parallel",
    cl::desc("processes the layers are split over, one stage of consecutive "
             "layers each (pipeline parallelism; with --tensor-parallel T, "
             "T processes per stage): one artifact per rank as for "
             "--tensor-parallel (docs/distributed.md)"),
    cl::init(1));
cl::opt<int64_t> onlyRank(
    cl::cat(compileOptions), "rank",
    cl::desc("with --tensor-parallel or --pipeline-parallel: compile only "
             "this rank, stage * tensor ranks + tensor rank (default: every "
             "rank; --emit: rank 0)"),
    cl::init(-1));
cl::alias tensorRank("tensor-rank", cl::desc("alias of --rank"),
                     cl::aliasopt(onlyRank), cl::Hidden);
cl::opt<int64_t> verifyLength(
    cl::cat(compileOptions), "verify-length",
    cl::desc("the most tokens per sequence the verify entry (speculative "
             "decoding: drafted tokens checked in one step) takes; 0 leaves "
             "it out"),
    cl::init(strata::GenerationOptions::kDefaultVerifyLength));
cl::opt<int64_t> kvBlockSize(
    cl::cat(compileOptions), "kv-block-size",
    cl::desc("pages the KV cache for serving: one pool of blocks of this "
             "many positions per cache, each sequence holding only the "
             "blocks it has filled (docs/serving.md); 0: a contiguous cache "
             "per sequence slot"),
    cl::init(0));
cl::opt<int64_t> kvBlocks(
    cl::cat(compileOptions), "kv-blocks",
    cl::desc("blocks in each paged cache's pool (default: what --max-batch "
             "sequences of the whole --max-seq take)"),
    cl::init(0));
cl::opt<std::string> prefillLogits(
    cl::cat(compileOptions), "prefill-logits",
    cl::desc("last (default): prefill returns the last position's logits; "
             "all: also every position's, as output all_logits (scoring)"),
    cl::init("last"));

cl::opt<std::string> decodePrecision(
    cl::cat(compileOptions), "decode-precision",
    cl::desc("fp32 (default), bf16, int8 or int4: the decode entry's "
             "weights as bf16 (2x fewer bytes per token), as "
             "int8 with one fp32 scale per output column (4x fewer bytes "
             "per token) or int4 with one per --int4-group rows (6.4x "
             "fewer at 32; activations quantized to int8 per group at run "
             "time) (docs/design/precision.md)"),
    cl::init("fp32"));
cl::opt<std::string> prefillPrecision(
    cl::cat(compileOptions), "prefill-precision",
    cl::desc("fp32 (default), bf16 or int8: the prefill entry's products "
             "of bf16-rounded operands summed in fp32 (weights stored bf16), "
             "or int8 x int8 (weights per output column, each activation "
             "row quantized at run time): dot products at 2x / 4x the fp32 "
             "rate for the compute-bound prompt (docs/design/precision.md)"),
    cl::init("fp32"));
cl::opt<int64_t> int4Group(
    cl::cat(compileOptions), "int4-group",
    cl::desc("rows of a column sharing one int4 scale: 32 (default), 64 or "
             "128"),
    cl::init(32));
cl::opt<std::string> prefillWeights(
    cl::cat(compileOptions), "prefill-weights",
    cl::desc("fp32 (default): prefill and main keep fp32 weights beside the "
             "decode entry's quantized ones; shared: they read the "
             "quantized ones (one copy, a smaller artifact, prefill numbers "
             "those of the quantized weights)"),
    cl::init("fp32"));
cl::opt<std::string> kvCachePrecision(
    cl::cat(compileOptions), "kv-cache-precision",
    cl::desc("fp32 (default), bf16 or int8: the element type of the KV "
             "cache the generation entries keep (bf16: half the bytes; "
             "int8: symmetric per token and head, about a quarter), read "
             "back to fp32 inside attention (docs/design/precision.md)"),
    cl::init("fp32"));
cl::opt<std::string> calibrationData(
    cl::cat(compileOptions), "calibration-data",
    cl::desc("token sequences (one a line, ids separated by whitespace) "
             "the model runs at compile time to scale the quantized "
             "weights by their inputs' statistics: AWQ for int4/int8 "
             "decode, SmoothQuant for int8 prefill "
             "(docs/design/precision.md)"),
    cl::value_desc("FILE"), cl::init(""));
cl::opt<std::string> calibrationFormat(
    cl::cat(compileOptions), "calibration-format",
    cl::desc("ids (default) or bytes: --calibration-data is raw text whose "
             "bytes are the tokens of a byte-level model, cut into "
             "sequences of the context length"),
    cl::init("ids"));
cl::list<std::string> keepFp32(
    cl::cat(compileOptions), "keep-fp32",
    cl::desc("parts a quantized entry leaves in fp32: lm_head"),
    cl::CommaSeparated);

cl::opt<long> attentionWindow(
    cl::cat(compileOptions), "attention-window",
    cl::desc("keys each query of a causal attention sees, counting back "
             "from its own (sliding-window attention; default 0: dense) "
             "(docs/design/sparse-attention.md)"),
    cl::init(0));
cl::opt<long> attentionSinks(
    cl::cat(compileOptions), "attention-sinks",
    cl::desc("leading keys every query sees besides its window (attention "
             "sinks)"),
    cl::init(0));
cl::opt<long> attentionGlobalTopk(
    cl::cat(compileOptions), "attention-global-topk",
    cl::desc("key blocks each windowed query adds to its window, the ones "
             "it scores highest (top-k global blocks; default 0: none)"),
    cl::init(0));
cl::opt<long> attentionBlock(
    cl::cat(compileOptions), "attention-block",
    cl::desc("keys per global block (--attention-global-topk)"),
    cl::init(64));
cl::list<long> attentionLayers(
    cl::cat(compileOptions), "attention-layers",
    cl::desc("the attention layers (0-based, in program order) the window "
             "applies to (default: all)"),
    cl::CommaSeparated);

int fail(const llvm::Twine &message) {
  llvm::errs() << "strata-compile: error: " << message << "\n";
  return 1;
}

bool bad(const llvm::Twine &message) { return fail(message) == 0; }

/// The command line as driver options; false after printing a problem.
bool readOptions(strata::CompileInput &input, strata::CompileOptions &options) {
  if (inputPaths.size() > 2)
    return bad("expected one model, or a decoder and its with-past export, "
               "got " + llvm::Twine(int64_t(inputPaths.size())) + " inputs");
  input.modelPath = inputPaths[0];
  if (inputPaths.size() == 2)
    input.withPastPath = inputPaths[1];
  for (const std::string &spec : bindings) {
    auto [name, file] = llvm::StringRef(spec).split('=');
    input.bindings.push_back({name.str(), file.str()});
  }
  options.target = target;
  options.targetCpu = targetCpu;
  for (const std::string &cudaTarget : cudaTargets) {
    llvm::StringRef name(cudaTarget), number;
    if (name.starts_with("sm_"))
      number = name.drop_front(3);
    else if (name.starts_with("compute_"))
      number = name.drop_front(8);
    if (number.empty() || !llvm::all_of(number, llvm::isDigit))
      return bad("--cuda-targets expects sm_NN or compute_NN, got '" +
                 cudaTarget + "'");
    options.cudaTargets.push_back(cudaTarget);
  }
  if (tensorParallel < 1 || pipelineParallel < 1 ||
      tensorParallel * pipelineParallel > STRATA_ARTIFACT_MAX_PARALLEL_RANKS)
    return bad("--tensor-parallel and --pipeline-parallel expect counts >= 1 "
               "whose product is at most " +
               std::to_string(STRATA_ARTIFACT_MAX_PARALLEL_RANKS));
  if (onlyRank < -1 || onlyRank >= tensorParallel * pipelineParallel)
    return bad("--rank expects a rank below " +
               std::to_string(tensorParallel * pipelineParallel));
  options.parallel.tensorRanks = tensorParallel;
  options.parallel.pipelineStages = pipelineParallel;
  options.dims.maxBatch = maxBatch;
  options.dims.maxSeq = maxSeq;
  options.fusion = !noFusion;
  options.runtimeAttention = !noRuntimeAttention;
  options.winogradConvolutions = !noWinograd;
  options.collectMissedFusions = report;
  options.generation.entries = !noGenerationEntries;
  if (prefillChunk < 0)
    return bad("--prefill-chunk expects a count >= 1, got " +
               llvm::Twine(int64_t(prefillChunk)));
  options.generation.prefillChunk = prefillChunk;
  if (verifyLength < 0)
    return bad("--verify-length expects a count >= 0, got " +
               llvm::Twine(int64_t(verifyLength)));
  options.generation.verifyLength = verifyLength;
  if (kvBlockSize < 0 || kvBlocks < 0 || (kvBlocks > 0 && kvBlockSize == 0))
    return bad("--kv-block-size and --kv-blocks expect counts >= 0, "
               "--kv-blocks only with --kv-block-size");
  options.generation.kvBlockSize = kvBlockSize;
  options.generation.kvBlocks = kvBlocks;
  if (prefillLogits != "last" && prefillLogits != "all")
    return bad("--prefill-logits expects last or all, got '" + prefillLogits +
               "'");
  options.generation.allLogits = prefillLogits == "all";
  options.precision.decode = decodePrecision;
  options.precision.int4Group = int4Group;
  options.precision.prefill = prefillPrecision;
  if (prefillWeights != "fp32" && prefillWeights != "shared")
    return bad("--prefill-weights expects fp32 or shared, got '" +
               prefillWeights + "'");
  options.precision.sharedPrefillWeights = prefillWeights == "shared";
  options.precision.kvCache = kvCachePrecision;
  options.precision.calibrationData = calibrationData;
  options.precision.calibrationFormat = calibrationFormat;
  options.sparsity.window = attentionWindow;
  options.sparsity.sinks = attentionSinks;
  options.sparsity.globalTopk = attentionGlobalTopk;
  options.sparsity.globalBlock = attentionBlock;
  options.sparsity.layers.assign(attentionLayers.begin(),
                                 attentionLayers.end());
  for (const std::string &part : keepFp32) {
    if (part != "lm_head")
      return bad("--keep-fp32 expects lm_head, got '" + part + "'");
    options.precision.keepFp32LmHead = true;
  }
  for (const std::string &spec : dimMaxima) {
    std::string name;
    int64_t max;
    if (!strata::parseDimSpec(spec, &name, &max))
      return bad("--dim expects NAME=MAX with MAX >= 1, got '" + spec + "'");
    options.dims.explicitMaxima[name] = max;
  }
  if (maxBatch < 1 || maxSeq < 1)
    return bad("--max-batch and --max-seq must be >= 1");
  if (target != "cpu")
    return bad("unsupported --target '" + target + "' (supported: cpu)");
  const std::pair<const char *, strata::EmitKind> kinds[] = {
      {"", strata::EmitKind::Artifact},
      {"mlir", strata::EmitKind::Mlir},
      {"linalg", strata::EmitKind::Linalg},
      {"llvm", strata::EmitKind::Llvm},
      {"kernels", strata::EmitKind::Kernels},
      {"cuda", strata::EmitKind::Cuda},
      {"cuda-ptx", strata::EmitKind::CudaPtx}};
  for (auto [name, kind] : kinds) {
    if (emit == name) {
      options.emit = kind;
      return true;
    }
  }
  return bad("unsupported --emit '" + emit +
             "' (mlir, linalg, llvm, kernels, cuda, cuda-ptx)");
}

int writeText(const std::string &path, const std::string &text) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &error);
  if (!file)
    return fail(error);
  file->os() << text;
  file->keep();
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  // The rule itself, so --help says which dim names the two flags bind.
  static const std::string rule = "\n" + strata::describeDimRule() + "\n";
  strata::tools::hideUnrelatedOptionsFromHelp({&compileOptions});
  cl::ParseCommandLineOptions(argc, argv,
                              "strata-compile: ONNX model -> .strata\n" + rule);
  // lld (the in-process linker) resets every cl::opt to its default when it
  // runs: everything the command line says is copied here, before codegen.
  strata::CompileInput input;
  strata::CompileOptions options;
  if (!readOptions(input, options))
    return 1;
  const std::string output = outputPath;
  const bool wantReport = report, progress = !quiet;

  DialectRegistry registry;
  strata::registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  strata::CompileCallbacks callbacks;
  callbacks.phaseDone = [&](llvm::StringRef phase, double seconds) {
    if (progress)
      llvm::errs() << "[strata-compile] " << phase << ": "
                   << llvm::format("%.2f", seconds) << " s\n";
  };

  // Tensor and pipeline parallelism: one compile per rank, each written
  // beside the others.
  const int64_t ranks = options.parallel.worldSize();
  std::vector<int64_t> rankList;
  if (ranks == 1)
    rankList.push_back(0);
  else if (onlyRank >= 0)
    rankList.push_back(onlyRank);
  else if (options.emit != strata::EmitKind::Artifact)
    rankList.push_back(0);
  else
    for (int64_t r = 0; r < ranks; ++r)
      rankList.push_back(r);
  for (int64_t rank : rankList) {
    options.parallel.tensorRank = rank % options.parallel.tensorRanks;
    options.parallel.pipelineStage = rank / options.parallel.tensorRanks;
    const std::string path =
        ranks > 1 && options.emit == strata::EmitKind::Artifact
            ? strata::tools::rankArtifactPath(output, int(rank))
            : output;
    if (progress && ranks > 1)
      llvm::errs() << "[strata-compile] rank " << rank << " of " << ranks
                   << " -> " << path << "\n";
    strata::CompileReport compileReport;
    FailureOr<strata::CompiledArtifact> artifact = strata::compileModel(
        context, input, options, &compileReport, callbacks);
    // The fusion report also explains a compile that failed after fusion.
    const bool reportThis = wantReport && rank == rankList.front();
    if (reportThis && compileReport.fusionDone)
      strata::printFusionReport(output == "-" ? llvm::errs() : llvm::outs(),
                                compileReport);
    if (failed(artifact))
      return 1;

    auto start = std::chrono::steady_clock::now();
    if (options.emit != strata::EmitKind::Artifact) {
      if (int rc = writeText(path, artifact->text))
        return rc;
    } else {
      std::string error;
      if (!artifact->writeToFile(path, &error))
        return fail(error);
    }
    callbacks.phaseDone("write", std::chrono::duration<double>(
                                     std::chrono::steady_clock::now() - start)
                                     .count());
    if (reportThis && compileReport.codegenDone)
      strata::printCodegenReport(llvm::outs(), compileReport);
  }
  return 0;
}
