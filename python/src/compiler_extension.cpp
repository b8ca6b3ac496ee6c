//===- compiler_extension.cpp - strata._strata_compiler -------------------===//
// SPDX-License-Identifier: Apache-2.0
// compile_file(model, output, **options) -> (status, message, diagnostics,
// report JSON or None): the package's strata.compile raises CompileError
// from them. Options are
// the fields of strata_compile_options_t; one not given keeps its default.
// A module of its own, apart from strata._strata: Python loads each
// extension with RTLD_LOCAL, so the compiler's libprotobuf and the copy of
// protobuf inside libsentencepiece (the tokenizers) never interpose on
// each other, which crashes one process that links both.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/capi/strata_compiler.h"
#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace strata::python {
namespace {

using Diagnostic = std::tuple<int, std::string, std::string>;
using Strings = std::optional<std::vector<std::string>>;

struct CompileArgs {
  std::optional<std::string> targetCpu;
  Strings dims;
  std::optional<int64_t> maxBatch, maxSeq;
  std::optional<bool> enableFusion, runtimeAttention;
  Strings bindings;
  std::optional<std::string> decodePrecision, prefillPrecision,
      kvCachePrecision;
  std::optional<int64_t> int4Group;
  std::optional<bool> keepFp32LmHead, sharedPrefillWeights;
  std::optional<std::string> calibrationData, calibrationFormat;
  std::optional<bool> noGenerationEntries;
  std::optional<int64_t> prefillChunk;
  std::optional<bool> prefillAllLogits;
  std::optional<int64_t> verifyLength;
  std::optional<int64_t> kvBlockSize, kvBlocks;
  std::optional<int64_t> attentionWindow, attentionSinks;
  std::optional<std::vector<int64_t>> attentionLayers;
  std::optional<int64_t> attentionGlobalTopk, attentionBlock;
  std::optional<int64_t> tensorRanks, tensorRank, pipelineStages,
      pipelineStage;
  bool report = false;
};

std::vector<const char*> cStrings(const Strings& strings) {
  std::vector<const char*> out;
  if (strings)
    for (const std::string& s : *strings) out.push_back(s.c_str());
  return out;
}

std::tuple<int, std::string, std::vector<Diagnostic>, std::optional<std::string>>
compileFile(
    const std::string& model, const std::string& output,
    const CompileArgs& a) {
  strata_compile_options_t o;
  strata_compile_options_init(&o);
  const auto str = [](const std::optional<std::string>& s) {
    return s ? s->c_str() : nullptr;
  };
  std::vector<const char*> dims = cStrings(a.dims);
  std::vector<const char*> bindings = cStrings(a.bindings);
  o.target_cpu = str(a.targetCpu);
  o.dims = dims.data();
  o.dim_count = dims.size();
  if (a.maxBatch) o.max_batch = *a.maxBatch;
  if (a.maxSeq) o.max_seq = *a.maxSeq;
  if (a.enableFusion) o.enable_fusion = *a.enableFusion;
  if (a.runtimeAttention) o.runtime_attention = *a.runtimeAttention;
  o.bindings = bindings.data();
  o.binding_count = bindings.size();
  o.decode_precision = str(a.decodePrecision);
  o.prefill_precision = str(a.prefillPrecision);
  o.kv_cache_precision = str(a.kvCachePrecision);
  if (a.int4Group) o.int4_group = *a.int4Group;
  if (a.keepFp32LmHead) o.keep_fp32_lm_head = *a.keepFp32LmHead;
  if (a.sharedPrefillWeights)
    o.shared_prefill_weights = *a.sharedPrefillWeights;
  o.calibration_data = str(a.calibrationData);
  o.calibration_format = str(a.calibrationFormat);
  if (a.noGenerationEntries) o.no_generation_entries = *a.noGenerationEntries;
  if (a.prefillChunk) o.prefill_chunk = *a.prefillChunk;
  if (a.prefillAllLogits) o.prefill_all_logits = *a.prefillAllLogits;
  if (a.verifyLength) o.verify_length = *a.verifyLength;
  if (a.kvBlockSize) o.kv_block_size = *a.kvBlockSize;
  if (a.kvBlocks) o.kv_blocks = *a.kvBlocks;
  if (a.attentionWindow) o.attention_window = *a.attentionWindow;
  if (a.attentionSinks) o.attention_sinks = *a.attentionSinks;
  if (a.attentionLayers) {
    o.attention_layers = a.attentionLayers->data();
    o.attention_layer_count = a.attentionLayers->size();
  }
  if (a.attentionGlobalTopk) o.attention_global_topk = *a.attentionGlobalTopk;
  if (a.attentionBlock) o.attention_block = *a.attentionBlock;
  if (a.tensorRanks) o.tensor_ranks = *a.tensorRanks;
  if (a.tensorRank) o.tensor_rank = *a.tensorRank;
  if (a.pipelineStages) o.pipeline_stages = *a.pipelineStages;
  if (a.pipelineStage) o.pipeline_stage = *a.pipelineStage;
  std::optional<std::string> report;
  if (a.report) {
    report.emplace();
    o.report = [](const char* json, void* user) {
      *static_cast<std::string*>(user) = json;
    };
    o.report_user_data = &*report;
  }

  std::vector<Diagnostic> diagnostics;
  strata_compiler_error_t* error = nullptr;
  strata_compile_status_t status;
  {
    nb::gil_scoped_release unlocked;
    status = strata_compile_file(
        model.c_str(), output.c_str(), &o,
        [](strata_compile_severity_t severity, const char* location,
           const char* message, void* user) {
          static_cast<std::vector<Diagnostic>*>(user)->emplace_back(
              static_cast<int>(severity), location, message);
        },
        &diagnostics, &error);
  }
  std::string message = error ? strata_compiler_error_message(error) : "";
  strata_compiler_error_free(error);
  return {static_cast<int>(status), message, std::move(diagnostics),
          std::move(report)};
}

}  // namespace
}  // namespace strata::python

