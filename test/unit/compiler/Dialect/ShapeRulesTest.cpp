//===- ShapeRulesTest.cpp - Broadcasting and shape rule tests -------------===//
// SPDX-License-Identifier: Apache-2.0

#include "dialects/strata/IR/ShapeRules.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"

#include <gtest/gtest.h>

using namespace strata::ir;
using Shape = llvm::SmallVector<int64_t>;

namespace {

constexpr int64_t kDyn = mlir::ShapedType::kDynamic;

TEST(ShapeRulesTest, BroadcastAlignsFromTheBack) {
  EXPECT_EQ(broadcastShapes({2, 3, 4}, {4}), Shape({2, 3, 4}));
  EXPECT_EQ(broadcastShapes({2, 1, 4}, {3, 1}), Shape({2, 3, 4}));
  EXPECT_EQ(broadcastShapes({}, {5, 6}), Shape({5, 6}));
  EXPECT_EQ(broadcastShapes({1}, {}), Shape({1}));
}

TEST(ShapeRulesTest, BroadcastRejectsMismatchedExtents) {
  EXPECT_FALSE(broadcastShapes({2, 3}, {4}).has_value());
  EXPECT_FALSE(broadcastShapes({2, 3}, {2, 1, 2}).has_value());
}

TEST(ShapeRulesTest, BroadcastWithDynamicExtents) {
  // A dynamic extent against N > 1 must be N at run time.
  EXPECT_EQ(broadcastShapes({kDyn, 4}, {3, 4}), Shape({3, 4}));
  // Against 1 or another dynamic extent it stays dynamic.
  EXPECT_EQ(broadcastShapes({kDyn, 4}, {1, 4}), Shape({kDyn, 4}));
  EXPECT_EQ(broadcastShapes({kDyn}, {kDyn}), Shape({kDyn}));
  EXPECT_EQ(broadcastShapes({3}, {kDyn}), Shape({3}));
}

TEST(ShapeRulesTest, CompatibleShapeTreatsDynamicAsWildcard) {
  EXPECT_TRUE(isCompatibleShape({2, kDyn}, {2, 7}));
  EXPECT_TRUE(isCompatibleShape({2, 7}, {kDyn, kDyn}));
  EXPECT_FALSE(isCompatibleShape({2, 7}, {2, 8}));
  EXPECT_FALSE(isCompatibleShape({2}, {2, 1}));
}

TEST(ShapeRulesTest, BroadcastableToIsOneDirectional) {
  EXPECT_TRUE(isBroadcastableTo({1, 1, 8, 8}, {2, 12, 8, 8}));
  EXPECT_TRUE(isBroadcastableTo({8}, {2, 8}));
  EXPECT_FALSE(isBroadcastableTo({2, 8}, {8}));
  EXPECT_FALSE(isBroadcastableTo({3, 8}, {2, 8}));
  EXPECT_TRUE(isBroadcastableTo({kDyn, 8}, {2, 8}));
}

TEST(ShapeRulesTest, NormalizeAxis) {
  EXPECT_EQ(normalizeAxis(-1, 3), 2);
  EXPECT_EQ(normalizeAxis(0, 3), 0);
  EXPECT_EQ(normalizeAxis(-3, 3), 0);
  EXPECT_FALSE(normalizeAxis(3, 3).has_value());
  EXPECT_FALSE(normalizeAxis(-4, 3).has_value());
  EXPECT_FALSE(normalizeAxis(0, 0).has_value());
}

TEST(ShapeRulesTest, MatmulShapes) {
  EXPECT_EQ(inferMatmulShape({2, 3}, {3, 4}), Shape({2, 4}));
  // Batch dims broadcast.
  EXPECT_EQ(inferMatmulShape({1, 12, 8, 64}, {1, 12, 64, 8}),
            Shape({1, 12, 8, 8}));
  EXPECT_EQ(inferMatmulShape({5, 2, 3}, {3, 4}), Shape({5, 2, 4}));
  EXPECT_EQ(inferMatmulShape({7, 1, 2, 3}, {6, 3, 4}), Shape({7, 6, 2, 4}));
  // 1-D operands are promoted and the promoted dim dropped.
  EXPECT_EQ(inferMatmulShape({3}, {3, 4}), Shape({4}));
  EXPECT_EQ(inferMatmulShape({2, 3}, {3}), Shape({2}));
  EXPECT_EQ(inferMatmulShape({3}, {3}), Shape({}));
  // Dynamic token dims pass through.
  EXPECT_EQ(inferMatmulShape({kDyn, kDyn, 768}, {768, 2304}),
            Shape({kDyn, kDyn, 2304}));
}

TEST(ShapeRulesTest, MatmulRejectsBadOperands) {
  EXPECT_FALSE(inferMatmulShape({2, 3}, {4, 5}).has_value());
  EXPECT_FALSE(inferMatmulShape({}, {3, 4}).has_value());
  EXPECT_FALSE(inferMatmulShape({2, 2, 3}, {3, 3, 4}).has_value());
}

TEST(ShapeRulesTest, ReduceShape) {
  EXPECT_EQ(inferReduceShape({2, 8, 64}, {2}, true), Shape({2, 8, 1}));
  EXPECT_EQ(inferReduceShape({2, 8, 64}, {0, 2}, false), Shape({8}));
  EXPECT_EQ(inferReduceShape({4}, {0}, false), Shape({}));
}

TEST(ShapeRulesTest, StaticElementCount) {
  EXPECT_EQ(staticElementCount({2, 3, 4}), 24);
  EXPECT_EQ(staticElementCount({}), 1);
  EXPECT_EQ(staticElementCount({0, 5}), 0);
  EXPECT_FALSE(staticElementCount({2, kDyn}).has_value());
  // A hostile model's absurd dims must not overflow silently.
  EXPECT_FALSE(staticElementCount({INT64_MAX / 2, 4}).has_value());
}

TEST(ShapeRulesTest, FormatShape) {
  EXPECT_EQ(formatShape({2, kDyn, 64}), "2x?x64");
  EXPECT_EQ(formatShape({}), "scalar");
}

} // namespace
