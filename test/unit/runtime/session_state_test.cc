//===- session_state_test.cc - State tensors a session owns ---------------===//
// SPDX-License-Identifier: Apache-2.0
// A module that declares a state tensor: the session allocates it zeroed
// (an anonymous mapping from the system allocator, else from the caller's
// allocator and zeroed), every run updates it in place (the bump kernel
// adds one at a slot), and it can be read and reset per sequence slot or
// whole.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "status_matchers.h"
#include "strata/runtime/api.h"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

constexpr int64_t kSlots = 3;

std::vector<uint8_t> stateArtifact() {
  codegen::ArtifactWriter writer;
  writer.addEntry({"bump",
                   "strata_test_bump",
                   {{"slot", STRATA_DTYPE_I64, {}}},
                   {{"count", STRATA_DTYPE_I64, {}}}});
  writer.addStateTensor({{"counter", STRATA_DTYPE_I64, {kSlots}},
                         STRATA_STATE_SCOPE_PER_SEQUENCE});
  writer.setWeights(testWeights().data(), testWeights().size());
  writer.setCpuCode(testKernelBytes().data(), testKernelBytes().size());
  return writeArtifact(writer);
}

class SessionStateTest : public ::testing::Test {
protected:
  void SetUp() override {
    STRATA_ASSERT_OK(module.load());
    STRATA_ASSERT_OK(strata_session_create(
        module.get(), nullptr, strata_allocator_system(), &session));
  }
  void TearDown() override { strata_session_release(session); }

  // Runs bump(slot) and returns the count it reports.
  int64_t bump(int64_t slot) {
    strata_tensor_t *in = nullptr;
    strata_tensor_t *out = nullptr;
    STRATA_EXPECT_STATUS_IS(
        STRATA_STATUS_OK,
        strata_tensor_create_copy(STRATA_DTYPE_I64, 0, nullptr, &slot,
                                  sizeof slot, strata_allocator_system(), &in));
    STRATA_EXPECT_STATUS_IS(
        STRATA_STATUS_OK, strata_session_run(session, "bump", &in, 1, &out, 1));
    int64_t count =
        out ? *static_cast<const int64_t *>(strata_tensor_const_data(out))
            : -100;
    strata_tensor_release(in);
    strata_tensor_release(out);
    return count;
  }

  std::vector<int64_t> counter() {
    strata_tensor_t *copy = nullptr;
    STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OK,
                            strata_session_read_state(session, 0, &copy));
    if (!copy)
      return {};
    EXPECT_EQ(strata_tensor_rank(copy), 1u);
    EXPECT_EQ(strata_tensor_dims(copy)[0], kSlots);
    const auto *data =
        static_cast<const int64_t *>(strata_tensor_const_data(copy));
    std::vector<int64_t> values(data, data + kSlots);
    strata_tensor_release(copy);
    return values;
  }

  LoadedModule module{stateArtifact()};
  strata_session_t *session = nullptr;
};

TEST_F(SessionStateTest, StartsZeroedAndIsUpdatedInPlaceAcrossRuns) {
  EXPECT_EQ(counter(), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(bump(0), 1);
  EXPECT_EQ(bump(0), 2);
  EXPECT_EQ(bump(2), 1);
  EXPECT_EQ(bump(0), 3);
  EXPECT_EQ(counter(), (std::vector<int64_t>{3, 0, 1}));
}

TEST_F(SessionStateTest, ResetsOneSlotOrAll) {
  bump(0);
  bump(1);
  bump(1);
  STRATA_ASSERT_OK(strata_session_reset_state(session, 1));
  EXPECT_EQ(counter(), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(bump(1), 1);
  STRATA_ASSERT_OK(strata_session_reset_state(session, -1));
  EXPECT_EQ(counter(), (std::vector<int64_t>{0, 0, 0}));
}

TEST_F(SessionStateTest, BadSlotOrIndexChangesNothing) {
  bump(2);
  auto [code, message] =
      consumeStatus(strata_session_reset_state(session, kSlots));
  EXPECT_EQ(code, STRATA_STATUS_OUT_OF_RANGE);
  EXPECT_NE(message.find("sequence slot 3 is out of range"), std::string::npos)
      << message;
  EXPECT_EQ(counter(), (std::vector<int64_t>{0, 0, 1}));
  strata_tensor_t *copy = nullptr;
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OUT_OF_RANGE,
                          strata_session_read_state(session, 1, &copy));
  EXPECT_EQ(copy, nullptr);
}

TEST_F(SessionStateTest, EachSessionHasItsOwnState) {
  strata_session_t *other = nullptr;
  STRATA_ASSERT_OK(strata_session_create(module.get(), nullptr,
                                         strata_allocator_system(), &other));
  bump(0);
  bump(0);
  strata_tensor_t *copy = nullptr;
  STRATA_ASSERT_OK(strata_session_read_state(other, 0, &copy));
  EXPECT_EQ(static_cast<const int64_t *>(strata_tensor_const_data(copy))[0], 0);
  strata_tensor_release(copy);
  strata_session_release(other);
}

// An allocator whose blocks start as 0xAB bytes and that counts what it
// hands out.
struct DirtyAllocator {
  int live = 0;
  static strata_status_t allocate(void *self, size_t size, size_t alignment,
                                  void *ptr_to_free, void **out_ptr) {
    auto *allocator = static_cast<DirtyAllocator *>(self);
    if (ptr_to_free) {
      --allocator->live;
      std::free(ptr_to_free);
      return nullptr;
    }
    size_t rounded = (size + alignment - 1) / alignment * alignment;
    void *ptr = std::aligned_alloc(alignment, rounded ? rounded : alignment);
    std::memset(ptr, 0xAB, size);
    ++allocator->live;
    *out_ptr = ptr;
    return nullptr;
  }
  strata_allocator_t handle() { return {this, &DirtyAllocator::allocate}; }
};

TEST_F(SessionStateTest, StatesFromACallersAllocatorStartZeroed) {
  DirtyAllocator dirty;
  strata_session_t *own = nullptr;
  STRATA_ASSERT_OK(
      strata_session_create(module.get(), nullptr, dirty.handle(), &own));
  EXPECT_GT(dirty.live, 0);
  std::swap(session, own);
  EXPECT_EQ(counter(), (std::vector<int64_t>{0, 0, 0}));
  bump(1);
  EXPECT_EQ(counter(), (std::vector<int64_t>{0, 1, 0}));
  STRATA_ASSERT_OK(strata_session_reset_state(session, -1));
  EXPECT_EQ(counter(), (std::vector<int64_t>{0, 0, 0}));
  std::swap(session, own);
  strata_session_release(own);
  EXPECT_EQ(dirty.live, 0);
}

} // namespace
} // namespace strata::testing
