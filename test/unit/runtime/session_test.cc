//===- session_test.cc - Running entry points
//------------------------------===//
// SPDX-License-Identifier: Apache-2.0
// End-to-end runs of the test kernels with numeric checks, every input
// validation error, malformed results from generated code, ownership.

#include "strata/runtime/session.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "status_matchers.h"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

// Owns the tensors of one test.
class Tensors {
 public:
  ~Tensors() {
    for (strata_tensor_t* t : owned_) strata_tensor_release(t);
  }
  template <typename T>
  strata_tensor_t* make(strata_dtype_t dtype, std::vector<int64_t> dims,
                        std::vector<T> values) {
    strata_tensor_t* t = nullptr;
    strata_status_t status = strata_tensor_create_copy(
        dtype, static_cast<uint32_t>(dims.size()), dims.data(), values.data(),
        values.size() * sizeof(T), strata_allocator_system(), &t);
    EXPECT_EQ(status, nullptr) << strata_status_message(status);
    strata_status_free(status);
    owned_.push_back(t);
    return t;
  }
  strata_tensor_t* f32(std::vector<int64_t> dims) {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    std::vector<float> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i);
    return make<float>(STRATA_DTYPE_F32, dims, values);
  }
  void adopt(strata_tensor_t* t) { owned_.push_back(t); }

 private:
  std::vector<strata_tensor_t*> owned_;
};

// The system allocator, counting the blocks it has handed out and not had
// back, and failing its |failAt|-th request (counting from 0) if set.
struct TestAllocator {
  int live = 0;
  int calls = 0;
  int failAt = -1;
  strata_allocator_t get() { return {this, &TestAllocator::allocate}; }
  static strata_status_t allocate(void* self, size_t size, size_t alignment,
                                  void* ptr_to_free, void** out_ptr) {
    auto* a = static_cast<TestAllocator*>(self);
    if (ptr_to_free) {
      --a->live;
      std::free(ptr_to_free);
      return nullptr;
    }
    if (a->calls++ == a->failAt) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                                "injected allocation failure");
    }
    ++a->live;
    *out_ptr =
        std::aligned_alloc(alignment, (size + alignment) / alignment * alignment);
    return nullptr;
  }
};

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STRATA_ASSERT_OK(module.load());
    STRATA_ASSERT_OK(strata_session_create(
        module.get(), nullptr, strata_allocator_system(), &session));
  }
  void TearDown() override { strata_session_release(session); }

  // Runs |entry| and expects |code| with |needle| in the message.
  void expectRunFails(const char* entry,
                      std::vector<const strata_tensor_t*> inputs,
                      size_t outputCount, strata_status_code_t code,
                      const std::string& needle) {
    std::vector<strata_tensor_t*> outputs(outputCount + 1, nullptr);
    auto [actual, message] = consumeStatus(
        strata_session_run(session, entry, inputs.data(), inputs.size(),
                           outputs.data(), outputCount));
    EXPECT_EQ(actual, code) << message;
    EXPECT_NE(message.find(needle), std::string::npos)
        << "'" << message << "' lacks '" << needle << "'";
    for (strata_tensor_t* t : outputs) EXPECT_EQ(t, nullptr);
  }

  LoadedModule module{standardArtifact()};
  strata_session_t* session = nullptr;
  Tensors tensors;
};

TEST_F(SessionTest, AddBiasAtSeveralBatchSizes) {
  for (int64_t batch : {1, 3, 8, 0}) {
    const strata_tensor_t* x = tensors.f32({batch, 4});
    strata_tensor_t* y = nullptr;
    STRATA_ASSERT_OK(strata_session_run(session, "add_bias", &x, 1, &y, 1));
    tensors.adopt(y);
    ASSERT_EQ(strata_tensor_dtype(y), STRATA_DTYPE_F32);
    ASSERT_EQ(strata_tensor_rank(y), 2u);
    EXPECT_EQ(strata_tensor_dims(y)[0], batch);
    EXPECT_EQ(strata_tensor_dims(y)[1], 4);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(strata_tensor_const_data(y)) % 64,
              0u);
    const float* out = static_cast<const float*>(strata_tensor_const_data(y));
    for (int64_t i = 0; i < batch * 4; ++i) {
      EXPECT_EQ(out[i], static_cast<float>(i) + static_cast<float>(i % 4 + 1));
    }
  }
}

