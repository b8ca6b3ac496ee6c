//===- session_cancel_test.cc - Cancelling a run in progress --------------===//
// SPDX-License-Identifier: Apache-2.0
// The loops entry issues one parallel loop per iteration and calls a hook
// on the run's thread before each, so a cancel lands at a known point; a
// second thread cancels a real run. After each cancel the same session
// runs again with correct outputs and no buffer leaks.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "status_matchers.h"
#include "strata/runtime/runtime.hpp"
#include "test_artifacts.h"

namespace strata::testing {
namespace {


// The system allocator, counting the blocks not yet given back (all calls
// come from the run's thread; the test reads it after the run).
struct CountingAllocator {
  std::atomic<int> live{0};
  strata_allocator_t get() { return {this, &CountingAllocator::allocate}; }
  static strata_status_t allocate(void* self, size_t size, size_t alignment,
                                  void* ptr_to_free, void** out_ptr) {
    auto* a = static_cast<CountingAllocator*>(self);
    if (ptr_to_free) {
      a->live.fetch_sub(1);
      std::free(ptr_to_free);
      return nullptr;
    }
    a->live.fetch_add(1);
    *out_ptr = std::aligned_alloc(alignment,
                                  (size + alignment) / alignment * alignment);
    return nullptr;
  }
};

// What the kernel's hook does: counts its calls, cancels at call |cancelAt|
// and reports that the run has started.
struct Hook {
  strata_session_t* session = nullptr;
  int64_t cancelAt = -1;
  std::atomic<int64_t> calls{0};
  std::atomic<bool> started{false};
  static void call(void* self, int64_t i) {
    auto* h = static_cast<Hook*>(self);
    h->calls.fetch_add(1);
    if (i == h->cancelAt) strata_session_cancel(h->session);
    h->started.store(true);
  }
};

class SessionCancelTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    STRATA_ASSERT_OK(module.load());
    strata_session_options_t options;
    strata_session_options_init(&options);
    options.thread_count = GetParam();
    STRATA_ASSERT_OK(strata_session_create(module.get(), &options,
                                           allocator.get(), &session));
    std::vector<float> x(kLoopsElements);
    for (int64_t i = 0; i < kLoopsElements; ++i) x[i] = static_cast<float>(i);
    const int64_t dims[1] = {kLoopsElements};
    STRATA_ASSERT_OK(strata_tensor_create_copy(
        STRATA_DTYPE_F32, 1, dims, x.data(), x.size() * sizeof(float),
        strata_allocator_system(), &tx));
  }
  void TearDown() override {
    strata_tensor_release(tx);
    strata_session_release(session);
    EXPECT_EQ(allocator.live.load(), 0);
  }

  // Runs loops(x, n) with |hook| (none if null).
  strata_status_t runLoops(int64_t n, Hook* hook, strata_tensor_t** y) {
    const int64_t hookDims[1] = {2};
    const int64_t hookValues[2] = {
        hook ? reinterpret_cast<int64_t>(&Hook::call) : 0,
        reinterpret_cast<int64_t>(hook)};
    strata_tensor_t* tn = nullptr;
    strata_tensor_t* th = nullptr;
    strata_status_t status = strata_tensor_create_copy(
        STRATA_DTYPE_I64, 0, nullptr, &n, sizeof(n), strata_allocator_system(),
        &tn);
    if (!status) {
      status = strata_tensor_create_copy(STRATA_DTYPE_I64, 1, hookDims,
                                         hookValues, sizeof(hookValues),
                                         strata_allocator_system(), &th);
    }
    if (!status) {
      const strata_tensor_t* inputs[3] = {tx, tn, th};
      status = strata_session_run(session, "loops", inputs, 3, y, 1);
    }
    strata_tensor_release(tn);
    strata_tensor_release(th);
    return status;
  }

  // A normal run of |n| loops succeeds with y = x + n.
  void expectNormalRun(int64_t n) {
    strata_tensor_t* y = nullptr;
    STRATA_ASSERT_OK(runLoops(n, nullptr, &y));
    const float* out = static_cast<const float*>(strata_tensor_const_data(y));
    for (int64_t i = 0; i < kLoopsElements; ++i) {
      ASSERT_EQ(out[i], static_cast<float>(i + n)) << "element " << i;
    }
    strata_tensor_release(y);
  }

