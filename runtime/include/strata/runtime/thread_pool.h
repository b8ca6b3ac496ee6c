//===- thread_pool.h - Worker threads shared by several sessions ----------===//
// SPDX-License-Identifier: Apache-2.0
// By default each session starts its own workers. A strata_thread_pool_t is
// a set of workers that several sessions share instead
// (strata_session_set_thread_pool), so a process serving many sessions
// keeps one thread per CPU rather than one per CPU per session.
// Thread-safety: every function may be called from any thread; any number
// of sessions may run on one pool at once (see strata_thread_pool_create).

#ifndef STRATA_RUNTIME_THREAD_POOL_H_
#define STRATA_RUNTIME_THREAD_POOL_H_

#include <stdint.h>

#include "strata/runtime/allocator.h"
#include "strata/runtime/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Most threads a pool accepts.
#define STRATA_THREAD_POOL_MAX_THREADS 1024

/// Opaque, reference-counted thread pool.
typedef struct strata_thread_pool_t strata_thread_pool_t;

/// Pool options; initialize with strata_thread_pool_options_init.
typedef struct strata_thread_pool_options_t {
  /// Threads a parallel loop runs on, the calling thread of the run
  /// included (the pool starts thread_count - 1 workers); 0 lets the
  /// runtime choose one per CPU the process may use, as for a session.
  uint32_t thread_count;
} strata_thread_pool_options_t;

/// Sets |options| to the defaults (thread_count 0).
STRATA_API_EXPORT void strata_thread_pool_options_init(
    strata_thread_pool_options_t* options);

/// Creates a pool and starts its workers. |options| may be NULL for the
/// defaults; the record comes from |allocator|, which must stay usable
/// until the last reference is released. A pool runs one parallel loop at a
/// time on all its threads: when runs of several sessions reach a loop at
/// once, their loops take turns (each waits for the one in progress, then
/// gets the whole pool). |out_pool| holds one reference, for the caller
/// (strata_thread_pool_release); each session using the pool holds
/// another, so the caller may release its reference while sessions still
/// run on it. INVALID_ARGUMENT for thread_count above
/// STRATA_THREAD_POOL_MAX_THREADS, RESOURCE_EXHAUSTED when memory or the
/// worker threads cannot be had.
STRATA_API_EXPORT strata_status_t strata_thread_pool_create(
    const strata_thread_pool_options_t* options, strata_allocator_t allocator,
    strata_thread_pool_t** out_pool);

/// Adds a reference; NULL is allowed.
STRATA_API_EXPORT void strata_thread_pool_retain(strata_thread_pool_t* pool);

/// Drops a reference; the last one stops and joins the workers and frees
/// the pool. NULL is allowed.
STRATA_API_EXPORT void strata_thread_pool_release(strata_thread_pool_t* pool);

/// The threads a loop runs on, the caller's included (thread_count as
/// resolved at creation: never 0).
STRATA_API_EXPORT uint32_t
strata_thread_pool_thread_count(const strata_thread_pool_t* pool);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_THREAD_POOL_H_