TEST_F(SessionTest, TwoOutputsWithSharedSymbolicDim) {
  const strata_tensor_t* inputs[2] = {
      tensors.f32({5, 3}),
      tensors.make<int32_t>(STRATA_DTYPE_I32, {5}, {10, 20, 30, 40, 50})};
  strata_tensor_t* outputs[2] = {};
  STRATA_ASSERT_OK(
      strata_session_run(session, "two_outputs", inputs, 2, outputs, 2));
  tensors.adopt(outputs[0]);
  tensors.adopt(outputs[1]);
  ASSERT_EQ(strata_tensor_dtype(outputs[1]), STRATA_DTYPE_I64);
  ASSERT_EQ(strata_tensor_element_count(outputs[0]), 5u);
  const float* sums = static_cast<const float*>(strata_tensor_data(outputs[0]));
  const int64_t* doubled =
      static_cast<const int64_t*>(strata_tensor_data(outputs[1]));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(sums[i], static_cast<float>(9 * i + 3 + 10 * (i + 1)));
    EXPECT_EQ(doubled[i], 20 * (i + 1));
  }
}

TEST_F(SessionTest, RankZeroTensors) {
  const strata_tensor_t* x = tensors.make<float>(STRATA_DTYPE_F32, {}, {2.5f});
  strata_tensor_t* y = nullptr;
  STRATA_ASSERT_OK(strata_session_run(session, "scale", &x, 1, &y, 1));
  tensors.adopt(y);
  EXPECT_EQ(strata_tensor_rank(y), 0u);
  EXPECT_EQ(*static_cast<const float*>(strata_tensor_data(y)), 7.5f);
}

TEST_F(SessionTest, TenArgumentsPassPartlyOnTheStack) {
  std::vector<const strata_tensor_t*> inputs;
  for (int i = 0; i < 8; ++i) {
    inputs.push_back(tensors.make<float>(
        STRATA_DTYPE_F32, {4}, {1.0f * i, 2.0f * i, 3.0f * i, 4.0f * i}));
  }
  strata_tensor_t* y = nullptr;
  STRATA_ASSERT_OK(
      strata_session_run(session, "sum8", inputs.data(), 8, &y, 1));
  tensors.adopt(y);
  const float* out = static_cast<const float*>(strata_tensor_data(y));
  for (int j = 0; j < 4; ++j) EXPECT_EQ(out[j], 28.0f * (j + 1));
}

TEST_F(SessionTest, UnknownEntryIsNotFound) {
  expectRunFails("decode", {}, 0, STRATA_STATUS_NOT_FOUND, "no entry 'decode'");
}

TEST_F(SessionTest, WrongInputAndOutputCounts) {
  const strata_tensor_t* x = tensors.f32({2, 4});
  expectRunFails("add_bias", {}, 1, STRATA_STATUS_INVALID_ARGUMENT,
                 "entry 'add_bias' takes 1 inputs, got 0");
  expectRunFails("add_bias", {x, x}, 1, STRATA_STATUS_INVALID_ARGUMENT,
                 "takes 1 inputs, got 2");
  expectRunFails("add_bias", {x}, 2, STRATA_STATUS_INVALID_ARGUMENT,
                 "entry 'add_bias' has 1 outputs, got room for 2");
  expectRunFails("add_bias", {nullptr}, 1, STRATA_STATUS_INVALID_ARGUMENT,
                 "input 0 ('x') is null");
}

