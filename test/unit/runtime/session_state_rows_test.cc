//===- session_state_rows_test.cc - Positions of one slot, out and in -----===//
// SPDX-License-Identifier: Apache-2.0
// strata_session_read_state_rows / write_state_rows on a KV-cache-shaped
// state [slots, heads, context, row] whose position dim is not the last
// but one of the manifest alone names, next to states that have no
// positions to copy (a ring cache, a shared table).

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "status_matchers.h"
#include "strata/runtime/api.h"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

constexpr int64_t kSlots = 3;
constexpr int64_t kHeads = 2;
constexpr int64_t kContext = 5;
constexpr int64_t kRow = 4;
constexpr int64_t kWindow = 4;

// State 0: the cache [slots, heads, context, row] f32; 1: a cache with the
// positions before the heads [slots, context, heads]; 2: a ring cache
// [slots, heads, window, row]; 3: a shared table.
std::vector<uint8_t> rowsArtifact() {
  codegen::ArtifactWriter writer;
  int64_t slots = writer.addSymbolicDim("slots", kSlots);
  int64_t context = writer.addSymbolicDim("context", kContext);
  writer.addEntry({"bump",
                   "strata_test_bump",
                   {{"slot", STRATA_DTYPE_I64, {}}},
                   {{"count", STRATA_DTYPE_I64, {}}}});
  writer.addStateTensor(
      {{"cache", STRATA_DTYPE_F32, {slots, kHeads, context, kRow}},
       STRATA_STATE_SCOPE_PER_SEQUENCE});
  writer.addStateTensor(
      {{"positions_first", STRATA_DTYPE_I32, {slots, context, kHeads}},
       STRATA_STATE_SCOPE_PER_SEQUENCE});
  writer.addStateTensor(
      {{"ring", STRATA_DTYPE_F32, {slots, kHeads, kWindow, kRow}},
       STRATA_STATE_SCOPE_PER_SEQUENCE});
  writer.addStateTensor({{"table", STRATA_DTYPE_F32, {kContext, kRow}},
                         STRATA_STATE_SCOPE_SHARED});
  writer.setWeights(testWeights().data(), testWeights().size());
  writer.setCpuCode(testKernelBytes().data(), testKernelBytes().size());
  return writeArtifact(writer);
}

// The value the tests put at (slot, head, position, i) of the cache.
float cacheValue(int64_t slot, int64_t head, int64_t position, int64_t i) {
  return static_cast<float>(1000 * slot + 100 * head + 10 * position + i);
}

class SessionStateRowsTest : public ::testing::Test {
protected:
  void SetUp() override {
    STRATA_ASSERT_OK(module.load());
    for (strata_session_t **s : {&session, &other})
      STRATA_ASSERT_OK(strata_session_create(module.get(), nullptr,
                                             strata_allocator_system(), s));
  }
  void TearDown() override {
    strata_session_release(session);
    strata_session_release(other);
  }

  // The whole cache state of |s|.
  std::vector<float> cache(const strata_session_t *s) {
    strata_tensor_t *copy = nullptr;
    STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OK,
                            strata_session_read_state(s, 0, &copy));
    if (!copy)
      return {};
    const auto *data =
        static_cast<const float *>(strata_tensor_const_data(copy));
    std::vector<float> values(data, data + kSlots * kHeads * kContext * kRow);
    strata_tensor_release(copy);
    return values;
  }

  // Fills positions [0, kContext) of |slot| of |session|'s cache through
  // write_state_rows, one position at a time.
  void fillSlot(int64_t slot) {
    for (int64_t p = 0; p < kContext; ++p) {
      std::vector<float> rows;
      for (int64_t h = 0; h < kHeads; ++h)
        for (int64_t i = 0; i < kRow; ++i)
          rows.push_back(cacheValue(slot, h, p, i));
      STRATA_ASSERT_OK(strata_session_write_state_rows(
          session, 0, slot, p, 1, rows.data(), rows.size() * sizeof(float)));
    }
  }

  LoadedModule module{rowsArtifact()};
  strata_session_t *session = nullptr;
  strata_session_t *other = nullptr;
};

TEST_F(SessionStateRowsTest, ReadsPackedHeadMajorRowsOfOneSlot) {
  fillSlot(1);
  // Positions [1, 4) of slot 1: head 0's three rows, then head 1's.
  std::vector<float> rows(kHeads * 3 * kRow, -1.0f);
  STRATA_ASSERT_OK(strata_session_read_state_rows(
      session, 0, 1, 1, 3, rows.data(), rows.size() * sizeof(float)));
  size_t k = 0;
  for (int64_t h = 0; h < kHeads; ++h)
    for (int64_t p = 1; p < 4; ++p)
      for (int64_t i = 0; i < kRow; ++i, ++k)
        EXPECT_EQ(rows[k], cacheValue(1, h, p, i)) << "element " << k;
  // The other slots were not touched.
  std::vector<float> all = cache(session);
  for (size_t e = 0; e < all.size(); ++e) {
    const bool inSlot1 = e / (kHeads * kContext * kRow) == 1;
    if (!inSlot1) {
      EXPECT_EQ(all[e], 0.0f) << "element " << e;
    }
  }
}