  CountingAllocator allocator;
  LoadedModule module{loopsArtifact()};
  strata_session_t* session = nullptr;
  strata_tensor_t* tx = nullptr;
};

TEST_P(SessionCancelTest, CancelStopsAtTheNextLoop) {
  Hook hook;
  hook.session = session;
  hook.cancelAt = 3;
  strata_tensor_t* y = nullptr;
  auto [code, message] = consumeStatus(runLoops(100, &hook, &y));
  EXPECT_EQ(code, STRATA_STATUS_CANCELLED) << message;
  EXPECT_NE(message.find("cancelled"), std::string::npos) << message;
  EXPECT_EQ(y, nullptr);
  // The loop right after the cancel did not run, nor anything after it.
  EXPECT_EQ(hook.calls.load(), 4);
  // The output buffer of the cancelled run went back to the cache.
  EXPECT_GE(strata_session_trim(session), kLoopsElements * sizeof(float));
  expectNormalRun(5);
  expectNormalRun(0);
}

TEST_P(SessionCancelTest, CancelOutsideARunIsDropped) {
  strata_session_cancel(session);
  expectNormalRun(7);
  strata_session_cancel(nullptr);  // allowed, does nothing
}

TEST_P(SessionCancelTest, CancelFromAnotherThread) {
  for (int round = 0; round < 3; ++round) {
    Hook hook;
    strata_tensor_t* y = nullptr;
    strata_status_t status = nullptr;
    // Far more loops than the test waits for: only a cancel ends it soon.
    std::thread runner(
        [&] { status = runLoops(int64_t{1} << 20, &hook, &y); });
    while (!hook.started.load()) std::this_thread::yield();
    strata_session_cancel(session);
    runner.join();
    auto [code, message] = consumeStatus(status);
    EXPECT_EQ(code, STRATA_STATUS_CANCELLED) << message;
    EXPECT_EQ(y, nullptr);
    EXPECT_LT(hook.calls.load(), int64_t{1} << 20);
    expectNormalRun(3);
  }
}

TEST_P(SessionCancelTest, RuntimeHppCancel) {
  // The wrapper forwards to the same session.
  Module wrapped(module.get());
  strata_module_retain(module.get());
  Session cxx;
  ASSERT_TRUE(Session::create(wrapped, &cxx, GetParam()).ok());
  Hook hook;
  hook.session = cxx.get();
  hook.cancelAt = 0;
  Tensor x, n, h;
  std::vector<float> xv(kLoopsElements, 1.0f);
  ASSERT_TRUE(Tensor::fromData(STRATA_DTYPE_F32, {kLoopsElements}, xv.data(),
                               xv.size() * sizeof(float), &x)
                  .ok());
  const int64_t loops = 10;
  ASSERT_TRUE(
      Tensor::fromData(STRATA_DTYPE_I64, {}, &loops, sizeof(loops), &n).ok());
  const int64_t hv[2] = {reinterpret_cast<int64_t>(&Hook::call),
                         reinterpret_cast<int64_t>(&hook)};
  ASSERT_TRUE(Tensor::fromData(STRATA_DTYPE_I64, {2}, hv, sizeof(hv), &h).ok());
  std::vector<Tensor> outputs;
  Status status = cxx.run("loops", {&x, &n, &h}, &outputs);
  EXPECT_EQ(status.code(), STRATA_STATUS_CANCELLED) << status.toString();
  EXPECT_EQ(hook.calls.load(), 1);
  // A cancel before the run is dropped: the next run completes.
  cxx.cancel();
  Tensor none;
  const int64_t zero[2] = {0, 0};
  ASSERT_TRUE(
      Tensor::fromData(STRATA_DTYPE_I64, {2}, zero, sizeof(zero), &none).ok());
  status = cxx.runNamed("loops", {{"hook", &none}, {"x", &x}, {"n", &n}}, {},
                        &outputs);
  ASSERT_TRUE(status.ok()) << status.toString();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].data<float>()[kLoopsElements - 1], 11.0f);
}

// One thread (loops run serially on the caller) and a pool of three.
INSTANTIATE_TEST_SUITE_P(Threads, SessionCancelTest, ::testing::Values(1u, 3u));

}  // namespace
}  // namespace strata::testing
