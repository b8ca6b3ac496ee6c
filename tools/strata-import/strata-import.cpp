//===- strata-import.cpp - ONNX -> strata dialect command line --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// strata-import MODEL.onnx [-o OUT.mlir] [--list-unsupported]
// [--print-weights] [--bind NAME=FILE]. Errors are one line each, named by ONNX
// node; exit 1.

#include "compiler/import/ModelLoader.h"
#include "compiler/import/OnnxImporter.h"
#include "dialects/strata/IR/StrataDialect.h"
#include "tools/compiler-common/HelpOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
// --help lists these; LLVM's and MLIR's own options (such as
// --mlir-print-debuginfo) still work and are listed by --help-hidden.
cl::OptionCategory importOptions("strata-import options");
cl::opt<std::string> inputPath(cl::cat(importOptions), cl::Positional,
                               cl::desc("<model.onnx>"), cl::Required);
cl::opt<std::string> outputPath(cl::cat(importOptions), "o",
                                cl::desc("output .mlir file"),
                                cl::value_desc("file"), cl::init("-"));
cl::opt<bool> listUnsupported(
    cl::cat(importOptions), "list-unsupported",
    cl::desc("only list the ops without a converter, then exit"));
cl::list<std::string>
    bindings(cl::cat(importOptions), "bind",
             cl::desc("freeze graph input NAME to the ONNX TensorProto in FILE "
                      "(for values needed at compile time, e.g. axes)"),
             cl::value_desc("NAME=FILE"));
cl::opt<bool> noPrint(
    cl::cat(importOptions), "no-print",
    cl::desc("import and verify only, print nothing (for timing and memory "
             "measurements)"));
cl::opt<bool> printWeights(
    cl::cat(importOptions), "print-weights",
    cl::desc("print weight blobs as hex instead of resource handles"));

/// Prints "<model>: error: <message>", naming the ONNX node when the
/// message does not already.
void printDiagnostic(Diagnostic &diag) {
  std::string file, node;
  Location loc = diag.getLocation();
  if (auto name = dyn_cast<NameLoc>(loc)) {
    node = name.getName().str();
    loc = name.getChildLoc();
  }
  if (auto flc = dyn_cast<FileLineColLoc>(loc))
    file = flc.getFilename().str();
  std::string message = diag.str();
  llvm::raw_ostream &os = llvm::errs();
  if (!file.empty())
    os << file << ": ";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error: os << "error: "; break;
  case DiagnosticSeverity::Warning: os << "warning: "; break;
  case DiagnosticSeverity::Remark: os << "remark: "; break;
  case DiagnosticSeverity::Note: os << "note: "; break;
  }
  bool named = llvm::StringRef(message).contains("node '" + node + "'");
  if (!node.empty() && !named)
    os << "in ONNX node '" << node << "': ";
  os << message << "\n";
  for (Diagnostic &note : diag.getNotes())
    os << "  note: " << note.str() << "\n";
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  strata::tools::hideUnrelatedOptionsFromHelp(&importOptions);
  cl::ParseCommandLineOptions(argc, argv,
                              "strata-import: ONNX model -> strata dialect\n");

  MLIRContext context;
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diag) {
    printDiagnostic(diag);
    return success();
  });

  strata::import::ModelStorage storage;
  if (llvm::Error err = storage.load(inputPath)) {
    llvm::errs() << inputPath << ": error: " << llvm::toString(std::move(err))
                 << "\n";
    return 1;
  }
  for (const std::string &binding : bindings) {
    auto [name, file] = llvm::StringRef(binding).split('=');
    llvm::Error err =
        file.empty() ? llvm::createStringError(
                           llvm::inconvertibleErrorCode(),
                           "--bind expects NAME=FILE, got '" + binding + "'")
                     : storage.bindInput(name, file);
    if (err) {
      llvm::errs() << inputPath << ": error: " << llvm::toString(std::move(err))
                   << "\n";
      return 1;
    }
  }
  if (listUnsupported) {
    if (failed(strata::import::checkSupportedOps(context, storage)))
      return 1;
    llvm::outs() << "every op of '" << inputPath << "' is supported\n";
    return 0;
  }
  OwningOpRef<ModuleOp> module =
      strata::import::importOnnxModel(context, storage);
  if (!module)
    return 1;
  if (noPrint)
    return 0;

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  OpPrintingFlags flags;
  if (!printWeights)
    flags.elideLargeResourceString(64);
  module->print(output->os(), flags);
  output->os() << "\n";
  output->keep();
  return 0;
}
