//===- block_pool_test.cc - The blocks of a paged KV cache ----------------===//
// SPDX-License-Identifier: Apache-2.0

#include "generate/block_pool.h"

#include <gtest/gtest.h>

#include <vector>

namespace strata::runtime {
namespace {

TEST(BlockPoolTest, AllocatesEveryBlockOnceThenNone) {
  BlockPool pool(3, 4);
  std::vector<int64_t> taken;
  for (int i = 0; i < 3; ++i) taken.push_back(pool.allocate());
  EXPECT_EQ(taken, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(pool.allocate(), -1);
  EXPECT_EQ(pool.used(), 3);
  EXPECT_EQ(pool.available(), 0);
  pool.release(1);
  EXPECT_EQ(pool.used(), 2);
  EXPECT_EQ(pool.allocate(), 1);
}

// A published block outlives its sequence: a later one with the same
// tokens after the same parent shares it (held twice at once), one with
// other tokens or another parent does not.
TEST(BlockPoolTest, PublishedBlocksAreSharedByTokensAndParent) {
  BlockPool pool(4, 2);
  const int64_t first[2] = {7, 8}, second[2] = {9, 10}, other[2] = {7, 9};
  const int64_t a = pool.allocate(), b = pool.allocate();
  const uint64_t ka = pool.keyOf(0, first);
  const uint64_t kb = pool.keyOf(ka, second);
  pool.publish(a, ka, 0, first);
  pool.publish(b, kb, ka, second);
  EXPECT_EQ(pool.share(ka, 0, first), a);
  EXPECT_EQ(pool.used(), 2);
  EXPECT_EQ(pool.share(pool.keyOf(0, other), 0, other), -1);
  // The same tokens after another start are another block.
  EXPECT_EQ(pool.share(pool.keyOf(0, second), 0, second), -1);
  // A key that names a block whose stored parent differs is refused.
  EXPECT_EQ(pool.share(kb, 0, second), -1);
  pool.release(a);
  pool.release(a);
  pool.release(b);
  EXPECT_EQ(pool.used(), 0);
  EXPECT_EQ(pool.available(), 4);
  // Still findable after every holder left.
  EXPECT_EQ(pool.share(kb, ka, second), b);
  EXPECT_EQ(pool.used(), 1);
}

// With no free block left, the least recently released published block
// goes to a new owner and can no longer be found.
TEST(BlockPoolTest, EvictsTheLeastRecentlyReleasedPublishedBlock) {
  BlockPool pool(2, 1);
  const int64_t t1[1] = {1}, t2[1] = {2};
  const int64_t a = pool.allocate(), b = pool.allocate();
  pool.publish(a, pool.keyOf(0, t1), 0, t1);
  pool.publish(b, pool.keyOf(0, t2), 0, t2);
  pool.release(b);
  pool.release(a);
  EXPECT_EQ(pool.allocate(), b);
  EXPECT_EQ(pool.share(pool.keyOf(0, t2), 0, t2), -1);
  EXPECT_EQ(pool.share(pool.keyOf(0, t1), 0, t1), a);
  EXPECT_EQ(pool.allocate(), -1);
}

// A block published twice, or a second block under a key already taken,
// keeps the first.
TEST(BlockPoolTest, FirstPublicationWins) {
  BlockPool pool(2, 1);
  const int64_t t[1] = {5};
  const uint64_t key = pool.keyOf(0, t);
  const int64_t a = pool.allocate(), b = pool.allocate();
  pool.publish(a, key, 0, t);
  pool.publish(b, key, 0, t);
  pool.release(b);  // unpublished: back to the free list
  EXPECT_EQ(pool.share(key, 0, t), a);
  EXPECT_EQ(pool.allocate(), b);
}

}  // namespace
}  // namespace strata::runtime
