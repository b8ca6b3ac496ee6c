//===- session_io_binding_test.cc - Caller memory in and out of a run -----===//
// SPDX-License-Identifier: Apache-2.0
// Inputs that wrap caller memory reach the entry in place; outputs written
// into caller tensors (strata_session_run_into, strata_io_binding_t) equal
// those of a plain run, and a tensor that cannot take its output is refused
// with a message naming it before any caller memory is written.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "status_matchers.h"
#include "strata/runtime/api.h"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

// The standard entries plus input_address, whose output dim 'words' no
// input binds (it is known only once the run has produced it).
std::vector<uint8_t> ioArtifact() {
  codegen::ArtifactWriter writer = standardWriter();
  int64_t words = writer.addSymbolicDim("words", 4);
  writer.addEntry({"input_address",
                   "strata_test_input_address",
                   {{"x", STRATA_DTYPE_F32, {4}}},
                   {{"address", STRATA_DTYPE_I64, {words}}}});
  return writeArtifact(writer);
}

// Caller-owned memory: 64-byte aligned floats, filled with a sentinel.
struct CallerBuffer {
  explicit CallerBuffer(size_t floats)
      : size(floats * sizeof(float)),
        data(static_cast<float*>(std::aligned_alloc(64, 64 + size / 64 * 64))) {
    for (size_t i = 0; i < floats; ++i) data[i] = -1.0f;
  }
  ~CallerBuffer() { std::free(data); }
  size_t size;
  float* data;
};

// Counts the calls of a wrapped tensor's release callback.
struct ReleaseLog {
  int calls = 0;
  void* lastData = nullptr;
  static void release(void* user, void* data) {
    auto* log = static_cast<ReleaseLog*>(user);
    ++log->calls;
    log->lastData = data;
  }
};

class SessionIoBindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STRATA_ASSERT_OK(module.load());
    STRATA_ASSERT_OK(strata_session_create(
        module.get(), nullptr, strata_allocator_system(), &session));
  }
  void TearDown() override {
    for (strata_tensor_t* t : owned) strata_tensor_release(t);
    strata_session_release(session);
  }
  strata_tensor_t* keep(strata_tensor_t* t) {
    owned.push_back(t);
    return t;
  }
  // A tensor over |buffer| (borrowed: the buffer outlives it).
  strata_tensor_t* wrap(strata_dtype_t dtype, std::vector<int64_t> dims,
                        CallerBuffer& buffer) {
    strata_tensor_t* t = nullptr;
    strata_status_t status = strata_tensor_wrap(
        dtype, static_cast<uint32_t>(dims.size()), dims.data(), buffer.data,
        buffer.size, nullptr, nullptr, strata_allocator_system(), &t);
    EXPECT_EQ(status, nullptr) << strata_status_message(status);
    strata_status_free(status);
    return keep(t);
  }
  // An f32 tensor holding 0, 1, 2, ...
  strata_tensor_t* iota(std::vector<int64_t> dims) {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    std::vector<float> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i);
    strata_tensor_t* t = nullptr;
    STRATA_EXPECT_STATUS_IS(
        STRATA_STATUS_OK,
        strata_tensor_create_copy(STRATA_DTYPE_F32,
                                  static_cast<uint32_t>(dims.size()),
                                  dims.data(), values.data(), n * sizeof(float),
                                  strata_allocator_system(), &t));
    return keep(t);
  }
  // Runs |entry| into |outputs| and expects INVALID_ARGUMENT with |message|.
  void expectRunIntoFails(const char* entry,
                          std::vector<const strata_tensor_t*> inputs,
                          std::vector<strata_tensor_t*> outputs,
                          const std::string& message) {
    auto [code, actual] = consumeStatus(
        strata_session_run_into(session, entry, inputs.data(), inputs.size(),
                                outputs.data(), outputs.size()));
    EXPECT_EQ(code, STRATA_STATUS_INVALID_ARGUMENT) << actual;
    EXPECT_NE(actual.find(message), std::string::npos)
        << "'" << actual << "' lacks '" << message << "'";
  }

  LoadedModule module{ioArtifact()};
  strata_session_t* session = nullptr;
  std::vector<strata_tensor_t*> owned;
};

