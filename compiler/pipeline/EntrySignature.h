//===- EntrySignature.h - Signatures of a module's entries ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Every public function of the module becomes an artifact entry: its
// inputs' dims get maxima by the dim rule (DimMaxima.h) before lowering,
// its outputs' dims the maxima derived after lowering (OutputBounds.h).

#ifndef STRATA_COMPILER_PIPELINE_ENTRYSIGNATURE_H_
#define STRATA_COMPILER_PIPELINE_ENTRYSIGNATURE_H_

#include "codegen/artifact/ArtifactWriter.h"
#include "compiler/pipeline/DimMaxima.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace strata {

struct StateTensor;

/// Whether |func| becomes an entry point: public and defined.
bool isEntryFunction(mlir::func::FuncOp func);

/// How one dynamic output dim got its maximum, for --report.
struct OutputDimInfo {
  std::string entry, output;
  int64_t dim;
  /// The symbolic dim it refers to in the manifest.
  std::string name;
  int64_t max;
  /// The extent as proven from the input dims ("past_sequence + sequence"),
  /// or empty when only an upper bound is known.
  std::string exact;
};

/// The entries of one artifact and the symbolic dims they share.
class EntrySignatures {
public:
  /// Describes the inputs of every public function of |module| (strata
  /// dialect, before lowering) and records their maxima on each function
  /// (codegen's input maxima attribute, which bounds the memory plan). A
  /// dynamic input dim the rule does not bind is an error on the function
  /// that names the input, the dim and the flag to pass. Arguments marked
  /// as state tensors (StateTensors.h) are not inputs: every entry gets one
  /// for each state of the module, and the states are described too.
  mlir::LogicalResult describeInputs(mlir::ModuleOp module,
                                     const DimMaximaOptions &options);

  /// Describes the outputs (after strata-lower-to-linalg, before codegen):
  /// a dim proven equal to an input dim shares its symbolic dim; any other
  /// dynamic dim gets its own, named after the ONNX dim name when that
  /// cannot be confused with another dim, else after its proven expression
  /// or the output. A dim with no derivable maximum is an error.
  mlir::LogicalResult describeOutputs(mlir::ModuleOp module);

  /// Adds the symbolic dims, the entries and the state tensors to |writer|
  /// (once).
  void addTo(codegen::ArtifactWriter &writer) const;

  const std::vector<codegen::ArtifactEntry> &entries() const {
    return entries_;
  }
  const std::vector<OutputDimInfo> &outputDims() const { return outputDims_; }

private:
  struct Dim {
    std::string name;
    int64_t max;
    /// What a tensor dim must be to share it: "input" for an input dim,
    /// the exact expression for a derived one, empty for one of a kind.
    std::string key;
  };
  /// The encoding of an existing dim |name| whose key and max match, or
  /// of a new one; 0 if |name| is taken by a different dim.
  int64_t claim(const std::string &name, int64_t max, const std::string &key);
  /// The states (StateTensors.h) as manifest states; a named state dim is
  /// the symbolic dim of that name at the state's extent.
  mlir::LogicalResult describeStates(mlir::ModuleOp module,
                                     const std::vector<StateTensor> &states);

  std::vector<Dim> dims_;
  std::vector<codegen::ArtifactEntry> entries_;
  std::vector<codegen::ArtifactStateTensor> states_;
  std::vector<OutputDimInfo> outputDims_;
};

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_ENTRYSIGNATURE_H_
