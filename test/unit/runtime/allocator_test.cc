//===- allocator_test.cc - strata_allocator_t behaviour ---------------------===//
// SPDX-License-Identifier: Apache-2.0

#include "strata/runtime/allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "status_matchers.h"

namespace {

TEST(AllocatorTest, SystemAllocatorHonoursAlignment) {
  strata_allocator_t allocator = strata_allocator_system();
  for (size_t alignment : {8u, 64u, 4096u}) {
    void* ptr = nullptr;
    STRATA_ASSERT_OK(strata_allocator_malloc(allocator, 100, alignment, &ptr));
    ASSERT_NE(ptr, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % alignment, 0u);
    std::memset(ptr, 0xAB, 100);  // ASan catches a short allocation
    strata_allocator_free(allocator, ptr);
  }
}

TEST(AllocatorTest, ZeroSizeYieldsFreeablePointer) {
  strata_allocator_t allocator = strata_allocator_system();
  void* ptr = nullptr;
  STRATA_ASSERT_OK(strata_allocator_malloc(allocator, 0, 64, &ptr));
  EXPECT_NE(ptr, nullptr);
  strata_allocator_free(allocator, ptr);
}

TEST(AllocatorTest, RejectsNonPowerOfTwoAlignment) {
  void* ptr = nullptr;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_allocator_malloc(strata_allocator_system(), 16, 48, &ptr));
  EXPECT_EQ(ptr, nullptr);  // outputs are written only on success
}

TEST(AllocatorTest, AbsurdSizeIsResourceExhaustedNotACrash) {
  void* ptr = nullptr;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_RESOURCE_EXHAUSTED,
      strata_allocator_malloc(strata_allocator_system(), SIZE_MAX - 8, 64,
                              &ptr));
  EXPECT_EQ(ptr, nullptr);
}

TEST(AllocatorTest, NullArgumentsAreInvalid) {
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_allocator_malloc(strata_allocator_system(), 16, 16, nullptr));
  strata_allocator_t empty = {nullptr, nullptr};
  void* ptr = nullptr;
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_allocator_malloc(empty, 16, 16, &ptr));
  strata_allocator_free(strata_allocator_system(), nullptr);  // allowed
}

// A custom allocator sees every call, which is how embedders meter memory.
struct CountingAllocator {
  int allocations = 0;
  int frees = 0;
  static strata_status_t fn(void* self, size_t size, size_t alignment,
                            void* ptr_to_free, void** out_ptr) {
    auto* counter = static_cast<CountingAllocator*>(self);
    strata_allocator_t system = strata_allocator_system();
    if (ptr_to_free) {
      ++counter->frees;
      return system.fn(nullptr, 0, 0, ptr_to_free, out_ptr);
    }
    ++counter->allocations;
    return system.fn(nullptr, size, alignment, nullptr, out_ptr);
  }
};

TEST(AllocatorTest, CustomAllocatorIsCalled) {
  CountingAllocator counter;
  strata_allocator_t allocator = {&counter, CountingAllocator::fn};
  void* ptr = nullptr;
  STRATA_ASSERT_OK(strata_allocator_malloc(allocator, 32, 32, &ptr));
  strata_allocator_free(allocator, ptr);
  EXPECT_EQ(counter.allocations, 1);
  EXPECT_EQ(counter.frees, 1);
}

}  // namespace