TEST_F(SessionIoBindingTest, WrappedInputReachesTheEntryWithoutACopy) {
  CallerBuffer memory(4);
  ReleaseLog log;
  const int64_t dims[1] = {4};
  strata_tensor_t* x = nullptr;
  STRATA_ASSERT_OK(strata_tensor_wrap(STRATA_DTYPE_F32, 1, dims, memory.data,
                                      memory.size, &ReleaseLog::release, &log,
                                      strata_allocator_system(), &x));
  EXPECT_EQ(strata_tensor_data(x), memory.data);
  const strata_tensor_t* in = x;
  strata_tensor_t* address = nullptr;
  STRATA_ASSERT_OK(
      strata_session_run(session, "input_address", &in, 1, &address, 1));
  keep(address);
  const auto* seen = static_cast<const int64_t*>(strata_tensor_data(address));
  EXPECT_EQ(seen[0], reinterpret_cast<intptr_t>(memory.data));
  EXPECT_EQ(seen[1], reinterpret_cast<intptr_t>(memory.data));
  EXPECT_EQ(log.calls, 0);
  strata_tensor_release(x);
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(log.lastData, memory.data);
}

TEST_F(SessionIoBindingTest, RunIntoWritesWhatARunReturns) {
  const strata_tensor_t* x = iota({3, 4});
  strata_tensor_t* expected = nullptr;
  STRATA_ASSERT_OK(strata_session_run(session, "add_bias", &x, 1, &expected, 1));
  keep(expected);
  CallerBuffer memory(12);
  strata_tensor_t* y = wrap(STRATA_DTYPE_F32, {3, 4}, memory);
  STRATA_ASSERT_OK(strata_session_run_into(session, "add_bias", &x, 1, &y, 1));
  EXPECT_EQ(std::memcmp(memory.data, strata_tensor_data(expected), 48), 0);
  EXPECT_EQ(memory.data[5], 5.0f + 2.0f);

  // Two outputs of two dtypes, into runtime-allocated tensors.
  const int32_t b[2] = {10, 20};
  const int64_t bDims[1] = {2};
  strata_tensor_t* bTensor = nullptr;
  STRATA_ASSERT_OK(strata_tensor_create_copy(STRATA_DTYPE_I32, 1, bDims, b,
                                             sizeof(b),
                                             strata_allocator_system(),
                                             &bTensor));
  const strata_tensor_t* inputs[2] = {iota({2, 3}), keep(bTensor)};
  strata_tensor_t* outputs[2] = {};
  STRATA_ASSERT_OK(strata_tensor_create(STRATA_DTYPE_F32, 1, bDims,
                                        strata_allocator_system(), &outputs[0]));
  STRATA_ASSERT_OK(strata_tensor_create(STRATA_DTYPE_I64, 1, bDims,
                                        strata_allocator_system(), &outputs[1]));
  keep(outputs[0]);
  keep(outputs[1]);
  STRATA_ASSERT_OK(
      strata_session_run_into(session, "two_outputs", inputs, 2, outputs, 2));
  const auto* sums = static_cast<const float*>(strata_tensor_data(outputs[0]));
  const auto* doubled =
      static_cast<const int64_t*>(strata_tensor_data(outputs[1]));
  EXPECT_EQ(sums[1], 3.0f + 4.0f + 5.0f + 20.0f);
  EXPECT_EQ(doubled[0], 20);
  EXPECT_EQ(doubled[1], 40);
}

TEST_F(SessionIoBindingTest, RunIntoTheInputItselfUpdatesInPlace) {
  strata_tensor_t* x = iota({2, 4});
  const strata_tensor_t* in = x;
  STRATA_ASSERT_OK(strata_session_run_into(session, "add_bias", &in, 1, &x, 1));
  const auto* y = static_cast<const float*>(strata_tensor_data(x));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y[i], float(i) + float(i % 4 + 1));
}

