//===- ManifestRules.cpp - Every rule a valid manifest obeys --------------===//
// SPDX-License-Identifier: Apache-2.0
// Checked in manifest order: dims, states, entries, targets. Each rule
// reports the first violation with the names that locate it.
//===----------------------------------------------------------------------===//

#include "codegen/format/ManifestRules.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace strata::format {
namespace {

class Checker {
public:
  Checker(const Manifest &manifest, const ArtifactLayout &layout,
          FormatError *error)
      : manifest(manifest), layout(layout), error(error) {}

  bool fail(const std::string &message,
            FormatErrorKind kind = FormatErrorKind::Corrupt) {
    error->kind = kind;
    error->message = message;
    return false;
  }

  // A value outside the enumeration this reader knows: corruption, unless
  // the artifact's minor is newer and may have added it.
  bool unknownValue(const std::string &message) {
    const FormatVersion reader;
    if (layout.version.minor <= reader.minor)
      return fail(message);
    return fail(message + " (artifact format " +
                    std::to_string(layout.version.major) + "." +
                    std::to_string(layout.version.minor) +
                    " is newer than this reader's " +
                    std::to_string(reader.major) + "." +
                    std::to_string(reader.minor) + ")",
                FormatErrorKind::Incompatible);
  }

  // Every string of the manifest: 1..4096 bytes, no NUL.
  bool name(const std::string &what, const std::string &value) {
    if (value.empty())
      return fail(what + " is empty");
    if (value.size() > STRATA_MANIFEST_MAX_STRING)
      return fail(what + " '" + value.substr(0, 32) + "...' is " +
                  std::to_string(value.size()) + " bytes long, above the " +
                  "limit of " + std::to_string(STRATA_MANIFEST_MAX_STRING));
    if (value.find('\0') != std::string::npos)
      return fail(what + " contains a NUL byte");
    return true;
  }

  bool dims() {
    std::set<std::string> names;
    for (const ManifestDim &dim : manifest.dims) {
      if (!name("symbolic dim name", dim.name))
        return false;
      if (dim.max < 1 && dim.max != STRATA_DIM_MAX_FROM_DATA)
        return fail("symbolic dim '" + dim.name + "' has maximum " +
                    std::to_string(dim.max) +
                    ", expected at least 1 (or 0: from data)");
      if (!names.insert(dim.name).second)
        return fail("duplicate symbolic dim name '" + dim.name + "'");
    }
    return true;
  }

  // |where| names the tensor ("entry 'e' input 'x'"); |fromDataAllowed|
  // only for outputs, whose extents the code may compute from data.
  bool tensor(const std::string &where, const ManifestTensor &t,
              bool fromDataAllowed) {
    if (strata_dtype_size(t.dtype) == 0)
      return unknownValue(where + " has unknown dtype " +
                          std::to_string(t.dtype));
    if (!checkRank(t.rank, where, error))
      return false;
    // The largest size, maxima substituted; the bound keeps every later
    // size computation far from overflow.
    long double bytes = strata_dtype_size(t.dtype);
    for (uint32_t d = 0; d < t.rank; ++d) {
      int64_t dim = t.dims[d];
      if (dim >= 0) {
        bytes *= dim;
        continue;
      }
      uint64_t k = static_cast<uint64_t>(-(dim + 1));
      if (k >= manifest.dims.size())
        return fail(where + " dim " + std::to_string(d) +
                    " refers to symbolic dim " + std::to_string(k) +
                    ", but the dim table has " +
                    std::to_string(manifest.dims.size()));
      const ManifestDim &symbolic = manifest.dims[k];
      if (!fromDataAllowed && symbolic.max == STRATA_DIM_MAX_FROM_DATA)
        return fail(where + " dim " + std::to_string(d) + " refers to '" +
                    symbolic.name +
                    "', which has no maximum (only outputs may)");
      bytes *= symbolic.sizingMax();
    }
    if (bytes > static_cast<long double>(STRATA_MANIFEST_MAX_TENSOR_BYTES)) {
      char size[64];
      std::snprintf(size, sizeof(size), "%.0Lf", bytes);
      return fail(where + " can be " + size + " bytes, above the limit of " +
                  std::to_string(STRATA_MANIFEST_MAX_TENSOR_BYTES));
    }
    // A run describes the tensor by its strides, the suffix products of
    // its dims, as int64. A zero dim bounds the size above but not the
    // strides: [0, 2^40, 2^40] is 0 bytes with a stride of 2^80.
    int64_t stride = 1;
    for (uint32_t d = t.rank; d-- > 0;) {
      int64_t dim = t.dims[d];
      int64_t extent = dim >= 0 ? dim : manifest.dims[-(dim + 1)].sizingMax();
      if (__builtin_mul_overflow(stride, extent, &stride))
        return fail(where +
                    " has strides that do not fit in 64 bits (its dims "
                    "from dim " +
                    std::to_string(d) +
                    " on, maxima substituted, multiply past 2^63)");
    }
    return true;
  }

  bool states() {
    std::set<std::string> names;
    for (const ManifestState &state : manifest.states) {
      const ManifestTensor &t = state.tensor;
      if (!name("state tensor name", t.name))
        return false;
      std::string where = "state tensor '" + t.name + "'";
      if (!names.insert(t.name).second)
        return fail("duplicate " + where);
      if (state.scope != STRATA_STATE_SCOPE_PER_SEQUENCE &&
          state.scope != STRATA_STATE_SCOPE_SHARED)
        return unknownValue(where + " has unknown scope " +
                            std::to_string(state.scope));
      // Dim 0 of a per-sequence state counts sequence slots.
      if (state.scope == STRATA_STATE_SCOPE_PER_SEQUENCE && t.rank == 0)
        return fail(where + " is per-sequence but has rank 0 (its dim 0 "
                            "counts sequence slots)");
      // The runtime allocates state up front: every dim needs a maximum.
      if (!tensor(where, t, /*fromDataAllowed=*/false))
        return false;
    }
    return true;
  }

