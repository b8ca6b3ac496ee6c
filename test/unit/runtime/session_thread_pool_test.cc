//===- session_thread_pool_test.cc - Sessions running at once -------------===//
// SPDX-License-Identifier: Apache-2.0
// Several sessions of one module run concurrently, each on its own thread,
// with their own workers or one shared strata_thread_pool_t; the loops
// entry issues parallel loops big enough to run on the whole pool, so
// ThreadSanitizer sees the workers of two runs interleave. The pool is
// reference counted: releasing it before its sessions is safe.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "status_matchers.h"
#include "strata/runtime/api.h"
#include "test_artifacts.h"

namespace strata::testing {
namespace {


class SessionThreadPoolTest : public ::testing::Test {
 protected:
  void SetUp() override { STRATA_ASSERT_OK(module.load()); }

  strata_session_t* newSession(uint32_t threads = 0) {
    strata_session_options_t options;
    strata_session_options_init(&options);
    options.thread_count = threads;
    strata_session_t* session = nullptr;
    strata_status_t status = strata_session_create(
        module.get(), &options, strata_allocator_system(), &session);
    EXPECT_EQ(status, nullptr) << strata_status_message(status);
    strata_status_free(status);
    return session;
  }

  // Runs loops(x = t + i, n) |runs| times on |session|; returns how many
  // failed or gave other than y = x + n.
  int runLoops(strata_session_t* session, int t, int64_t n, int runs) {
    std::vector<float> x(kLoopsElements);
    for (int64_t i = 0; i < kLoopsElements; ++i) x[i] = float(t + i);
    const int64_t xDims[1] = {kLoopsElements}, hookDims[1] = {2};
    const int64_t hook[2] = {0, 0};
    strata_tensor_t* in[3] = {};
    int failures = 0;
    failures += strata_tensor_create_copy(
                    STRATA_DTYPE_F32, 1, xDims, x.data(), sizeof(float) * x.size(),
                    strata_allocator_system(), &in[0]) != nullptr;
    failures += strata_tensor_create_copy(STRATA_DTYPE_I64, 0, nullptr, &n,
                                          sizeof(n), strata_allocator_system(),
                                          &in[1]) != nullptr;
    failures += strata_tensor_create_copy(STRATA_DTYPE_I64, 1, hookDims, hook,
                                          sizeof(hook),
                                          strata_allocator_system(),
                                          &in[2]) != nullptr;
    for (int run = 0; run < runs && failures == 0; ++run) {
      const strata_tensor_t* inputs[3] = {in[0], in[1], in[2]};
      strata_tensor_t* y = nullptr;
      strata_status_t status =
          strata_session_run(session, "loops", inputs, 3, &y, 1);
      if (status) {
        ++failures;
        strata_status_free(status);
        continue;
      }
      const float* out = static_cast<const float*>(strata_tensor_data(y));
      for (int64_t i = 0; i < kLoopsElements; ++i) {
        if (out[i] != x[i] + float(n)) {
          ++failures;
          break;
        }
      }
      strata_tensor_release(y);
    }
    for (strata_tensor_t* tensor : in) strata_tensor_release(tensor);
    return failures;
  }

  // Runs |sessions| at once, one thread each.
  void runConcurrently(const std::vector<strata_session_t*>& sessions) {
    std::vector<int> failures(sessions.size(), 0);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < sessions.size(); ++t) {
      threads.emplace_back([&, t] {
        failures[t] = runLoops(sessions[t], int(t) * 1000, 7 + int64_t(t), 20);
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (size_t t = 0; t < failures.size(); ++t) {
      EXPECT_EQ(failures[t], 0) << "session " << t;
    }
  }

  LoadedModule module{loopsArtifact()};
};

TEST_F(SessionThreadPoolTest, PoolOptionsAndLimits) {
  strata_thread_pool_options_t options;
  strata_thread_pool_options_init(&options);
  EXPECT_EQ(options.thread_count, 0u);
  strata_thread_pool_t* pool = nullptr;
  STRATA_ASSERT_OK(
      strata_thread_pool_create(nullptr, strata_allocator_system(), &pool));
  EXPECT_GE(strata_thread_pool_thread_count(pool), 1u);  // one per CPU
  strata_thread_pool_release(pool);
  options.thread_count = 3;
  STRATA_ASSERT_OK(
      strata_thread_pool_create(&options, strata_allocator_system(), &pool));
  EXPECT_EQ(strata_thread_pool_thread_count(pool), 3u);
  strata_thread_pool_retain(pool);
  strata_thread_pool_release(pool);
  strata_thread_pool_release(pool);
  strata_thread_pool_retain(nullptr);
  strata_thread_pool_release(nullptr);
  options.thread_count = STRATA_THREAD_POOL_MAX_THREADS + 1;
  pool = nullptr;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_thread_pool_create(&options, strata_allocator_system(), &pool));
  EXPECT_EQ(pool, nullptr);
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_thread_pool_create(nullptr, strata_allocator_system(), nullptr));
  struct Refusing {
    static strata_status_t allocate(void*, size_t, size_t, void* ptr_to_free,
                                    void**) {
      if (ptr_to_free) return nullptr;
      return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED, "no memory");
    }
  };
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_RESOURCE_EXHAUSTED,
      strata_thread_pool_create(nullptr, {nullptr, &Refusing::allocate},
                                &pool));
}

