//===- pipeline_kernel_test.cc - Stage hand-overs and stage groups --------===//
// SPDX-License-Identifier: Apache-2.0
// strata_rt_send_f32, strata_rt_recv_extents_f32 and strata_rt_recv_f32
// between the pipeline stages of a split model, and the collectives within
// one stage's tensor-parallel
// group, called as generated code calls them by threads that play the
// world's ranks over an in-process communicator whose sends wait for their
// receive (fake_communicator.h); and every way a call can end the run.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collective_test_util.h"
#include "fake_communicator.h"
#include "kernel_context.h"
#include "kernels/collectives.h"
#include "kernels/pipeline_transfer.h"
#include "run_context.h"
#include "strata/runtime/communicator.h"
#include "strata_kernel_abi.h"

namespace strata::runtime {
namespace {

using testing::FakeGroup;

// The layout of world rank |rank| of |stages| stages of |tensorRanks|.
ParallelLayout layoutOf(uint32_t rank, uint32_t tensorRanks, uint32_t stages) {
  ParallelLayout l;
  l.tensorRank = rank % tensorRanks;
  l.tensorRanks = tensorRanks;
  l.stage = rank / tensorRanks;
  l.stages = stages;
  return l;
}

// A STRATA_P2P_* parameter block.
std::vector<int64_t> p2pParams(const float* buf, const int64_t* sizes,
                               const int64_t* strides, int64_t stage) {
  std::vector<int64_t> p(STRATA_P2P_PARAM_COUNT, 0);
  p[STRATA_P2P_BUF] = reinterpret_cast<int64_t>(buf);
  for (int d = 0; d < 4; ++d) {
    p[STRATA_P2P_SIZES + d] = sizes[d];
    p[STRATA_P2P_STRIDES + d] = strides ? strides[d] : 0;
  }
  p[STRATA_P2P_STAGE] = stage;
  return p;
}

// The receiving side of a hand-over as generated code makes it: the
// extents from stage |stage| into |*extents|, then the elements into |buf|
// with |sizes| (the extents when null). Returns what ended the run (kind
// 0 if nothing did).
CheckFailure receive(strata_rt_context_t* context, int64_t stage,
                     int64_t (*extents)[4], float* buf,
                     const int64_t* sizes = nullptr) {
  std::vector<int64_t> p(STRATA_P2P_PARAM_COUNT, 0);
  p[STRATA_P2P_STAGE] = stage;
  p[STRATA_P2P_EXTENTS] = reinterpret_cast<int64_t>(*extents);
  CheckFailure failure =
      callChecked(kernels::strataRecvExtentsF32, context, p.data());
  if (failure.kind != 0) return failure;
  p = p2pParams(buf, sizes ? sizes : *extents, nullptr, stage);
  return callChecked(kernels::strataRecvF32, context, p.data());
}

float distinct(uint32_t rank, int64_t index) {
  return static_cast<float>(rank) * 1000.0f + static_cast<float>(index);
}

// Each stage-0 rank sends its strided tensor to its stage-1 peer of the
// same tensor rank, which receives it contiguous.
TEST(PipelineTransferTest, HandsAStridedTensorToTheSameTensorRankOfAStage) {
  constexpr uint32_t kTensorRanks = 2, kStages = 2;
  const int64_t dims[4] = {1, 2, 3, 5};
  FakeGroup group(kTensorRanks * kStages);
  std::vector<std::vector<float>> received(kTensorRanks * kStages);
  std::vector<CheckFailure> failures(kTensorRanks * kStages);
  group.run([&](uint32_t rank) {
    KernelContext context;
    strata_communicator_t comm = group.communicator(rank);
    context.get()->communicator = &comm;
    context.get()->parallel = layoutOf(rank, kTensorRanks, kStages);
    if (rank < kTensorRanks) {
      StridedInput in(dims, rank, distinct);
      std::vector<int64_t> p =
          p2pParams(in.storage.data(), in.sizes, in.strides, 1);
      failures[rank] =
          callChecked(kernels::strataSendF32, context.get(), p.data());
    } else {
      received[rank].assign(30, -1.0f);
      int64_t extents[4] = {-1, -1, -1, -1};
      failures[rank] =
          receive(context.get(), 0, &extents, received[rank].data());
      for (int d = 0; d < 4; ++d) EXPECT_EQ(extents[d], dims[d]);
    }
  });
  for (uint32_t r = 0; r < kTensorRanks * kStages; ++r)
    EXPECT_EQ(failures[r].kind, 0)
        << "rank " << r << ": " << failures[r].message;
  for (uint32_t t = 0; t < kTensorRanks; ++t)
    for (int64_t i = 0; i < 30; ++i)
      ASSERT_EQ(received[kTensorRanks + t][i], distinct(t, i))
          << "tensor rank " << t << " at " << i;
  // Extents and elements of each.
  EXPECT_EQ(group.messages(STRATA_COMMUNICATOR_TAG_STAGE), 4);
  EXPECT_EQ(group.calls(), 0);
}

// An empty tensor still sends its extents and an empty message, so both
// sides stay in step.
TEST(PipelineTransferTest, AnEmptyTensorIsStillTwoMessages) {
  FakeGroup group(2);
  std::vector<CheckFailure> failures(2);
  int64_t extents[4] = {-1, -1, -1, -1};
  const int64_t sizes[4] = {1, 0, 4, 8};
  group.run([&](uint32_t rank) {
    KernelContext context;
    strata_communicator_t comm = group.communicator(rank);
    context.get()->communicator = &comm;
    context.get()->parallel = layoutOf(rank, 1, 2);
    if (rank == 1) {
      failures[rank] = receive(context.get(), 0, &extents, nullptr);
      return;
    }
    const int64_t strides[4] = {0, 32, 8, 1};
    std::vector<int64_t> p = p2pParams(nullptr, sizes, strides, 1);
    failures[rank] =
        callChecked(kernels::strataSendF32, context.get(), p.data());
  });
  EXPECT_EQ(failures[0].kind, 0) << failures[0].message;
  EXPECT_EQ(failures[1].kind, 0) << failures[1].message;
  for (int d = 0; d < 4; ++d) EXPECT_EQ(extents[d], sizes[d]);
  EXPECT_EQ(group.messages(STRATA_COMMUNICATOR_TAG_STAGE), 2);
}

// A receiver that expects another size fails, naming both sizes; nobody
// hangs.
TEST(PipelineTransferTest, AMessageOfAnotherSizeEndsTheReceiversRun) {
  FakeGroup group(2);
  std::vector<CheckFailure> failures(2);
  group.run([&](uint32_t rank) {
    KernelContext context;
    strata_communicator_t comm = group.communicator(rank);
    context.get()->communicator = &comm;
    context.get()->parallel = layoutOf(rank, 1, 2);
    std::vector<float> buf(8, 1.0f);
    const int64_t sent[4] = {1, 1, 1, 4}, expected[4] = {1, 1, 2, 4};
    const int64_t strides[4] = {8, 8, 4, 1};
    if (rank == 1) {
      int64_t extents[4] = {-1, -1, -1, -1};
      failures[rank] =
          receive(context.get(), 0, &extents, buf.data(), expected);
      return;
    }
    std::vector<int64_t> p = p2pParams(buf.data(), sent, strides, 1);
    failures[rank] =
        callChecked(kernels::strataSendF32, context.get(), p.data());
  });
  EXPECT_EQ(failures[0].kind, 0) << failures[0].message;
  EXPECT_EQ(failures[1].kind, kStatusFailure);
  EXPECT_EQ(failures[1].a, STRATA_STATUS_UNAVAILABLE);
  EXPECT_STREQ(failures[1].message,
               "strata_rt_recv_f32: the communicator's recv from rank 0 "
               "failed on rank 1 of 2: UNAVAILABLE: rank 0 sent 16 bytes "
               "with tag 21250, expected 32");
}

// Extents are another process's bytes: none a tensor has means damage.
TEST(PipelineTransferTest, ExtentsNoTensorHasEndTheRunDataLoss) {
  const int64_t bad[][4] = {{1, 1, -3, 4},
                            {1 << 20, 1 << 20, 1 << 20, 1 << 20},
                            {1, 1, 1, int64_t{1} << 43}};
  for (const auto& sizes : bad) {
    FakeGroup group(2);
    CheckFailure failure;
    group.run([&](uint32_t rank) {
      strata_communicator_t comm = group.communicator(rank);
      if (rank == 0) {
        // What a damaged sender would put on the wire.
        strata_status_t status = comm.send(comm.self, sizes, sizeof(sizes), 1,
                                           STRATA_COMMUNICATOR_TAG_STAGE);
        EXPECT_EQ(status, nullptr);
        return;
      }
      KernelContext context;
      context.get()->communicator = &comm;
      context.get()->parallel = layoutOf(rank, 1, 2);
      int64_t extents[4] = {7, 7, 7, 7};
      failure = receive(context.get(), 0, &extents, nullptr);
      for (int d = 0; d < 4; ++d) EXPECT_EQ(extents[d], 7);
    });
    EXPECT_EQ(failure.kind, kStatusFailure);
    EXPECT_EQ(failure.a, STRATA_STATUS_DATA_LOSS);
    const std::string expected =
        "strata_rt_recv_extents_f32: rank 0 sent the extents [" +
        std::to_string(sizes[0]) + ", " + std::to_string(sizes[1]) + ", " +
        std::to_string(sizes[2]) + ", " + std::to_string(sizes[3]) +
        "], which no tensor has";
    EXPECT_EQ(failure.message, expected);
  }
}

// A dim the receiving code fixes must be the message's.
TEST(PipelineTransferTest, ExtentsOtherThanTheCodeFixesEndTheRunDataLoss) {
  FakeGroup group(2);
  CheckFailure failure;
  group.run([&](uint32_t rank) {
    strata_communicator_t comm = group.communicator(rank);
    if (rank == 0) {
      const int64_t sizes[4] = {1, 2, 3, 64};
      strata_status_t status = comm.send(comm.self, sizes, sizeof(sizes), 1,
                                         STRATA_COMMUNICATOR_TAG_STAGE);
      EXPECT_EQ(status, nullptr);
      return;
    }
    KernelContext context;
    context.get()->communicator = &comm;
    context.get()->parallel = layoutOf(rank, 1, 2);
    int64_t extents[4] = {1, -1, -1, 32};
    failure = receive(context.get(), 0, &extents, nullptr);
  });
  EXPECT_EQ(failure.kind, kStatusFailure);
  EXPECT_EQ(failure.a, STRATA_STATUS_DATA_LOSS);
  EXPECT_EQ(std::string(failure.message),
            "strata_rt_recv_extents_f32: rank 0 sent a tensor of extents "
            "[1, 2, 3, 64] where the code expects [1, -1, -1, 32] (-1: any)");
}

TEST(PipelineTransferTest, WithoutSendAndRecvTheRunEndsFailedPrecondition) {
  std::vector<float> buf(8, 1.0f);
  const int64_t sizes[4] = {1, 1, 2, 4}, strides[4] = {8, 8, 4, 1};
  std::vector<int64_t> p = p2pParams(buf.data(), sizes, strides, 1);
  FakeGroup group(2);
  strata_communicator_t noSend = group.communicator(0);
  noSend.send = nullptr;
  strata_communicator_t noRecv = group.communicator(0);
  noRecv.recv = nullptr;
  for (const strata_communicator_t* comm :
       {static_cast<const strata_communicator_t*>(nullptr),
        static_cast<const strata_communicator_t*>(&noSend),
        static_cast<const strata_communicator_t*>(&noRecv)}) {
    KernelContext context;
    context.get()->communicator = comm;
    context.get()->parallel = layoutOf(0, 1, 2);
    for (auto* import : {kernels::strataSendF32, kernels::strataRecvExtentsF32,
                         kernels::strataRecvF32}) {
      CheckFailure failure = callChecked(import, context.get(), p.data());
      EXPECT_EQ(failure.kind, kStatusFailure);
      EXPECT_EQ(failure.a, STRATA_STATUS_FAILED_PRECONDITION);
      EXPECT_NE(std::string(failure.message)
                    .find(": the run has no communicator able to send and "
                          "receive, and its code is pipeline stage 0 of 2; "
                          "give the session a communicator with send and "
                          "recv (strata_session_set_communicator)"),
                std::string::npos)
          << failure.message;
    }
  }
  // One of another size than the world's.
  FakeGroup three(3);
  strata_communicator_t comm = three.communicator(0);
  KernelContext context;
  context.get()->communicator = &comm;
  context.get()->parallel = layoutOf(0, 1, 2);
  CheckFailure failure =
      callChecked(kernels::strataSendF32, context.get(), p.data());
  EXPECT_EQ(failure.a, STRATA_STATUS_FAILED_PRECONDITION);
  EXPECT_STREQ(failure.message,
               "strata_rt_send_f32: the code is pipeline stage 0 of 2 of 1 "
               "tensor ranks each, 2 ranks in all; the session's "
               "communicator has 3");
  EXPECT_EQ(three.messages(STRATA_COMMUNICATOR_TAG_STAGE), 0);
}

// Its own stage, or none of the model's, is no peer: a bug of the code.
TEST(PipelineTransferTest, AStageThatIsNoOtherStageEndsTheRunInternal) {
  FakeGroup group(4);
  strata_communicator_t comm = group.communicator(2);
  std::vector<float> buf(8, 1.0f);
  const int64_t sizes[4] = {1, 1, 2, 4}, strides[4] = {8, 8, 4, 1};
  struct Case {
    ParallelLayout layout;
    int64_t stage;
  };
  const Case cases[] = {{layoutOf(2, 2, 2), 1},
                        {layoutOf(2, 2, 2), 2},
                        {layoutOf(2, 2, 2), -1},
                        // A model of one stage has no other.
                        {layoutOf(0, 2, 1), 0},
                        {layoutOf(0, 2, 1), 1}};
  for (const Case& c : cases) {
    KernelContext context;
    context.get()->communicator = &comm;
    context.get()->parallel = c.layout;
    std::vector<int64_t> p = p2pParams(buf.data(), sizes, strides, c.stage);
    CheckFailure failure =
        callChecked(kernels::strataSendF32, context.get(), p.data());
    EXPECT_EQ(failure.kind, kInternalFailure);
    EXPECT_STREQ(failure.node, "strata_rt_send_f32 stage");
    EXPECT_EQ(failure.a, c.stage);
    failure = callChecked(kernels::strataRecvF32, context.get(), p.data());
    EXPECT_EQ(failure.kind, kInternalFailure);
    EXPECT_STREQ(failure.node, "strata_rt_recv_f32 stage");
    failure =
        callChecked(kernels::strataRecvExtentsF32, context.get(), p.data());
    EXPECT_EQ(failure.kind, kInternalFailure);
    EXPECT_STREQ(failure.node, "strata_rt_recv_extents_f32 stage");
  }
  KernelContext context;
  context.get()->communicator = &comm;
  context.get()->parallel = layoutOf(2, 2, 2);
  const int64_t negative[4] = {1, -1, 2, 4};
  std::vector<int64_t> p = p2pParams(buf.data(), negative, strides, 0);
  CheckFailure failure =
      callChecked(kernels::strataRecvF32, context.get(), p.data());
  EXPECT_EQ(failure.kind, kInternalFailure);
  EXPECT_STREQ(failure.node, "strata_rt_recv_f32 size");
  p = p2pParams(nullptr, sizes, strides, 0);
  failure = callChecked(kernels::strataSendF32, context.get(), p.data());
  EXPECT_STREQ(failure.node, "strata_rt_send_f32 null BUF with elements");
  failure = callChecked(kernels::strataRecvExtentsF32, context.get(), p.data());
  EXPECT_STREQ(failure.node, "strata_rt_recv_extents_f32 null EXTENTS");
  EXPECT_EQ(group.messages(STRATA_COMMUNICATOR_TAG_STAGE), 0);
}

TEST(PipelineTransferTest, ATransportFailureEndsTheRunUnavailable) {
  strata_communicator_t comm;
  strata_communicator_init(&comm);
  comm.size = 2;
  comm.all_gather = testing::failingCommunicator().all_gather;
  comm.send = [](void*, const void*, size_t, uint32_t,
                 uint32_t) -> strata_status_t {
    return strata_status_create(STRATA_STATUS_UNAVAILABLE, nullptr, 0,
                                "link down");
  };
  comm.recv = [](void*, void*, size_t, uint32_t, uint32_t) -> strata_status_t {
    return nullptr;
  };
  KernelContext context;
  context.get()->communicator = &comm;
  context.get()->parallel = layoutOf(0, 1, 2);
  std::vector<float> buf(8, 1.0f);
  const int64_t sizes[4] = {1, 1, 2, 4}, strides[4] = {8, 8, 4, 1};
  std::vector<int64_t> p = p2pParams(buf.data(), sizes, strides, 1);
  CheckFailure failure =
      callChecked(kernels::strataSendF32, context.get(), p.data());
  EXPECT_EQ(failure.kind, kStatusFailure);
  EXPECT_EQ(failure.a, STRATA_STATUS_UNAVAILABLE);
  EXPECT_STREQ(failure.message,
               "strata_rt_send_f32: the communicator's send to rank 1 failed "
               "on rank 0 of 2: UNAVAILABLE: link down");
}

// Values whose sum depends on the order of the additions (tensor rank 0 a
// large number, 1 a small one, 2 the large one's negation), different in
// each stage.
float orderSensitive(uint32_t rank, int64_t index) {
  const uint32_t t = rank % 3, stage = rank / 3;
  const float large = 1e8f + static_cast<float>(index % 7 + stage) * 8.0f;
  if (t == 0) return large;
  if (t == 1) return 1.0f + static_cast<float>(index % 3 + stage);
  return -large;
}

// 2 stages of 3 tensor ranks: each stage's group sums its own ranks' parts
// in rank order, by send and recv only.
TEST(StageGroupCollectivesTest, AllReduceSumsTheStagesGroupInRankOrder) {
  constexpr uint32_t kTensorRanks = 3, kStages = 2;
  constexpr uint32_t kWorld = kTensorRanks * kStages;
  const int64_t dims[4] = {1, 2, 3, 4};
  FakeGroup group(kWorld);
  std::vector<std::vector<float>> outs(kWorld);
  std::vector<CheckFailure> failures(kWorld);
  group.run([&](uint32_t rank) {
    StridedInput in(dims, rank, orderSensitive);
    KernelContext context;
    strata_communicator_t comm = group.communicator(rank);
    context.get()->communicator = &comm;
    context.get()->parallel = layoutOf(rank, kTensorRanks, kStages);
    outs[rank].assign(static_cast<size_t>(in.count()), 0.0f);
    std::vector<int64_t> p =
        collectiveParams(in.storage.data(), in.sizes, in.strides,
                         outs[rank].data(), 0, kTensorRanks);
    failures[rank] =
        callChecked(kernels::strataAllReduceF32, context.get(), p.data());
  });
  for (uint32_t r = 0; r < kWorld; ++r)
    ASSERT_EQ(failures[r].kind, 0)
        << "rank " << r << ": " << failures[r].message;
  for (uint32_t r = 0; r < kWorld; ++r) {
    const uint32_t first = r / kTensorRanks * kTensorRanks;
    for (int64_t i = 0; i < 24; ++i) {
      const float expected =
          (orderSensitive(first, i) + orderSensitive(first + 1, i)) +
          orderSensitive(first + 2, i);
      ASSERT_EQ(bits(outs[r][i]), bits(expected)) << "rank " << r << " " << i;
    }
  }
  EXPECT_EQ(group.calls(), 0);
  // Every ordered pair of a group's ranks, in both stages.
  EXPECT_EQ(group.messages(STRATA_COMMUNICATOR_TAG_GROUP), 2 * 3 * 2);
}

// 2 stages of 2 tensor ranks gather along an inner axis (parts
// interleaved) and the leading one (parts straight into OUT).
TEST(StageGroupCollectivesTest, AllGatherStacksTheStagesGroupOnly) {
  constexpr uint32_t kTensorRanks = 2, kStages = 2;
  constexpr uint32_t kWorld = kTensorRanks * kStages;
  const int64_t dims[4] = {2, 1, 3, 2};
  for (int64_t axis : {0, 2}) {
    FakeGroup group(kWorld);
    std::vector<std::vector<float>> outs(kWorld);
    group.run([&](uint32_t rank) {
      StridedInput in(dims, rank, distinct);
      KernelContext context;
      strata_communicator_t comm = group.communicator(rank);
      context.get()->communicator = &comm;
      context.get()->parallel = layoutOf(rank, kTensorRanks, kStages);
      outs[rank].assign(static_cast<size_t>(in.count() * kTensorRanks), 0.0f);
      std::vector<int64_t> p =
          collectiveParams(in.storage.data(), in.sizes, in.strides,
                           outs[rank].data(), axis, kTensorRanks);
      kernels::strataAllGatherF32(context.get(), p.data());
    });
    int64_t out[4] = {2, 1, 3, 2};
    out[axis] *= kTensorRanks;
    for (uint32_t r = 0; r < kWorld; ++r) {
      const uint32_t first = r / kTensorRanks * kTensorRanks;
      int64_t flat = 0;
      for (int64_t a = 0; a < out[0]; ++a)
        for (int64_t c = 0; c < out[2]; ++c)
          for (int64_t e = 0; e < out[3]; ++e, ++flat) {
            int64_t index[4] = {a, 0, c, e};
            const uint32_t part =
                static_cast<uint32_t>(index[axis] / dims[axis]);
            index[axis] %= dims[axis];
            const int64_t within = (index[0] * 3 + index[2]) * 2 + index[3];
            ASSERT_EQ(outs[r][flat], distinct(first + part, within))
                << "axis " << axis << " rank " << r << " at " << flat;
          }
    }
    EXPECT_EQ(group.calls(), 0);
  }
}

TEST(StageGroupCollectivesTest, ARankCountOtherThanTheStagesEndsTheRun) {
  FakeGroup group(4);
  strata_communicator_t comm = group.communicator(0);
  std::vector<float> in(8, 1.0f), out(32, 0.0f);
  const int64_t sizes[4] = {1, 1, 2, 4}, strides[4] = {8, 8, 4, 1};
  KernelContext context;
  context.get()->communicator = &comm;
  context.get()->parallel = layoutOf(0, 2, 2);
  // The world's size is no longer the group's.
  std::vector<int64_t> p =
      collectiveParams(in.data(), sizes, strides, out.data(), 3, 4);
  CheckFailure failure =
      callChecked(kernels::strataAllGatherF32, context.get(), p.data());
  EXPECT_EQ(failure.kind, kStatusFailure);
  EXPECT_EQ(failure.a, STRATA_STATUS_FAILED_PRECONDITION);
  EXPECT_STREQ(failure.message,
               "strata_rt_all_gather_f32: the code was compiled for a "
               "tensor-parallel group of 4 ranks, the module's pipeline "
               "stage has 2");
  comm.recv = nullptr;
  p = collectiveParams(in.data(), sizes, strides, out.data(), 3, 2);
  failure = callChecked(kernels::strataAllReduceF32, context.get(), p.data());
  EXPECT_EQ(failure.a, STRATA_STATUS_FAILED_PRECONDITION);
  EXPECT_STREQ(failure.message,
               "strata_rt_all_reduce_f32: the code is pipeline stage 0 of 2, "
               "whose group exchanges by send and recv over a communicator "
               "of 4 ranks; the session's communicator has 4 ranks and no "
               "send or recv");
  EXPECT_EQ(group.messages(STRATA_COMMUNICATOR_TAG_GROUP), 0);
}

}  // namespace
}  // namespace strata::runtime
