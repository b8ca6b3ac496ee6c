//===- artifact.h - Validating reader of the .strata byte layout ----------===//
// SPDX-License-Identifier: Apache-2.0
// Checks the header, section table and manifest of an artifact held in
// memory and decodes the manifest. Pure functions over a byte span: no I/O,
// no code loading, so every rule is testable on synthetic bytes.

#ifndef STRATA_RUNTIME_SRC_ARTIFACT_H_
#define STRATA_RUNTIME_SRC_ARTIFACT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/runtime/status.h"

namespace strata::runtime {

/// One tensor of an entry signature as recorded in the manifest. A dim >= 0
/// is a static extent; -1 - k refers to symbolic dim k.
struct ManifestTensor {
  std::string name;
  uint32_t dtype = 0;
  uint32_t rank = 0;
  int64_t dims[8] = {};
};

/// One entry point.
struct ManifestEntry {
  std::string name;
  std::string symbol;
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

/// The decoded manifest.
struct Manifest {
  std::vector<ManifestEntry> entries;
  std::vector<ManifestDim> dims;
  uint64_t workspaceBytes = 0;
};

/// A section located in the artifact bytes.
struct SectionView {
  const uint8_t* data = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t checksum = 0;
};

/// What validateArtifact learns about a well-formed artifact.
struct ArtifactView {
  uint32_t formatVersion = 0;
  uint32_t kernelAbiVersion = 0;
  uint64_t cpuFeatures = 0;
  SectionView manifest;
  SectionView weights;
  SectionView cpuCode;
};

/// Validates the header and section table of |size| bytes at |data| and
/// verifies the manifest and code checksums (not the weights'). Returns
/// DATA_LOSS naming the defect, INCOMPATIBLE for a format or kernel-ABI
/// version this runtime does not read.
strata_status_t validateArtifact(const uint8_t* data, size_t size,
                                 ArtifactView* out);

/// Decodes and validates a manifest section (bounds, string and rank limits,
/// dtypes, dim references, uniqueness, no trailing bytes). DATA_LOSS on any
/// defect; UNIMPLEMENTED for an entry with more inputs than this runtime
/// can call.
strata_status_t parseManifest(const uint8_t* data, size_t size, Manifest* out);

/// validateArtifact, then parseManifest of its manifest section: every
/// check of the artifact bytes that loading makes before it checks the CPU
/// features and loads the code. Nothing is executed, so it is safe on any
/// bytes (the loader fuzzer calls it).
strata_status_t decodeArtifact(const uint8_t* data, size_t size,
                               ArtifactView* view, Manifest* manifest);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_ARTIFACT_H_
