//===- allocator.cc - The system allocator and allocation helpers ---------===//
// SPDX-License-Identifier: Apache-2.0
// Checks sizes and alignments before calling the callback so that a bogus
// size derived from a model becomes a status, never a crash.

#include "strata/runtime/allocator.h"

#include <cstdint>
#include <cstdlib>

namespace {

// Larger requests are refused outright: no host tensor or arena is this big,
// and it keeps size + alignment arithmetic far from overflow.
constexpr size_t kMaxAllocationBytes = size_t{1} << 46;  // 64 TiB

bool isPowerOfTwo(size_t x) { return x && !(x & (x - 1)); }

strata_status_t systemAllocate(void* /*self*/, size_t size, size_t alignment,
                               void* ptr_to_free, void** out_ptr) {
  if (ptr_to_free) {
    std::free(ptr_to_free);
    return nullptr;
  }
  // aligned_alloc wants the size to be a multiple of the alignment.
  size_t rounded = (size + alignment - 1) & ~(alignment - 1);
  if (rounded == 0) rounded = alignment;
  void* ptr = std::aligned_alloc(alignment, rounded);
  if (!ptr) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "cannot allocate %zu bytes", size);
  }
  *out_ptr = ptr;
  return nullptr;
}

}  // namespace

extern "C" {

strata_allocator_t strata_allocator_system(void) {
  return strata_allocator_t{nullptr, systemAllocate};
}

strata_status_t strata_allocator_malloc(strata_allocator_t allocator,
                                        size_t size, size_t alignment,
                                        void** out_ptr) {
  if (!out_ptr || !allocator.fn) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "allocator and out_ptr must be non-null");
  }
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if (!isPowerOfTwo(alignment)) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "alignment %zu is not a power of two", alignment);
  }
  if (size > kMaxAllocationBytes || alignment > kMaxAllocationBytes) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "allocation of %zu bytes exceeds the limit of "
                              "%zu bytes",
                              size, kMaxAllocationBytes);
  }
  void* ptr = nullptr;
  STRATA_RETURN_IF_ERROR(allocator.fn(allocator.self, size, alignment,
                                      nullptr, &ptr));
  *out_ptr = ptr;
  return nullptr;
}

void strata_allocator_free(strata_allocator_t allocator, void* ptr) {
  if (!ptr || !allocator.fn) return;
  void* unused = nullptr;
  STRATA_IGNORE_ERROR(allocator.fn(allocator.self, 0, 0, ptr, &unused));
}

}  // extern "C"
