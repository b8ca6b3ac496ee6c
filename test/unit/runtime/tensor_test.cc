//===- tensor_test.cc - Host tensors
//---------------------------------------===//
// SPDX-License-Identifier: Apache-2.0

#include "strata/runtime/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "status_matchers.h"

namespace {

TEST(TensorTest, CreateIsZeroFilledAndAligned) {
  const int64_t dims[3] = {2, 3, 5};
  strata_tensor_t* t = nullptr;
  STRATA_ASSERT_OK(strata_tensor_create(STRATA_DTYPE_F16, 3, dims,
                                        strata_allocator_system(), &t));
  EXPECT_EQ(strata_tensor_dtype(t), STRATA_DTYPE_F16);
  EXPECT_EQ(strata_tensor_rank(t), 3u);
  EXPECT_EQ(strata_tensor_dims(t)[2], 5);
  EXPECT_EQ(strata_tensor_element_count(t), 30u);
  EXPECT_EQ(strata_tensor_byte_size(t), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(strata_tensor_data(t)) %
                STRATA_TENSOR_ALIGNMENT,
            0u);
  const uint8_t* bytes = static_cast<const uint8_t*>(strata_tensor_data(t));
  for (size_t i = 0; i < 60; ++i) EXPECT_EQ(bytes[i], 0);
  strata_tensor_release(t);
  strata_tensor_release(nullptr);
}

TEST(TensorTest, ScalarAndEmptyTensors) {
  strata_tensor_t* scalar = nullptr;
  STRATA_ASSERT_OK(strata_tensor_create(STRATA_DTYPE_I64, 0, nullptr,
                                        strata_allocator_system(), &scalar));
  EXPECT_EQ(strata_tensor_element_count(scalar), 1u);
  EXPECT_EQ(strata_tensor_byte_size(scalar), 8u);
  strata_tensor_release(scalar);
  const int64_t dims[2] = {0, 7};
  strata_tensor_t* empty = nullptr;
  STRATA_ASSERT_OK(strata_tensor_create(STRATA_DTYPE_BOOL, 2, dims,
                                        strata_allocator_system(), &empty));
  EXPECT_EQ(strata_tensor_byte_size(empty), 0u);
  EXPECT_NE(strata_tensor_data(empty), nullptr);
  strata_tensor_release(empty);
}

TEST(TensorTest, CreateCopy) {
  const int64_t dims[1] = {3};
  const int32_t values[3] = {7, 8, 9};
  strata_tensor_t* t = nullptr;
  STRATA_ASSERT_OK(strata_tensor_create_copy(STRATA_DTYPE_I32, 1, dims, values,
                                             sizeof(values),
                                             strata_allocator_system(), &t));
  EXPECT_EQ(std::memcmp(strata_tensor_const_data(t), values, sizeof(values)),
            0);
  strata_tensor_release(t);
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_tensor_create_copy(STRATA_DTYPE_I32, 1, dims, values, 8,
                                strata_allocator_system(), &t));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_tensor_create_copy(STRATA_DTYPE_I32, 1, dims, nullptr, 12,
                                strata_allocator_system(), &t));
}

TEST(TensorTest, RejectsBadArguments) {
  strata_tensor_t* t = nullptr;
  const int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  const int64_t negative[1] = {-1};
  const int64_t huge[2] = {INT64_MAX, 4};
  strata_allocator_t a = strata_allocator_system();
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_tensor_create(static_cast<strata_dtype_t>(99), 1, dims, a, &t));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_tensor_create(STRATA_DTYPE_F32, 9, dims, a, &t));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_tensor_create(STRATA_DTYPE_F32, 1, negative, a, &t));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_tensor_create(STRATA_DTYPE_F32, 2, nullptr, a, &t));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_RESOURCE_EXHAUSTED,
      strata_tensor_create(STRATA_DTYPE_F32, 2, huge, a, &t));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_tensor_create(STRATA_DTYPE_F32, 1, dims, a, nullptr));
  EXPECT_EQ(t, nullptr);
}

// Counts the release callbacks of wrapped tensors.
struct Releases {
  int calls = 0;
  void* data = nullptr;
  static void record(void* user, void* data) {
    auto* self = static_cast<Releases*>(user);
    ++self->calls;
    self->data = data;
  }
};

