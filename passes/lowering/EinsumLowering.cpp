//===- EinsumLowering.cpp - strata.einsum -> linalg.generic ----------------===//
// SPDX-License-Identifier: Apache-2.0
// One linalg.generic: an iteration dim per letter (the result's parallel,
// the summed ones reductions), each operand read through the map of its
// letters (a repeated letter reads the diagonal, a static 1 against a
// larger extent broadcasts), the product of the operands accumulated into
// a zero-filled result.

#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/RuntimeChecks.h"

#include "dialects/strata/IR/EinsumEquation.h"
#include "dialects/strata/IR/StrataOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace strata::ir;

namespace strata::lowering {
namespace {

FailureOr<Value> lowerEinsum(EinsumOp op, EinsumOp::Adaptor adaptor,
                             ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  EinsumEquation eq;
  std::string error;
  if (!parseEinsumEquation(op.getEquation(), eq, error))
    return rewriter.notifyMatchFailure(op, error);
  const std::string letters = eq.loopLetters();
  auto loopDim = [&](char c) { return letters.find(c); };
  ValueRange inputs = adaptor.getInputs();

  // Each letter's extent (static where an operand has it above 1) and the
  // operand dim it is read from at run time.
  SmallVector<int64_t> extent(letters.size(), 1);
  SmallVector<std::pair<Value, int64_t>> source(letters.size());
  for (auto [word, input] : llvm::zip(eq.operands, inputs))
    for (auto [d, c] : llvm::enumerate(word)) {
      const int64_t e = typeOf(input).getDimSize(d);
      const size_t l = loopDim(c);
      if (e == 1)
        continue;
      if (!source[l].first || !ShapedType::isDynamic(e))
        source[l] = {input, static_cast<int64_t>(d)};
      if (!ShapedType::isDynamic(e))
        extent[l] = e;
      else if (extent[l] == 1)
        extent[l] = ShapedType::kDynamic;
    }
  // The generic reads every dynamic operand dim at the letter's extent.
  for (auto [word, input] : llvm::zip(eq.operands, inputs))
    for (auto [d, c] : llvm::enumerate(word))
      if (typeOf(input).isDynamicDim(d)) {
        auto [from, dim] = source[loopDim(c)];
        if (from == input && dim == static_cast<int64_t>(d))
          continue;
        checkExtentsEqual(rewriter, loc, dimValue(rewriter, loc, input, d),
                          dimValue(rewriter, loc, from, dim), d,
                          STRATA_CHECK_EXTENT_MISMATCH);
      }

  SmallVector<AffineMap> maps;
  for (auto [word, input] : llvm::zip(eq.operands, inputs)) {
    SmallVector<AffineExpr> exprs;
    for (auto [d, c] : llvm::enumerate(word)) {
      size_t l = loopDim(c);
      bool broadcast = typeOf(input).getDimSize(d) == 1 && extent[l] != 1;
      exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx)
                                : getAffineDimExpr(l, ctx));
    }
    maps.push_back(AffineMap::get(letters.size(), 0, exprs, ctx));
  }
  SmallVector<AffineExpr> resultDims;
  for (size_t l = 0; l < eq.result.size(); ++l)
    resultDims.push_back(getAffineDimExpr(l, ctx));
  maps.push_back(AffineMap::get(letters.size(), 0, resultDims, ctx));
  SmallVector<utils::IteratorType> iterators(letters.size(),
                                             utils::IteratorType::reduction);
  std::fill_n(iterators.begin(), eq.result.size(),
              utils::IteratorType::parallel);

  auto out = cast<RankedTensorType>(op.getType());
  SmallVector<Value> dynamic = dynamicExtents(out, [&](int64_t d) {
    auto [tensor, dim] = source[d];
    return tensor ? dimValue(rewriter, loc, tensor, dim)
                  : Value(arith::ConstantIndexOp::create(rewriter, loc, 1));
  });
  Value zero = scalarConstant(rewriter, loc, out.getElementType(), 0);
  Value init =
      linalg::FillOp::create(rewriter, loc, zero,
                             emptyTensor(rewriter, loc, out, dynamic))
          .getResult(0);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{out}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value product = args[0];
        for (Value factor : args.drop_front().drop_back())
          product = mulScalar(b, l, product, factor);
        linalg::YieldOp::create(b, l, addScalar(b, l, args.back(), product));
      });
  return generic.getResult(0);
}

} // namespace

void populateEinsumLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<OneResultLowering<EinsumOp, lowerEinsum>>(
      patterns.getContext());
}

} // namespace strata::lowering
