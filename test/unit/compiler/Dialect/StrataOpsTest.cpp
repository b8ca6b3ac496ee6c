//===- StrataOpsTest.cpp - Building, verifying and folding strata ops -----===//
// SPDX-License-Identifier: Apache-2.0
// Behaviour IR text cannot show: C++ builders produce verifiable ops and the
// constant materializer round-trips folded values.

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace strata::ir;

namespace {

class StrataOpsTest : public ::testing::Test {
protected:
  StrataOpsTest() : builder(&context) {
    context.loadDialect<StrataDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  RankedTensorType f32Tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  Value splat(ArrayRef<int64_t> shape, float value) {
    auto type = f32Tensor(shape);
    return ConstantOp::create(builder, builder.getUnknownLoc(),
                              DenseElementsAttr::get(type, value));
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

TEST_F(StrataOpsTest, BuiltBroadcastAddVerifies) {
  Value a = splat({2, 64}, 1.0f), b = splat({64}, 2.0f);
  auto add = AddOp::create(builder, builder.getUnknownLoc(), f32Tensor({2, 64}),
                           a, b);
  EXPECT_TRUE(succeeded(verify(add)));
}

TEST_F(StrataOpsTest, VerifierRejectsWrongBroadcastResult) {
  // Diagnostics go to a handler so the test output stays clean.
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  Value a = splat({2, 64}, 1.0f), b = splat({64}, 2.0f);
  auto add = AddOp::create(builder, builder.getUnknownLoc(), f32Tensor({3, 64}),
                           a, b);
  EXPECT_TRUE(failed(verify(add)));
  EXPECT_EQ(message, "'strata.add' op expected result shape 2x64, got 3x64");
}

TEST_F(StrataOpsTest, ConstantFoldsToItsValueAndMaterializes) {
  auto type = f32Tensor({4});
  auto attr = DenseElementsAttr::get(type, 3.0f);
  auto constant =
      ConstantOp::create(builder, builder.getUnknownLoc(), attr);
  SmallVector<OpFoldResult> results;
  ASSERT_TRUE(succeeded(constant->fold(results)));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(dyn_cast<Attribute>(results[0]), attr);
  Operation *materialized =
      context.getLoadedDialect<StrataDialect>()->materializeConstant(
          builder, attr, type, builder.getUnknownLoc());
  ASSERT_NE(materialized, nullptr);
  EXPECT_TRUE(isa<ConstantOp>(materialized));
}

TEST_F(StrataOpsTest, ShapeOfStaticTensorFoldsToConstant) {
  Value x = splat({2, 8, 64}, 0.0f);
  auto shape = ShapeOp::create(
      builder, builder.getUnknownLoc(),
      RankedTensorType::get({3}, builder.getI64Type()), x,
      builder.getI64IntegerAttr(0), IntegerAttr());
  SmallVector<OpFoldResult> results;
  ASSERT_TRUE(succeeded(shape->fold(results)));
  auto dense = dyn_cast<DenseIntElementsAttr>(dyn_cast<Attribute>(results[0]));
  ASSERT_TRUE(dense);
  SmallVector<int64_t> values(dense.getValues<int64_t>());
  EXPECT_EQ(values, SmallVector<int64_t>({2, 8, 64}));
}

} // namespace
