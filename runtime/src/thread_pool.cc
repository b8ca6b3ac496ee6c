//===- thread_pool.cc - The runtime's worker threads ----------------------===//
// SPDX-License-Identifier: Apache-2.0
// Workers spin briefly on the loop generation before sleeping: a decode step
// issues ~100 small loops back to back, and waking a sleeping thread costs
// tens of microseconds each time. The spin is bounded in time, not in
// iterations (a pause instruction takes 10 to 140 cycles depending on the
// CPU), so an idle pool costs no CPU beyond its last ~100 us.
//
// Every spin (a worker's for the next loop, the caller's for the tasks)
// yields the CPU between clock reads: Linux wakes a sleeping worker on the
// waker's CPU when it can (after 2 ms asleep, in 74% of wakes on a 2-vCPU
// AMD VM), and a spin that never yielded kept the caller (or the worker)
// off that CPU for the whole spin, so every loop took ~100 us until the
// two ran apart again; yielding lets the other thread run and the
// scheduler move one of them to the idle CPU (bursts of ten 10 us loops
// after a 2 ms gap: 318 us median, 209 with the yield, the first loop's
// wait for the wakeup left; back to back: 104 us either way).

#include "thread_pool.h"

#include <chrono>
#include <system_error>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define STRATA_CPU_RELAX() _mm_pause()
#else
#define STRATA_CPU_RELAX() ((void)0)
#endif

namespace strata::runtime {
namespace {

// True while this thread runs a task of some pool: a loop started inside
// it runs serially (the pool is busy with the enclosing loop), as that
// pool thread (tThread).
thread_local bool tInTask = false;
thread_local uint32_t tThread = 0;

// How long a worker that finds no loop spins before it sleeps: longer than
// the gaps between the parallel loops of one decode step (serial kernels on
// the caller), short enough that idle workers cost nothing measurable.
constexpr auto kSpinDuration = std::chrono::microseconds(100);
// Pauses between two reads of the clock while spinning.
constexpr unsigned kSpinsPerClockRead = 64;

}  // namespace

ThreadPool::ThreadPool(uint32_t threads, uint32_t failStartForTesting) {
  try {
    for (uint32_t i = 1; i < threads; ++i) {
      if (i == failStartForTesting)
        throw std::system_error(std::make_error_code(
            std::errc::resource_unavailable_try_again));
      workers_.emplace_back([this, i] { workerMain(i); });
    }
  } catch (...) {
    // The workers that did start are stopped and joined: a joinable
    // std::thread destroyed by the unwinding would call std::terminate.
    stopWorkers();
    throw;
  }
}

ThreadPool::~ThreadPool() { stopWorkers(); }

void ThreadPool::stopWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

void ThreadPool::runTasks(Job& job, uint32_t thread) {
  const bool wasInTask = tInTask;
  const uint32_t wasThread = tThread;
  tInTask = true;
  tThread = thread;
  for (;;) {
    size_t i = job.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= job.count) break;
    job.task(job.context, i, thread);
    job.remaining.fetch_sub(1, std::memory_order_acq_rel);
  }
  tInTask = wasInTask;
  tThread = wasThread;
}

uint64_t ThreadPool::awaitGeneration(uint64_t seen) {
  uint64_t current = generation_.load(std::memory_order_acquire);
  if (current != seen) return current;
  const auto deadline = std::chrono::steady_clock::now() + kSpinDuration;
  for (unsigned spin = 1;; ++spin) {
    STRATA_CPU_RELAX();
    current = generation_.load(std::memory_order_acquire);
    if (current != seen) return current;
    if (spin % kSpinsPerClockRead == 0) {
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::yield();
    }
  }
  std::unique_lock<std::mutex> lock(mutex_);
  // Announced before the predicate reads the generation; parallelFor
  // publishes before it reads the count (both seq_cst), so either this
  // check sees the new loop or parallelFor sees a sleeper and notifies.
  sleepers_.fetch_add(1);
  wake_.wait(lock, [&] { return generation_.load() != seen; });
  sleepers_.fetch_sub(1);
  return generation_.load(std::memory_order_acquire);
}

void ThreadPool::workerMain(uint32_t thread) {
  uint64_t seen = 0;
  for (;;) {
    const uint64_t current = awaitGeneration(seen);
    seen = current;
    if (stop_.load(std::memory_order_acquire)) return;
    Job& job = jobs_[current & 1];
    // Enter the slot, then check it still holds this loop (the caller marks
    // a slot stale before it waits for the slot to empty; seq_cst orders
    // the two handshakes).
    job.references.fetch_add(1);
    if (job.generation.load() == current) runTasks(job, thread);
    job.references.fetch_sub(1);
  }
}

void ThreadPool::parallelFor(size_t count,
                             void (*task)(void*, size_t, uint32_t),
                             void* context) {
  if (tInTask || workers_.empty() || count <= 1) {
    const bool wasInTask = tInTask;
    const uint32_t thread = tInTask ? tThread : 0;
    tInTask = true;
    for (size_t i = 0; i < count; ++i) task(context, i, thread);
    tInTask = wasInTask;
    return;
  }
  std::lock_guard<std::mutex> turn(dispatch_);
  const uint64_t generation =
      generation_.load(std::memory_order_relaxed) + 1;
  Job& job = jobs_[generation & 1];
  job.generation.store(0);
  while (job.references.load() != 0) STRATA_CPU_RELAX();
  job.task = task;
  job.context = context;
  job.count = count;
  job.next.store(0, std::memory_order_relaxed);
  job.remaining.store(count, std::memory_order_relaxed);
  job.generation.store(generation);
  generation_.store(generation);
  // Spinning workers see the new generation by themselves; sleeping ones
  // are woken. Taking the lock orders the notification after a sleeper's
  // predicate check (awaitGeneration).
  if (sleepers_.load() > 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    wake_.notify_all();
  }
  runTasks(job, 0);
  // Wait for the tasks, not the workers: one that has not woken up yet
  // finds every task claimed.
  for (unsigned spin = 1;
       job.remaining.load(std::memory_order_acquire) != 0; ++spin) {
    STRATA_CPU_RELAX();
    if (spin % kSpinsPerClockRead == 0) std::this_thread::yield();
  }
}

}  // namespace strata::runtime
