//===- nccl_communicator_test.cc - libstrata_nccl in one process ----------===//
// SPDX-License-Identifier: Apache-2.0
// One rank over a bootstrap communicator of one process. Without a GPU or
// NCCL, create must say so (UNAVAILABLE); with both, the tests that need a
// working communicator run a real all_gather and a send/recv to self, and
// the one that expects UNAVAILABLE is skipped.

#include "strata/runtime/nccl_communicator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "strata/runtime/status.h"

namespace {

// A group of one: all_gather copies, and counts its calls.
struct SoloBootstrap {
  strata_communicator_t table;
  int gathers = 0;
  strata_status_code_t fail = STRATA_STATUS_OK;

  explicit SoloBootstrap(uint32_t rank = 0, uint32_t size = 1) {
    strata_communicator_init(&table);
    table.self = this;
    table.rank = rank;
    table.size = size;
    table.all_gather = [](void* self, const void* send, void* recv,
                          size_t bytes) -> strata_status_t {
      auto* solo = static_cast<SoloBootstrap*>(self);
      ++solo->gathers;
      if (solo->fail != STRATA_STATUS_OK)
        return STRATA_MAKE_STATUS(solo->fail, "bootstrap refused");
      // Other ranks' parts are zeros: a rank that did not set up.
      std::memset(recv, 0, bytes * solo->table.size);
      std::memcpy(static_cast<uint8_t*>(recv) + bytes * solo->table.rank, send,
                  bytes);
      return nullptr;
    };
  }
};

std::string messageOf(strata_status_t status) {
  std::string text = strata_status_message(status);
  strata_status_free(status);
  return text;
}

// A live one-rank NCCL communicator, or a skip saying why there is none.
class NcclCommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    strata_status_t status =
        strata_nccl_communicator_create(&bootstrap_.table, -1, &comm_);
    if (status) {
      const bool unavailable =
          strata_status_code(status) == STRATA_STATUS_UNAVAILABLE;
      const std::string why = messageOf(status);
      ASSERT_TRUE(unavailable) << why;
      GTEST_SKIP() << "no NCCL here: " << why;
    }
  }
  void TearDown() override { strata_nccl_communicator_release(comm_); }

  SoloBootstrap bootstrap_;
  strata_communicator_t* comm_ = nullptr;
};

TEST(NcclCommunicatorCreateTest, NullOutIsInvalidArgument) {
  SoloBootstrap bootstrap;
  strata_status_t status =
      strata_nccl_communicator_create(&bootstrap.table, -1, nullptr);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bootstrap.gathers, 0);
  strata_status_free(status);
}

TEST(NcclCommunicatorCreateTest, NullBootstrapIsInvalidArgument) {
  strata_communicator_t* comm = nullptr;
  strata_status_t status = strata_nccl_communicator_create(nullptr, 0, &comm);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(messageOf(status).find("bootstrap"), std::string::npos);
  EXPECT_EQ(comm, nullptr);
}

TEST(NcclCommunicatorCreateTest, BootstrapOfSizeZeroIsInvalidArgument) {
  SoloBootstrap bootstrap(0, 0);
  strata_communicator_t* comm = nullptr;
  strata_status_t status =
      strata_nccl_communicator_create(&bootstrap.table, -1, &comm);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(messageOf(status).find("rank 0 of 0"), std::string::npos);
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(bootstrap.gathers, 0);
}

TEST(NcclCommunicatorCreateTest, RankOutsideTheBootstrapIsInvalidArgument) {
  SoloBootstrap bootstrap(2, 2);
  strata_communicator_t* comm = nullptr;
  strata_status_t status =
      strata_nccl_communicator_create(&bootstrap.table, -1, &comm);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_INVALID_ARGUMENT);
  strata_status_free(status);
  EXPECT_EQ(comm, nullptr);
}

TEST(NcclCommunicatorCreateTest, BootstrapWithoutAllGatherIsInvalidArgument) {
  SoloBootstrap bootstrap;
  bootstrap.table.all_gather = nullptr;
  strata_communicator_t* comm = nullptr;
  strata_status_t status =
      strata_nccl_communicator_create(&bootstrap.table, -1, &comm);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(messageOf(status).find("all_gather"), std::string::npos);
}

TEST(NcclCommunicatorCreateTest, ReleaseOfNullDoesNothing) {
  strata_nccl_communicator_release(nullptr);
}

// The machines that build and test have no GPU (and maybe no libnccl).
TEST(NcclCommunicatorCreateTest, WithoutAGpuCreateIsUnavailable) {
  SoloBootstrap bootstrap;
  strata_communicator_t* comm = nullptr;
  strata_status_t status =
      strata_nccl_communicator_create(&bootstrap.table, -1, &comm);
  if (!status) {
    strata_nccl_communicator_release(comm);
    GTEST_SKIP() << "a GPU and libnccl are present";
  }
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_UNAVAILABLE);
  const std::string message = messageOf(status);
  // Names what was missing: a library, or the CUDA call that found no GPU.
  EXPECT_TRUE(message.find("libnccl") != std::string::npos ||
              message.find("libcudart") != std::string::npos ||
              message.find("CUDA runtime") != std::string::npos)
      << message;
  EXPECT_EQ(comm, nullptr);
}

// A rank that cannot set up still takes part in the bootstrap exchange, so
// that the other ranks are not left waiting in it.
TEST(NcclCommunicatorCreateTest, EveryRankTakesPartInTheExchange) {
  SoloBootstrap bootstrap(1, 2);
  strata_communicator_t* comm = nullptr;
  strata_status_t status =
      strata_nccl_communicator_create(&bootstrap.table, -1, &comm);
  // Here either this rank failed alone or rank 0 (zeros) did.
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_UNAVAILABLE)
      << strata_status_message(status);
  strata_status_free(status);
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(bootstrap.gathers, 1);
}

