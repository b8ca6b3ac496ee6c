//===- StrataCompiler.cpp - The Strata compiler's C API -------------------===//
// SPDX-License-Identifier: Apache-2.0
// A C front end of the driver (compiler/pipeline/CompileModel.h). Built
// with -fexceptions so that a C++ exception (std::bad_alloc) is caught at
// the boundary; a crash is contained by LLVM's CrashRecoveryContext.

#include "compiler/capi/strata_compiler.h"

#include "compiler/pipeline/CompileModel.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

struct strata_compiler_error_t {
  strata_compile_status_t status;
  std::string message;
};

namespace {

/// Collects a call's errors and forwards every diagnostic to the caller.
class Diagnostics {
public:
  Diagnostics(strata_compile_diagnostic_fn callback, void *userData)
      : callback(callback), userData(userData) {}

  void report(strata_compile_severity_t severity, const std::string &location,
              const std::string &message) {
    if (severity == STRATA_COMPILE_SEVERITY_ERROR)
      errors += (location.empty() ? "" : location + ": ") + message + "\n";
    if (callback)
      callback(severity, location.c_str(), message.c_str(), userData);
  }

  void report(mlir::Diagnostic &diag) {
    report(severityOf(diag.getSeverity()),
           strata::locationText(diag.getLocation()), diag.str());
    for (mlir::Diagnostic &note : diag.getNotes())
      report(STRATA_COMPILE_SEVERITY_NOTE,
             strata::locationText(note.getLocation()), note.str());
  }

  /// Every error so far, one per line.
  std::string errors;

private:
  static strata_compile_severity_t
  severityOf(mlir::DiagnosticSeverity severity) {
    switch (severity) {
    case mlir::DiagnosticSeverity::Error:
      return STRATA_COMPILE_SEVERITY_ERROR;
    case mlir::DiagnosticSeverity::Warning:
      return STRATA_COMPILE_SEVERITY_WARNING;
    case mlir::DiagnosticSeverity::Note:
      return STRATA_COMPILE_SEVERITY_NOTE;
    case mlir::DiagnosticSeverity::Remark:
      return STRATA_COMPILE_SEVERITY_REMARK;
    }
    return STRATA_COMPILE_SEVERITY_ERROR;
  }

