//===- Manifest.h - The decoded manifest of a .strata artifact --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The data model of the manifest section, shared by the compiler's
// ArtifactWriter and the runtime's loader: both encode, decode and validate
// this one model (ManifestCodec.h, ManifestRules.h). Links no MLIR or LLVM.
//===----------------------------------------------------------------------===//

#ifndef STRATA_CODEGEN_FORMAT_MANIFEST_H_
#define STRATA_CODEGEN_FORMAT_MANIFEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata_artifact_format.h"
#include "strata_kernel_abi.h"

namespace strata::format {

/// A major.minor format version.
struct FormatVersion {
  uint32_t major = STRATA_ARTIFACT_FORMAT_MAJOR;
  uint32_t minor = STRATA_ARTIFACT_FORMAT_MINOR;
};

/// What a defect means for the reader.
enum class FormatErrorKind {
  /// The bytes break a rule: a corrupt artifact (DATA_LOSS).
  Corrupt,
  /// Well-formed, but needs something this reader lacks (INCOMPATIBLE).
  Incompatible,
  /// Valid, beyond what this runtime can call yet (UNIMPLEMENTED).
  Unimplemented,
};

/// The first defect found, with a message naming it.
struct FormatError {
  FormatErrorKind kind = FormatErrorKind::Corrupt;
  std::string message;
};

/// One tensor of a signature or a state declaration. A dim >= 0 is a
/// static extent; -1 - k refers to symbolic dim k.
struct ManifestTensor {
  std::string name;
  uint32_t dtype = 0;
  uint32_t rank = 0;
  int64_t dims[STRATA_MAX_RANK] = {};
};

/// One entry point.
struct ManifestEntry {
  std::string name;
  std::string symbol;
  /// A strata_entry_kind_t value.
  uint32_t kind = STRATA_ENTRY_KIND_GENERIC;
  std::vector<ManifestTensor> inputs;
  std::vector<ManifestTensor> outputs;
};

/// A named symbolic dim and its compiled maximum.
struct ManifestDim {
  std::string name;
  /// >= 1, or STRATA_DIM_MAX_FROM_DATA (outputs only).
  int64_t max = 0;
  /// The maximum the size rules substitute: a from-data dim counts as 1.
  int64_t sizingMax() const { return max < 1 ? 1 : max; }
};

/// A state tensor the runtime will own (the KV cache), declared so that it
/// can be allocated before any entry runs.
struct ManifestState {
  ManifestTensor tensor;
  /// A strata_state_scope_t value.
  uint32_t scope = STRATA_STATE_SCOPE_PER_SEQUENCE;
};

/// The CPU a code section was compiled for.
struct CpuTarget {
  /// STRATA_TARGET_CPU_ARCH_X86_64.
  std::string arch;
  /// Every ISA extension the code may use (strata_x86_features.h names),
  /// sorted, each once.
  std::vector<std::string> features;
};

/// The target descriptor of one code section.
struct ManifestTarget {
  /// The code section's index in the section table.
  uint32_t section = 0;
  /// A strata_target_kind_t value.
  uint32_t kind = 0;
  /// Decoded for kind STRATA_TARGET_CPU.
  CpuTarget cpu;
  /// The undecoded descriptor of any other kind, kept to be re-encoded.
  std::vector<uint8_t> payload;
};

/// The decoded manifest.
struct Manifest {
  std::vector<ManifestEntry> entries;
  std::vector<ManifestDim> dims;
  std::vector<ManifestState> states;
  std::vector<ManifestTarget> targets;
  uint64_t workspaceBytes = 0;
};

} // namespace strata::format

#endif // STRATA_CODEGEN_FORMAT_MANIFEST_H_