TEST_F(SessionTest, WrongDtypeRankAndStaticDim) {
  expectRunFails(
      "add_bias",
      {tensors.make<int32_t>(STRATA_DTYPE_I32, {1, 4}, {1, 2, 3, 4})}, 1,
      STRATA_STATUS_INVALID_ARGUMENT, "input 'x' has dtype i32, expected f32");
  expectRunFails("add_bias", {tensors.f32({4})}, 1,
                 STRATA_STATUS_INVALID_ARGUMENT,
                 "input 'x' has rank 1, expected 2");
  expectRunFails("add_bias", {tensors.f32({2, 5})}, 1,
                 STRATA_STATUS_INVALID_ARGUMENT,
                 "input 'x' dim 1 is 5, expected 4");
}

TEST_F(SessionTest, SymbolicDimAboveMaximum) {
  expectRunFails("add_bias", {tensors.f32({9, 4})}, 1,
                 STRATA_STATUS_INVALID_ARGUMENT,
                 "input 'x' dim 0 (batch) is 9, above the compiled maximum 8");
}

TEST_F(SessionTest, SymbolicDimBoundInconsistently) {
  expectRunFails(
      "two_outputs",
      {tensors.f32({5, 3}),
       tensors.make<int32_t>(STRATA_DTYPE_I32, {4}, {1, 2, 3, 4})},
      2, STRATA_STATUS_INVALID_ARGUMENT,
      "input 'b' dim 0 (sequence) is 4, but input 'a' binds 'sequence' to 5");
}

TEST_F(SessionTest, NullArguments) {
  const strata_tensor_t* x = tensors.f32({1, 4});
  strata_tensor_t* y = nullptr;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_session_run(nullptr, "add_bias", &x, 1, &y, 1));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_session_run(session, nullptr, &x, 1, &y, 1));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_session_run(session, "add_bias", nullptr, 1, &y, 1));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_session_run(session, "add_bias", &x, 1, nullptr, 1));
}

TEST_F(SessionTest, MalformedResultsAreInternalAndFreed) {
  // ASan/LSan check that the generated buffers are freed on these paths.
  expectRunFails("bad_size", {tensors.f32({4})}, 1, STRATA_STATUS_INTERNAL,
                 "entry 'bad_size' returned a malformed output 'y': dim 0 is "
                 "-5, negative");
  expectRunFails("bad_stride", {tensors.f32({2, 4})}, 1, STRATA_STATUS_INTERNAL,
                 "dim 1 has stride 2, expected a contiguous row-major 1");
}

TEST_F(SessionTest, ResultAliasingAnInputIsCopiedNotFreed) {
  const strata_tensor_t* x = tensors.f32({4});
  strata_tensor_t* y = nullptr;
  STRATA_ASSERT_OK(strata_session_run(session, "echo", &x, 1, &y, 1));
  tensors.adopt(y);
  EXPECT_NE(strata_tensor_const_data(y), strata_tensor_const_data(x));
  EXPECT_EQ(static_cast<const float*>(strata_tensor_const_data(y))[3], 3.0f);
}

TEST_F(SessionTest, ThreadCountOption) {
  EXPECT_EQ(strata_session_thread_count(session), 0u);
  STRATA_ASSERT_OK(strata_session_set_thread_count(session, 4));
  EXPECT_EQ(strata_session_thread_count(session), 4u);
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_session_set_thread_count(session, STRATA_SESSION_MAX_THREADS + 1));
  EXPECT_EQ(strata_session_thread_count(session), 4u);
  strata_session_options_t options;
  strata_session_options_init(&options);
  options.thread_count = STRATA_SESSION_MAX_THREADS + 1;
  strata_session_t* other = nullptr;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_session_create(module.get(), &options, strata_allocator_system(),
                            &other));
  EXPECT_EQ(other, nullptr);
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_session_create(nullptr, nullptr, strata_allocator_system(),
                            &other));
}