TEST_F(SessionIoBindingTest, TensorsThatCannotTakeTheOutputAreRefused) {
  const strata_tensor_t* x = iota({3, 4});
  CallerBuffer memory(16);
  expectRunIntoFails("add_bias", {x},
                     {wrap(STRATA_DTYPE_I32, {3, 4}, memory)},
                     "output 'y' is a tensor of dtype i32, expected f32");
  expectRunIntoFails("add_bias", {x},
                     {wrap(STRATA_DTYPE_F32, {2, 4}, memory)},
                     "output 'y' is a tensor of shape [2, 4], expected [3, 4]");
  expectRunIntoFails("add_bias", {x}, {wrap(STRATA_DTYPE_F32, {12}, memory)},
                     "output 'y' is a tensor of shape [12], expected [3, 4]");
  // A dim no input binds shows as its name before the run, and the
  // produced shape decides after it.
  const strata_tensor_t* four = iota({4});
  expectRunIntoFails("input_address", {four},
                     {wrap(STRATA_DTYPE_I64, {2, 1}, memory)},
                     "output 'address' is a tensor of shape [2, 1], expected "
                     "[words]");
  expectRunIntoFails("input_address", {four},
                     {wrap(STRATA_DTYPE_I64, {3}, memory)},
                     "output 'address' is a tensor of shape [3], the run "
                     "produced [2]");
  expectRunIntoFails("add_bias", {x}, {nullptr}, "output tensor 0 is null");
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_session_run_into(session, "add_bias", &x, 1, nullptr, 1));
  expectRunIntoFails("add_bias", {x}, {}, "has 1 outputs, got room for 0");
  // Nothing was written into the caller's memory by any failed run.
  for (int i = 0; i < 16; ++i) EXPECT_EQ(memory.data[i], -1.0f) << i;
}

TEST_F(SessionIoBindingTest, OneTensorForTwoOutputsIsRefused) {
  const int32_t b[2] = {1, 2};
  const int64_t two[1] = {2};
  strata_tensor_t* bTensor = nullptr;
  STRATA_ASSERT_OK(strata_tensor_create_copy(STRATA_DTYPE_I32, 1, two, b,
                                             sizeof(b),
                                             strata_allocator_system(),
                                             &bTensor));
  const strata_tensor_t* inputs[2] = {iota({2, 3}), keep(bTensor)};
  CallerBuffer memory(4);
  strata_tensor_t* same = wrap(STRATA_DTYPE_F32, {2}, memory);
  strata_tensor_t* outputs[2] = {same, same};
  auto [code, message] = consumeStatus(
      strata_session_run_into(session, "two_outputs", inputs, 2, outputs, 2));
  EXPECT_EQ(code, STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("outputs 'row_sum' and 'present.0/doubled' are given "
                         "the same tensor"),
            std::string::npos)
      << message;
}

TEST_F(SessionIoBindingTest, BindingRunsByNameIntoBoundAndNewTensors) {
  strata_io_binding_t* binding = nullptr;
  STRATA_ASSERT_OK(strata_io_binding_create(module.get(), "two_outputs",
                                            strata_allocator_system(),
                                            &binding));
  const int32_t b[3] = {1, 2, 3};
  const int64_t three[1] = {3};
  strata_tensor_t* bTensor = nullptr;
  STRATA_ASSERT_OK(strata_tensor_create_copy(STRATA_DTYPE_I32, 1, three, b,
                                             sizeof(b),
                                             strata_allocator_system(),
                                             &bTensor));
  keep(bTensor);
  STRATA_ASSERT_OK(strata_io_binding_bind_input(binding, "b", bTensor));
  auto [code, message] =
      consumeStatus(strata_session_run_binding(session, binding));
  EXPECT_EQ(code, STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("input 'a' of 'two_outputs' is not bound"),
            std::string::npos)
      << message;
  STRATA_ASSERT_OK(strata_io_binding_bind_input(binding, "a", iota({3, 3})));
  CallerBuffer sums(3);
  STRATA_ASSERT_OK(strata_io_binding_bind_output(
      binding, "row_sum", wrap(STRATA_DTYPE_F32, {3}, sums)));
  for (int run = 0; run < 2; ++run) {  // the second replaces the first
    STRATA_ASSERT_OK(strata_session_run_binding(session, binding));
  }
  EXPECT_EQ(sums.data[2], 6.0f + 7.0f + 8.0f + 3.0f);
  strata_tensor_t* doubled = nullptr;
  STRATA_ASSERT_OK(
      strata_io_binding_take_output(binding, "present.0/doubled", &doubled));
  keep(doubled);
  EXPECT_EQ(static_cast<const int64_t*>(strata_tensor_data(doubled))[2], 6);
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_FAILED_PRECONDITION,
      strata_io_binding_take_output(binding, "present.0/doubled", &doubled));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_FAILED_PRECONDITION,
      strata_io_binding_take_output(binding, "row_sum", &doubled));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_NOT_FOUND,
      strata_io_binding_take_output(binding, "nope", &doubled));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_NOT_FOUND,
                          strata_io_binding_bind_input(binding, "y", bTensor));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_NOT_FOUND,
      strata_io_binding_bind_output(binding, "a", nullptr));
  // A failed run keeps what the last good one made (ASan: nothing leaks).
  STRATA_ASSERT_OK(strata_session_run_binding(session, binding));
  STRATA_ASSERT_OK(strata_io_binding_bind_input(binding, "a", iota({2, 3})));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_session_run_binding(session, binding));
  STRATA_ASSERT_OK(
      strata_io_binding_take_output(binding, "present.0/doubled", &doubled));
  keep(doubled);
  strata_io_binding_release(binding);
  strata_io_binding_release(nullptr);
}

