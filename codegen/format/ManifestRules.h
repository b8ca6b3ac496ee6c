//===- ManifestRules.h - Every rule a valid manifest obeys ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The one implementation of the manifest's semantic rules: the writer calls
// it before it writes, the loader after it decodes.
//===----------------------------------------------------------------------===//

#ifndef STRATA_CODEGEN_FORMAT_MANIFESTRULES_H_
#define STRATA_CODEGEN_FORMAT_MANIFESTRULES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/format/Manifest.h"

namespace strata::format {

/// What the rules need to know of the artifact around the manifest.
struct ArtifactLayout {
  /// The artifact's format version: values this reader does not know are
  /// corruption in an artifact of its own minor or older, an
  /// incompatibility in a newer one.
  FormatVersion version;
  /// The kind of each section, by section table index.
  std::vector<uint32_t> sectionKinds;
};

/// Checks |manifest| against every rule of docs/artifact-format.md (names,
/// limits, dtypes, kinds, scopes, dim references, sizes, uniqueness, target
/// descriptors against |layout|'s code sections). Returns false and sets
/// |*error| on the first violation.
bool validateManifest(const Manifest &manifest, const ArtifactLayout &layout,
                      FormatError *error);

/// The rank rule, checked wherever a tensor's dims enter the fixed-size
/// model: "|where| has rank N, above the limit of 8".
bool checkRank(size_t rank, const std::string &where, FormatError *error);

} // namespace strata::format

#endif // STRATA_CODEGEN_FORMAT_MANIFESTRULES_H_