  strata_compile_diagnostic_fn callback;
  void *userData;
};

/// |options| (NULL: defaults) as driver options, and as this version's
/// struct in |o|; the problem on failure.
std::string readOptions(const strata_compile_options_t *given,
                        strata_compile_options_t &o,
                        strata::CompileInput &input,
                        strata::CompileOptions &options) {
  strata_compile_options_init(&o);
  if (given) {
    // A caller built against an older header passes a smaller struct: its
    // fields are read, the rest keep their defaults. A newer caller's extra
    // fields must be zero, so none is silently ignored.
    constexpr size_t kOldest = STRATA_COMPILE_OPTIONS_SIZE_1_0;
    constexpr size_t kThisVersion = sizeof(strata_compile_options_t);
    if (given->struct_size < kOldest)
      return "options.struct_size is " + std::to_string(given->struct_size) +
             ", smaller than any version of strata_compile_options_t (" +
             std::to_string(kOldest) + ")";
    const auto *bytes = reinterpret_cast<const unsigned char *>(given);
    for (size_t i = kThisVersion; i < given->struct_size; ++i)
      if (bytes[i])
        return "options.struct_size is " + std::to_string(given->struct_size) +
               " and sets fields this library (struct size " +
               std::to_string(kThisVersion) + ") does not know";
    std::memcpy(&o, given, std::min(given->struct_size, kThisVersion));
    o.struct_size = kThisVersion;
  }
  if (o.target_cpu && *o.target_cpu)
    options.targetCpu = o.target_cpu;
  options.dims.maxBatch = o.max_batch;
  options.dims.maxSeq = o.max_seq;
  if (o.max_batch < 1 || o.max_seq < 1)
    return "max_batch and max_seq must be >= 1, got " +
           std::to_string(o.max_batch) + " and " + std::to_string(o.max_seq);
  options.fusion = o.enable_fusion != 0;
  options.runtimeAttention = o.runtime_attention != 0;
  if ((o.dim_count && !o.dims) || (o.binding_count && !o.bindings))
    return "dims and bindings must not be NULL when their count is not 0";
  for (size_t i = 0; i < o.dim_count; ++i) {
    std::string name;
    int64_t max;
    if (!o.dims[i] || !strata::parseDimSpec(o.dims[i], &name, &max))
      return std::string("dims[") + std::to_string(i) +
             "] must be NAME=MAX with MAX >= 1, got '" +
             (o.dims[i] ? o.dims[i] : "(null)") + "'";
    options.dims.explicitMaxima[name] = max;
  }
  auto text = [](const char *value, const char *otherwise) {
    return std::string(value && *value ? value : otherwise);
  };
  strata::PrecisionOptions &precision = options.precision;
  precision.decode = text(o.decode_precision, "fp32");
  precision.prefill = text(o.prefill_precision, "fp32");
  precision.kvCache = text(o.kv_cache_precision, "fp32");
  precision.int4Group = o.int4_group;
  precision.keepFp32LmHead = o.keep_fp32_lm_head != 0;
  precision.sharedPrefillWeights = o.shared_prefill_weights != 0;
  precision.calibrationData = text(o.calibration_data, "");
  precision.calibrationFormat = text(o.calibration_format, "ids");
  options.generation.entries = o.no_generation_entries == 0;
  if (o.prefill_chunk < 0)
    return "prefill_chunk must be >= 0, got " +
           std::to_string(o.prefill_chunk);
  options.generation.prefillChunk = o.prefill_chunk;
  options.generation.allLogits = o.prefill_all_logits != 0;
  if (o.verify_length < 0)
    return "verify_length must be >= 0 (0: no verify entry), got " +
           std::to_string(o.verify_length);
  options.generation.verifyLength = o.verify_length;
  // Bad counts are for checkCompileOptions to refuse, as for strata-compile.
  options.generation.kvBlockSize = o.kv_block_size;
  options.generation.kvBlocks = o.kv_blocks;
  // Rank and count are for checkCompileOptions to refuse, too.
  options.parallel.tensorRanks = o.tensor_ranks == 0 ? 1 : o.tensor_ranks;
  options.parallel.tensorRank = o.tensor_rank;
  options.parallel.pipelineStages =
      o.pipeline_stages == 0 ? 1 : o.pipeline_stages;
  options.parallel.pipelineStage = o.pipeline_stage;
  if (o.attention_layer_count && !o.attention_layers)
    return "attention_layers must not be NULL when attention_layer_count is "
           "not 0";
  options.sparsity.window = o.attention_window;
  options.sparsity.sinks = o.attention_sinks;
  options.sparsity.layers.assign(o.attention_layers,
                                 o.attention_layers + o.attention_layer_count);
  options.sparsity.globalTopk = o.attention_global_topk;
  options.sparsity.globalBlock = o.attention_block ? o.attention_block : 64;
  for (size_t i = 0; i < o.binding_count; ++i) {
    llvm::StringRef spec = o.bindings[i] ? o.bindings[i] : "";
    auto [name, file] = spec.split('=');
    if (name.empty() || file.empty())
      return "bindings[" + std::to_string(i) + "] must be NAME=FILE.pb, got '" +
             spec.str() + "'";
    input.bindings.push_back({name.str(), file.str()});
  }
  return "";
}

strata_compile_status_t compile(const char *modelPath, const char *outputPath,
                                const strata_compile_options_t *given,
                                Diagnostics &diagnostics) {
  if (!modelPath || !outputPath) {
    diagnostics.report(STRATA_COMPILE_SEVERITY_ERROR, "",
                       "model_path and output_path must not be NULL");
    return STRATA_COMPILE_STATUS_INVALID_ARGUMENT;
  }
  strata::CompileInput input;
  strata::CompileOptions options;
  strata_compile_options_t o;
  input.modelPath = modelPath;
  std::string problem = readOptions(given, o, input, options);
  // The report goes out once on every return from here on, as far as the
  // compile got (o holds the caller's callback once its options were read).
  strata::CompileReport report;
  struct SendReport {
    const strata_compile_options_t &o;
    const strata::CompileReport &report;
    ~SendReport() {
      if (!o.report)
        return;
      try {
        const std::string json = strata::compileReportJson(report);
        o.report(json.c_str(), o.report_user_data);
      } catch (...) {
        // Out of memory while unwinding: no report rather than a terminate.
      }
    }
  } sendReport{o, report};
  if (!problem.empty()) {
    diagnostics.report(STRATA_COMPILE_SEVERITY_ERROR, "", problem);
    return STRATA_COMPILE_STATUS_INVALID_ARGUMENT;
  }
  if (!llvm::sys::fs::exists(modelPath)) {
    diagnostics.report(STRATA_COMPILE_SEVERITY_ERROR, modelPath,
                       "no such model file");
    return STRATA_COMPILE_STATUS_NOT_FOUND;
  }

  mlir::DialectRegistry registry;
  strata::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.getDiagEngine().registerHandler(
      [&](mlir::Diagnostic &diag) { diagnostics.report(diag); });
  // An option value the driver does not take is the caller's argument
  // error, not the model's.
  if (mlir::failed(strata::checkCompileOptions(
          options, mlir::FileLineColLoc::get(&context, modelPath, 0, 0))))
    return STRATA_COMPILE_STATUS_INVALID_ARGUMENT;
  mlir::FailureOr<strata::CompiledArtifact> artifact =
      strata::compileModel(context, input, options, &report);
  if (mlir::failed(artifact)) {
    if (diagnostics.errors.empty())
      diagnostics.report(STRATA_COMPILE_SEVERITY_ERROR, modelPath,
                         "the compile failed without a diagnostic");
    return STRATA_COMPILE_STATUS_FAILED_PRECONDITION;
  }
  std::string error;
  if (!artifact->writeToFile(outputPath, &error)) {
    diagnostics.report(STRATA_COMPILE_SEVERITY_ERROR, outputPath, error);
    return STRATA_COMPILE_STATUS_UNAVAILABLE;
  }
  return STRATA_COMPILE_STATUS_OK;
}

} // namespace

