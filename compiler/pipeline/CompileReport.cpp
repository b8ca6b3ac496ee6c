//===- CompileReport.cpp - What a compile did, for --report ---------------===//
// SPDX-License-Identifier: Apache-2.0
// Lit tests (test/codegen/cpu, test/tools) match these lines: keep the
// wording, or update every test that matches it.

#include "compiler/pipeline/CompileReport.h"

#include "codegen/abi/strata_artifact_format.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace strata {
namespace {

/// The ops fusion produces, as counted by the report.
constexpr const char *kFusedOps[] = {"strata.attention", "strata.gelu",
                                     "strata.layer_norm", "strata.rms_norm",
                                     "strata.silu"};

/// "12.3 MiB" / "4.5 KiB" / "100 bytes".
std::string bytesText(uint64_t bytes) {
  if (bytes >= (1u << 20))
    return llvm::formatv("{0:F1} MiB", bytes / 1048576.0).str();
  if (bytes >= 1024)
    return llvm::formatv("{0:F1} KiB", bytes / 1024.0).str();
  return std::to_string(bytes) + " bytes";
}

int countOf(const std::map<std::string, int> &counts, llvm::StringRef name) {
  auto it = counts.find(name.str());
  return it == counts.end() ? 0 : it->second;
}

} // namespace

std::map<std::string, int> countOps(ModuleOp module) {
  std::map<std::string, int> counts;
  module.walk([&](Operation *op) {
    if (!isa<ModuleOp, func::FuncOp>(op))
      ++counts[op->getName().getStringRef().str()];
  });
  return counts;
}

std::string locationText(Location loc) {
  SmallVector<std::string> names;
  loc->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l))
      names.push_back(name.getName().str());
    return WalkResult::advance();
  });
  if (!names.empty())
    return llvm::join(names, ", ");
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file.getLine() ? llvm::formatv("{0}:{1}:{2}", file.getFilename(),
                                          file.getLine(), file.getColumn())
                                .str()
                          : file.getFilename().str();
  if (isa<UnknownLoc>(loc))
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

void printFusionReport(llvm::raw_ostream &os, const CompileReport &report) {
  os << "fusion report:\n"
     << llvm::format("  %-20s %8s %8s\n", "fused op", "imported", "fused");
  for (const char *name : kFusedOps)
    os << llvm::format("  %-20s %8d %8d\n", name,
                       countOf(report.importedOps, name),
                       countOf(report.fusedOps, name));
  if (report.convolutions > 0 || report.foldedLayers > 0)
    os << "  convolutions: " << report.convolutions << " ("
       << report.convolutionsWithBias << " with a bias)\n"
       << "  per-channel scale/shift ops folded into conv/linear weights: "
       << report.foldedChannelOps << " on " << report.foldedLayers
       << " layers\n";
  os << "  unfused candidates: " << report.missedFusions.size() << "\n";
  for (const MissedFusion &m : report.missedFusions)
    os << "    " << m.location << ": " << m.message << "\n";
  if (report.calibrationTokens > 0)
    os << "activation scaling: " << report.calibrationTokens
       << " calibration tokens; " << report.scaledContractions
       << " contractions scaled, " << report.scaleFolds
       << " inputs folded into a norm, " << report.scaleMultiplies
       << " explicit multiplies\n";
  if (report.windowedAttention > 0)
    os << "sparse attention: " << report.windowedAttention << " of "
       << report.attentionOps << " attention ops windowed\n";
  if (report.columnParallel + report.rowParallel > 0)
    os << "tensor parallelism: " << report.columnParallel
       << " column-parallel and " << report.rowParallel
       << " row-parallel contractions; " << report.allReduces
       << " all-reduces and " << report.allGathers
       << " all-gathers over all entries\n";
  if (report.stageSends + report.stageRecvs > 0)
    os << "pipeline parallelism: " << report.stageSends << " sends and "
       << report.stageRecvs << " receives of this stage over all entries\n";
}