TEST_F(SessionThreadPoolTest, SessionOnASharedPool) {
  strata_thread_pool_options_t options;
  strata_thread_pool_options_init(&options);
  options.thread_count = 3;
  strata_thread_pool_t* pool = nullptr;
  STRATA_ASSERT_OK(
      strata_thread_pool_create(&options, strata_allocator_system(), &pool));
  strata_session_t* session = newSession(5);
  EXPECT_EQ(runLoops(session, 0, 2, 1), 0);  // starts workers of its own
  EXPECT_EQ(strata_session_thread_pool(session), nullptr);
  STRATA_ASSERT_OK(strata_session_set_thread_pool(session, pool));
  EXPECT_EQ(strata_session_thread_pool(session), pool);
  EXPECT_EQ(strata_session_thread_count(session), 3u);
  auto [code, message] =
      consumeStatus(strata_session_set_thread_count(session, 2));
  EXPECT_EQ(code, STRATA_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(message.find("shared thread pool of 3 threads"), std::string::npos)
      << message;
  EXPECT_EQ(runLoops(session, 0, 3, 2), 0);
  // Back to workers of its own, at the count it had.
  STRATA_ASSERT_OK(strata_session_set_thread_pool(session, nullptr));
  EXPECT_EQ(strata_session_thread_count(session), 5u);
  STRATA_ASSERT_OK(strata_session_set_thread_count(session, 2));
  EXPECT_EQ(runLoops(session, 0, 1, 1), 0);
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_session_set_thread_pool(nullptr, pool));
  EXPECT_EQ(strata_session_thread_pool(nullptr), nullptr);
  strata_session_release(session);
  strata_thread_pool_release(pool);
}

// The caller's reference goes first; the sessions keep the pool alive and
// the last one to go stops its workers.
TEST_F(SessionThreadPoolTest, ReleasingThePoolBeforeItsSessionsIsSafe) {
  strata_thread_pool_options_t options;
  strata_thread_pool_options_init(&options);
  options.thread_count = 4;
  strata_thread_pool_t* pool = nullptr;
  STRATA_ASSERT_OK(
      strata_thread_pool_create(&options, strata_allocator_system(), &pool));
  strata_session_t* first = newSession();
  strata_session_t* second = newSession();
  STRATA_ASSERT_OK(strata_session_set_thread_pool(first, pool));
  STRATA_ASSERT_OK(strata_session_set_thread_pool(second, pool));
  strata_thread_pool_release(pool);
  EXPECT_EQ(runLoops(first, 0, 4, 2), 0);
  strata_session_release(first);
  EXPECT_EQ(runLoops(second, 1, 5, 2), 0);
  strata_session_release(second);  // frees the pool (ASan: no leak)
}

TEST_F(SessionThreadPoolTest, TwoSessionsShareOnePoolConcurrently) {
  strata_thread_pool_options_t options;
  strata_thread_pool_options_init(&options);
  options.thread_count = 4;
  strata_thread_pool_t* pool = nullptr;
  STRATA_ASSERT_OK(
      strata_thread_pool_create(&options, strata_allocator_system(), &pool));
  std::vector<strata_session_t*> sessions = {newSession(), newSession()};
  for (strata_session_t* session : sessions) {
    STRATA_ASSERT_OK(strata_session_set_thread_pool(session, pool));
  }
  strata_thread_pool_release(pool);
  runConcurrently(sessions);
  for (strata_session_t* session : sessions) strata_session_release(session);
}

TEST_F(SessionThreadPoolTest, SessionsWithWorkersOfTheirOwnRunConcurrently) {
  std::vector<strata_session_t*> sessions = {newSession(3), newSession(2),
                                             newSession(1)};
  runConcurrently(sessions);
  for (strata_session_t* session : sessions) strata_session_release(session);
}

}  // namespace
}  // namespace strata::testing
