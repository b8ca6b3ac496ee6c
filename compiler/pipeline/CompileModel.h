//===- CompileModel.h - A model to a .strata artifact ------------*- C++
//-*-===//
// SPDX-License-Identifier: Apache-2.0
// The compiler driver: import (or parse strata IR), fusion, the CPU back
// end's strata-level step, lowering to linalg, CPU code generation and the
// artifact's signatures. strata-compile and the C API are front ends of it.

#ifndef STRATA_COMPILER_PIPELINE_COMPILEMODEL_H_
#define STRATA_COMPILER_PIPELINE_COMPILEMODEL_H_

#include "codegen/artifact/ArtifactWriter.h"
#include "compiler/pipeline/CompileReport.h"
#include "compiler/pipeline/DimMaxima.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace strata {

/// What to compile.
struct CompileInput {
  /// An ONNX model (.onnx, or .onnxtext for the text syntax): its graph
  /// becomes the entry "main". Or strata-dialect IR (.mlir, as strata-import
  /// writes it): every public function becomes an entry, and functions may
  /// share weights (one copy in the artifact).
  std::string modelPath;
  /// Optional: the with-past export of the same decoder (ONNX), compiled
  /// together with |modelPath| (its graph without past, entry "main"): the
  /// prefill and decode entries come from this graph, and weights equal in
  /// both are stored once.
  std::string withPastPath;
  /// Graph inputs frozen to the TensorProto in a file (NAME, FILE); ONNX
  /// models only.
  std::vector<std::pair<std::string, std::string>> bindings;
};

/// Where the compile stops and what it returns.
enum class EmitKind {
  Artifact, ///< the .strata artifact
  Mlir,     ///< strata IR after fusion
  Linalg,   ///< after strata-lower-to-linalg
  Llvm,     ///< the LLVM dialect
  Kernels,  ///< the target assembly of the generated code
  Cuda,     ///< CUDA C++ of the loop regions, checked by NVRTC
  CudaPtx,  ///< the PTX (compute_80) NVRTC makes of that CUDA C++
};

/// The prefill and decode entries added to a causal decoder
/// (strata-split-prefill-decode, docs/design/prefill-decode.md).
struct GenerationOptions {
  /// Adds the entries when the graph is a causal decoder.
  bool entries = true;
  /// The longest prompt chunk one prefill call takes (the dim
  /// prefill_length); 0: the context (--max-seq), or with a sliding window
  /// (--attention-window or the export's own mask, without global blocks)
  /// 512 tokens where that makes the windowed layers' caches rings shorter
  /// than the context.
  int64_t prefillChunk = 0;
  /// Prefill also returns every position's logits (output all_logits).
  bool allLogits = false;
  /// The most tokens per sequence of the `verify` entry (speculative
  /// decoding: k drafted tokens and the one before them), at most the
  /// prefill length; 0: no verify entry.
  int64_t verifyLength = kDefaultVerifyLength;
  static constexpr int64_t kDefaultVerifyLength = 9;
  /// A paged KV cache (docs/serving.md, "Paged KV cache"): blocks of this
  /// many positions in one pool per cache, each sequence's named by a
  /// block table; 0: a contiguous cache per slot.
  int64_t kvBlockSize = 0;
  /// Blocks in each pool; 0: what --max-batch sequences of the whole
  /// context take.
  int64_t kvBlocks = 0;
};

/// Numeric precision per phase (docs/design/precision.md).
struct PrecisionOptions {
  /// The decode entry's weights: "fp32", "bf16" (as prefill's bf16), "int8"
  /// (weight-only: symmetric
  /// per output column, dequantized in registers; activations fp32) or
  /// "int4" (symmetric per group of int4Group rows, products with
  /// activations quantized to int8 per group at run time).
  std::string decode = "fp32";
  /// Rows of a column sharing one int4 scale: 32, 64 or 128.
  int64_t int4Group = 32;
  /// The prefill entry's contractions: "fp32", "bf16" (weights stored
  /// bf16, activations rounded to bf16 where read, fp32 sums) or "int8"
  /// (W8A8: weights symmetric per output column, each activation row
  /// quantized to int8 at run time, integer dot products).
  std::string prefill = "fp32";
  /// The LM head keeps fp32 weights in a quantized entry.
  bool keepFp32LmHead = false;
  /// Prefill and main read the decode entry's quantized weights too: one
  /// copy in the artifact instead of the fp32 one beside it.
  bool sharedPrefillWeights = false;  /// The KV cache's element type for fp32 keys and values: "fp32", "bf16"
  /// (rounded to nearest even) or "int8" (symmetric per token and head,
  /// each row followed by its fp32 scale).
  std::string kvCache = "fp32";
  /// Token sequences (--calibration-data) for activation-aware scaling of
  /// the quantized contractions: AWQ for int4/int8 decode weights,
  /// SmoothQuant for W8A8 prefill. Empty: plain absmax.
  std::string calibrationData;
  /// "ids" (one sequence of token ids a line) or "bytes" (raw text of a
  /// byte-level model, cut into sequences of the context length).
  std::string calibrationFormat = "ids";
};

