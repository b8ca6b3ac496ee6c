//===- strata-compile.cpp - ONNX model -> .strata artifact ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// strata-compile MODEL.onnx -o OUT.strata [--target-cpu CPU] [--max-batch N]
// [--max-seq N] [--dim NAME=MAX] [--bind NAME=FILE.pb] [--report]
// [--emit mlir|linalg|llvm|kernels] [--no-fusion]
// [--no-runtime-attention]. Import, fusion,
// lowering, CPU code generation and the artifact, in one process with no
// external compiler or linker.

#include "codegen/abi/strata_kernel_abi.h"
#include "codegen/artifact/ArtifactWriter.h"
#include "codegen/cpu/AttentionToRuntime.h"
#include "codegen/cpu/CpuCodegen.h"
#include "codegen/cpu/MemoryPlan.h"
#include "compiler/import/ModelLoader.h"
#include "compiler/import/OnnxImporter.h"
#include "compiler/pipeline/Pipelines.h"
#include "dialects/strata/IR/StrataDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Timer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;

namespace {
// --help lists these; LLVM's and MLIR's own options (such as
// --mlir-print-debuginfo) still work but are not listed.
cl::OptionCategory compileOptions("strata-compile options");
cl::opt<std::string> inputPath(cl::cat(compileOptions), cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required);
cl::opt<std::string> outputPath(cl::cat(compileOptions), "o", cl::desc("output file"),
                                cl::value_desc("file"), cl::Required);
cl::opt<std::string> targetCpu(cl::cat(compileOptions), 
    "target-cpu", cl::desc("native (default), x86-64-v3 (AVX2), x86-64-v4 "
                           "(AVX-512) or an LLVM CPU name"),
    cl::init("native"));
cl::opt<std::string> target(cl::cat(compileOptions), "target", cl::desc("back end: cpu"),
                            cl::init("cpu"));
cl::opt<int64_t> maxBatch(cl::cat(compileOptions), "max-batch",
                          cl::desc("maximum of symbolic dims named *batch*"),
                          cl::init(8));
cl::opt<int64_t> maxSeq(cl::cat(compileOptions), 
    "max-seq",
    cl::desc("maximum of symbolic dims named *seq* or *len* (sequence, past "
             "and total lengths)"),
    cl::init(1024));
cl::list<std::string> dimMaxima(cl::cat(compileOptions), "dim", cl::desc("maximum of a symbolic dim"),
                                cl::value_desc("NAME=MAX"));
cl::list<std::string> bindings(cl::cat(compileOptions), 
    "bind", cl::desc("freeze graph input NAME to the TensorProto in FILE"),
    cl::value_desc("NAME=FILE"));
cl::opt<bool> report(cl::cat(compileOptions), 
    "report",
    cl::desc("print fusion statistics (fused ops, every candidate that did "
             "not fuse with its reason and location), ops before/after "
             "fusion and code sizes"));
cl::opt<std::string> emit(cl::cat(compileOptions), 
    "emit",
    cl::desc("write IR instead of an artifact: mlir (strata after fusion), "
             "linalg (after lowering), llvm (LLVM dialect) or kernels "
             "(target assembly of the generated code)"),
    cl::init(""));
cl::opt<bool> quiet(cl::cat(compileOptions), "quiet", cl::desc("no progress lines"));
cl::opt<bool> noFusion(cl::cat(compileOptions), 
    "no-fusion",
    cl::desc("skip the fusion pipeline (to measure what fusion buys)"));
cl::opt<bool> noRuntimeAttention(cl::cat(compileOptions), 
    "no-runtime-attention",
    cl::desc("lower fused attention to generic loops and matmuls instead of "
             "the runtime's attention kernel (to measure what it buys)"));

/// Copy of --quiet (see main: lld resets cl::opts).
bool quietProgress = false;

/// Prints one progress line per phase with its wall time.
class Progress {
public:
  void phase(llvm::StringRef name) {
    auto now = std::chrono::steady_clock::now();
    if (!quietProgress && !current.empty())
      llvm::errs() << "[strata-compile] " << current << ": "
                   << llvm::format("%.2f", seconds(now)) << " s\n";
    current = name.str();
    start = now;
  }

private:
  double seconds(std::chrono::steady_clock::time_point now) const {
    return std::chrono::duration<double>(now - start).count();
  }
  std::string current;
  std::chrono::steady_clock::time_point start;
};

int fail(const llvm::Twine &message) {
  llvm::errs() << "strata-compile: error: " << message << "\n";
  return 1;
}

/// strata_dtype_t of a tensor element type, 0 if none.
uint32_t dtypeOf(Type t) {
  if (t.isF32()) return STRATA_DTYPE_F32;
  if (t.isF16()) return STRATA_DTYPE_F16;
  if (t.isBF16()) return STRATA_DTYPE_BF16;
  if (t.isF64()) return STRATA_DTYPE_F64;
  if (t.isInteger(1)) return STRATA_DTYPE_BOOL;
  if (t.isSignlessInteger(8)) return STRATA_DTYPE_I8;
  if (t.isSignlessInteger(16)) return STRATA_DTYPE_I16;
  if (t.isSignlessInteger(32)) return STRATA_DTYPE_I32;
  if (t.isSignlessInteger(64)) return STRATA_DTYPE_I64;
  if (t.isUnsignedInteger(8)) return STRATA_DTYPE_U8;
  if (t.isUnsignedInteger(16)) return STRATA_DTYPE_U16;
  if (t.isUnsignedInteger(32)) return STRATA_DTYPE_U32;
  if (t.isUnsignedInteger(64)) return STRATA_DTYPE_U64;
  // fp8 and the 4-bit types travel one element per byte: LLVM stores an
  // i8/i4 memref element (MLIR's fp8/fp4 lower to i8/i4) in one byte.
  if (isa<Float8E4M3FNType>(t)) return STRATA_DTYPE_F8E4M3FN;
  if (isa<Float8E4M3FNUZType>(t)) return STRATA_DTYPE_F8E4M3FNUZ;
  if (isa<Float8E5M2Type>(t)) return STRATA_DTYPE_F8E5M2;
  if (isa<Float8E5M2FNUZType>(t)) return STRATA_DTYPE_F8E5M2FNUZ;
  if (isa<Float4E2M1FNType>(t)) return STRATA_DTYPE_F4E2M1;
  if (t.isSignlessInteger(4)) return STRATA_DTYPE_I4;
  if (t.isUnsignedInteger(4)) return STRATA_DTYPE_U4;
  return 0;
}

/// The compiled maximum of symbolic dim |name|.
std::optional<int64_t> maximumOf(llvm::StringRef name,
                                 const llvm::StringMap<int64_t> &explicitMax) {
  if (auto it = explicitMax.find(name); it != explicitMax.end())
    return it->second;
  std::string lower = name.lower();
  if (llvm::StringRef(lower).contains("batch"))
    return maxBatch;
  if (llvm::StringRef(lower).contains("seq") ||
      llvm::StringRef(lower).contains("len"))
    return maxSeq;
  return std::nullopt;
}

/// Records @main's signature in |writer| (call before lowering).
/// "12.3 MiB" / "4.5 KiB" / "100 bytes".
std::string bytesText(uint64_t bytes) {
  if (bytes >= (1u << 20))
    return llvm::formatv("{0:F1} MiB", bytes / 1048576.0).str();
  if (bytes >= 1024)
    return llvm::formatv("{0:F1} KiB", bytes / 1024.0).str();
  return std::to_string(bytes) + " bytes";
}

LogicalResult describeEntry(func::FuncOp main,
                            strata::codegen::ArtifactWriter &writer,
                            const llvm::StringMap<int64_t> &explicitMax) {
  strata::codegen::ArtifactEntry entry;
  std::map<std::string, int64_t> inputMaxima;
  entry.name = "main";
  entry.symbol = "_mlir_ciface_main";
  // Per input, the maximum of each dim (-1 if static): bounds the memory plan.
  SmallVector<Attribute> maximaAttrs;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(main.getArgument(i).getType());
    SmallVector<int64_t> dimMaxima(type.getRank(), -1);
    strata::codegen::ArtifactTensor t;
    auto name = main.getArgAttrOfType<StringAttr>(i, "strata.name");
    t.name = name ? name.str() : "input" + std::to_string(i);
    t.dtype = dtypeOf(type.getElementType());
    if (!t.dtype)
      return main.emitError() << "input '" << t.name << "' has element type "
                              << type.getElementType()
                              << ", which the runtime does not support yet";
    auto dimNames = main.getArgAttrOfType<ArrayAttr>(i, "strata.dims");
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        t.dims.push_back(type.getDimSize(d));
        continue;
      }
      std::string dimName =
          dimNames && d < (int64_t)dimNames.size()
              ? cast<StringAttr>(dimNames[d]).str()
              : std::string("?");
      if (dimName.empty() || dimName == "?")
        dimName = t.name + "." + std::to_string(d);
      std::optional<int64_t> max = maximumOf(dimName, explicitMax);
      if (!max)
        return main.emitError()
               << "symbolic dim '" << dimName << "' of input '" << t.name
               << "' has no maximum: pass --dim " << dimName << "=MAX";
      t.dims.push_back(writer.addSymbolicDim(dimName, *max));
      inputMaxima[dimName] = *max;
      dimMaxima[d] = *max;
    }
    entry.inputs.push_back(std::move(t));
    maximaAttrs.push_back(
        DenseI64ArrayAttr::get(main.getContext(), dimMaxima));
  }
  main->setAttr(strata::codegen::cpu::kInputMaximaAttr,
                ArrayAttr::get(main.getContext(), maximaAttrs));
  int64_t inputMaxSum = 1;
  for (const auto &[name, max] : inputMaxima)
    inputMaxSum += max;
  for (unsigned i = 0; i < main.getNumResults(); ++i) {
    auto type = cast<RankedTensorType>(main.getResultTypes()[i]);
    strata::codegen::ArtifactTensor t;
    auto name = main.getResultAttrOfType<StringAttr>(i, "strata.name");
    t.name = name ? name.str() : "output" + std::to_string(i);
    t.dtype = dtypeOf(type.getElementType());
    if (!t.dtype)
      return main.emitError() << "output '" << t.name << "' has element type "
                              << type.getElementType()
                              << ", which the runtime does not support yet";
    // Output extents are read from the results at run time. A dynamic one
    // is recorded with a loose bound: the sum of the input maxima (outputs
    // grow by concatenating or adding symbolic extents, e.g. past + seq).
    for (int64_t d = 0; d < type.getRank(); ++d)
      t.dims.push_back(type.isDynamicDim(d)
                           ? writer.addSymbolicDim(t.name + "." +
                                                       std::to_string(d),
                                                   inputMaxSum)
                           : type.getDimSize(d));
    entry.outputs.push_back(std::move(t));
  }
  writer.addEntry(std::move(entry));
  return success();
}

