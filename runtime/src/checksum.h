//===- checksum.h - XXH64 of artifact bytes
//--------------------------------===//
// SPDX-License-Identifier: Apache-2.0
// The artifact format's checksum (XXH64, seed 0). xxhash is used header-only,
// so the runtime gains no library dependency.

#ifndef STRATA_RUNTIME_SRC_CHECKSUM_H_
#define STRATA_RUNTIME_SRC_CHECKSUM_H_

#include <cstddef>
#include <cstdint>

namespace strata::runtime {

/// XXH64 with seed 0 of |size| bytes at |data|.
uint64_t checksum64(const void* data, size_t size);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_CHECKSUM_H_