void printCodegenReport(llvm::raw_ostream &os, const CompileReport &report) {
  os << "ops after import / after fusion:\n";
  std::map<std::string, std::pair<int, int>> rows;
  for (auto &[name, n] : report.importedOps)
    rows[name].first = n;
  for (auto &[name, n] : report.fusedOps)
    rows[name].second = n;
  for (auto &[name, counts] : rows)
    os << llvm::format("  %-28s %6d %6d\n", name.c_str(), counts.first,
                       counts.second);
  const codegen::cpu::CpuCodegenStats &stats = report.codegen;
  os << "kernels: " << stats.kernels
     << " generated loop nests (one function each)\n"
     << "matmuls: " << stats.matmulCalls << " calls to the runtime kernel, "
     << stats.packedMatmulCalls << " on " << stats.packedWeights
     << " weights pre-packed at compile time; " << stats.int8MatmulCalls
     << " weight-only int8, " << stats.int4MatmulCalls << " int4, "
     << stats.w8a8MatmulCalls
     << " int8 x int8 (activations quantized per row at run time), "
     << stats.bf16MatmulCalls << " bf16\n"
     << "attention: " << stats.attentionCalls
     << " calls to the runtime kernel\n"
     << "conv: " << stats.convCalls
     << " calls to the runtime kernel (columns read from the input as multiplied), "
     << stats.convResidualCalls << " with a residual add ("
     << stats.convInPlaceCalls << " written over it) and "
     << stats.convReluCalls << " with a ReLU in their tiles, "
     << stats.convWinogradCalls << " with Winograd's F(2x2, 3x3)\n"
     << "run-time checks: " << stats.checks
     << " on input values and data-dependent extents\n"
     << "memory plan: " << stats.plannedBuffers
     << " intermediates in one arena of " << bytesText(stats.arenaBytes)
     << " at the maxima (unshared: " << bytesText(stats.plannedBytes) << "); "
     << stats.unplannedBuffers
     << " with data-dependent sizes allocated at run time, " << stats.earlyFrees
     << " frees moved to the buffer's last use\n";
  os << "dispatch regions (one kernel launch each):\n";
  for (const dispatch::EntryDispatches &entry : stats.dispatches) {
    os << "  " << entry.entry << ": " << entry.total;
    for (const auto &[kind, n] : entry.byKind)
      os << ", " << n << " " << kind;
    os << "\n";
    if (entry.runtimeCalls.empty())
      continue;
    os << "    runtime kernels:";
    for (const auto &[kernel, n] : entry.runtimeCalls)
      os << " " << kernel << " x" << n;
    os << "\n";
  }
  unsigned exact = 0, fromData = 0;
  for (const OutputDimInfo &d : report.outputDims) {
    exact += !d.exact.empty();
    fromData += d.max == STRATA_DIM_MAX_FROM_DATA;
  }
  os << "output dims: " << report.outputDims.size() << " dynamic, " << exact
     << " exact functions of the input dims, "
     << report.outputDims.size() - exact - fromData << " upper bounds, "
     << fromData << " from tensor data\n";
  for (const OutputDimInfo &d : report.outputDims) {
    os << "  " << d.entry << " " << d.output << "[" << d.dim << "] " << d.name;
    if (d.max == STRATA_DIM_MAX_FROM_DATA) {
      os << " from tensor data (no compiled maximum)\n";
      continue;
    }
    os << " <= " << d.max;
    if (d.exact.empty())
      os << " (upper bound)";
    else if (d.exact != d.name)
      os << " (= " << d.exact << ")";
    os << "\n";
  }
  os << "weights: " << report.weightsBytes << " bytes\n"
     << "native code: " << report.codeBytes << " bytes\n";
}

namespace {

llvm::json::Object opCounts(const std::map<std::string, int> &counts) {
  llvm::json::Object out;
  for (const auto &[name, n] : counts)
    out[name] = n;
  return out;
}

} // namespace