/// Counts ops by name under |module| for --report.
std::map<std::string, int> opCounts(ModuleOp module) {
  std::map<std::string, int> counts;
  module.walk([&](Operation *op) {
    if (!isa<ModuleOp, func::FuncOp>(op))
      ++counts[op->getName().getStringRef().str()];
  });
  return counts;
}

/// The ONNX node names of |loc| ("a, b" for a fused location), or its
/// printed form when it carries no name.
std::string nodeNames(Location loc) {
  SmallVector<std::string> names;
  loc->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l))
      names.push_back(name.getName().str());
    return WalkResult::advance();
  });
  if (!names.empty())
    return llvm::join(names, ", ");
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

/// One remark of a fusion pass: a candidate that did not fuse.
struct MissedFusion {
  std::string location, message;
};

/// The ops fusion produces, as counted by --report.
constexpr const char *kFusedOps[] = {"strata.attention", "strata.gelu",
                                     "strata.layer_norm", "strata.rms_norm",
                                     "strata.silu"};

/// Prints the fusion statistics of --report to |os|.
void printFusionReport(llvm::raw_ostream &os,
                       const std::map<std::string, int> &imported,
                       const std::map<std::string, int> &fused,
                       ArrayRef<MissedFusion> missed) {
  auto count = [](const std::map<std::string, int> &counts, StringRef name) {
    auto it = counts.find(name.str());
    return it == counts.end() ? 0 : it->second;
  };
  os << "fusion report:\n"
     << llvm::format("  %-20s %8s %8s\n", "fused op", "imported", "fused");
  for (const char *name : kFusedOps)
    os << llvm::format("  %-20s %8d %8d\n", name, count(imported, name),
                       count(fused, name));
  os << "  unfused candidates: " << missed.size() << "\n";
  for (const MissedFusion &m : missed)
    os << "    " << m.location << ": " << m.message << "\n";
}