TEST_F(SessionIoBindingTest, BindingArgumentsAreChecked) {
  strata_io_binding_t* binding = nullptr;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_NOT_FOUND,
      strata_io_binding_create(module.get(), "decode",
                               strata_allocator_system(), &binding));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_io_binding_create(nullptr, "add_bias", strata_allocator_system(),
                               &binding));
  EXPECT_EQ(binding, nullptr);
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_session_run_binding(session, nullptr));
  // A binding of another module, even one from the same bytes.
  LoadedModule other{ioArtifact()};
  STRATA_ASSERT_OK(other.load());
  STRATA_ASSERT_OK(strata_io_binding_create(other.get(), "add_bias",
                                            strata_allocator_system(),
                                            &binding));
  STRATA_ASSERT_OK(strata_io_binding_bind_input(binding, "x", iota({1, 4})));
  auto [code, message] =
      consumeStatus(strata_session_run_binding(session, binding));
  EXPECT_EQ(code, STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("for another module"), std::string::npos) << message;
  strata_io_binding_release(binding);
}

// The system allocator failing its |failAt|-th request (counting from 0).
struct FailingAllocator {
  int calls = 0;
  int failAt = -1;
  strata_allocator_t get() { return {this, &FailingAllocator::allocate}; }
  static strata_status_t allocate(void* self, size_t size, size_t alignment,
                                  void* ptr_to_free, void** out_ptr) {
    auto* a = static_cast<FailingAllocator*>(self);
    if (ptr_to_free) {
      std::free(ptr_to_free);
      return nullptr;
    }
    if (a->calls++ == a->failAt) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                                "injected allocation failure");
    }
    *out_ptr = std::aligned_alloc(alignment,
                                  (size + alignment) / alignment * alignment);
    return nullptr;
  }
};

// A run into caller memory that fails on an allocation is
// RESOURCE_EXHAUSTED and leaves that memory as it was.
TEST_F(SessionIoBindingTest, AllocationFailureLeavesCallerMemoryAlone) {
  const strata_tensor_t* x = iota({2, 4});
  CallerBuffer memory(8);
  strata_tensor_t* y = wrap(STRATA_DTYPE_F32, {2, 4}, memory);
  for (int failAt = 0; failAt < 2; ++failAt) {
    FailingAllocator failing;
    strata_session_t* own = nullptr;
    STRATA_ASSERT_OK(
        strata_session_create(module.get(), nullptr, failing.get(), &own));
    failing.failAt = failing.calls + failAt;
    strata_status_t status =
        strata_session_run_into(own, "add_bias", &x, 1, &y, 1);
    if (failAt == 0) {
      EXPECT_EQ(strata_status_code(status), STRATA_STATUS_RESOURCE_EXHAUSTED);
      for (int i = 0; i < 8; ++i) EXPECT_EQ(memory.data[i], -1.0f);
    } else {
      EXPECT_EQ(status, nullptr) << strata_status_message(status);
    }
    strata_status_free(status);
    strata_session_release(own);
  }
  EXPECT_EQ(memory.data[7], 7.0f + 4.0f);
}

}  // namespace
}  // namespace strata::testing
