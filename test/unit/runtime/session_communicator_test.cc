//===- session_communicator_test.cc - Sessions of tensor-parallel ranks ---===//
// SPDX-License-Identifier: Apache-2.0
// strata_session_set_communicator against the module's rank, runs refused
// without a communicator, and ranks whose code (testdata/parallel_kernels.c)
// calls the collectives, each on its own thread and session over an
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

// parallel_kernels.c compiled for |ranks| ranks; rank |rank| of them when
// |ranks| > 1, else a whole model whose code still calls collectives.
std::vector<uint8_t> collectiveArtifact(uint32_t rank, uint32_t ranks) {
  static const std::vector<uint8_t> code =
      readFileBytes(STRATA_PARALLEL_KERNELS_PATH);
  // Borrowed by the writer until writeArtifact below.
  std::vector<uint8_t> weights(8, 0);
  const int64_t compiled = ranks;
  std::memcpy(weights.data(), &compiled, sizeof(compiled));
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
  writer.setWeights(weights.data(), weights.size());
  writer.setCpuCode(code.data(), code.size());
  if (ranks > 1) writer.setParallel(parallelSection(rank, ranks));
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
            "cannot run entry 'add_bias': the module is rank 1 of 2 of a "
            "tensor-parallel group; give the session a communicator "
            "(strata_session_set_communicator) of size 2 in which this "
            "process is rank 1");
  FakeGroup group(2);
  strata_communicator_t comm = group.communicator(1);
  ASSERT_TRUE(session.setCommunicator(&comm).ok());
  EXPECT_TRUE(session.run("add_bias", {&x}, &outputs).ok());
  ASSERT_TRUE(session.setCommunicator(nullptr).ok());
  EXPECT_EQ(session.run("add_bias", {&x}, &outputs).code(),
            STRATA_STATUS_FAILED_PRECONDITION);
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