/// Sliding-window + sink attention (strata-sparse-attention,
/// docs/design/sparse-attention.md).
struct AttentionSparsityOptions {
  /// Keys each query of a causal attention sees, counting back from its
  /// own; 0: dense.
  int64_t window = 0;
  /// Leading keys every query sees besides its window (needs a window).
  int64_t sinks = 0;
  /// The attention ops (layers, in program order) to window; empty: all.
  std::vector<int64_t> layers;
  /// Key blocks each windowed query adds to its window, the ones it
  /// scores highest (0: none), and the keys per block.
  int64_t globalTopk = 0;
  int64_t globalBlock = 64;
};

/// Tensor and pipeline parallelism (strata-shard-tensor-parallel,
/// strata-split-pipeline-stages, docs/distributed.md): the artifact is
/// tensor rank |tensorRank| of the |tensorRanks| processes that each hold a
/// share of every layer of pipeline stage |pipelineStage|, one of
/// |pipelineStages| consecutive parts of the layers; world rank
/// pipelineStage * tensorRanks + tensorRank.
struct ParallelOptions {
  int64_t tensorRanks = 1;
  int64_t tensorRank = 0;
  int64_t pipelineStages = 1;
  int64_t pipelineStage = 0;

  int64_t worldSize() const { return tensorRanks * pipelineStages; }
  int64_t worldRank() const {
    return pipelineStage * tensorRanks + tensorRank;
  }
};

struct CompileOptions {
  /// The back end; only "cpu".
  std::string target = "cpu";
  /// "x86-64-v3" (portable: AVX2+FMA), "x86-64-v4", "native" or an LLVM
  /// CPU name (docs/compiling.md).
  std::string targetCpu = "x86-64-v3";
  /// What NVRTC compiles CUDA kernels for: `sm_NN` (cubins) and
  /// `compute_NN` (PTX); empty: codegen::cuda::defaultCudaTargets().
  std::vector<std::string> cudaTargets;
  /// The maxima of symbolic input dims (DimMaxima.h). The generation
  /// entries hold `batch` sequences (their `slots`) of `--max-seq` tokens
  /// (their `context`) unless dims `slots`/`context` are given.
  DimMaximaOptions dims;
  GenerationOptions generation;
  PrecisionOptions precision;
  AttentionSparsityOptions sparsity;
  ParallelOptions parallel;
  /// Runs the fusion pipeline (off: to measure what fusion buys).
  bool fusion = true;
  /// fp32 attention calls the runtime's kernel (off: generic loops).
  bool runtimeAttention = true;
  /// 3x3 convolutions with unit strides use Winograd's F(2x2, 3x3) (off:
  /// the direct product, a little more exact and slower).
  bool winogradConvolutions = true;
  /// The fusion passes' near-miss remarks go into the report instead of
  /// the diagnostic handlers.
  bool collectMissedFusions = false;
  EmitKind emit = EmitKind::Artifact;
};

/// What a successful compile made.
struct CompiledArtifact {
  /// EmitKind other than Artifact: the IR or the assembly.
  std::string text;
  /// The signatures and symbolic dims (no sections set).
  codegen::ArtifactWriter signatures;
  std::vector<char> weights;
  std::string sharedObject;
  /// The x86-64 features the code may use (strata_x86_features.h names).
  std::vector<std::string> cpuFeatures;

  /// The artifact's bytes through |sink| (ArtifactWriter::write).
  bool write(const codegen::ArtifactSink &sink, std::string *error) const;
  /// The artifact at |path| (replaced if present, removed if writing fails).
  bool writeToFile(const std::string &path, std::string *error) const;
  /// The signatures with the sections set (they borrow this object's).
  codegen::ArtifactWriter assembled() const;
};

/// Checks |options| values (precision names, group sizes, dim maxima, the
/// paged KV cache's counts) before any work; the errors are reported at
/// |loc|. compileModel calls it too.
mlir::LogicalResult checkCompileOptions(const CompileOptions &options,
                                        mlir::Location loc);

/// Progress of a compile.
struct CompileCallbacks {
  /// Called as each phase ends ("import", "fusion", "lower", "codegen")
  /// with its wall time in seconds; the steps of "codegen" are reported
  /// just before it, as "codegen/<step>" (CpuCode::phaseSeconds).
  std::function<void(llvm::StringRef phase, double seconds)> phaseDone;
};

/// Adds every dialect, extension and translation a compile uses.
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// Compiles |input| in |context| (built with registerCompilerDialects).
/// Every problem, in the model or in |options|, is an error diagnostic on
/// |context| (at the ONNX node's location where there is one); returns
/// failure after reporting it. |report|, if not null, is filled as far as
/// the compile got. Thread-compatible: one compile per context at a time.
mlir::FailureOr<CompiledArtifact>
compileModel(mlir::MLIRContext &context, const CompileInput &input,
             const CompileOptions &options, CompileReport *report = nullptr,
             const CompileCallbacks &callbacks = {});

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_COMPILEMODEL_H_
