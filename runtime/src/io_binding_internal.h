//===- io_binding_internal.h - The binding record, shared with session.cc -===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_RUNTIME_SRC_IO_BINDING_INTERNAL_H_
#define STRATA_RUNTIME_SRC_IO_BINDING_INTERNAL_H_

#include <vector>

#include "strata/runtime/io_binding.h"

struct strata_io_binding_t {
  strata_module_t* module = nullptr;
  strata_allocator_t allocator{};
  /// The entry's signature (borrowed from the module).
  const strata_entry_signature_t* entry = nullptr;
  /// In manifest order; null where nothing is bound.
  std::vector<const strata_tensor_t*> inputs;
  std::vector<strata_tensor_t*> boundOutputs;
  /// Owned: what the last successful run made for the unbound outputs.
  std::vector<strata_tensor_t*> madeOutputs;
  ~strata_io_binding_t();
};

#endif  // STRATA_RUNTIME_SRC_IO_BINDING_INTERNAL_H_