LogicalResult writeIR(ModuleOp module) {
  std::string error;
  auto output = openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << "strata-compile: error: " << error << "\n";
    return failure();
  }
  OpPrintingFlags flags;
  flags.elideLargeResourceString(64);
  module.print(output->os(), flags);
  output->keep();
  return success();
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAllPasses();
  strata::registerStrataPasses();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  cl::HideUnrelatedOptions(compileOptions);
  cl::ParseCommandLineOptions(argc, argv,
                              "strata-compile: ONNX model -> .strata\n");
  // lld (the in-process linker) resets every cl::opt to its default when it
  // runs, so take copies of the values we need after code generation.
  const std::string output = outputPath;
  const bool wantReport = report;
  quietProgress = quiet;
  if (target != "cpu")
    return fail("unsupported --target '" + target + "' (supported: cpu)");
  const std::string emitKind = emit;
  if (!emitKind.empty() && emitKind != "mlir" && emitKind != "linalg" &&
      emitKind != "llvm" && emitKind != "kernels")
    return fail("unsupported --emit '" + emitKind +
                "' (mlir, linalg, llvm, kernels)");
  llvm::StringMap<int64_t> explicitMax;
  for (const std::string &spec : dimMaxima) {
    auto [name, value] = llvm::StringRef(spec).split('=');
    int64_t max;
    if (name.empty() || value.getAsInteger(10, max) || max < 1)
      return fail("--dim expects NAME=MAX with MAX >= 1, got '" + spec + "'");
    explicitMax[name] = max;
  }
  if (maxBatch < 1 || maxSeq < 1)
    return fail("--max-batch and --max-seq must be >= 1");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<strata::ir::StrataDialect>();
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  Progress progress;

  progress.phase("import");
  strata::import::ModelStorage storage;
  if (llvm::Error err = storage.load(inputPath))
    return fail(llvm::toString(std::move(err)));
  for (const std::string &binding : bindings) {
    auto [name, file] = llvm::StringRef(binding).split('=');
    if (llvm::Error err = storage.bindInput(name, file))
      return fail(llvm::toString(std::move(err)));
  }
  OwningOpRef<ModuleOp> module =
      strata::import::importOnnxModel(context, storage);
  if (!module)
    return 1;
  std::map<std::string, int> imported = opCounts(*module);

  progress.phase("fusion");
  PassManager fusion(&context);
  fusion.enableVerifier(true);
  strata::FusionPipelineOptions fusionOptions;
  fusionOptions.reportMissed = wantReport;
  if (!noFusion)
    strata::buildFusionPipeline(fusion, fusionOptions);
  // With --report the passes' near-miss remarks are collected for the
  // report instead of printed; other diagnostics go to the usual handler.
  std::vector<MissedFusion> missed;
  {
    ScopedDiagnosticHandler collect(&context, [&](Diagnostic &diag) {
      if (!wantReport || diag.getSeverity() != DiagnosticSeverity::Remark)
        return failure();
      missed.push_back({nodeNames(diag.getLocation()), diag.str()});
      return success();
    });
    if (failed(fusion.run(*module)))
      return 1;
  }
  std::map<std::string, int> fused = opCounts(*module);
  if (wantReport)
    printFusionReport(output == "-" ? llvm::errs() : llvm::outs(), imported,
                      fused, missed);
  if (emitKind == "mlir") {
    progress.phase("write");
    return failed(writeIR(*module)) ? 1 : 0;
  }

  strata::codegen::ArtifactWriter writer;
  auto main = module->lookupSymbol<func::FuncOp>("main");
  if (!main || failed(describeEntry(main, writer, explicitMax)))
    return 1;

  progress.phase("lower");
  unsigned attentionCalls = 0;
  if (!noRuntimeAttention)
    attentionCalls = strata::codegen::cpu::lowerAttentionToRuntime(*module);
  PassManager lower(&context);
  lower.enableVerifier(true);
  lower.addNestedPass<func::FuncOp>(strata::createLowerToLinalgPass());
  if (failed(lower.run(*module)))
    return 1;
  if (emitKind == "linalg") {
    progress.phase("write");
    return failed(writeIR(*module)) ? 1 : 0;
  }
  if (emitKind == "llvm") {
    if (failed(strata::codegen::cpu::lowerToLLVMDialect(*module)))
      return 1;
    progress.phase("write");
    return failed(writeIR(*module)) ? 1 : 0;
  }

  progress.phase("codegen");
  strata::codegen::cpu::CpuTarget cpuTarget{targetCpu};
  cpuTarget.emitAssembly = emitKind == "kernels";
  FailureOr<strata::codegen::cpu::CpuCode> code =
      strata::codegen::cpu::generateCpuCode(*module, cpuTarget);
  if (failed(code))
    return 1;

  progress.phase("write");
  if (emitKind == "kernels") {
    // The target assembly: entry points, strata_kernel_<n> loop nests and
    // the calls into the runtime's matmul.
    std::error_code ec;
    llvm::raw_fd_ostream os(output, ec);
    if (ec)
      return fail("cannot write '" + output + "': " + ec.message());
    os << code->assembly;
    progress.phase("");
    return 0;
  }
  writer.setWeights(code->weights.data(), code->weights.size());
  writer.setCpuCode(code->sharedObject.data(), code->sharedObject.size());
  writer.setCpuFeatures(code->cpuFeatures);
  std::string error;
  if (!writer.writeToFile(output, &error))
    return fail(error);
  progress.phase("");

  if (wantReport) {
    llvm::outs() << "ops after import / after fusion:\n";
    std::map<std::string, std::pair<int, int>> rows;
    for (auto &[name, n] : imported)
      rows[name].first = n;
    for (auto &[name, n] : fused)
      rows[name].second = n;
    for (auto &[name, counts] : rows)
      llvm::outs() << llvm::format("  %-28s %6d %6d\n", name.c_str(),
                                   counts.first, counts.second);
    const auto &stats = code->stats;
    llvm::outs() << "kernels: " << stats.kernels
                 << " generated loop nests (one function each)\n"
                 << "matmuls: " << stats.matmulCalls
                 << " calls to the runtime kernel, " << stats.packedMatmulCalls
                 << " on " << stats.packedWeights
                 << " weights pre-packed at compile time\n"
                 << "attention: " << attentionCalls
                 << " calls to the runtime kernel\n"
                 << "run-time checks: " << stats.checks
                 << " on input values and data-dependent extents\n"
                 << "memory plan: " << stats.plannedBuffers
                 << " intermediates in one arena of "
                 << bytesText(stats.arenaBytes)
                 << " at the maxima (unshared: "
                 << bytesText(stats.plannedBytes) << "); "
                 << stats.unplannedBuffers
                 << " with data-dependent sizes allocated at run time, "
                 << stats.earlyFrees
                 << " frees moved to the buffer's last use\n"
                 << "weights: " << code->weights.size() << " bytes\n"
                 << "native code: " << code->sharedObject.size()
                 << " bytes\n";
  }
  return 0;
}
