//===- shared_thread_pool.cc - Worker threads shared by several sessions --===//
// SPDX-License-Identifier: Apache-2.0
// The C handle over a ThreadPool: a reference count, so that the pool lives
// as long as its creator or any session using it does.

#include "shared_thread_pool.h"

#include <cinttypes>
#include <new>
#include <system_error>

#include "cpu_quota.h"

extern "C" {

void strata_thread_pool_options_init(strata_thread_pool_options_t* options) {
  if (options) options->thread_count = 0;
}

strata_status_t strata_thread_pool_create(
    const strata_thread_pool_options_t* options, strata_allocator_t allocator,
    strata_thread_pool_t** out_pool) {
  if (!out_pool) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "out_pool must be non-null");
  }
  strata_thread_pool_options_t defaults;
  strata_thread_pool_options_init(&defaults);
  if (!options) options = &defaults;
  if (options->thread_count > STRATA_THREAD_POOL_MAX_THREADS) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "thread count %" PRIu32 " is above the limit %d",
                              options->thread_count,
                              STRATA_THREAD_POOL_MAX_THREADS);
  }
  uint32_t threads = options->thread_count;
  void* record = nullptr;
  try {
    if (threads == 0) threads = strata::runtime::defaultThreadCount();
    STRATA_RETURN_IF_ERROR(strata_allocator_malloc(
        allocator, sizeof(strata_thread_pool_t), alignof(strata_thread_pool_t),
        &record));
    *out_pool = new (record) strata_thread_pool_t(threads, allocator);
    return nullptr;
  } catch (const std::bad_alloc&) {
    strata_allocator_free(allocator, record);
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory creating a thread pool");
  } catch (const std::system_error& error) {
    strata_allocator_free(allocator, record);
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "cannot start the %" PRIu32
                              " worker threads of a pool: %s",
                              threads - 1, error.what());
  }
}

void strata_thread_pool_retain(strata_thread_pool_t* pool) {
  if (pool) pool->references.fetch_add(1, std::memory_order_relaxed);
}

void strata_thread_pool_release(strata_thread_pool_t* pool) {
  if (!pool) return;
  // acq_rel: the last owner sees every other owner's use of the pool.
  if (pool->references.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  strata_allocator_t allocator = pool->allocator;
  pool->~strata_thread_pool_t();
  strata_allocator_free(allocator, pool);
}

uint32_t strata_thread_pool_thread_count(const strata_thread_pool_t* pool) {
  return pool ? pool->pool.size() : 0;
}

}  // extern "C"
