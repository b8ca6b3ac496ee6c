//===- module_internal.h - The module record, shared with session.cc ------===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_RUNTIME_SRC_MODULE_INTERNAL_H_
#define STRATA_RUNTIME_SRC_MODULE_INTERNAL_H_

#include <array>
#include <atomic>
#include <vector>

#include "artifact.h"
#include "native_code.h"
#include "strata/runtime/module.h"

namespace strata::runtime {

/// The public signature of one entry plus the storage it points into.
struct EntryRecord {
  std::vector<std::array<strata_dim_t, STRATA_MAX_RANK>> inputDims;
  std::vector<std::array<strata_dim_t, STRATA_MAX_RANK>> outputDims;
  std::vector<strata_tensor_signature_t> inputs;
  std::vector<strata_tensor_signature_t> outputs;
  strata_entry_signature_t signature{};
  /// Index into Manifest::entries.
  size_t index = 0;
  /// The resolved entry point.
  void* function = nullptr;
};

/// The public signature of one state tensor plus the storage it points
/// into.
struct StateRecord {
  std::array<strata_dim_t, STRATA_MAX_RANK> dims{};
  strata_state_signature_t signature{};
};

}  // namespace strata::runtime

struct strata_module_t {
  std::atomic<int> references{1};
  strata_allocator_t allocator{};
  /// The file mapping of strata_module_load_file, or null.
  void* mapping = nullptr;
  size_t mappingSize = 0;
  strata::runtime::ArtifactView view;
  strata::runtime::Manifest manifest;
  std::vector<strata::runtime::EntryRecord> entries;
  std::vector<strata_symbolic_dim_t> dims;
  std::vector<strata::runtime::StateRecord> states;
  /// The CPU code's target descriptor, in |manifest|.
  const strata::format::CpuTarget* cpuTarget = nullptr;
  strata::runtime::NativeCode code;
  /// Bit i: the code imports the runtime's import i (importName).
  uint32_t imports = 0;
};

#endif  // STRATA_RUNTIME_SRC_MODULE_INTERNAL_H_
