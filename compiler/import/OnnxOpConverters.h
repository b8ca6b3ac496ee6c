//===- OnnxOpConverters.h - ONNX op -> strata converters -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The table of supported (domain, op type, opsets) and one converter per op
// family. Each converter reads the current node from the ImportContext,
// creates strata ops with fully computed result types and binds outputs.

#ifndef STRATA_COMPILER_IMPORT_ONNXOPCONVERTERS_H_
#define STRATA_COMPILER_IMPORT_ONNXOPCONVERTERS_H_

#include "compiler/import/ImportContext.h"

namespace strata::import {

using ConvertFn = mlir::LogicalResult (*)(ImportContext &);

/// One supported ONNX op: domain ("" is ai.onnx), op type, the opset range
/// whose semantics the converter implements, and the converter.
struct OpConverter {
  llvm::StringRef domain;
  llvm::StringRef opType;
  int64_t minOpset;
  int64_t maxOpset;
  ConvertFn convert;
};

/// The converter for |opType| in |domain| at |opset|, or nullptr.
const OpConverter *lookupConverter(llvm::StringRef domain,
                                   llvm::StringRef opType, int64_t opset);

/// Every supported op, for --list-supported and docs/SupportedOps.md.
llvm::ArrayRef<OpConverter> supportedOps();

// Op families (one .cpp each).
mlir::LogicalResult convertBinary(ImportContext &ctx);
mlir::LogicalResult convertVariadicMinMax(ImportContext &ctx);
mlir::LogicalResult convertUnary(ImportContext &ctx);
mlir::LogicalResult convertActivation(ImportContext &ctx);
mlir::LogicalResult convertClip(ImportContext &ctx);
mlir::LogicalResult convertWhere(ImportContext &ctx);
mlir::LogicalResult convertCast(ImportContext &ctx);
mlir::LogicalResult convertIdentity(ImportContext &ctx);
mlir::LogicalResult convertDropout(ImportContext &ctx);

mlir::LogicalResult convertConstant(ImportContext &ctx);
mlir::LogicalResult convertShape(ImportContext &ctx);
mlir::LogicalResult convertSize(ImportContext &ctx);
mlir::LogicalResult convertReshape(ImportContext &ctx);
mlir::LogicalResult convertFlatten(ImportContext &ctx);
mlir::LogicalResult convertSqueeze(ImportContext &ctx);
mlir::LogicalResult convertUnsqueeze(ImportContext &ctx);
mlir::LogicalResult convertTranspose(ImportContext &ctx);
mlir::LogicalResult convertDepthSpace(ImportContext &ctx);
mlir::LogicalResult convertPad(ImportContext &ctx);
mlir::LogicalResult convertResize(ImportContext &ctx);
mlir::LogicalResult convertAffineGrid(ImportContext &ctx);
mlir::LogicalResult convertWindowFunction(ImportContext &ctx);
mlir::LogicalResult convertCenterCropPad(ImportContext &ctx);
mlir::LogicalResult convertConcat(ImportContext &ctx);
mlir::LogicalResult convertSlice(ImportContext &ctx);
mlir::LogicalResult convertSplit(ImportContext &ctx);
mlir::LogicalResult convertGather(ImportContext &ctx);
mlir::LogicalResult convertGatherElements(ImportContext &ctx);
mlir::LogicalResult convertGatherND(ImportContext &ctx);
mlir::LogicalResult convertScatterElements(ImportContext &ctx);
mlir::LogicalResult convertScatterND(ImportContext &ctx);
mlir::LogicalResult convertTopK(ImportContext &ctx);
mlir::LogicalResult convertEinsum(ImportContext &ctx);
mlir::LogicalResult convertTrainingOptimizer(ImportContext &ctx);
mlir::LogicalResult convertLrn(ImportContext &ctx);
mlir::LogicalResult convertReverseSequence(ImportContext &ctx);
mlir::LogicalResult convertRecurrent(ImportContext &ctx);
mlir::LogicalResult convertArgExtreme(ImportContext &ctx);
mlir::LogicalResult convertHardmax(ImportContext &ctx);
mlir::LogicalResult convertOneHot(ImportContext &ctx);
mlir::LogicalResult convertEyeLike(ImportContext &ctx);
mlir::LogicalResult convertExpand(ImportContext &ctx);
mlir::LogicalResult convertTile(ImportContext &ctx);
mlir::LogicalResult convertConstantOfShape(ImportContext &ctx);
mlir::LogicalResult convertRange(ImportContext &ctx);
mlir::LogicalResult convertTrilu(ImportContext &ctx);
mlir::LogicalResult convertCumSum(ImportContext &ctx);

mlir::LogicalResult convertMatMul(ImportContext &ctx);
mlir::LogicalResult convertGemm(ImportContext &ctx);
mlir::LogicalResult convertSoftmax(ImportContext &ctx);
mlir::LogicalResult convertReduce(ImportContext &ctx);
mlir::LogicalResult convertGlobalPool(ImportContext &ctx);
mlir::LogicalResult convertConv(ImportContext &ctx);
mlir::LogicalResult convertConvTranspose(ImportContext &ctx);
mlir::LogicalResult convertPool(ImportContext &ctx);
mlir::LogicalResult convertBatchNormalization(ImportContext &ctx);
mlir::LogicalResult convertInstanceNormalization(ImportContext &ctx);
mlir::LogicalResult convertGroupNormalization(ImportContext &ctx);
mlir::LogicalResult convertMeanVarianceNormalization(ImportContext &ctx);
mlir::LogicalResult convertNegativeLogLikelihoodLoss(ImportContext &ctx);
mlir::LogicalResult convertSoftmaxCrossEntropyLoss(ImportContext &ctx);
mlir::LogicalResult convertLayerNormalization(ImportContext &ctx);
mlir::LogicalResult convertRMSNormalization(ImportContext &ctx);
mlir::LogicalResult convertGelu(ImportContext &ctx);
mlir::LogicalResult convertAttention(ImportContext &ctx);
mlir::LogicalResult convertRotaryEmbedding(ImportContext &ctx);

mlir::LogicalResult convertQuantizeLinear(ImportContext &ctx);
mlir::LogicalResult convertDequantizeLinear(ImportContext &ctx);
mlir::LogicalResult convertDynamicQuantizeLinear(ImportContext &ctx);
mlir::LogicalResult convertMatMulInteger(ImportContext &ctx);
mlir::LogicalResult convertQLinearMatMul(ImportContext &ctx);
mlir::LogicalResult convertMatMulNBits(ImportContext &ctx);

mlir::LogicalResult convertContribGelu(ImportContext &ctx);
mlir::LogicalResult convertContribSkipLayerNorm(ImportContext &ctx);
mlir::LogicalResult convertContribSimplifiedLayerNorm(ImportContext &ctx);
mlir::LogicalResult convertContribAttention(ImportContext &ctx);
mlir::LogicalResult convertContribMultiHeadAttention(ImportContext &ctx);

} // namespace strata::import

#endif // STRATA_COMPILER_IMPORT_ONNXOPCONVERTERS_H_
