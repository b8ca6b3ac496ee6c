//===- thread_pool.h - The runtime's worker threads -----------------------===//
// SPDX-License-Identifier: Apache-2.0
// A fixed set of workers that, with the calling thread, run the tiles of one
// parallel loop at a time (as IREE's workgroups). Kernels the generated code
// imports (kernels/) split their work with parallelFor on the pool of the
// session whose run is in progress on this thread (ScopedCurrentPool).
// Several sessions may share one pool, so loops may be started from several
// threads at once: they take turns.

#ifndef STRATA_RUNTIME_SRC_THREAD_POOL_H_
#define STRATA_RUNTIME_SRC_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace strata::runtime {

class ThreadPool {
 public:
  /// A pool that runs loops on |threads| threads in all: the caller plus
  /// threads - 1 workers (none for 0 or 1). Throws std::system_error, with
  /// no worker left running, when a worker cannot be started (as the
  /// |failStartForTesting|-th one, counting from 1, always cannot).
  explicit ThreadPool(uint32_t threads, uint32_t failStartForTesting = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Threads that run a loop, the caller included.
  uint32_t size() const { return static_cast<uint32_t>(workers_.size()) + 1; }

  /// Runs task(context, i) for every i in [0, count), spread over the pool,
  /// and returns when all are done. Tasks must not throw. A loop started
  /// from inside a task runs serially on that thread. Callable from any
  /// number of threads: a loop started while another thread's loop is in
  /// progress waits for it to finish, then gets the whole pool.
  void parallelFor(size_t count, void (*task)(void* context, size_t index),
                   void* context);

  template <typename F>
  void parallelFor(size_t count, const F& f) {
    parallelFor(
        count,
        [](void* context, size_t index) { (*static_cast<F*>(context))(index); },
        const_cast<void*>(static_cast<const void*>(&f)));
  }

 private:
  // One parallel loop. Two slots alternate, so a worker that wakes late for
  // an old loop finds its slot either still valid (and its tasks all
  // claimed) or marked stale; the caller never waits for such a worker.
  struct Job {
    std::atomic<uint64_t> generation{0};  // 0 while being (re)filled
    std::atomic<uint32_t> references{0};  // workers inside this slot
    void (*task)(void*, size_t) = nullptr;
    void* context = nullptr;
    size_t count = 0;
    std::atomic<size_t> next{0};
    std::atomic<size_t> remaining{0};  // tasks not yet finished
  };

  void workerMain();
  // Spins, then sleeps, until the loop generation differs from |seen|;
  // returns the new one.
  uint64_t awaitGeneration(uint64_t seen);
  void stopWorkers();
  static void runTasks(Job& job);

  std::vector<std::thread> workers_;
  // Held by the thread whose loop the pool runs: the job slots and the
  // generation have one writer at a time.
  std::mutex dispatch_;
  std::mutex mutex_;
  std::condition_variable wake_;
  // Bumped once per loop (starting at 1); workers follow it.
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  // Workers blocked (or about to block) on wake_.
  std::atomic<uint32_t> sleepers_{0};
  Job jobs_[2];
};

/// The pool loops on this thread run on (null: run serially).
ThreadPool* currentThreadPool();

/// Makes |pool| the current pool of this thread for its lifetime.
class ScopedCurrentPool {
 public:
  explicit ScopedCurrentPool(ThreadPool* pool);
  ~ScopedCurrentPool();
  ScopedCurrentPool(const ScopedCurrentPool&) = delete;
  ScopedCurrentPool& operator=(const ScopedCurrentPool&) = delete;

 private:
  ThreadPool* previous_;
};

/// Makes |*requested| the cancel request of the run in progress on this
/// thread for the object's lifetime; once it reads true, pollCancel calls
/// |onCancel|, which ends the run by a non-local return (run_checks.h).
class ScopedCancelRequest {
 public:
  ScopedCancelRequest(const std::atomic<bool>* requested, void (*onCancel)());
  ~ScopedCancelRequest();
  ScopedCancelRequest(const ScopedCancelRequest&) = delete;
  ScopedCancelRequest& operator=(const ScopedCancelRequest&) = delete;

 private:
  const std::atomic<bool>* previousRequest_;
  void (*previousHandler_)();
};

/// Ends the run in progress on this thread if its cancel was requested.
/// Generated code does not poll, so the imports call this first thing. It
/// acts only on the run's own thread outside any task: a worker, or the
/// caller inside a loop, must not skip the loop's completion.
void pollCancel();

/// Runs f(i) for i in [0, count) on the current pool, or serially.
template <typename F>
void parallelFor(size_t count, const F& f) {
  ThreadPool* pool = currentThreadPool();
  if (pool && count > 1 && pool->size() > 1) {
    pool->parallelFor(count, f);
    return;
  }
  for (size_t i = 0; i < count; ++i) f(i);
}

/// The strata_rt_parallel_for import (kernel ABI): task over slices of
/// [begin, end) on the current pool; serial below a work threshold.
extern "C" void strataRtParallelFor(void (*task)(void*, int64_t, int64_t),
                                    void* context, int64_t begin, int64_t end,
                                    int64_t work);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_THREAD_POOL_H_
