//===- session_communicator_test.cc - Sessions of tensor-parallel ranks ---===//
// SPDX-License-Identifier: Apache-2.0
// strata_session_set_communicator against the module's world rank and
// layout, runs refused without a communicator, and ranks whose code
// (testdata/parallel_kernels.c) calls the collectives and hands activations
// between pipeline stages, each on its own thread and session over an
// in-process group (fake_communicator.h).

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "fake_communicator.h"
#include "status_matchers.h"
#include "strata/runtime/runtime.hpp"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

using codegen::ArtifactWriter;

// parallel_kernels.c compiled for tensor rank |rank| of |ranks| in
// pipeline stage |stage| of |stages|; a whole model when that is one
// process, whose code still calls collectives.
std::vector<uint8_t> collectiveArtifact(uint32_t rank, uint32_t ranks,
                                        uint32_t stage = 0,
                                        uint32_t stages = 1) {
  static const std::vector<uint8_t> code =
      readFileBytes(STRATA_PARALLEL_KERNELS_PATH);
  // Borrowed by the writer until writeArtifact below.
  std::vector<uint8_t> weights(24, 0);
  const int64_t compiled[3] = {ranks, stage, stages};
  std::memcpy(weights.data(), compiled, sizeof(compiled));
  ArtifactWriter writer;
  int64_t rows = writer.addSymbolicDim("rows", 8);
  int64_t columns = writer.addSymbolicDim("columns", 64);
  writer.addEntry({"all_reduce",
                   "strata_test_all_reduce",
                   {{"x", STRATA_DTYPE_F32, {rows, 4}}},
                   {{"y", STRATA_DTYPE_F32, {rows, 4}}}});
  writer.addEntry({"all_gather",
                   "strata_test_all_gather",
                   {{"x", STRATA_DTYPE_F32, {rows, 4}}},
                   {{"y", STRATA_DTYPE_F32, {rows, columns}}}});
  writer.addEntry({"pipeline",
                   "strata_test_pipeline",
                   {{"x", STRATA_DTYPE_F32, {rows, 4}}},
                   {{"y", STRATA_DTYPE_F32, {rows, 4}}}});
  writer.setWeights(weights.data(), weights.size());
  writer.setCpuCode(code.data(), code.size());
  if (ranks * stages > 1)
    writer.setParallel(parallelSection(rank, ranks, stage, stages));
  return writeArtifact(writer);
}

// A 2x4 input of rank |rank|: 10 * rank + its index.
Tensor rankInput(uint32_t rank) {
  Tensor x;
  EXPECT_TRUE(Tensor::create(STRATA_DTYPE_F32, {2, 4}, &x).ok());
  float* data = x.data<float>();
  for (int i = 0; i < 8; ++i) data[i] = 10.0f * rank + i;
  return x;
}

TEST(SessionCommunicatorTest, CommunicatorMustMatchTheModulesRank) {
  LoadedModule module(rankArtifact(1, 2));
  STRATA_ASSERT_OK(module.load());
  strata_session_t* session = nullptr;
  STRATA_ASSERT_OK(strata_session_create(module.get(), nullptr,
                                         strata_allocator_system(), &session));
  FakeGroup three(3), two(2);
  strata_communicator_t wrongSize = three.communicator(1);
  auto [code, message] =
      consumeStatus(strata_session_set_communicator(session, &wrongSize));
  EXPECT_EQ(code, STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(message,
            "the module is rank 1 of a tensor-parallel group of 2 ranks, but "
            "the communicator is rank 1 of 3; load the artifact written for "
            "rank 1 of 3");
  strata_communicator_t wrongRank = two.communicator(0);
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_session_set_communicator(session, &wrongRank));
  strata_communicator_t right = two.communicator(1);
  STRATA_ASSERT_OK(strata_session_set_communicator(session, &right));
  STRATA_ASSERT_OK(strata_session_set_communicator(session, nullptr));

  // The struct itself: its size, its functions, its rank.
  strata_communicator_t bad = right;
  bad.struct_size = sizeof(bad) - 8;
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_session_set_communicator(session, &bad));
  bad = right;
  bad.all_gather = nullptr;
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_session_set_communicator(session, &bad));
  bad = right;
  bad.rank = 2;
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_session_set_communicator(session, &bad));
  bad.size = 0;
  bad.rank = 0;
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_session_set_communicator(session, &bad));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_session_set_communicator(nullptr, &right));
  strata_session_release(session);
}

// A whole model calls no collective: any group may run it.
TEST(SessionCommunicatorTest, WholeModelAcceptsAnyCommunicator) {
  LoadedModule module(standardArtifact());
  STRATA_ASSERT_OK(module.load());
  strata_session_t* session = nullptr;
  STRATA_ASSERT_OK(strata_session_create(module.get(), nullptr,
                                         strata_allocator_system(), &session));
  FakeGroup group(4);
  strata_communicator_t comm = group.communicator(3);
  STRATA_ASSERT_OK(strata_session_set_communicator(session, &comm));
  strata_session_release(session);
}

