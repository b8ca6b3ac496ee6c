//===- thread_pool.h - The runtime's worker threads -----------------------===//
// SPDX-License-Identifier: Apache-2.0
// A fixed set of workers that, with the calling thread, run the tiles of one
// parallel loop at a time (as IREE's workgroups). Kernels the generated code
// imports (kernels/) split their work over the pool their run context names
// (run_context.h). Several sessions may share one pool, so loops may be
// started from several threads at once: they take turns.

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

  /// Runs task(context, i, thread) for every i in [0, count), spread over
  /// the pool, and returns when all are done; |thread| in [0, size()) names
  /// the pool thread running the task (0: the caller), so tasks may index
  /// per-thread scratch with it. Tasks must not throw. A loop started from
  /// inside a task runs serially on that thread (with that thread's index).
  /// Callable from any number of threads: a loop started while another
  /// thread's loop is in progress waits for it to finish, then gets the
  /// whole pool.
  void parallelFor(size_t count,
                   void (*task)(void* context, size_t index, uint32_t thread),
                   void* context);

  template <typename F>
  void parallelFor(size_t count, const F& f) {
    parallelFor(
        count,
        [](void* context, size_t index, uint32_t thread) {
          (*static_cast<F*>(context))(index, thread);
        },
        const_cast<void*>(static_cast<const void*>(&f)));
  }

 private:
  // One parallel loop. Two slots alternate, so a worker that wakes late for
  // an old loop finds its slot either still valid (and its tasks all
  // claimed) or marked stale; the caller never waits for such a worker.
  struct Job {
    std::atomic<uint64_t> generation{0};  // 0 while being (re)filled
    std::atomic<uint32_t> references{0};  // workers inside this slot
    void (*task)(void*, size_t, uint32_t) = nullptr;
    void* context = nullptr;
    size_t count = 0;
    std::atomic<size_t> next{0};
    std::atomic<size_t> remaining{0};  // tasks not yet finished
  };

  void workerMain(uint32_t thread);
  // Spins, then sleeps, until the loop generation differs from |seen|;
  // returns the new one.
  uint64_t awaitGeneration(uint64_t seen);
  void stopWorkers();
  static void runTasks(Job& job, uint32_t thread);

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

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_THREAD_POOL_H_