TEST_F(SessionTest, SessionKeepsTheModuleAlive) {
  strata_module_t* loaded = nullptr;
  AlignedBytes bytes(standardArtifact());
  STRATA_ASSERT_OK(
      strata_module_load(bytes.span(), strata_allocator_system(), &loaded));
  strata_session_t* own = nullptr;
  STRATA_ASSERT_OK(
      strata_session_create(loaded, nullptr, strata_allocator_system(), &own));
  strata_module_release(loaded);  // the session holds a reference
  EXPECT_EQ(strata_session_module(own), loaded);
  const strata_tensor_t* x = tensors.f32({1, 4});
  strata_tensor_t* y = nullptr;
  STRATA_ASSERT_OK(strata_session_run(own, "add_bias", &x, 1, &y, 1));
  tensors.adopt(y);
  strata_session_release(own);
  strata_session_release(nullptr);
}

TEST_F(SessionTest, OutputsComeFromTheSessionAllocator) {
  TestAllocator counting;
  strata_allocator_t allocator = counting.get();
  strata_session_t* own = nullptr;
  STRATA_ASSERT_OK(
      strata_session_create(module.get(), nullptr, allocator, &own));
  EXPECT_EQ(counting.live, 1);
  const strata_tensor_t* x = tensors.f32({2, 4});
  strata_tensor_t* y = nullptr;
  STRATA_ASSERT_OK(strata_session_run(own, "add_bias", &x, 1, &y, 1));
  EXPECT_EQ(counting.live, 3);  // session + tensor record + data
  strata_tensor_release(y);
  strata_session_release(own);
  EXPECT_EQ(counting.live, 0);
}

// The buffer cache keeps what the last few runs used, not every size the
// session ever ran (it grew without bound over a decode loop's growing
// context), and strata_session_trim frees that too.
TEST_F(SessionTest, BufferCacheKeepsOnlyWhatRecentRunsUsed) {
  TestAllocator counting;
  strata_allocator_t allocator = counting.get();
  strata_session_t* own = nullptr;
  STRATA_ASSERT_OK(
      strata_session_create(module.get(), nullptr, allocator, &own));
  auto runAndRelease = [&](int64_t batch) {
    const strata_tensor_t* x = tensors.f32({batch, 4});
    strata_tensor_t* y = nullptr;
    STRATA_ASSERT_OK(strata_session_run(own, "add_bias", &x, 1, &y, 1));
    strata_tensor_release(y);
  };
  runAndRelease(8);  // a 128-byte output block, cached once released
  const int afterFirst = counting.live;
  // Alternating shapes keep both blocks.
  for (int64_t batch : {1, 8, 1, 8, 1}) runAndRelease(batch);
  EXPECT_EQ(counting.live, afterFirst + 1);
  // A size no recent run used is freed.
  for (int i = 0; i < 4; ++i) runAndRelease(1);
  EXPECT_EQ(counting.live, afterFirst);
  EXPECT_GT(strata_session_trim(own), 0u);
  EXPECT_EQ(counting.live, afterFirst - 1);
  EXPECT_EQ(strata_session_trim(own), 0u);
  EXPECT_EQ(strata_session_trim(nullptr), 0u);
  strata_session_release(own);
  EXPECT_EQ(counting.live, 0);
}