TEST(SessionCommunicatorTest, RankRunsOnlyWithACommunicator) {
  Module module;
  std::vector<uint8_t> bytes = rankArtifact(1, 2);
  AlignedBytes aligned(bytes);
  ASSERT_TRUE(Module::load(aligned.span(), &module).ok());
  EXPECT_EQ(module.parallelRank(), 1u);
  EXPECT_EQ(module.parallelRanks(), 2u);
  Session session;
  ASSERT_TRUE(Session::create(module, &session).ok());
  Tensor x;
  ASSERT_TRUE(Tensor::create(STRATA_DTYPE_F32, {2, 4}, &x).ok());
  std::vector<Tensor> outputs;
  Status refused = session.run("add_bias", {&x}, &outputs);
  EXPECT_EQ(refused.code(), STRATA_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(refused.message(),
            "cannot run entry 'add_bias': the module is rank 1 of a "
            "tensor-parallel group of 2 ranks; give the session a "
            "communicator (strata_session_set_communicator) of size 2 in "
            "which this process is rank 1");
  FakeGroup group(2);
  strata_communicator_t comm = group.communicator(1);
  ASSERT_TRUE(session.setCommunicator(&comm).ok());
  EXPECT_TRUE(session.run("add_bias", {&x}, &outputs).ok());
  ASSERT_TRUE(session.setCommunicator(nullptr).ok());
  EXPECT_EQ(session.run("add_bias", {&x}, &outputs).code(),
            STRATA_STATUS_FAILED_PRECONDITION);
}

// Stage 1, tensor rank 1 of 2 stages of 2 tensor ranks is world rank 3 of
// 4, and its stages hand over by send and recv.
TEST(SessionCommunicatorTest, StageRankNeedsTheWorldsCommunicator) {
  Module module;
  std::vector<uint8_t> bytes = rankArtifact(1, 2, 1, 2);
  AlignedBytes aligned(bytes);
  ASSERT_TRUE(Module::load(aligned.span(), &module).ok());
  EXPECT_EQ(module.parallelRank(), 3u);
  EXPECT_EQ(module.parallelRanks(), 4u);
  const Module::ParallelLayout layout = module.parallelLayout();
  EXPECT_EQ(layout.tensorRank, 1u);
  EXPECT_EQ(layout.tensorRanks, 2u);
  EXPECT_EQ(layout.pipelineStage, 1u);
  EXPECT_EQ(layout.pipelineStages, 2u);
  Session session;
  ASSERT_TRUE(Session::create(module, &session).ok());
  Tensor x;
  ASSERT_TRUE(Tensor::create(STRATA_DTYPE_F32, {2, 4}, &x).ok());
  std::vector<Tensor> outputs;
  Status refused = session.run("add_bias", {&x}, &outputs);
  EXPECT_EQ(refused.code(), STRATA_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(refused.message(),
            "cannot run entry 'add_bias': the module is rank 3 of a parallel "
            "group of 4 ranks (pipeline stage 1 of 2, tensor rank 1 of 2); "
            "give the session a communicator "
            "(strata_session_set_communicator) of size 4 in which this "
            "process is rank 3");
  // The stage's group is not the world.
  FakeGroup two(2), four(4);
  strata_communicator_t stageGroup = two.communicator(1);
  Status status = session.setCommunicator(&stageGroup);
  EXPECT_EQ(status.code(), STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "the module is rank 3 of a parallel group of 4 ranks (pipeline "
            "stage 1 of 2, tensor rank 1 of 2), but the communicator is rank "
            "1 of 2; load the artifact written for rank 1 of 2");
  strata_communicator_t noSend = four.communicator(3);
  noSend.send = nullptr;
  status = session.setCommunicator(&noSend);
  EXPECT_EQ(status.code(), STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "the communicator has no send function, which the module needs: "
            "it is rank 3 of a parallel group of 4 ranks (pipeline stage 1 "
            "of 2, tensor rank 1 of 2)");
  strata_communicator_t noRecv = four.communicator(3);
  noRecv.recv = nullptr;
  EXPECT_EQ(session.setCommunicator(&noRecv).code(),
            STRATA_STATUS_INVALID_ARGUMENT);
  strata_communicator_t right = four.communicator(3);
  ASSERT_TRUE(session.setCommunicator(&right).ok());
  EXPECT_TRUE(session.run("add_bias", {&x}, &outputs).ok());
}

// 2 stages of 2 tensor ranks: stage 0 sums x over its group and hands the
// sum on; stage 1 adds its x, sums over its group and sends the result
// back to stage 0: y = 2 (x0 + x1) + x2 + x3 on every rank.
TEST(SessionCommunicatorTest, StagesHandOverThroughTheirSessions) {
  constexpr uint32_t kTensorRanks = 2, kStages = 2;
  constexpr uint32_t kWorld = kTensorRanks * kStages;
  FakeGroup group(kWorld);
  std::vector<std::vector<float>> ys(kWorld);
  std::vector<std::string> errors(kWorld);
  group.run([&](uint32_t rank) {
    std::vector<uint8_t> bytes = collectiveArtifact(
        rank % kTensorRanks, kTensorRanks, rank / kTensorRanks, kStages);
    AlignedBytes aligned(bytes);
    Module module;
    Session session;
    Status status = Module::load(aligned.span(), &module);
    if (status.ok()) status = Session::create(module, &session);
    strata_communicator_t comm = group.communicator(rank);
    if (status.ok()) status = session.setCommunicator(&comm);
    Tensor x = rankInput(rank);
    std::vector<Tensor> outputs;
    if (status.ok()) status = session.run("pipeline", {&x}, &outputs);
    if (status.ok()) {
      const float* y = outputs[0].data<float>();
      ys[rank].assign(y, y + 8);
    }
    errors[rank] = status.toString();
  });
  for (uint32_t r = 0; r < kWorld; ++r) {
    ASSERT_EQ(errors[r], "OK") << "rank " << r;
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(ys[r][i], 70.0f + 6.0f * i) << "rank " << r << " " << i;
  }
  EXPECT_EQ(group.calls(), 0);
  // x0 + x1 to stage 1 twice, y back to stage 0 twice: extents and
  // elements each.
  EXPECT_EQ(group.messages(STRATA_COMMUNICATOR_TAG_STAGE), 8);
  // One pair per group and collective, a message each way.
  EXPECT_EQ(group.messages(STRATA_COMMUNICATOR_TAG_GROUP), 4);
}

TEST(SessionCommunicatorTest, RanksReduceAndGatherThroughTheirSessions) {
  constexpr uint32_t kRanks = 3;
  FakeGroup group(kRanks);
  std::vector<std::vector<float>> reduced(kRanks), gathered(kRanks);
  std::vector<std::string> errors(kRanks);
  group.run([&](uint32_t rank) {
    std::vector<uint8_t> bytes = collectiveArtifact(rank, kRanks);
    AlignedBytes aligned(bytes);
    Module module;
    Session session;
    Status status = Module::load(aligned.span(), &module);
    if (status.ok()) status = Session::create(module, &session);
    strata_communicator_t comm = group.communicator(rank);
    if (status.ok()) status = session.setCommunicator(&comm);
    Tensor x = rankInput(rank);
    std::vector<Tensor> outputs;
    if (status.ok()) status = session.run("all_reduce", {&x}, &outputs);
    if (status.ok()) {
      const float* y = outputs[0].data<float>();
      reduced[rank].assign(y, y + 8);
      status = session.run("all_gather", {&x}, &outputs);
    }
    if (status.ok()) {
      EXPECT_EQ(outputs[0].dims(), (std::vector<int64_t>{2, 12}));
      const float* y = outputs[0].data<float>();
      gathered[rank].assign(y, y + 24);
    }
    errors[rank] = status.toString();
  });
  for (uint32_t r = 0; r < kRanks; ++r) {
    ASSERT_EQ(errors[r], "OK") << "rank " << r;
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(reduced[r][i], 0.0f + i + (10.0f + i) + (20.0f + i));
    for (int row = 0; row < 2; ++row)
      for (int col = 0; col < 12; ++col)
        EXPECT_EQ(gathered[r][row * 12 + col],
                  10.0f * (col / 4) + row * 4 + col % 4)
            << "rank " << r << " [" << row << ", " << col << "]";
  }
}

// What a collective reports ends the run with its status; the session
// stays usable.
TEST(SessionCommunicatorTest, CollectiveFailuresEndTheRun) {
  LoadedModule module(collectiveArtifact(0, 1));
  STRATA_ASSERT_OK(module.load());
  strata_session_t* session = nullptr;
  STRATA_ASSERT_OK(strata_session_create(module.get(), nullptr,
                                         strata_allocator_system(), &session));
  Tensor x = rankInput(0);
  const strata_tensor_t* in = x.get();
  strata_tensor_t* y = nullptr;
  auto [code, message] =
      consumeStatus(strata_session_run(session, "all_reduce", &in, 1, &y, 1));
  EXPECT_EQ(code, STRATA_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(message.find("strata_rt_all_reduce_f32: the run has no "
                         "communicator"),
            std::string::npos)
      << message;
  strata_communicator_t failing = failingCommunicator();
  STRATA_ASSERT_OK(strata_session_set_communicator(session, &failing));
  std::tie(code, message) =
      consumeStatus(strata_session_run(session, "all_gather", &in, 1, &y, 1));
  EXPECT_EQ(code, STRATA_STATUS_UNAVAILABLE);
  EXPECT_EQ(message,
            "strata_rt_all_gather_f32: the communicator's all_gather failed "
            "on rank 0 of 1: UNAVAILABLE: link down");
  EXPECT_EQ(y, nullptr);
  FakeGroup one(1);
  strata_communicator_t comm = one.communicator(0);
  STRATA_ASSERT_OK(strata_session_set_communicator(session, &comm));
  STRATA_ASSERT_OK(strata_session_run(session, "all_gather", &in, 1, &y, 1));
  EXPECT_EQ(static_cast<const float*>(strata_tensor_data(y))[5], 5.0f);
  strata_tensor_release(y);
  strata_session_release(session);
}

}  // namespace
}  // namespace strata::testing