  bool entries() {
    if (manifest.entries.empty())
      return fail("manifest has no entry points");
    std::set<std::string> entryNames;
    for (const ManifestEntry &entry : manifest.entries) {
      if (!name("entry name", entry.name) ||
          !name("symbol of entry '" + entry.name + "'", entry.symbol))
        return false;
      std::string where = "entry '" + entry.name + "'";
      if (!entryNames.insert(entry.name).second)
        return fail("duplicate entry name '" + entry.name + "'");
      if (entry.kind < STRATA_ENTRY_KIND_GENERIC ||
          entry.kind > STRATA_ENTRY_KIND_VERIFY)
        return unknownValue(where + " has unknown kind " +
                            std::to_string(entry.kind));
      // Every entry also receives every state tensor.
      if (entry.inputs.size() + manifest.states.size() >
          STRATA_MAX_ENTRY_INPUTS)
        return fail(where + " takes " + std::to_string(entry.inputs.size()) +
                        " inputs" +
                        (manifest.states.empty()
                             ? std::string()
                             : " and " +
                                   std::to_string(manifest.states.size()) +
                                   " state tensors") +
                        "; this runtime calls at most " +
                        std::to_string(STRATA_MAX_ENTRY_INPUTS) +
                        " inputs and state tensors",
                    FormatErrorKind::Unimplemented);
      for (const auto *list : {&entry.inputs, &entry.outputs}) {
        const bool outputs = list == &entry.outputs;
        const std::string role = outputs ? "output" : "input";
        std::set<std::string> names;
        for (const ManifestTensor &t : *list) {
          if (!name(where + " " + role + " name", t.name))
            return false;
          if (!names.insert(t.name).second)
            return fail(where + " has two " + role + "s named '" + t.name +
                        "'");
          if (!tensor(where + " " + role + " '" + t.name + "'", t, outputs))
            return false;
        }
      }
    }
    return true;
  }

  bool cpuTarget(const std::string &where, const CpuTarget &cpu) {
    if (!name(where + " architecture", cpu.arch))
      return false;
    if (cpu.features.size() > STRATA_TARGET_MAX_CPU_FEATURES)
      return fail(where + " lists " + std::to_string(cpu.features.size()) +
                  " CPU features, above the limit of " +
                  std::to_string(STRATA_TARGET_MAX_CPU_FEATURES));
    for (size_t i = 0; i < cpu.features.size(); ++i) {
      const std::string &feature = cpu.features[i];
      if (!name(where + " CPU feature", feature))
        return false;
      // LLVM's spelling: lower case, digits, '.', '-', '_'.
      for (char c : feature)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_'))
          return fail(where + " CPU feature '" + feature.substr(0, 32) +
                      "' has a character outside [a-z0-9._-]");
      // Sorted and unique: one set has one encoding.
      if (i > 0 && !(cpu.features[i - 1] < feature))
        return fail(where + " CPU features are not sorted and unique at '" +
                    feature + "'");
    }
    return true;
  }

  bool targets() {
    const std::vector<uint32_t> &kinds = layout.sectionKinds;
    std::vector<int> described(kinds.size(), 0);
    for (const ManifestTarget &target : manifest.targets) {
      if (target.section >= kinds.size())
        return fail("target descriptor of section " +
                    std::to_string(target.section) +
                    ", but the section table has " +
                    std::to_string(kinds.size()));
      std::string where =
          "target descriptor of section " + std::to_string(target.section);
      if (++described[target.section] > 1)
        return fail("section " + std::to_string(target.section) +
                    " has two target descriptors");
      uint32_t kind = kinds[target.section];
      // A descriptor of a section this reader does not know is skipped
      // with the section.
      if (kind > STRATA_SECTION_PARALLEL)
        continue;
      uint32_t expected = kind == STRATA_SECTION_CPU_CODE    ? STRATA_TARGET_CPU
                          : kind == STRATA_SECTION_CUDA_CODE ? STRATA_TARGET_CUDA
                                                             : 0;
      if (expected == 0)
        return fail(where + ", which holds no code");
      if (target.kind != expected)
        return fail(where + " has target kind " +
                    std::to_string(target.kind) + ", expected " +
                    std::to_string(expected) + " for its code");
      if (target.kind == STRATA_TARGET_CPU && !cpuTarget(where, target.cpu))
        return false;
    }
    for (size_t i = 0; i < kinds.size(); ++i)
      if ((kinds[i] == STRATA_SECTION_CPU_CODE ||
           kinds[i] == STRATA_SECTION_CUDA_CODE) &&
          described[i] == 0)
        return fail("code section " + std::to_string(i) +
                    " has no target descriptor");
    return true;
  }

private:
  const Manifest &manifest;
  const ArtifactLayout &layout;
  FormatError *error;
};

} // namespace

bool checkRank(size_t rank, const std::string &where, FormatError *error) {
  if (rank <= STRATA_MAX_RANK)
    return true;
  error->kind = FormatErrorKind::Corrupt;
  error->message = where + " has rank " + std::to_string(rank) +
                   ", above the limit of " + std::to_string(STRATA_MAX_RANK);
  return false;
}

bool validateManifest(const Manifest &manifest, const ArtifactLayout &layout,
                      FormatError *error) {
  Checker checker(manifest, layout, error);
  return checker.dims() && checker.states() && checker.entries() &&
         checker.targets();
}

} // namespace strata::format
