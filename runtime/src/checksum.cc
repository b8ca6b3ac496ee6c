//===- checksum.cc - XXH64 of artifact bytes
//-------------------------------===//
// SPDX-License-Identifier: Apache-2.0
// Inlines xxhash (Debian's libxxhash-dev header) into this one file.

#include "checksum.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace strata::runtime {

uint64_t checksum64(const void* data, size_t size) {
  return XXH64(data, size, 0);
}

}  // namespace strata::runtime