extern "C" {

uint32_t strata_compiler_api_version(void) {
  return STRATA_COMPILER_API_VERSION;
}

void strata_compile_options_init(strata_compile_options_t *options) {
  if (!options)
    return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->max_batch = 8;
  options->max_seq = 1024;
  options->enable_fusion = 1;
  options->runtime_attention = 1;
  options->int4_group = 32;
  options->verify_length = strata::GenerationOptions::kDefaultVerifyLength;
}

strata_compile_status_t
strata_compile_file(const char *model_path, const char *output_path,
                    const strata_compile_options_t *options,
                    strata_compile_diagnostic_fn diagnostic, void *user_data,
                    strata_compiler_error_t **out_error) {
  if (out_error)
    *out_error = nullptr;
  Diagnostics diagnostics(diagnostic, user_data);
  strata_compile_status_t status = STRATA_COMPILE_STATUS_INTERNAL;
  {
    // One compile at a time: lld's in-process driver has global state. The
    // lock lives outside the recovery context, so a contained crash (which
    // skips destructors inside it) still releases it.
    static std::mutex oneAtATime;
    std::lock_guard<std::mutex> lock(oneAtATime);
    llvm::CrashRecoveryContext::Enable();
    llvm::CrashRecoveryContext recovery;
    bool finished = recovery.RunSafely([&] {
      try {
        status = compile(model_path, output_path, options, diagnostics);
      } catch (const std::exception &e) {
        diagnostics.report(STRATA_COMPILE_SEVERITY_ERROR, "",
                           std::string("internal compiler error: ") + e.what());
        status = STRATA_COMPILE_STATUS_INTERNAL;
      } catch (...) {
        diagnostics.report(STRATA_COMPILE_SEVERITY_ERROR, "",
                           "internal compiler error: unknown exception");
        status = STRATA_COMPILE_STATUS_INTERNAL;
      }
    });
    if (!finished) {
      diagnostics.report(STRATA_COMPILE_SEVERITY_ERROR, "",
                         "internal compiler error: the compiler crashed");
      status = STRATA_COMPILE_STATUS_INTERNAL;
    }
  }
  if (status != STRATA_COMPILE_STATUS_OK && out_error) {
    // Allocation may fail here too; then the caller gets no error object.
    try {
      *out_error = new strata_compiler_error_t{status, diagnostics.errors};
    } catch (...) {
      *out_error = nullptr;
    }
  }
  return status;
}

strata_compile_status_t
strata_compiler_error_status(const strata_compiler_error_t *error) {
  return error ? error->status : STRATA_COMPILE_STATUS_OK;
}

const char *
strata_compiler_error_message(const strata_compiler_error_t *error) {
  return error ? error->message.c_str() : "";
}

void strata_compiler_error_free(strata_compiler_error_t *error) {
  delete error;
}

} // extern "C"
