//===- thread_pool_test.cc - The session thread pool ----------------------===//
// SPDX-License-Identifier: Apache-2.0
// Loops run every index once and wake parked workers; idle workers park
// instead of spinning, so a pool between runs costs no CPU time.

#include "thread_pool.h"

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

}  // namespace
}  // namespace strata::runtime
