//===- OnnxOpRegistry.cpp - The table of supported ONNX ops ---------------===//
// SPDX-License-Identifier: Apache-2.0
// One row per (domain, op); a constant table, no registration side effects.
// `If` is handled by the graph walker (it inlines the taken branch).

#include "compiler/import/OnnxOpConverters.h"

namespace strata::import {

namespace {
constexpr int64_t kMax = 23; // newest opset whose semantics we implement
constexpr llvm::StringLiteral kMs = "com.microsoft";

const OpConverter kConverters[] = {
    // Elementwise binary (numpy broadcasting).
    {"", "Add", 7, kMax, convertBinary},
    {"", "Sub", 7, kMax, convertBinary},
    {"", "Mul", 7, kMax, convertBinary},
    {"", "Div", 7, kMax, convertBinary},
    {"", "Pow", 7, kMax, convertBinary},
    {"", "Equal", 7, kMax, convertBinary},
    {"", "Less", 7, kMax, convertBinary},
    {"", "LessOrEqual", 12, kMax, convertBinary},
    {"", "Greater", 7, kMax, convertBinary},
    {"", "GreaterOrEqual", 12, kMax, convertBinary},
    {"", "And", 7, kMax, convertBinary},
    {"", "Or", 7, kMax, convertBinary},
    {"", "Mod", 10, kMax, convertBinary},
    {"", "BitwiseAnd", 18, kMax, convertBinary},
    {"", "BitwiseOr", 18, kMax, convertBinary},
    {"", "BitwiseXor", 18, kMax, convertBinary},
    {"", "BitShift", 11, kMax, convertBinary},
    {"", "BitwiseNot", 18, kMax, convertUnary},
    {"", "Sum", 8, kMax, convertVariadicMinMax},
    {"", "Max", 8, kMax, convertVariadicMinMax},
    {"", "Min", 8, kMax, convertVariadicMinMax},
    // Elementwise unary.
    {"", "Sqrt", 6, kMax, convertUnary},
    {"", "Reciprocal", 6, kMax, convertUnary},
    {"", "Neg", 6, kMax, convertUnary},
    {"", "Exp", 6, kMax, convertUnary},
    {"", "Log", 6, kMax, convertUnary},
    {"", "Erf", 9, kMax, convertUnary},
    {"", "Tanh", 6, kMax, convertUnary},
    {"", "Sigmoid", 6, kMax, convertUnary},
    {"", "Relu", 6, kMax, convertUnary},
    {"", "Abs", 6, kMax, convertUnary},
    {"", "Not", 1, kMax, convertUnary},
    {"", "Sin", 7, kMax, convertUnary},
    {"", "Cos", 7, kMax, convertUnary},
    {"", "Tan", 7, kMax, convertUnary},
    {"", "Asin", 7, kMax, convertUnary},
    {"", "Acos", 7, kMax, convertUnary},
    {"", "Atan", 7, kMax, convertUnary},
    {"", "Sinh", 9, kMax, convertUnary},
    {"", "Cosh", 9, kMax, convertUnary},
    {"", "Asinh", 9, kMax, convertUnary},
    {"", "Acosh", 9, kMax, convertUnary},
    {"", "Atanh", 9, kMax, convertUnary},
    {"", "Floor", 6, kMax, convertUnary},
    {"", "Ceil", 6, kMax, convertUnary},
    {"", "Round", 11, kMax, convertUnary},
    // Activations and functions ONNX defines by a formula, built from the
    // elementwise ops above.
    {"", "LeakyRelu", 6, kMax, convertActivation},
    {"", "Elu", 6, kMax, convertActivation},
    {"", "Selu", 6, kMax, convertActivation},
    {"", "Celu", 12, kMax, convertActivation},
    {"", "HardSigmoid", 6, kMax, convertActivation},
    {"", "HardSwish", 14, kMax, convertActivation},
    {"", "Softplus", 1, kMax, convertActivation},
    {"", "Softsign", 1, kMax, convertActivation},
    {"", "Mish", 18, kMax, convertActivation},
    {"", "ThresholdedRelu", 10, kMax, convertActivation},
    {"", "PRelu", 7, kMax, convertActivation},
    {"", "Shrink", 9, kMax, convertActivation},
    {"", "Sign", 9, kMax, convertActivation},
    {"", "IsNaN", 9, kMax, convertActivation},
    {"", "IsInf", 10, kMax, convertActivation},
    {"", "Xor", 7, kMax, convertActivation},
    {"", "Mean", 8, kMax, convertActivation},
    {"", "Clip", 6, kMax, convertClip},
    {"", "Where", 9, kMax, convertWhere},
    {"", "Cast", 6, kMax, convertCast},
    {"", "CastLike", 15, kMax, convertCast},
    {"", "Identity", 1, kMax, convertIdentity},
    {"", "Dropout", 7, kMax, convertDropout},
    // Constants, shapes and data movement.
    {"", "Constant", 9, kMax, convertConstant},
    {"", "Shape", 1, kMax, convertShape},
    {"", "Size", 1, kMax, convertSize},
    {"", "Reshape", 5, kMax, convertReshape},
    {"", "Flatten", 9, kMax, convertFlatten},
    {"", "Squeeze", 1, kMax, convertSqueeze},
    {"", "Unsqueeze", 1, kMax, convertUnsqueeze},
    {"", "Transpose", 1, kMax, convertTranspose},
    {"", "DepthToSpace", 11, kMax, convertDepthSpace},
    {"", "Pad", 2, kMax, convertPad},
    {"", "Resize", 10, kMax, convertResize},
    {"", "AffineGrid", 20, kMax, convertAffineGrid},
    {"", "Upsample", 7, 9, convertResize},
    {"", "HannWindow", 17, kMax, convertWindowFunction},
    {"", "HammingWindow", 17, kMax, convertWindowFunction},
    {"", "BlackmanWindow", 17, kMax, convertWindowFunction},
    {"", "CenterCropPad", 18, kMax, convertCenterCropPad},
    {"", "SpaceToDepth", 1, kMax, convertDepthSpace},
    {"", "Concat", 4, kMax, convertConcat},
    {"", "Slice", 1, kMax, convertSlice},
    {"", "Split", 2, kMax, convertSplit},
    {"", "Gather", 1, kMax, convertGather},
    {"", "GatherElements", 11, kMax, convertGatherElements},
    {"", "Expand", 8, kMax, convertExpand},
    {"", "Tile", 6, kMax, convertTile},
    {"", "ConstantOfShape", 9, kMax, convertConstantOfShape},
    {"", "Range", 11, kMax, convertRange},
    {"", "Trilu", 14, kMax, convertTrilu},
    {"", "ArgMax", 1, kMax, convertArgExtreme},
    {"", "ArgMin", 1, kMax, convertArgExtreme},
    {"", "Hardmax", 13, kMax, convertHardmax},
    {"", "OneHot", 9, kMax, convertOneHot},
    {"", "EyeLike", 9, kMax, convertEyeLike},
    {"", "CumSum", 11, kMax, convertCumSum},
    // Contractions, reductions, normalization, attention.
    {"", "MatMul", 1, kMax, convertMatMul},
    {"", "Gemm", 7, kMax, convertGemm},
    {"", "Softmax", 1, kMax, convertSoftmax},
    {"", "LogSoftmax", 1, kMax, convertSoftmax},
    {"", "ReduceMean", 1, kMax, convertReduce},
    {"", "ReduceSum", 1, kMax, convertReduce},
    {"", "ReduceMax", 1, kMax, convertReduce},
    {"", "ReduceMin", 1, kMax, convertReduce},
    {"", "ReduceProd", 1, kMax, convertReduce},
    {"", "ReduceL1", 1, kMax, convertReduce},
    {"", "ReduceL2", 1, kMax, convertReduce},
    {"", "ReduceSumSquare", 1, kMax, convertReduce},
    {"", "ReduceLogSum", 1, kMax, convertReduce},
    {"", "ReduceLogSumExp", 1, kMax, convertReduce},
    {"", "NegativeLogLikelihoodLoss", 12, kMax,
     convertNegativeLogLikelihoodLoss},
    {"", "SoftmaxCrossEntropyLoss", 12, kMax, convertSoftmaxCrossEntropyLoss},
    {"", "Conv", 1, kMax, convertConv},
    {"", "ConvTranspose", 1, kMax, convertConvTranspose},
    {"", "MaxPool", 1, kMax, convertPool},
    {"", "AveragePool", 7, kMax, convertPool},
    {"", "LpPool", 2, kMax, convertPool},
    {"", "GlobalAveragePool", 1, kMax, convertGlobalPool},
    {"", "GlobalMaxPool", 1, kMax, convertGlobalPool},
    {"", "BatchNormalization", 9, kMax, convertBatchNormalization},
    {"", "InstanceNormalization", 6, kMax, convertInstanceNormalization},
    {"", "GroupNormalization", 18, kMax, convertGroupNormalization},
    {"", "MeanVarianceNormalization", 9, kMax,
     convertMeanVarianceNormalization},
    {"", "LayerNormalization", 17, kMax, convertLayerNormalization},
    {"", "RMSNormalization", 23, kMax, convertRMSNormalization},
    {"", "Gelu", 20, kMax, convertGelu},
    {"", "Attention", 23, kMax, convertAttention},
    {"", "RotaryEmbedding", 23, kMax, convertRotaryEmbedding},
    // Quantization: QDQ models, ORT's dynamic quantization.
    {"", "QuantizeLinear", 10, kMax, convertQuantizeLinear},
    {"", "DequantizeLinear", 10, kMax, convertDequantizeLinear},
    {"", "DynamicQuantizeLinear", 11, kMax, convertDynamicQuantizeLinear},
    {"", "MatMulInteger", 10, kMax, convertMatMulInteger},
    {"", "QLinearMatMul", 10, kMax, convertQLinearMatMul},
    // onnxruntime contrib ops seen in optimized exports.
    {kMs, "Gelu", 1, 1, convertContribGelu},
    {kMs, "FastGelu", 1, 1, convertContribGelu},
    {kMs, "BiasGelu", 1, 1, convertContribGelu},
    {kMs, "SkipLayerNormalization", 1, 1, convertContribSkipLayerNorm},
    {kMs, "SkipSimplifiedLayerNormalization", 1, 1,
     convertContribSkipLayerNorm},
    {"", "SimplifiedLayerNormalization", 1, kMax,
     convertContribSimplifiedLayerNorm},
    {kMs, "SimplifiedLayerNormalization", 1, 1,
     convertContribSimplifiedLayerNorm},
    {kMs, "Attention", 1, 1, convertContribAttention},
    {kMs, "MultiHeadAttention", 1, 1, convertContribMultiHeadAttention},
    {kMs, "MatMulNBits", 1, 1, convertMatMulNBits},
};
} // namespace

const OpConverter *lookupConverter(llvm::StringRef domain,
                                   llvm::StringRef opType, int64_t opset) {
  if (domain == "ai.onnx")
    domain = "";
  for (const OpConverter &c : kConverters)
    if (c.domain == domain && c.opType == opType && opset >= c.minOpset &&
        opset <= c.maxOpset)
      return &c;
  return nullptr;
}

llvm::ArrayRef<OpConverter> supportedOps() { return kConverters; }

} // namespace strata::import
