//===- LowerToLinalg.cpp - strata -> linalg/tensor/arith/math -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Drives the dialect conversion; the patterns live in passes/lowering/ by
// op family.

#include "passes/Passes.h"

#include "dialects/strata/IR/StrataOps.h"
#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace strata {
#define GEN_PASS_DEF_LOWERTOLINALGPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

struct LowerToLinalgPass : impl::LowerToLinalgPassBase<LowerToLinalgPass> {
  void runOnOperation() override {
    Operation *root = getOperation();
    // Unsigned tensors: elementwise ops and casts pick unsigned arith ops
    // (lowering/ElementwiseLowering.cpp) and data movement only copies
    // elements; the other patterns build signed or typed scalar arithmetic,
    // which no transformer export has needed on unsigned data yet.
    WalkResult unsupported = root->walk([](Operation *op) {
      if (!isa<ir::StrataDialect>(op->getDialect()))
        return WalkResult::advance();
      if (isa<ir::AddOp, ir::SubOp, ir::MulOp, ir::DivOp, ir::PowOp, ir::ModOp,
              ir::MaxOp, ir::MinOp, ir::EqualOp, ir::LessOp, ir::LessEqualOp,
              ir::GreaterOp, ir::GreaterEqualOp, ir::NegOp, ir::AbsOp,
              ir::ReluOp, ir::WhereOp, ir::CastOp, ir::ConstantOp,
              ir::ReshapeOp, ir::TransposeOp, ir::ConcatOp, ir::SliceOp,
              ir::SplitOp, ir::GatherOp, ir::ExpandOp, ir::TileOp,
              ir::ShapeOp>(op))
        return WalkResult::advance();
      for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                       op->getResultTypes()))
        if (auto tt = dyn_cast<RankedTensorType>(t);
            tt && tt.getElementType().isUnsignedInteger()) {
          op->emitOpError() << "unsigned element type " << tt.getElementType()
                            << " is not supported by the CPU lowering yet";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();

    ConversionTarget target(getContext());
    target.addIllegalDialect<ir::StrataDialect>();
    // Run-time checks stay for the back end (codegen/cpu/RuntimeChecks.cpp).
    target.addLegalOp<ir::CheckOp>();
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           func::FuncDialect>();
    // Scalar casts between unsigned and signless integers in generic bodies.
    target.addLegalOp<UnrealizedConversionCastOp>();
    RewritePatternSet patterns(&getContext());
    lowering::populateElementwiseLoweringPatterns(patterns);
    lowering::populateStructuredLoweringPatterns(patterns);
    lowering::populateDataMovementLoweringPatterns(patterns);
    if (failed(applyPartialConversion(root, target, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace strata
