//===- panel_schedule_test.cc - Decode matmul chunk boundaries -------------===//
// SPDX-License-Identifier: Apache-2.0
// The chunks cover every panel once, in order, within the bounds array; they
// end small (the tail a thread waits for) and start at the cap.

#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/panel_schedule.h"

namespace strata::runtime::kernels {
namespace {

struct Case {
  int64_t panels, threads, maxChunk;
};

TEST(PanelSchedule, CoversEveryPanelInOrder) {
  for (Case c : {Case{1, 2, 4}, Case{3, 2, 4}, Case{24, 2, 4},
                 Case{64, 2, 8}, Case{1571, 2, 197}, Case{1571, 16, 25},
                 Case{1571, 64, 7}, Case{100000, 64, 391}, Case{24, 64, 4},
                 Case{7, 1, 4}}) {
    int64_t bounds[kMaxPanelChunks + 1];
    const int n = guidedPanelChunks(c.panels, c.threads, c.maxChunk, 4, bounds);
    ASSERT_GE(n, 1);
    ASSERT_LE(n, kMaxPanelChunks);
    EXPECT_EQ(bounds[0], 0);
    EXPECT_EQ(bounds[n], c.panels) << c.panels << " panels";
    for (int i = 0; i < n; ++i) EXPECT_LT(bounds[i], bounds[i + 1]);
  }
}

TEST(PanelSchedule, LargeFirstSmallLast) {
  int64_t bounds[kMaxPanelChunks + 1];
  // A layer matrix of 768 columns on two threads: four-panel chunks first,
  // one-panel chunks last.
  int n = guidedPanelChunks(24, 2, 4, 4, bounds);
  EXPECT_EQ(bounds[1], 4);
  EXPECT_EQ(bounds[n] - bounds[n - 1], 1);
  // The LM head: the first chunk is the cap, a multiple of the tile width.
  n = guidedPanelChunks(1571, 2, 197, 4, bounds);
  EXPECT_EQ(bounds[1], 196);
  EXPECT_EQ(bounds[n] - bounds[n - 1], 1);
  for (int i = 1; i < n; ++i)
    EXPECT_LE(bounds[i + 1] - bounds[i], bounds[i] - bounds[i - 1]);
}

}  // namespace
}  // namespace strata::runtime::kernels
