//===- ArtifactWriter.h - Serializes a .strata artifact ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Compiler-independent writer of the .strata byte layout
// (codegen/abi/strata_artifact_format.h, docs/artifact-format.md). Links no
// MLIR or LLVM, so runtime tests and tools can build artifacts too.
//===----------------------------------------------------------------------===//

#ifndef STRATA_CODEGEN_ARTIFACT_ARTIFACTWRITER_H_
#define STRATA_CODEGEN_ARTIFACT_ARTIFACTWRITER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/abi/strata_artifact_format.h"
#include "codegen/format/Manifest.h"

namespace strata::codegen {

/// One input or output of an entry point.
struct ArtifactTensor {
  /// The ONNX graph name, e.g. "input_ids" or "present.0.key".
  std::string name;
  /// A strata_dtype_t value (STRATA_DTYPE_F32, ...).
  uint32_t dtype = 0;
  /// One value per dim: an extent >= 0, or the value ArtifactWriter::
  /// addSymbolicDim returned for a symbolic dim (-1 - index).
  std::vector<int64_t> dims;
};

/// One entry point: its name, the exported symbol of the code implementing
/// it (the kernel ABI's calling convention), and its signature.
struct ArtifactEntry {
  std::string name;
  std::string symbol;
  std::vector<ArtifactTensor> inputs;
  std::vector<ArtifactTensor> outputs;
  /// What the entry is for: a strata_entry_kind_t value.
  uint32_t kind = STRATA_ENTRY_KIND_GENERIC;
};

/// A state tensor the runtime owns across calls (the KV cache).
struct ArtifactStateTensor {
  ArtifactTensor tensor;
  /// A strata_state_scope_t value.
  uint32_t scope = STRATA_STATE_SCOPE_PER_SEQUENCE;
};

/// One section of an artifact laid out by ArtifactWriter::assemble.
struct ArtifactSection {
  uint32_t kind = 0;
  /// STRATA_SECTION_FLAG_* bits.
  uint32_t flags = STRATA_SECTION_FLAG_REQUIRED;
  const uint8_t *data = nullptr;
  size_t size = 0;
};

/// Sink for the serialized bytes: called with consecutive chunks; returns
/// false to abort the write.
using ArtifactSink = std::function<bool(const void *data, size_t size)>;

/// Collects the contents of an artifact and writes the exact bytes. The same
/// contents always give the same bytes (padding is zero; nothing depends on
/// time, paths or addresses).
///
/// \code
///   ArtifactWriter writer;
///   int64_t seq = writer.addSymbolicDim("sequence", 512);
///   writer.addEntry({"prefill", "strata_prefill",
///                    {{"input_ids", STRATA_DTYPE_I64, {1, seq}}},
///                    {{"logits", STRATA_DTYPE_F32, {1, seq, 50257}}}});
///   writer.setWeights(weights.data(), weights.size());
///   writer.setCpuCode(sharedObject.data(), sharedObject.size());
///   writer.setCpuFeatures({"avx2", "fma"});
///   std::string error;
///   if (!writer.writeToFile("model.strata", &error)) ...
/// \endcode
class ArtifactWriter {
public:
  /// Adds symbolic dim |name| with compiled maximum |max| (>= 1) to the dim
  /// table and returns its encoding for ArtifactTensor::dims. Adding an
  /// existing name again returns the same encoding (the larger max wins).
  int64_t addSymbolicDim(const std::string &name, int64_t max);

  /// Appends an entry point; entries keep their order in the manifest.
  void addEntry(ArtifactEntry entry);

  /// The weights section: |size| bytes at |data|, borrowed until the last
  /// write call. Defaults to empty.
  void setWeights(const void *data, size_t size);

  /// The CPU code section: an ELF x86-64 shared object exporting every
  /// entry's symbol; borrowed until the last write call. Required.
  void setCpuCode(const void *data, size_t size);

  /// Every x86-64 feature the CPU code may use (strata_x86_features.h
  /// names, any order): the runtime refuses the artifact on a CPU that
  /// lacks one. Recorded sorted, each once.
  void setCpuFeatures(std::vector<std::string> features);

  /// Declares a state tensor; its dims use addSymbolicDim's encodings.
  void addStateTensor(ArtifactStateTensor state);

  /// The intermediate arena size to record (0 for now).
  void setWorkspaceBytes(uint64_t bytes) { workspaceBytes = bytes; }

  /// Makes the artifact one rank of a split model (a tensor rank of a
  /// pipeline stage, strata_parallel_section_t): a required
  /// PARALLEL section holding |section| is written between the code and
  /// the weights. Without it the artifact is a whole model.
  void setParallel(const strata_parallel_section_t &section) {
    parallel = section;
  }

  /// Checks the contents against every rule the runtime's loader enforces
  /// (the shared format::validateManifest and, when set, the PARALLEL
  /// section's format::validateParallelSection, and code present). Returns
  /// false
  /// and sets |*error| (if non-null) on the first violation.
  bool validate(std::string *error) const;

  /// The manifest the contents describe; false and |*error| if a tensor's
  /// rank does not fit the model (no other validation).
  bool buildManifest(format::Manifest *out, std::string *error) const;

  /// The manifest section bytes of the current contents (no validation;
  /// empty if buildManifest fails).
  std::vector<uint8_t> encodeManifest() const;

  /// Validates, then writes the artifact through |sink|.
  bool write(const ArtifactSink &sink, std::string *error) const;

  /// Validates, then returns the artifact bytes in |*out|.
  bool writeToVector(std::vector<uint8_t> *out, std::string *error) const;

  /// Validates, then writes the artifact to |path| (replaced if present;
  /// removed again if writing fails).
  bool writeToFile(const std::string &path, std::string *error) const;

  /// The section table index of the CPU code in what write() lays out
  /// (manifest, code, [parallel,] weights), which its target descriptor
  /// names.
  static constexpr uint32_t kCpuCodeSection = 1;

  /// Lays out an artifact from raw sections, in table and file order,
  /// without looking inside them: header, section table, checksums,
  /// alignment. For tests and fuzzers that need malformed contents; the
  /// compiler uses write().
  static bool assemble(const std::vector<ArtifactSection> &sections,
                       const ArtifactSink &sink, std::string *error);

  /// The format's checksum: XXH64 with seed 0.
  static uint64_t checksum(const void *data, size_t size);

  /// Recomputes the header checksum of the artifact in |bytes| (at least
  /// 128 bytes) after a test has patched header fields.
  static void resealHeader(uint8_t *bytes);

private:
  struct SymbolicDim {
    std::string name;
    int64_t max;
  };
  std::vector<ArtifactEntry> entries;
  std::vector<SymbolicDim> dims;
  std::vector<ArtifactStateTensor> states;
  std::vector<std::string> cpuFeatures;
  const uint8_t *weights = nullptr;
  size_t weightsSize = 0;
  const uint8_t *code = nullptr;
  size_t codeSize = 0;
  uint64_t workspaceBytes = 0;
  std::optional<strata_parallel_section_t> parallel;
};

} // namespace strata::codegen

#endif // STRATA_CODEGEN_ARTIFACT_ARTIFACTWRITER_H_
