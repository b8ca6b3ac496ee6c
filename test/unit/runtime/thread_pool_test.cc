//===- thread_pool_test.cc - The session thread pool ----------------------===//
// SPDX-License-Identifier: Apache-2.0
// Loops run every index once and wake parked workers; idle workers park
// instead of spinning, so a pool between runs costs no CPU time.

#include "thread_pool.h"

#include "kernel_context.h"
#include "kernels/attention_f32.h"
#include "kernels/matmul_f32.h"
#include "strata_kernel_abi.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <csetjmp>
#include <chrono>
#include <thread>
#include <vector>

namespace strata::runtime {
namespace {

// User + system CPU time of the whole process (every thread).
double processCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

TEST(ThreadPoolTest, RunsEveryIndexOnce) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(1000);
  for (int round = 0; round < 50; ++round) {
    pool.parallelFor(hits.size(), [&](size_t i, uint32_t) { hits[i].fetch_add(1); });
  }
  for (const auto& hit : hits) EXPECT_EQ(hit.load(), 50);
}

TEST(ThreadPoolTest, IdleWorkersBurnAlmostNoCpu) {
  ThreadPool pool(3);
  std::atomic<int> ran{0};
  pool.parallelFor(8, [&](size_t, uint32_t) { ran.fetch_add(1); });
  EXPECT_EQ(ran.load(), 8);
  const double before = processCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double burnt = processCpuSeconds() - before;
  // Two spinning workers would burn ~400 ms; parked ones a few spins.
  EXPECT_LT(burnt, 0.020) << "idle workers used " << burnt * 1e3 << " ms";
}

// After the workers parked, a new loop wakes them: each of two tasks waits
// until both have started, which only two threads at once can do (a pool
// whose worker never woke would run them one after the other and time out).
TEST(ThreadPoolTest, NewLoopWakesParkedWorkers) {
  ThreadPool pool(2);
  pool.parallelFor(2, [](size_t, uint32_t) {});
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::atomic<int> started{0};
    std::atomic<bool> timedOut{false};
    pool.parallelFor(2, [&](size_t, uint32_t) {
      started.fetch_add(1);
      auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started.load() < 2) {
        if (std::chrono::steady_clock::now() > deadline) {
          timedOut.store(true);
          return;
        }
        std::this_thread::yield();
      }
    });
    EXPECT_FALSE(timedOut.load()) << "round " << round;
    EXPECT_EQ(started.load(), 2) << "round " << round;
  }
}

