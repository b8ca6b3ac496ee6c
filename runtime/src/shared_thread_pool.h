//===- shared_thread_pool.h - The record of a strata_thread_pool_t --------===//
// SPDX-License-Identifier: Apache-2.0
// Shared with session.cc, whose runs use the pool a session was given.

#ifndef STRATA_RUNTIME_SRC_SHARED_THREAD_POOL_H_
#define STRATA_RUNTIME_SRC_SHARED_THREAD_POOL_H_

#include <atomic>

#include "strata/runtime/thread_pool.h"
#include "thread_pool.h"

struct strata_thread_pool_t {
  /// Throws as ThreadPool's constructor does.
  strata_thread_pool_t(uint32_t threads, strata_allocator_t allocator)
      : allocator(allocator), pool(threads) {}
  std::atomic<int> references{1};
  strata_allocator_t allocator;
  /// Safe for loops started from several threads at once (they take turns).
  strata::runtime::ThreadPool pool;
};

#endif  // STRATA_RUNTIME_SRC_SHARED_THREAD_POOL_H_
