//===- mpi_communicator_test.cc - libstrata_mpi under mpirun --------------===//
// SPDX-License-Identifier: Apache-2.0
// Run by ctest as `mpirun -np 2` of this binary: each process is one rank.
// One communicator serves every test (MPI initializes once per process),
// made and released by a gtest environment around them all.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "strata/runtime/mpi_communicator.h"
#include "strata/runtime/status.h"

namespace {

strata_communicator_t* gComm = nullptr;

class MpiEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    strata_status_t status = strata_mpi_communicator_create(&gComm);
    ASSERT_EQ(status, nullptr) << strata_status_message(status);
  }
  void TearDown() override { strata_mpi_communicator_release(gComm); }
};

TEST(MpiCommunicatorTest, HasTheWorldsRankAndSize) {
  ASSERT_NE(gComm, nullptr);
  EXPECT_EQ(gComm->struct_size, sizeof(strata_communicator_t));
  EXPECT_EQ(gComm->size, 2u);
  EXPECT_LT(gComm->rank, gComm->size);
  EXPECT_NE(gComm->all_gather, nullptr);
  EXPECT_NE(gComm->send, nullptr);
  EXPECT_NE(gComm->recv, nullptr);
}

TEST(MpiCommunicatorTest, AllGatherPutsRankRAtROffsets) {
  ASSERT_NE(gComm, nullptr);
  std::vector<uint8_t> send(1001);
  for (size_t i = 0; i < send.size(); ++i)
    send[i] = static_cast<uint8_t>(gComm->rank * 100 + i);
  std::vector<uint8_t> recv(send.size() * gComm->size, 0);
  strata_status_t status =
      gComm->all_gather(gComm->self, send.data(), recv.data(), send.size());
  ASSERT_EQ(status, nullptr) << strata_status_message(status);
  for (uint32_t r = 0; r < gComm->size; ++r)
    for (size_t i = 0; i < send.size(); ++i)
      ASSERT_EQ(recv[r * send.size() + i], static_cast<uint8_t>(r * 100 + i))
          << "rank " << r << " byte " << i;
}

TEST(MpiCommunicatorTest, SendAndRecvPassBytesBetweenRanks) {
  ASSERT_NE(gComm, nullptr);
  const uint32_t peer = 1 - gComm->rank;
  std::vector<float> mine(64), theirs(64, 0.0f);
  for (int i = 0; i < 64; ++i) mine[i] = gComm->rank * 1000.0f + i;
  // Rank 0 sends first, rank 1 receives first: no deadlock either way.
  for (int step = 0; step < 2; ++step) {
    const bool sending = (step == 0) == (gComm->rank == 0);
    strata_status_t status =
        sending ? gComm->send(gComm->self, mine.data(), 64 * sizeof(float),
                              peer, 7)
                : gComm->recv(gComm->self, theirs.data(), 64 * sizeof(float),
                              peer, 7);
    ASSERT_EQ(status, nullptr) << strata_status_message(status);
  }
  for (int i = 0; i < 64; ++i) EXPECT_EQ(theirs[i], peer * 1000.0f + i);
}

TEST(MpiCommunicatorTest, ProbeSeesAMessageOnlyOnceItIsThere) {
  ASSERT_NE(gComm, nullptr);
  ASSERT_NE(gComm->probe, nullptr);
  const uint32_t peer = 1 - gComm->rank;
  int ready = -1;
  // Nothing is sent with tag 9 before the all-gather below, which both
  // ranks reach only after this probe.
  strata_status_t status = gComm->probe(gComm->self, peer, 9, &ready);
  ASSERT_EQ(status, nullptr) << strata_status_message(status);
  EXPECT_EQ(ready, 0);
  uint8_t token = 1, both[2] = {0, 0};
  status = gComm->all_gather(gComm->self, &token, both, 1);
  ASSERT_EQ(status, nullptr) << strata_status_message(status);
  int64_t value = 42;
  if (gComm->rank == 0) {
    status = gComm->send(gComm->self, &value, sizeof(value), peer, 9);
    ASSERT_EQ(status, nullptr) << strata_status_message(status);
  } else {
    // It arrives without a recv posted; probe then says so.
    for (ready = 0; !ready;) {
      status = gComm->probe(gComm->self, peer, 9, &ready);
      ASSERT_EQ(status, nullptr) << strata_status_message(status);
    }
    value = 0;
    status = gComm->recv(gComm->self, &value, sizeof(value), peer, 9);
    ASSERT_EQ(status, nullptr) << strata_status_message(status);
    EXPECT_EQ(value, 42);
  }
  status = gComm->probe(gComm->self, peer, 9, nullptr);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_INVALID_ARGUMENT);
  strata_status_free(status);
}

// The runtime's pipeline hand-overs: an empty tensor is still a message
// (of no bytes, from a NULL buffer), and a recv of another size fails.
TEST(MpiCommunicatorTest, EmptyMessagesAndSizeMismatchesWithRuntimeTags) {
  ASSERT_NE(gComm, nullptr);
  const uint32_t peer = 1 - gComm->rank;
  const uint32_t tag = STRATA_COMMUNICATOR_TAG_STAGE;
  float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  strata_status_t status = nullptr;
  if (gComm->rank == 0) {
    status = gComm->send(gComm->self, nullptr, 0, peer, tag);
    ASSERT_EQ(status, nullptr) << strata_status_message(status);
    status = gComm->send(gComm->self, data, 4 * sizeof(float), peer, tag);
    ASSERT_EQ(status, nullptr) << strata_status_message(status);
  } else {
    status = gComm->recv(gComm->self, nullptr, 0, peer, tag);
    ASSERT_EQ(status, nullptr) << strata_status_message(status);
    status = gComm->recv(gComm->self, data, 8 * sizeof(float), peer, tag);
    EXPECT_EQ(strata_status_code(status), STRATA_STATUS_UNAVAILABLE);
    EXPECT_NE(std::strstr(strata_status_message(status),
                          "rank 0 sent 16 bytes with tag 21250, expected 32"),
              nullptr)
        << strata_status_message(status);
    strata_status_free(status);
  }
}

TEST(MpiCommunicatorTest, ATagAboveMpisLimitIsRefused) {
  ASSERT_NE(gComm, nullptr);
  float x = 0;
  strata_status_t status =
      gComm->send(gComm->self, &x, sizeof(x), 1 - gComm->rank, 0xFFFFFFFFu);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_INVALID_ARGUMENT);
  strata_status_free(status);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new MpiEnvironment);
  return RUN_ALL_TESTS();
}