NB_MODULE(_strata_compiler, m) {
  using namespace strata::python;
  m.def(
      "compile_file",
      [](const std::string& model, const std::string& output,
         std::optional<std::string> targetCpu, Strings dims,
         std::optional<int64_t> maxBatch, std::optional<int64_t> maxSeq,
         std::optional<bool> enableFusion,
         std::optional<bool> runtimeAttention, Strings bindings,
         std::optional<std::string> decodePrecision,
         std::optional<std::string> prefillPrecision,
         std::optional<std::string> kvCachePrecision,
         std::optional<int64_t> int4Group,
         std::optional<bool> keepFp32LmHead,
         std::optional<bool> sharedPrefillWeights,
         std::optional<std::string> calibrationData,
         std::optional<std::string> calibrationFormat,
         std::optional<bool> noGenerationEntries,
         std::optional<int64_t> prefillChunk,
         std::optional<bool> prefillAllLogits,
         std::optional<int64_t> verifyLength,
         std::optional<int64_t> kvBlockSize, std::optional<int64_t> kvBlocks,
         std::optional<int64_t> attentionWindow,
         std::optional<int64_t> attentionSinks,
         std::optional<std::vector<int64_t>> attentionLayers,
         std::optional<int64_t> attentionGlobalTopk,
         std::optional<int64_t> attentionBlock,
         std::optional<int64_t> tensorRanks, std::optional<int64_t> tensorRank,
         std::optional<int64_t> pipelineStages,
         std::optional<int64_t> pipelineStage, bool report) {
        CompileArgs a{targetCpu,           dims,
                      maxBatch,            maxSeq,
                      enableFusion,        runtimeAttention,
                      bindings,            decodePrecision,
                      prefillPrecision,    kvCachePrecision,
                      int4Group,           keepFp32LmHead,
                      sharedPrefillWeights, calibrationData,
                      calibrationFormat,   noGenerationEntries,
                      prefillChunk,        prefillAllLogits,
                      verifyLength,        kvBlockSize,
                      kvBlocks,            attentionWindow,
                      attentionSinks,      attentionLayers,
                      attentionGlobalTopk, attentionBlock,
                      tensorRanks,         tensorRank,
                      pipelineStages,      pipelineStage,
                      report};
        return compileFile(model, output, a);
      },
      nb::arg("model"), nb::arg("output"), nb::kw_only(),
      nb::arg("target_cpu") = nb::none(), nb::arg("dims") = nb::none(),
      nb::arg("max_batch") = nb::none(), nb::arg("max_seq") = nb::none(),
      nb::arg("enable_fusion") = nb::none(),
      nb::arg("runtime_attention") = nb::none(),
      nb::arg("bindings") = nb::none(),
      nb::arg("decode_precision") = nb::none(),
      nb::arg("prefill_precision") = nb::none(),
      nb::arg("kv_cache_precision") = nb::none(),
      nb::arg("int4_group") = nb::none(),
      nb::arg("keep_fp32_lm_head") = nb::none(),
      nb::arg("shared_prefill_weights") = nb::none(),
      nb::arg("calibration_data") = nb::none(),
      nb::arg("calibration_format") = nb::none(),
      nb::arg("no_generation_entries") = nb::none(),
      nb::arg("prefill_chunk") = nb::none(),
      nb::arg("prefill_all_logits") = nb::none(),
      nb::arg("verify_length") = nb::none(),
      nb::arg("kv_block_size") = nb::none(),
      nb::arg("kv_blocks") = nb::none(),
      nb::arg("attention_window") = nb::none(),
      nb::arg("attention_sinks") = nb::none(),
      nb::arg("attention_layers") = nb::none(),
      nb::arg("attention_global_topk") = nb::none(),
      nb::arg("attention_block") = nb::none(),
      nb::arg("tensor_ranks") = nb::none(),
      nb::arg("tensor_rank") = nb::none(),
      nb::arg("pipeline_stages") = nb::none(),
      nb::arg("pipeline_stage") = nb::none(), nb::arg("report") = false);
}
