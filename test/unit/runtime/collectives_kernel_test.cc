//===- collectives_kernel_test.cc - All-reduce and all-gather, directly ---===//
// SPDX-License-Identifier: Apache-2.0
// strata_rt_all_reduce_f32 and strata_rt_all_gather_f32 called as generated
// code calls them, by threads that play the ranks of a group over an
// in-process communicator (fake_communicator.h), on strided inputs; and
// every way a call can end the run.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collective_test_util.h"
#include "fake_communicator.h"
#include "kernel_context.h"
#include "kernels/collectives.h"
#include "run_context.h"
#include "strata_kernel_abi.h"
#include "thread_pool.h"

namespace strata::runtime {
namespace {

using testing::FakeGroup;

// Values whose sum depends on the order of the additions: rank 0 adds a
// large number, rank 1 a small one, rank 2 the large one's negation.
float orderSensitive(uint32_t rank, int64_t index) {
  const float large = 1e8f + static_cast<float>(index % 7) * 8.0f;
  if (rank == 0) return large;
  if (rank == 1) return 1.0f + static_cast<float>(index % 3);
  return -large;
}

float distinct(uint32_t rank, int64_t index) {
  return static_cast<float>(rank) * 1000.0f + static_cast<float>(index);
}

TEST(CollectivesTest, AllReduceAddsInRankOrderOnEveryRank) {
  constexpr uint32_t kRanks = 3;
  const int64_t dims[4] = {2, 3, 4, 5};
  FakeGroup group(kRanks);
  std::vector<std::vector<float>> outs(kRanks);
  group.run([&](uint32_t rank) {
    StridedInput in(dims, rank, orderSensitive);
    KernelContext context;
    strata_communicator_t comm = group.communicator(rank);
    context.get()->communicator = &comm;
    outs[rank].assign(static_cast<size_t>(in.count()), 0.0f);
    std::vector<int64_t> p = collectiveParams(
        in.storage.data(), in.sizes, in.strides, outs[rank].data(), 0, kRanks);
    kernels::strataAllReduceF32(context.get(), p.data());
  });
  EXPECT_EQ(group.calls(), 3);
  for (int64_t i = 0; i < 2 * 3 * 4 * 5; ++i) {
    const float expected =
        (orderSensitive(0, i) + orderSensitive(1, i)) + orderSensitive(2, i);
    for (uint32_t r = 0; r < kRanks; ++r)
      ASSERT_EQ(bits(outs[r][i]), bits(expected)) << "rank " << r << " " << i;
  }
  // Rank order matters: the small addend vanished into the large one.
  EXPECT_EQ(outs[0][0], 0.0f);
}

// Large enough for the sum to run in chunks on each rank's pool.
TEST(CollectivesTest, AllReduceOfContiguousInputOnAPool) {
  constexpr uint32_t kRanks = 2;
  const int64_t sizes[4] = {1, 1, 3, 100000};
  const int64_t strides[4] = {300000, 300000, 100000, 1};
  FakeGroup group(kRanks);
  std::vector<std::vector<float>> outs(kRanks);
  group.run([&](uint32_t rank) {
    std::vector<float> in(300000);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = distinct(rank, static_cast<int64_t>(i));
    ThreadPool pool(2);
    KernelContext context(&pool);
    strata_communicator_t comm = group.communicator(rank);
    context.get()->communicator = &comm;
    outs[rank].assign(in.size(), 0.0f);
    std::vector<int64_t> p = collectiveParams(in.data(), sizes, strides,
                                              outs[rank].data(), 0, kRanks);
    kernels::strataAllReduceF32(context.get(), p.data());
  });
  for (int64_t i = 0; i < 300000; i += 997) {
    EXPECT_EQ(outs[0][i], distinct(0, i) + distinct(1, i)) << i;
    EXPECT_EQ(outs[1][i], outs[0][i]) << i;
  }
}

class AllGatherAxisTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(AllGatherAxisTest, StacksTheRanksAlongTheAxis) {
  constexpr uint32_t kRanks = 3;
  const int64_t axis = GetParam();
  const int64_t dims[4] = {2, 3, 4, 5};
  FakeGroup group(kRanks);
  std::vector<std::vector<float>> outs(kRanks);
  group.run([&](uint32_t rank) {
    StridedInput in(dims, rank, distinct);
    KernelContext context;
    strata_communicator_t comm = group.communicator(rank);
    context.get()->communicator = &comm;
    outs[rank].assign(static_cast<size_t>(in.count() * kRanks), 0.0f);
    std::vector<int64_t> p =
        collectiveParams(in.storage.data(), in.sizes, in.strides,
                         outs[rank].data(), axis, kRanks);
    kernels::strataAllGatherF32(context.get(), p.data());
  });
  // OUT's dims: IN's with dim |axis| times the ranks; element [a, b, c, e]
  // of OUT is element (index along |axis| within its part) of rank
  // (index / IN's extent).
  int64_t out[4] = {2, 3, 4, 5};
  out[axis] *= kRanks;
  int64_t flat = 0;
  for (int64_t a = 0; a < out[0]; ++a)
    for (int64_t b = 0; b < out[1]; ++b)
      for (int64_t c = 0; c < out[2]; ++c)
        for (int64_t e = 0; e < out[3]; ++e, ++flat) {
          int64_t index[4] = {a, b, c, e};
          const uint32_t rank =
              static_cast<uint32_t>(index[axis] / dims[axis]);
          index[axis] %= dims[axis];
          const int64_t within =
              ((index[0] * 3 + index[1]) * 4 + index[2]) * 5 + index[3];
          for (uint32_t r = 0; r < kRanks; ++r)
            ASSERT_EQ(outs[r][flat], distinct(rank, within))
                << "axis " << axis << " rank " << r << " at " << flat;
        }
}

INSTANTIATE_TEST_SUITE_P(EveryAxis, AllGatherAxisTest,
                         ::testing::Values(0, 1, 2, 3));

struct ErrorCase {
  std::vector<float> in = std::vector<float>(8, 1.0f);
  std::vector<float> out = std::vector<float>(16, 0.0f);
  int64_t sizes[4] = {1, 1, 2, 4};
  int64_t strides[4] = {8, 8, 4, 1};
  std::vector<int64_t> p(int64_t axis, int64_t ranks) {
    return collectiveParams(in.data(), sizes, strides, out.data(), axis, ranks);
  }
};

TEST(CollectivesTest, WithoutACommunicatorTheRunEndsFailedPrecondition) {
  ErrorCase call;
  KernelContext context;
  std::vector<int64_t> p = call.p(3, 2);
  for (auto* import : {kernels::strataAllReduceF32,
                       kernels::strataAllGatherF32}) {
    CheckFailure failure = callChecked(import, context.get(), p.data());
    EXPECT_EQ(failure.kind, kStatusFailure);
    EXPECT_EQ(failure.a, STRATA_STATUS_FAILED_PRECONDITION);
    EXPECT_NE(std::string(failure.message)
                  .find("the run has no communicator, and its code is a rank "
                        "of a tensor-parallel group of 2 ranks; give the "
                        "session a communicator "
                        "(strata_session_set_communicator)"),
              std::string::npos)
        << failure.message;
  }
}

TEST(CollectivesTest, ACommunicatorOfAnotherSizeEndsTheRun) {
  ErrorCase call;
  FakeGroup group(1);
  strata_communicator_t comm = group.communicator(0);
  KernelContext context;
  context.get()->communicator = &comm;
  std::vector<int64_t> p = call.p(3, 2);
  CheckFailure failure =
      callChecked(kernels::strataAllGatherF32, context.get(), p.data());
  EXPECT_EQ(failure.kind, kStatusFailure);
  EXPECT_EQ(failure.a, STRATA_STATUS_FAILED_PRECONDITION);
  EXPECT_STREQ(failure.message,
               "strata_rt_all_gather_f32: the code was compiled for a "
               "tensor-parallel group of 2 ranks, the session's communicator "
               "has 1");
  EXPECT_EQ(group.calls(), 0);
}

TEST(CollectivesTest, ParametersNoCompilerEmitsEndTheRunInternal) {
  FakeGroup group(1);
  strata_communicator_t comm = group.communicator(0);
  KernelContext context;
  context.get()->communicator = &comm;
  for (int64_t axis : {-1, 4}) {
    ErrorCase call;
    std::vector<int64_t> p = call.p(axis, 1);
    CheckFailure failure =
        callChecked(kernels::strataAllGatherF32, context.get(), p.data());
    EXPECT_EQ(failure.kind, kInternalFailure);
    EXPECT_STREQ(failure.node, "strata_rt_all_gather_f32 axis");
    EXPECT_EQ(failure.a, axis);
  }
  ErrorCase negative;
  negative.sizes[2] = -2;
  std::vector<int64_t> p = negative.p(0, 1);
  CheckFailure failure =
      callChecked(kernels::strataAllReduceF32, context.get(), p.data());
  EXPECT_EQ(failure.kind, kInternalFailure);
  EXPECT_STREQ(failure.node, "strata_rt_all_reduce_f32 size");
  ErrorCase huge;
  huge.sizes[0] = huge.sizes[1] = huge.sizes[2] = huge.sizes[3] = 1 << 20;
  p = huge.p(0, 1);
  failure = callChecked(kernels::strataAllReduceF32, context.get(), p.data());
  EXPECT_EQ(failure.kind, kInternalFailure);
  EXPECT_STREQ(failure.node, "strata_rt_all_reduce_f32 element count");
  ErrorCase null;
  p = collectiveParams(nullptr, null.sizes, null.strides, null.out.data(), 0,
                       1);
  failure = callChecked(kernels::strataAllReduceF32, context.get(), p.data());
  EXPECT_EQ(failure.kind, kInternalFailure);
  EXPECT_EQ(group.calls(), 0);
}

TEST(CollectivesTest, ATransportFailureEndsTheRunUnavailable) {
  ErrorCase call;
  strata_communicator_t comm = testing::failingCommunicator();
  KernelContext context;
  context.get()->communicator = &comm;
  std::vector<int64_t> p = call.p(0, 1);
  CheckFailure failure =
      callChecked(kernels::strataAllReduceF32, context.get(), p.data());
  EXPECT_EQ(failure.kind, kStatusFailure);
  EXPECT_EQ(failure.a, STRATA_STATUS_UNAVAILABLE);
  EXPECT_STREQ(failure.message,
               "strata_rt_all_reduce_f32: the communicator's all_gather "
               "failed on rank 0 of 1: UNAVAILABLE: link down");
}

// No element, no exchange; a group of one copies.
TEST(CollectivesTest, EmptyAndSingleRankCalls) {
  FakeGroup group(1);
  strata_communicator_t comm = group.communicator(0);
  KernelContext context;
  context.get()->communicator = &comm;
  ErrorCase empty;
  empty.sizes[3] = 0;
  std::vector<int64_t> p = empty.p(1, 1);
  EXPECT_EQ(callChecked(kernels::strataAllGatherF32, context.get(), p.data())
                .kind,
            0);
  EXPECT_EQ(group.calls(), 0);
  ErrorCase one;
  for (size_t i = 0; i < one.in.size(); ++i) one.in[i] = float(i);
  p = one.p(2, 1);
  EXPECT_EQ(
      callChecked(kernels::strataAllGatherF32, context.get(), p.data()).kind,
      0);
  for (size_t i = 0; i < one.in.size(); ++i) EXPECT_EQ(one.out[i], float(i));
}

}  // namespace
}  // namespace strata::runtime
