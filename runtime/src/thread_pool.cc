//===- thread_pool.cc - The runtime's worker threads ----------------------===//
// SPDX-License-Identifier: Apache-2.0
// Workers spin briefly on the loop generation before sleeping: a decode step
// issues ~100 small loops back to back, and waking a sleeping thread costs
// tens of microseconds each time.

#include "thread_pool.h"

#include <sched.h>

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define STRATA_CPU_RELAX() _mm_pause()
#else
#define STRATA_CPU_RELAX() ((void)0)
#endif

namespace strata::runtime {
namespace {

thread_local ThreadPool* tCurrentPool = nullptr;
// True while this thread runs a task: nested loops run serially.
thread_local bool tInTask = false;

// Spin iterations (~30-60 us) before a worker blocks.
constexpr int kSpinIterations = 20000;

}  // namespace

ThreadPool::ThreadPool(uint32_t threads) {
  for (uint32_t i = 1; i < threads; ++i) {
    workers_.emplace_back([this] { workerMain(); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::runTasks() {
  bool wasInTask = tInTask;
  tInTask = true;
  for (;;) {
    size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= count_) break;
    task_(context_, i);
  }
  tInTask = wasInTask;
}

void ThreadPool::workerMain() {
  uint64_t seen = 0;
  for (;;) {
    uint64_t current = generation_.load(std::memory_order_acquire);
    for (int spin = 0; current == seen && spin < kSpinIterations; ++spin) {
      STRATA_CPU_RELAX();
      current = generation_.load(std::memory_order_acquire);
    }
    if (current == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] {
        return generation_.load(std::memory_order_acquire) != seen;
      });
      current = generation_.load(std::memory_order_acquire);
    }
    seen = current;
    if (stop_.load(std::memory_order_acquire)) return;
    runTasks();
    busy_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::parallelFor(size_t count, void (*task)(void*, size_t),
                             void* context) {
  if (tInTask || workers_.empty() || count <= 1) {
    bool wasInTask = tInTask;
    tInTask = true;
    for (size_t i = 0; i < count; ++i) task(context, i);
    tInTask = wasInTask;
    return;
  }
  task_ = task;
  context_ = context;
  count_ = count;
  next_.store(0, std::memory_order_relaxed);
  busy_.store(static_cast<uint32_t>(workers_.size()),
              std::memory_order_relaxed);
  {
    // Publishing under the lock pairs with the sleepers' predicate check.
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  wake_.notify_all();
  runTasks();
  // Every worker joins every generation, so wait for all of them: the
  // loop's state must not change while one is still reading it.
  while (busy_.load(std::memory_order_acquire) != 0) STRATA_CPU_RELAX();
}

ThreadPool* currentThreadPool() { return tCurrentPool; }

ScopedCurrentPool::ScopedCurrentPool(ThreadPool* pool)
    : previous_(tCurrentPool) {
  tCurrentPool = pool;
}

ScopedCurrentPool::~ScopedCurrentPool() { tCurrentPool = previous_; }

uint32_t defaultThreadCount() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<uint32_t>(n);
  }
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? n : 1;
}

}  // namespace strata::runtime