// An allocation that fails at any point of creating a session and running
// it (the generated code's buffers included, which it does not check for
// null) gives RESOURCE_EXHAUSTED, and the session runs correctly after.
TEST_F(SessionTest, AllocationFailureAtEveryIndexIsResourceExhausted) {
  TestAllocator probe;
  {
    strata_session_t* own = nullptr;
    STRATA_ASSERT_OK(
        strata_session_create(module.get(), nullptr, probe.get(), &own));
    const strata_tensor_t* x = tensors.f32({3, 4});
    strata_tensor_t* y = nullptr;
    STRATA_ASSERT_OK(strata_session_run(own, "add_bias", &x, 1, &y, 1));
    strata_tensor_release(y);
    strata_session_release(own);
  }
  const int total = probe.calls;
  ASSERT_GE(total, 3);  // session, output block, output tensor record
  for (int failAt = 0; failAt < total; ++failAt) {
    TestAllocator failing;
    failing.failAt = failAt;
    strata_session_t* own = nullptr;
    strata_status_t status =
        strata_session_create(module.get(), nullptr, failing.get(), &own);
    if (status) {
      EXPECT_EQ(strata_status_code(status), STRATA_STATUS_RESOURCE_EXHAUSTED);
      strata_status_free(status);
      continue;
    }
    const strata_tensor_t* x = tensors.f32({3, 4});
    strata_tensor_t* y = nullptr;
    auto [code, message] =
        consumeStatus(strata_session_run(own, "add_bias", &x, 1, &y, 1));
    EXPECT_EQ(code, STRATA_STATUS_RESOURCE_EXHAUSTED) << failAt << ": "
                                                      << message;
    // The session is usable: the next run succeeds and is right.
    STRATA_ASSERT_OK(strata_session_run(own, "add_bias", &x, 1, &y, 1));
    const float* out = static_cast<const float*>(strata_tensor_data(y));
    const float* in = static_cast<const float*>(
        strata_tensor_data(const_cast<strata_tensor_t*>(x)));
    for (int i = 0; i < 12; ++i) EXPECT_EQ(out[i], in[i] + float(i % 4 + 1));
    strata_tensor_release(y);
    strata_session_release(own);
  }
}

// Outputs take the generated code's buffer without a copy; it stays valid
// after the session is gone and returns to the session's cache on release.
TEST_F(SessionTest, OutputBuffersAreReusedAndOutliveTheSession) {
  strata_session_t* own = nullptr;
  STRATA_ASSERT_OK(strata_session_create(module.get(), nullptr,
                                         strata_allocator_system(), &own));
  const strata_tensor_t* x = tensors.f32({2, 4});
  strata_tensor_t* first = nullptr;
  STRATA_ASSERT_OK(strata_session_run(own, "add_bias", &x, 1, &first, 1));
  void* firstData = strata_tensor_data(first);
  strata_tensor_release(first);
  strata_tensor_t* second = nullptr;
  STRATA_ASSERT_OK(strata_session_run(own, "add_bias", &x, 1, &second, 1));
  EXPECT_EQ(strata_tensor_data(second), firstData);  // the cached block
  strata_session_release(own);
  const float* y = static_cast<const float*>(strata_tensor_data(second));
  const float* in = static_cast<const float*>(strata_tensor_data(
      const_cast<strata_tensor_t*>(x)));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y[i], in[i] + float(i % 4 + 1));
  strata_tensor_release(second);
}

TEST_F(SessionTest, SessionsRunOneModuleConcurrently) {
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      strata_session_t* own = nullptr;
      if (strata_session_create(module.get(), nullptr,
                                strata_allocator_system(), &own)) {
        ++failures[t];
        return;
      }
      const int64_t dims[2] = {t + 1, 4};
      strata_tensor_t* x = nullptr;
      strata_status_free(strata_tensor_create(STRATA_DTYPE_F32, 2, dims,
                                              strata_allocator_system(), &x));
      for (int i = 0; i < 50 && x; ++i) {
        const strata_tensor_t* in = x;
        strata_tensor_t* y = nullptr;
        strata_status_t status =
            strata_session_run(own, "add_bias", &in, 1, &y, 1);
        if (status || strata_tensor_dims(y)[0] != t + 1 ||
            static_cast<const float*>(strata_tensor_const_data(y))[3] != 4.0f) {
          ++failures[t];
        }
        strata_status_free(status);
        strata_tensor_release(y);
      }
      strata_tensor_release(x);
      strata_session_release(own);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int f : failures) EXPECT_EQ(f, 0);
}

}  // namespace
}  // namespace strata::testing