TEST(NcclCommunicatorCreateTest, AFailedBootstrapFailsCreate) {
  SoloBootstrap bootstrap;
  bootstrap.fail = STRATA_STATUS_CANCELLED;
  strata_communicator_t* comm = nullptr;
  strata_status_t status =
      strata_nccl_communicator_create(&bootstrap.table, -1, &comm);
  EXPECT_NE(status, nullptr);
  strata_status_free(status);
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(bootstrap.gathers, 1);
}

TEST(NcclCommunicatorCreateTest, ADeviceThisProcessLacksIsRefused) {
  SoloBootstrap bootstrap;
  strata_communicator_t* comm = nullptr;
  strata_status_t status =
      strata_nccl_communicator_create(&bootstrap.table, 1 << 20, &comm);
  // INVALID_ARGUMENT where CUDA counts the GPUs, UNAVAILABLE without it.
  const strata_status_code_t code = strata_status_code(status);
  EXPECT_TRUE(code == STRATA_STATUS_INVALID_ARGUMENT ||
              code == STRATA_STATUS_UNAVAILABLE)
      << strata_status_message(status);
  strata_status_free(status);
  EXPECT_EQ(comm, nullptr);
}

TEST_F(NcclCommunicatorTest, HasTheBootstrapsRankAndSize) {
  EXPECT_EQ(comm_->struct_size, sizeof(strata_communicator_t));
  EXPECT_EQ(comm_->rank, 0u);
  EXPECT_EQ(comm_->size, 1u);
  EXPECT_NE(comm_->all_gather, nullptr);
  EXPECT_NE(comm_->send, nullptr);
  EXPECT_NE(comm_->recv, nullptr);
}

TEST_F(NcclCommunicatorTest, AllGatherOfOneRankCopiesAndGrows) {
  // Two sizes: the second call grows the staging buffer.
  for (size_t bytes : {size_t{1001}, size_t{1} << 20}) {
    std::vector<uint8_t> send(bytes), recv(bytes, 0);
    for (size_t i = 0; i < bytes; ++i) send[i] = static_cast<uint8_t>(i * 7);
    strata_status_t status =
        comm_->all_gather(comm_->self, send.data(), recv.data(), bytes);
    ASSERT_EQ(status, nullptr) << messageOf(status);
    EXPECT_EQ(recv, send);
  }
}

TEST_F(NcclCommunicatorTest, SendToSelfComesBackFromRecv) {
  std::vector<float> mine(256), back(256, 0.0f);
  for (int i = 0; i < 256; ++i) mine[i] = 0.5f * i;
  const size_t bytes = mine.size() * sizeof(float);
  strata_status_t status = comm_->send(comm_->self, mine.data(), bytes, 0, 0);
  ASSERT_EQ(status, nullptr) << messageOf(status);
  // One message held at a time.
  status = comm_->send(comm_->self, mine.data(), bytes, 0, 0);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_FAILED_PRECONDITION);
  strata_status_free(status);
  status = comm_->recv(comm_->self, back.data(), bytes, 0, 0);
  ASSERT_EQ(status, nullptr) << messageOf(status);
  EXPECT_EQ(back, mine);
  status = comm_->recv(comm_->self, back.data(), bytes, 0, 0);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_FAILED_PRECONDITION);
  strata_status_free(status);
}

TEST_F(NcclCommunicatorTest, TheRuntimesTagsKeepTheirMessagesApart) {
  // A pipeline hand-over and a tensor group's gather, each on its own NCCL
  // communicator: received in the other order, each gets its own bytes.
  std::vector<float> stage(64, 1.5f), group(32, -2.0f);
  std::vector<float> stageBack(64, 0.0f), groupBack(32, 0.0f);
  strata_status_t status =
      comm_->send(comm_->self, stage.data(), stage.size() * sizeof(float), 0,
                  STRATA_COMMUNICATOR_TAG_STAGE);
  ASSERT_EQ(status, nullptr) << messageOf(status);
  status = comm_->send(comm_->self, group.data(), group.size() * sizeof(float),
                       0, STRATA_COMMUNICATOR_TAG_GROUP);
  ASSERT_EQ(status, nullptr) << messageOf(status);
  status = comm_->recv(comm_->self, groupBack.data(),
                       groupBack.size() * sizeof(float), 0,
                       STRATA_COMMUNICATOR_TAG_GROUP);
  ASSERT_EQ(status, nullptr) << messageOf(status);
  status = comm_->recv(comm_->self, stageBack.data(),
                       stageBack.size() * sizeof(float), 0,
                       STRATA_COMMUNICATOR_TAG_STAGE);
  ASSERT_EQ(status, nullptr) << messageOf(status);
  EXPECT_EQ(groupBack, group);
  EXPECT_EQ(stageBack, stage);
}

TEST_F(NcclCommunicatorTest, TagsAndPeersOutsideTheGroupAreRefused) {
  float x = 1.0f;
  strata_status_t status = comm_->send(comm_->self, &x, sizeof(x), 0, 7);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(messageOf(status).find("tag"), std::string::npos);
  status = comm_->recv(comm_->self, &x, sizeof(x), 1, 0);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_INVALID_ARGUMENT);
  strata_status_free(status);
  status = comm_->all_gather(comm_->self, nullptr, &x, sizeof(x));
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_INVALID_ARGUMENT);
  strata_status_free(status);
}

}  // namespace