std::string compileReportJson(const CompileReport &report) {
  namespace json = llvm::json;
  json::Array missed;
  for (const MissedFusion &m : report.missedFusions)
    missed.push_back(
        json::Object{{"location", m.location}, {"message", m.message}});
  json::Object out{
      {"imported_ops", opCounts(report.importedOps)},
      {"fused_ops", opCounts(report.fusedOps)},
      {"missed_fusions", std::move(missed)},
      {"fusion_done", report.fusionDone},
      {"calibration",
       json::Object{{"tokens", report.calibrationTokens},
                    {"scaled_contractions", report.scaledContractions},
                    {"scale_folds", report.scaleFolds},
                    {"scale_multiplies", report.scaleMultiplies}}},
      {"attention_ops", report.attentionOps},
      {"windowed_attention_ops", report.windowedAttention},
      {"tensor_parallel",
       json::Object{{"column_parallel", report.columnParallel},
                    {"row_parallel", report.rowParallel},
                    {"all_reduces", report.allReduces},
                    {"all_gathers", report.allGathers}}},
      {"pipeline_parallel",
       json::Object{{"sends", report.stageSends},
                    {"recvs", report.stageRecvs}}},
      {"convolutions", report.convolutions},
      {"convolutions_with_bias", report.convolutionsWithBias},
      {"folded_channel_ops", report.foldedChannelOps},
      {"folded_channel_layers", report.foldedLayers},
      {"codegen_done", report.codegenDone},
  };
  const codegen::cpu::CpuCodegenStats &stats = report.codegen;
  json::Array dispatches;
  for (const dispatch::EntryDispatches &entry : stats.dispatches) {
    json::Object byKind, runtimeCalls;
    for (const auto &[kind, n] : entry.byKind)
      byKind[kind] = n;
    for (const auto &[kernel, n] : entry.runtimeCalls)
      runtimeCalls[kernel] = n;
    dispatches.push_back(json::Object{{"entry", entry.entry},
                                      {"total", entry.total},
                                      {"by_kind", std::move(byKind)},
                                      {"runtime_calls",
                                       std::move(runtimeCalls)}});
  }
  out["codegen"] = json::Object{
      {"kernels", stats.kernels},
      {"matmul_calls", stats.matmulCalls},
      {"packed_matmul_calls", stats.packedMatmulCalls},
      {"packed_weights", stats.packedWeights},
      {"int8_matmul_calls", stats.int8MatmulCalls},
      {"int4_matmul_calls", stats.int4MatmulCalls},
      {"w8a8_matmul_calls", stats.w8a8MatmulCalls},
      {"bf16_matmul_calls", stats.bf16MatmulCalls},
      {"attention_calls", stats.attentionCalls},
      {"conv_calls", stats.convCalls},
      {"conv_relu_calls", stats.convReluCalls},
      {"conv_residual_calls", stats.convResidualCalls},
      {"conv_in_place_calls", stats.convInPlaceCalls},
      {"conv_winograd_calls", stats.convWinogradCalls},
      {"checks", stats.checks},
      {"dispatches", std::move(dispatches)},
  };
  out["memory_plan"] = json::Object{
      {"planned_buffers", stats.plannedBuffers},
      {"arena_bytes", stats.arenaBytes},
      {"planned_bytes", stats.plannedBytes},
      {"unplanned_buffers", stats.unplannedBuffers},
      {"early_frees", stats.earlyFrees},
  };
  json::Array outputDims;
  for (const OutputDimInfo &d : report.outputDims) {
    json::Object dim{{"entry", d.entry},  {"output", d.output},
                     {"dim", d.dim},      {"name", d.name},
                     {"exact", d.exact}};
    if (d.max != STRATA_DIM_MAX_FROM_DATA)
      dim["max"] = d.max;
    else
      dim["max"] = nullptr;
    outputDims.push_back(std::move(dim));
  }
  out["output_dims"] = std::move(outputDims);
  out["weights_bytes"] = report.weightsBytes;
  out["code_bytes"] = report.codeBytes;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(std::move(out));
  return text;
}

} // namespace strata
