//===- tensor_test.cc - Host tensors
//---------------------------------------===//
// SPDX-License-Identifier: Apache-2.0

#include "strata/runtime/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

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
