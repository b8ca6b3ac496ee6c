//===- thread_pool_test.cc - The session thread pool ----------------------===//
// SPDX-License-Identifier: Apache-2.0
// Loops run every index once and wake parked workers; idle workers park
// instead of spinning, so a pool between runs costs no CPU time.

#include "thread_pool.h"

#include "kernels/attention_f32.h"
#include "kernels/matmul_f32.h"
#include "strata_kernel_abi.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
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
    pool.parallelFor(hits.size(), [&](size_t i) { hits[i].fetch_add(1); });
  }
  for (const auto& hit : hits) EXPECT_EQ(hit.load(), 50);
}

TEST(ThreadPoolTest, IdleWorkersBurnAlmostNoCpu) {
  ThreadPool pool(3);
  std::atomic<int> ran{0};
  pool.parallelFor(8, [&](size_t) { ran.fetch_add(1); });
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
  pool.parallelFor(2, [](size_t) {});
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::atomic<int> started{0};
    std::atomic<bool> timedOut{false};
    pool.parallelFor(2, [&](size_t) {
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
    pool.parallelFor(16, [&](size_t) { total.fetch_add(1); });
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
        pool.parallelFor(hits[c].size(), [&](size_t i) {
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
  pool.parallelFor(4, [&](size_t) {
    pool.parallelFor(3, [&](size_t) { inner.fetch_add(1); });
  });
  EXPECT_EQ(inner.load(), 12);
}

TEST(ThreadPoolTest, DestroysParkedPool) {
  for (int i = 0; i < 5; ++i) {
    ThreadPool pool(3);
    pool.parallelFor(4, [](size_t) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::atomic<int> gCancelPolls{0};
std::atomic<bool> gPolledOffCaller{false};
std::thread::id gCaller;
void countCancel() {
  gCancelPolls.fetch_add(1);
  if (std::this_thread::get_id() != gCaller) gPolledOffCaller.store(true);
}

// The cancel handler runs at each import's start on the run's thread, but
// never from a worker or from inside a task (nested loops there included).
TEST(ThreadPoolTest, CancelIsPolledOnTheRunThreadOnly) {
  ThreadPool pool(3);
  ScopedCurrentPool current(&pool);
  std::atomic<bool> requested{false};
  ScopedCancelRequest cancel(&requested, &countCancel);
  gCaller = std::this_thread::get_id();
  gCancelPolls.store(0);
  std::atomic<int> innerSlices{0};
  auto outer = [](void* context, int64_t, int64_t) {
    strataRtParallelFor(
        [](void* c, int64_t, int64_t) {
          static_cast<std::atomic<int>*>(c)->fetch_add(1);
        },
        context, 0, 8, 1 << 20);
  };
  strataRtParallelFor(outer, &innerSlices, 0, 64, 1 << 20);
  EXPECT_EQ(gCancelPolls.load(), 0);  // not requested
  requested.store(true);
  strataRtParallelFor(outer, &innerSlices, 0, 64, 1 << 20);
  EXPECT_EQ(gCancelPolls.load(), 1);
  EXPECT_FALSE(gPolledOffCaller.load());
  EXPECT_GT(innerSlices.load(), 0);
  // The kernels poll before touching their (here empty) problem.
  int64_t params[STRATA_MM_PARAM_COUNT] = {};
  kernels::strataMatmulF32(params);
  EXPECT_EQ(gCancelPolls.load(), 2);
  int64_t attention[STRATA_ATTN_PARAM_COUNT] = {};
  kernels::strataAttentionF32(attention);
  EXPECT_EQ(gCancelPolls.load(), 3);
}

TEST(ThreadPoolTest, CancelRequestEndsWithItsScope) {
  std::atomic<bool> requested{true};
  { ScopedCancelRequest cancel(&requested, &countCancel); }
  std::atomic<int> slices{0};
  gCancelPolls.store(0);
  strataRtParallelFor(
      [](void* c, int64_t, int64_t) {
        static_cast<std::atomic<int>*>(c)->fetch_add(1);
      },
      &slices, 0, 4, 1);
  EXPECT_EQ(slices.load(), 1);
  EXPECT_EQ(gCancelPolls.load(), 0);
}

}  // namespace
}  // namespace strata::runtime