TEST(TensorTest, WrapUsesTheCallerMemoryAndCallsTheReleaseOnce) {
  alignas(64) float memory[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const int64_t dims[2] = {2, 3};  // a larger buffer is allowed
  Releases releases;
  strata_tensor_t* t = nullptr;
  STRATA_ASSERT_OK(strata_tensor_wrap(STRATA_DTYPE_F32, 2, dims, memory,
                                      sizeof(memory), &Releases::record,
                                      &releases, strata_allocator_system(),
                                      &t));
  EXPECT_EQ(strata_tensor_data(t), memory);
  EXPECT_EQ(strata_tensor_byte_size(t), 24u);
  static_cast<float*>(strata_tensor_data(t))[1] = 20;
  EXPECT_EQ(memory[1], 20);
  strata_tensor_release(t);
  EXPECT_EQ(releases.calls, 1);
  EXPECT_EQ(releases.data, memory);
}

// Without a release callback the memory is only borrowed: releasing the
// tensor frees nothing (ASan reports a free of this stack array).
TEST(TensorTest, WrapWithoutReleaseBorrows) {
  int16_t memory[3] = {1, 2, 3};
  const int64_t dims[1] = {3};
  strata_tensor_t* t = nullptr;
  STRATA_ASSERT_OK(strata_tensor_wrap(STRATA_DTYPE_I16, 1, dims, memory,
                                      sizeof(memory), nullptr, nullptr,
                                      strata_allocator_system(), &t));
  strata_tensor_release(t);
  EXPECT_EQ(memory[2], 3);
  // Empty tensors may wrap no memory at all.
  const int64_t empty[1] = {0};
  STRATA_ASSERT_OK(strata_tensor_wrap(STRATA_DTYPE_F32, 1, empty, nullptr, 0,
                                      nullptr, nullptr,
                                      strata_allocator_system(), &t));
  strata_tensor_release(t);
}

TEST(TensorTest, WrapRejectsMemoryThatCannotHoldTheTensor) {
  alignas(64) uint8_t memory[64] = {};
  const int64_t dims[1] = {4};
  strata_allocator_t a = strata_allocator_system();
  strata_tensor_t* t = nullptr;
  Releases releases;
  auto expectInvalid = [&](const char* needle, void* data, size_t size) {
    auto [code, message] = strata::testing::consumeStatus(
        strata_tensor_wrap(STRATA_DTYPE_F32, 1, dims, data, size,
                           &Releases::record, &releases, a, &t));
    EXPECT_EQ(code, STRATA_STATUS_INVALID_ARGUMENT) << message;
    EXPECT_NE(message.find(needle), std::string::npos) << message;
  };
  expectInvalid("data is 12 bytes, the tensor needs 16", memory, 12);
  expectInvalid("data must be non-null", nullptr, 16);
  expectInvalid("is not aligned to the 4-byte elements of f32", memory + 2,
                16);
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_tensor_wrap(STRATA_DTYPE_F32, 1, dims, memory, 16, nullptr,
                         nullptr, a, nullptr));
  const int64_t negative[1] = {-1};
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_tensor_wrap(STRATA_DTYPE_F32, 1, negative, memory, 16, nullptr,
                         nullptr, a, &t));
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(releases.calls, 0);  // a failed wrap leaves the memory alone
}

// The record's allocation failing is RESOURCE_EXHAUSTED, and the memory
// stays the caller's (no release callback).
TEST(TensorTest, WrapOutOfMemory) {
  struct Refusing {
    static strata_status_t allocate(void*, size_t, size_t, void* ptr_to_free,
                                    void**) {
      if (ptr_to_free) return nullptr;
      return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED, "no memory");
    }
  };
  alignas(64) float memory[4] = {};
  const int64_t dims[1] = {4};
  Releases releases;
  strata_tensor_t* t = nullptr;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_RESOURCE_EXHAUSTED,
      strata_tensor_wrap(STRATA_DTYPE_F32, 1, dims, memory, sizeof(memory),
                         &Releases::record, &releases,
                         {nullptr, &Refusing::allocate}, &t));
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(releases.calls, 0);
}

TEST(TensorTest, DtypeNames) {
  EXPECT_STREQ(strata_dtype_name(STRATA_DTYPE_F32), "f32");
  EXPECT_STREQ(strata_dtype_name(STRATA_DTYPE_BF16), "bf16");
  EXPECT_STREQ(strata_dtype_name(STRATA_DTYPE_BOOL), "bool");
  EXPECT_STREQ(strata_dtype_name(STRATA_DTYPE_F8E4M3FN), "f8e4m3fn");
  EXPECT_STREQ(strata_dtype_name(STRATA_DTYPE_F8E4M3FNUZ), "f8e4m3fnuz");
  EXPECT_STREQ(strata_dtype_name(STRATA_DTYPE_F8E5M2), "f8e5m2");
  EXPECT_STREQ(strata_dtype_name(STRATA_DTYPE_F8E5M2FNUZ), "f8e5m2fnuz");
  EXPECT_STREQ(strata_dtype_name(STRATA_DTYPE_I4), "i4");
  EXPECT_STREQ(strata_dtype_name(STRATA_DTYPE_U4), "u4");
  EXPECT_STREQ(strata_dtype_name(STRATA_DTYPE_F4E2M1), "f4e2m1");
  for (uint32_t dtype = STRATA_DTYPE_F32; dtype <= STRATA_DTYPE_F4E2M1;
       ++dtype)
    EXPECT_STRNE(strata_dtype_name(static_cast<strata_dtype_t>(dtype)),
                 "unknown")
        << dtype;
  EXPECT_STREQ(strata_dtype_name(static_cast<strata_dtype_t>(21)), "unknown");
  EXPECT_STREQ(strata_dtype_name(static_cast<strata_dtype_t>(0)), "unknown");
}

}  // namespace