TEST_F(SessionStateRowsTest, RoundTripsIntoAnotherSessionsSlot) {
  fillSlot(0);
  std::vector<float> rows(kHeads * kContext * kRow);
  const size_t bytes = rows.size() * sizeof(float);
  STRATA_ASSERT_OK(strata_session_read_state_rows(session, 0, 0, 0, kContext,
                                                  rows.data(), bytes));
  STRATA_ASSERT_OK(strata_session_write_state_rows(other, 0, 2, 0, kContext,
                                                   rows.data(), bytes));
  std::vector<float> mine = cache(session), theirs = cache(other);
  const size_t slot = kHeads * kContext * kRow;
  for (size_t e = 0; e < slot; ++e) {
    EXPECT_EQ(theirs[2 * slot + e], mine[e]) << "element " << e;
    EXPECT_EQ(theirs[e], 0.0f) << "element " << e;
  }
  // An empty range copies nothing and is accepted.
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_OK, strata_session_read_state_rows(session, 0, 0, kContext,
                                                       0, rows.data(), 0));
}

TEST_F(SessionStateRowsTest, FindsThePositionDimByName) {
  // [slots, context, heads]: no dims before the positions, heads after.
  std::vector<int32_t> rows = {1, 2, 3, 4};
  STRATA_ASSERT_OK(strata_session_write_state_rows(
      session, 1, 2, 3, 2, rows.data(), rows.size() * sizeof(int32_t)));
  strata_tensor_t *copy = nullptr;
  STRATA_ASSERT_OK(strata_session_read_state(session, 1, &copy));
  const auto *data =
      static_cast<const int32_t *>(strata_tensor_const_data(copy));
  const int64_t base = (2 * kContext + 3) * kHeads;
  EXPECT_EQ(std::vector<int32_t>(data + base, data + base + 4), rows);
  strata_tensor_release(copy);
}

TEST_F(SessionStateRowsTest, RefusesBadCallsAndChangesNothing) {
  std::vector<float> rows(kHeads * kContext * kRow, 7.0f);
  const size_t one = kHeads * kRow * sizeof(float);
  // Slots, positions and counts outside the state.
  for (auto [slot, first, count] :
       std::vector<std::array<int64_t, 3>>{{kSlots, 0, 1},
                                           {-1, 0, 1},
                                           {0, -1, 1},
                                           {0, kContext, 1},
                                           {0, 2, kContext - 1},
                                           {0, 0, -1}}) {
    SCOPED_TRACE("slot " + std::to_string(slot) + " first " +
                 std::to_string(first) + " count " + std::to_string(count));
    const size_t bytes = count > 0 ? static_cast<size_t>(count) * one : 0;
    STRATA_EXPECT_STATUS_IS(
        STRATA_STATUS_OUT_OF_RANGE,
        strata_session_write_state_rows(session, 0, slot, first, count,
                                        rows.data(), bytes));
    STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OUT_OF_RANGE,
                            strata_session_read_state_rows(session, 0, slot,
                                                           first, count,
                                                           rows.data(), bytes));
  }
  // A byte count other than heads x count x row, naming both.
  auto [code, message] = consumeStatus(
      strata_session_write_state_rows(session, 0, 0, 0, 2, rows.data(), one));
  EXPECT_EQ(code, STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("32 bytes given for 2 positions of state 'cache', "
                         "which take 64"),
            std::string::npos)
      << message;
  // NULLs, a state index past the module's, a shared state.
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_session_write_state_rows(nullptr, 0, 0, 0, 1, rows.data(), one));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_session_read_state_rows(session, 0, 0, 0, 1, nullptr, one));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_OUT_OF_RANGE,
      strata_session_read_state_rows(session, 4, 0, 0, 1, rows.data(), one));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_session_read_state_rows(session, 3, 0, 0, 1,
                                                         rows.data(),
                                                         kRow * sizeof(float)));
  EXPECT_EQ(cache(session), std::vector<float>(rows.size() * kSlots, 0.0f));
}

TEST_F(SessionStateRowsTest, AStateWithoutAContextDimIsUnimplemented) {
  std::vector<float> rows(kHeads * kRow);
  auto [code, message] = consumeStatus(strata_session_read_state_rows(
      session, 2, 0, 0, 1, rows.data(), rows.size() * sizeof(float)));
  EXPECT_EQ(code, STRATA_STATUS_UNIMPLEMENTED);
  EXPECT_NE(message.find("state 'ring' has no 'context' dim"),
            std::string::npos)
      << message;
}

} // namespace
} // namespace strata::testing
