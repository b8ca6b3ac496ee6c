//===- allocator.h - Host allocator interface ------------------------------===//
// SPDX-License-Identifier: Apache-2.0
// Every allocating runtime call takes a strata_allocator_t so embedders can
// route host memory through their own arena.

#ifndef STRATA_RUNTIME_ALLOCATOR_H_
#define STRATA_RUNTIME_ALLOCATOR_H_

#include "strata/runtime/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Allocation callback: returns |size| bytes aligned to |alignment| (a power
/// of two, at least sizeof(void*)) in |*out_ptr|, or a RESOURCE_EXHAUSTED
/// status. Freeing passes the pointer back with |size| 0.
typedef strata_status_t (*strata_allocator_fn_t)(void* self, size_t size,
                                                 size_t alignment,
                                                 void* ptr_to_free,
                                                 void** out_ptr);

/// A host allocator: a context pointer plus one callback.
typedef struct strata_allocator_t {
  void* self;
  strata_allocator_fn_t fn;
} strata_allocator_t;

/// The libc allocator (aligned_alloc/free).
STRATA_API_EXPORT strata_allocator_t strata_allocator_system(void);

/// Allocates |size| bytes with |alignment| through |allocator|. A zero
/// |size| is allowed and yields a unique pointer. Overflowing or absurd
/// requests return RESOURCE_EXHAUSTED instead of crashing.
STRATA_API_EXPORT strata_status_t strata_allocator_malloc(
    strata_allocator_t allocator, size_t size, size_t alignment,
    void** out_ptr);

/// Frees |ptr| (NULL allowed) through |allocator|.
STRATA_API_EXPORT void strata_allocator_free(strata_allocator_t allocator,
                                             void* ptr);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_ALLOCATOR_H_