// Loops back to back (the decode pattern) and with sleeps in between, so
// workers are caught both spinning and parked; every index runs once.
TEST(ThreadPoolTest, AlternatesBetweenSpinningAndParking) {
  ThreadPool pool(4);
  std::atomic<int> total{0};
  for (int round = 0; round < 40; ++round) {
    pool.parallelFor(16, [&](size_t, uint32_t) { total.fetch_add(1); });
    if (round % 8 == 7)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(total.load(), 40 * 16);
}

// Several threads start loops on one pool at once (sessions sharing it):
// the loops take turns, none loses or repeats an index, and no task of one
// loop runs while a task of another does.
TEST(ThreadPoolTest, LoopsFromSeveralThreadsTakeTurns) {
  ThreadPool pool(4);
  constexpr int kCallers = 3, kRounds = 500;
  std::vector<std::vector<std::atomic<int>>> hits(kCallers);
  for (auto& h : hits) h = std::vector<std::atomic<int>>(257);
  std::atomic<int> inFlight[kCallers] = {};
  std::atomic<bool> overlapped{false};
  std::atomic<int> ready{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      // All callers start together, so their loops do collide.
      ready.fetch_add(1);
      while (ready.load() < kCallers) std::this_thread::yield();
      for (int round = 0; round < kRounds; ++round) {
        pool.parallelFor(hits[c].size(), [&](size_t i, uint32_t) {
          inFlight[c].fetch_add(1);
          for (int other = 0; other < kCallers; ++other) {
            if (other != c && inFlight[other].load() > 0)
              overlapped.store(true);
          }
          hits[c][i].fetch_add(1);
          inFlight[c].fetch_sub(1);
        });
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  for (const auto& h : hits)
    for (const auto& hit : h) EXPECT_EQ(hit.load(), kRounds);
  EXPECT_FALSE(overlapped.load());
}

TEST(ThreadPoolTest, NestedLoopsRunSerially) {
  ThreadPool pool(2);
  std::atomic<int> inner{0};
  pool.parallelFor(4, [&](size_t, uint32_t) {
    pool.parallelFor(3, [&](size_t, uint32_t) { inner.fetch_add(1); });
  });
  EXPECT_EQ(inner.load(), 12);
}

TEST(ThreadPoolTest, DestroysParkedPool) {
  for (int i = 0; i < 5; ++i) {
    ThreadPool pool(3);
    pool.parallelFor(4, [](size_t, uint32_t) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Runs |f| as a checked run of |context| would (a trap set); returns the
// failure kind if something ended the run, 0 if |f| returned.
template <typename F>
int64_t endedRunKind(strata_rt_context_t* context, const F& f) {
  RunTrap trap;
  context->trap = &trap;
  if (setjmp(trap.jump) != 0) {
    context->trap = nullptr;
    return trap.failure.kind;
  }
  f();
  context->trap = nullptr;
  return 0;
}

void countSlice(strata_rt_context_t*, void* args, int64_t, int64_t) {
  static_cast<std::atomic<int>*>(args)->fetch_add(1);
}

// Each outer slice starts a loop with the context its task received.
void outerSlice(strata_rt_context_t* context, void* args, int64_t, int64_t) {
  strataRtParallelFor(context, countSlice, args, 0, 8, 1 << 20);
}

// A cancel request ends the run at the next import on the run's thread; a
// task's context has no cancel or trap, so loops inside tasks always finish.
TEST(ThreadPoolTest, CancelEndsTheRunAtAnImportOnTheRunThreadOnly) {
  ThreadPool pool(3);
  KernelContext kernel(&pool);
  strata_rt_context_t* context = kernel.get();
  std::atomic<bool> requested{false};
  context->cancelRequested = &requested;
  std::atomic<int> slices{0};
  EXPECT_EQ(endedRunKind(context,
                         [&] {
                           strataRtParallelFor(context, outerSlice, &slices, 0,
                                               64, 1 << 20);
                         }),
            0);
  const int perRun = slices.load();
  EXPECT_GT(perRun, 0);
  requested.store(true);
  // Tasks run every nested loop even though the run is being cancelled.
  slices.store(0);
  outerSlice(context->forTasks, &slices, 0, 1);
  EXPECT_GT(slices.load(), 0);
  // The run's own thread stops at the loop's start: no task runs.
  slices.store(0);
  EXPECT_EQ(endedRunKind(context,
                         [&] {
                           strataRtParallelFor(context, outerSlice, &slices, 0,
                                               64, 1 << 20);
                         }),
            kCancelledFailure);
  EXPECT_EQ(slices.load(), 0);
  // The kernels poll before touching their (here empty) problem.
  int64_t params[STRATA_MM_PARAM_COUNT] = {};
  EXPECT_EQ(endedRunKind(context,
                         [&] { kernels::strataMatmulF32(context, params); }),
            kCancelledFailure);
  int64_t attention[STRATA_ATTN_PARAM_COUNT] = {};
  EXPECT_EQ(
      endedRunKind(context,
                   [&] { kernels::strataAttentionF32(context, attention); }),
      kCancelledFailure);
  // Without a trap (not inside a checked run) nothing ends.
  slices.store(0);
  strataRtParallelFor(context, countSlice, &slices, 0, 4, 1);
  EXPECT_EQ(slices.load(), 1);
}

// Matmul parameters no compiler emits (an unknown B layout) end the run
// with an internal failure instead of being read as some other layout.
TEST(ThreadPoolTest, UnknownMatmulLayoutEndsTheRun) {
  KernelContext kernel;
  int64_t params[STRATA_MM_PARAM_COUNT] = {};
  params[STRATA_MM_B_LAYOUT] = STRATA_MM_LAYOUT_PANEL_BF16_PAIRS;
  EXPECT_EQ(endedRunKind(kernel.get(),
                         [&] {
                           kernels::strataMatmulF32(kernel.get(), params);
                         }),
            kInternalFailure);
}

// A cache slot or key count outside its range ends the run before any
// memory is read.
TEST(ThreadPoolTest, AttentionCacheSlotOrLengthOutOfRangeEndsTheRun) {
  KernelContext kernel;
  int64_t params[STRATA_ATTN_PARAM_COUNT] = {};
  params[STRATA_ATTN_BATCH] = params[STRATA_ATTN_HEADS] = 1;
  params[STRATA_ATTN_KV_HEADS] = params[STRATA_ATTN_SQ] = 1;
  params[STRATA_ATTN_SK] = params[STRATA_ATTN_VALUE_DIM] = 4;
  const int64_t slot = 2, length = 5;
  params[STRATA_ATTN_KV_SLOTS] = reinterpret_cast<intptr_t>(&slot);
  params[STRATA_ATTN_KV_SLOT_COUNT] = 2;
  EXPECT_EQ(endedRunKind(kernel.get(),
                         [&] {
                           kernels::strataAttentionF32(kernel.get(), params);
                         }),
            kInternalFailure);
  params[STRATA_ATTN_KV_SLOTS] = 0;
  params[STRATA_ATTN_KV_LENGTHS] = reinterpret_cast<intptr_t>(&length);
  EXPECT_EQ(endedRunKind(kernel.get(),
                         [&] {
                           kernels::strataAttentionF32(kernel.get(), params);
                         }),
            kInternalFailure);
}

// Kernel scratch that cannot be allocated ends the run with
// RESOURCE_EXHAUSTED (it used to be a thread_local vector whose bad_alloc
// crossed generated frames).
TEST(ThreadPoolTest, ScratchThatCannotBeHadEndsTheRun) {
  strata_rt_context_t context;  // no scratch at all
  int64_t params[STRATA_MM_PARAM_COUNT] = {};
  params[STRATA_MM_M] = params[STRATA_MM_N] = params[STRATA_MM_K] = 1;
  EXPECT_EQ(endedRunKind(&context,
                         [&] { kernels::strataMatmulF32(&context, params); }),
            kOutOfMemoryFailure);
  KernelScratch scratch(strata_allocator_system());
  size_t stride = 0;
  EXPECT_EQ(scratch.reserve(2, size_t{1} << 62, &stride), nullptr);
}

}  // namespace
}  // namespace strata::runtime
