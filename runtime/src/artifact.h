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

#include "codegen/format/Manifest.h"
#include "strata/runtime/status.h"
#include "strata_artifact_format.h"

namespace strata::runtime {

// The manifest model shared with the artifact writer (codegen/format).
using ManifestTensor = format::ManifestTensor;
using ManifestEntry = format::ManifestEntry;
using ManifestDim = format::ManifestDim;
using ManifestState = format::ManifestState;
using ManifestTarget = format::ManifestTarget;
using Manifest = format::Manifest;

/// A section located in the artifact bytes.
struct SectionView {
  const uint8_t* data = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t checksum = 0;
};

/// What validateArtifact learns about a well-formed artifact.
struct ArtifactView {
  format::FormatVersion version;
  uint32_t kernelAbiVersion = 0;
  /// The kind of every section, by section table index.
  std::vector<uint32_t> sectionKinds;
  /// The section table index of the CPU code.
  uint32_t cpuCodeIndex = 0;
  SectionView manifest;
  SectionView weights;
  SectionView cpuCode;
  /// Whether the artifact is one rank of a tensor-parallel group, and its
  /// PARALLEL section (validated) if so.
  bool isParallel = false;
  strata_parallel_section_t parallel{};
};

/// Validates the header and section table of |size| bytes at |data|,
/// verifies the manifest and code checksums (not the weights') and checks
/// a PARALLEL section (checksum and contents). Returns
/// DATA_LOSS naming the defect, INCOMPATIBLE for a format major or kernel
/// ABI this runtime does not read or a required section it does not know.
strata_status_t validateArtifact(const uint8_t* data, size_t size,
                                 ArtifactView* out);

/// Decodes the manifest section of |view| and checks every manifest rule
/// (format::decodeManifest, format::validateManifest). DATA_LOSS on any
/// defect; INCOMPATIBLE for values only a newer minor defines;
/// UNIMPLEMENTED for an entry with more inputs than this runtime can call.
strata_status_t parseManifest(const ArtifactView& view, Manifest* out);

/// validateArtifact, then parseManifest: every check of the artifact bytes
/// that loading makes before it checks the CPU target and loads the code.
/// Nothing is executed, so it is safe on any bytes (the loader fuzzer calls
/// it).
strata_status_t decodeArtifact(const uint8_t* data, size_t size,
                               ArtifactView* view, Manifest* manifest);

/// The CPU target descriptor of |view|'s CPU code; never null in a
/// manifest that decodeArtifact accepted (it has exactly one).
const format::CpuTarget* cpuTargetOf(const Manifest& manifest,
                                     const ArtifactView& view);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_ARTIFACT_H_
