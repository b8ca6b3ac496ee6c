//===- LowerToLinalg.cpp - strata -> linalg/tensor/arith/math -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Drives the dialect conversion; the patterns live in passes/lowering/ by
// op family.

#include "passes/Passes.h"

#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"
#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

namespace strata {
#define GEN_PASS_DEF_LOWERTOLINALGPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

/// Reports what the lowering patterns cannot handle on a valid op, before
/// the conversion, so the error says why and names the ONNX nodes.
LogicalResult checkLowerable(Operation *op) {
  // Unsigned tensors: elementwise ops and casts pick unsigned arith ops
  // (lowering/ElementwiseLowering.cpp) and data movement only copies
  // elements; the other patterns build signed or typed scalar arithmetic,
  // which no transformer export has needed on unsigned data yet.
  if (!isa<ir::AddOp, ir::SubOp, ir::MulOp, ir::DivOp, ir::PowOp, ir::ModOp,
           ir::MaxOp, ir::MinOp, ir::EqualOp, ir::LessOp, ir::LessEqualOp,
           ir::GreaterOp, ir::GreaterEqualOp, ir::NegOp, ir::AbsOp, ir::ReluOp,
           ir::WhereOp, ir::CastOp, ir::ConstantOp, ir::ReshapeOp,
           ir::TransposeOp, ir::ConcatOp, ir::SliceOp, ir::SplitOp,
           ir::GatherOp, ir::GatherElementsOp, ir::PadOp, ir::ExpandOp,
           ir::TileOp,
           ir::ShapeOp, ir::BitwiseAndOp, ir::BitwiseOrOp, ir::BitwiseXorOp,
           ir::BitwiseNotOp, ir::ShiftLeftOp, ir::ShiftRightOp>(op))
    for (Type t :
         llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
      if (auto tt = dyn_cast<RankedTensorType>(t);
          tt && tt.getElementType().isUnsignedInteger())
        return op->emitOpError()
               << "unsigned element type " << tt.getElementType()
               << " is not supported by the CPU lowering yet"
               << lowering::describeOnnxNodes(op->getLoc());
  // Windows: the padded extents, the output's and (average pooling) the
  // per-window counts are computed from static spatial dims.
  if (isa<ir::ConvOp, ir::PoolOp>(op)) {
    auto in = cast<RankedTensorType>(op->getOperand(0).getType());
    auto conv = dyn_cast<ir::ConvOp>(op);
    auto pool = dyn_cast<ir::PoolOp>(op);
    // [N, C, S...], or [N, S..., C] channels last.
    const bool channelsLast = (conv && conv.getChannelsLast()) ||
                              (pool && pool.getChannelsLast());
    const size_t lead = channelsLast ? 1 : 2;
    if (llvm::any_of(in.getShape().drop_front(lead), ShapedType::isDynamic))
      return op->emitOpError()
             << "expected static spatial dims, got "
             << ir::formatShape(in.getShape())
             << lowering::describeOnnxNodes(op->getLoc());
  }
  // Attention: the grouping of query heads onto key/value heads is an
  // affine map with a constant divisor, and the default scale needs D.
  if (auto attention = dyn_cast<ir::AttentionOp>(op)) {
    auto q = cast<RankedTensorType>(attention.getQuery().getType());
    auto k = cast<RankedTensorType>(attention.getKey().getType());
    if (q.isDynamicDim(1) || k.isDynamicDim(1) || q.isDynamicDim(3))
      return op->emitOpError()
             << "expected static query heads, key/value heads and head dim "
             << "(the dims 1 and 3 of [B, H, S, D]), got query "
             << ir::formatShape(q.getShape()) << " and key "
             << ir::formatShape(k.getShape())
             << lowering::describeOnnxNodes(op->getLoc());
  }
  return success();
}

struct LowerToLinalgPass : impl::LowerToLinalgPassBase<LowerToLinalgPass> {
  void runOnOperation() override {
    Operation *root = getOperation();
    WalkResult unsupported = root->walk([](Operation *op) {
      if (!isa<ir::StrataDialect>(op->getDialect()) ||
          succeeded(checkLowerable(op)))
        return WalkResult::advance();
      return WalkResult::interrupt();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();

    ConversionTarget target(getContext());
    target.addIllegalDialect<ir::StrataDialect>();
    // Run-time checks stay for the back end (codegen/cpu/RuntimeChecks.cpp).
    target.addLegalOp<ir::CheckOp>();
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           func::FuncDialect, scf::SCFDialect>();
    // Scalar casts between unsigned and signless integers in generic bodies.
    target.addLegalOp<UnrealizedConversionCastOp>();
    RewritePatternSet patterns(&getContext());
    lowering::populateElementwiseLoweringPatterns(patterns);
    lowering::populateStructuredLoweringPatterns(patterns);
    lowering::populateDataMovementLoweringPatterns(patterns);
    lowering::populateCacheLoweringPatterns(patterns);
    lowering::populateWindowLoweringPatterns(patterns);
    lowering::populateScatterLoweringPatterns(patterns);
    lowering::populateTopKLoweringPatterns(patterns);
    lowering::populateEinsumLoweringPatterns(patterns);
    // The conversion's own "failed to legalize" error carries only the
    // location, which tools print as the model file: add the node names.
    ScopedDiagnosticHandler addNodes(&getContext(), [](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error &&
          StringRef(diag.str()).starts_with("failed to legalize operation"))
        diag << lowering::describeOnnxNodes(diag.getLocation());
      return failure(); // on to the next handler
    });
    if (failed(applyPartialConversion(root, target, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace strata
