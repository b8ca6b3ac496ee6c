//===- versioned_struct.h - Copying a caller's versioned input struct -----===//
// SPDX-License-Identifier: Apache-2.0
// The public option and parameter structs start with their size as the
// caller compiled them and only ever grow at the end. A copy takes the
// fields this library knows and refuses a struct that sets fields past
// them, so no setting is silently ignored.

#ifndef STRATA_RUNTIME_SRC_VERSIONED_STRUCT_H_
#define STRATA_RUNTIME_SRC_VERSIONED_STRUCT_H_

#include <cstddef>
#include <cstring>

#include "strata/runtime/status.h"

namespace strata::runtime {

// Copies the first |size| bytes of |given| (whose first field is its
// struct_size) into |out|; |what| names the struct in errors.
inline strata_status_t copyVersioned(const void* given, size_t size, void* out,
                                     const char* what) {
  size_t givenSize = 0;
  std::memcpy(&givenSize, given, sizeof(givenSize));
  if (givenSize < size) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "%s.struct_size is %zu, smaller than any "
                              "version of the struct (%zu)",
                              what, givenSize, size);
  }
  const auto* bytes = static_cast<const unsigned char*>(given);
  for (size_t i = size; i < givenSize; ++i) {
    if (bytes[i]) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                                "%s.struct_size is %zu and sets fields this "
                                "library (struct size %zu) does not know",
                                what, givenSize, size);
    }
  }
  std::memcpy(out, given, size);
  return nullptr;
}

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_VERSIONED_STRUCT_H_
