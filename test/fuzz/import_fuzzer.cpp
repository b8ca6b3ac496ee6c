//===- import_fuzzer.cpp - libFuzzer target for the ONNX importer ---------===//
// SPDX-License-Identifier: Apache-2.0
// Feeds arbitrary bytes to the importer exactly as strata-import does: the
// bytes become a .onnx file in a private temporary folder, ModelStorage
// loads it, importOnnxModel converts it and the module is printed. Every
// diagnostic is swallowed; only crashes, sanitizer reports, timeouts and
// memory blow-ups count. Run through scripts/fuzz.sh (docs/testing.md).

#include "compiler/import/ModelLoader.h"
#include "compiler/import/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

std::string tempDir;   // private to this process, removed at exit
std::string modelPath; // tempDir + "/model.onnx", rewritten per input

void removeTempDir() {
  if (!modelPath.empty())
    ::unlink(modelPath.c_str());
  if (!tempDir.empty())
    ::rmdir(tempDir.c_str());
}

bool writeModel(const uint8_t *data, size_t size) {
  FILE *file = std::fopen(modelPath.c_str(), "wb");
  if (!file)
    return false;
  bool ok = size == 0 || std::fwrite(data, 1, size, file) == size;
  return std::fclose(file) == 0 && ok;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/strata-fuzz-XXXXXX";
  if (!::mkdtemp(pattern.data())) {
    std::perror("strata-import-fuzzer: mkdtemp");
    std::abort();
  }
  tempDir = pattern;
  modelPath = tempDir + "/model.onnx";
  std::atexit(removeTempDir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!writeModel(data, size)) {
    std::perror("strata-import-fuzzer: cannot write the model");
    std::abort();
  }
  // A fresh context per input: uniqued attributes and resource blobs must
  // not accumulate across inputs, and the storage they point into dies here.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler swallow(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });

  strata::import::ModelStorage storage;
  if (llvm::Error err = storage.load(modelPath)) {
    llvm::consumeError(std::move(err));
    return 0;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module =
      strata::import::importOnnxModel(context, storage);
  if (module) {
    // strata-import prints the module; so does the fuzzer (to nowhere).
    mlir::OpPrintingFlags flags;
    flags.elideLargeResourceString(64);
    module->print(llvm::nulls(), flags);
  }
  return 0;
}
