//===- StrataOps.td - Strata dialect operations ----------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0
// Ops of the strata dialect, grouped by family: constants, elementwise,
// contractions, reductions, normalization/activation, attention, data
// movement and shape computation.

#ifndef STRATA_DIALECTS_STRATA_IR_STRATAOPS_TD
#define STRATA_DIALECTS_STRATA_IR_STRATAOPS_TD

include "dialects/strata/IR/StrataBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Strata_ConstantOp : Strata_Op<"constant",
    [ConstantLike, AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor: a weight or a small literal";
  let description = [{
    Produces the tensor held by `value`. Weights use dense resource blobs
    (`dense_resource<name>`), which MLIR keeps out of the attribute storage
    and prints as handles; small scalars may be plain `dense` attributes.
    Comes from ONNX initializers and `Constant` nodes.

    ```mlir
    %half = strata.constant dense<5.000000e-01> : tensor<f32>
    %w = strata.constant dense_resource<h0.attn.c_attn.weight> : tensor<768x2304xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops (numpy broadcasting)
//===----------------------------------------------------------------------===//

// Binary op whose operands broadcast to the result (ONNX multidirectional
// broadcasting). The verifier checks shapes through the shared helper.
class Strata_BroadcastBinaryOp<string mnemonic, Type operandType,
                               Type resultType, list<Trait> traits = []>
    : Strata_Op<mnemonic, !listconcat(traits,
                                      [AllElementTypesMatch<["lhs", "rhs"]>])> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

class Strata_ArithBinaryOp<string mnemonic, string onnxName,
                           Type tensorType = Strata_NumericTensor,
                           list<Trait> traits = []>
    : Strata_BroadcastBinaryOp<mnemonic, tensorType, tensorType,
          !listconcat(traits, [AllElementTypesMatch<["lhs", "result"]>])> {
  let summary = "elementwise " # mnemonic # " with broadcasting";
  let description = [{
    Applies `}] # mnemonic # [{` elementwise after broadcasting both operands
    to the result shape (numpy rules). From ONNX `}] # onnxName # [{`.

    ```mlir
    %0 = strata.}] # mnemonic # [{ %a, %b : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def Strata_AddOp : Strata_ArithBinaryOp<"add", "Add", Strata_NumericTensor,
                                        [Commutative]>;
def Strata_SubOp : Strata_ArithBinaryOp<"sub", "Sub">;
def Strata_MulOp : Strata_ArithBinaryOp<"mul", "Mul", Strata_NumericTensor,
                                        [Commutative]>;
def Strata_DivOp : Strata_ArithBinaryOp<"div", "Div">;
def Strata_PowOp : Strata_ArithBinaryOp<"pow", "Pow">;

def Strata_ModOp : Strata_BroadcastBinaryOp<"mod", Strata_NumericTensor,
    Strata_NumericTensor, [AllElementTypesMatch<["lhs", "result"]>]> {
  let summary = "elementwise remainder with broadcasting";
  let description = [{
    With `fmod = false` (integers only) the result takes the sign of the
    divisor, as Python's `%`; with `fmod = true` it takes the sign of the
    dividend, as C's `fmod`. From ONNX `Mod`.

    ```mlir
    %r = strata.mod %a, %b {fmod} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Strata_NumericTensor:$lhs, Strata_NumericTensor:$rhs,
                   UnitAttr:$fmod);
  let results = (outs Strata_NumericTensor:$result);
}
def Strata_MaxOp : Strata_ArithBinaryOp<"max", "Max", Strata_NumericTensor,
                                        [Commutative]>;
def Strata_MinOp : Strata_ArithBinaryOp<"min", "Min", Strata_NumericTensor,
                                        [Commutative]>;

def Strata_BitwiseAndOp : Strata_ArithBinaryOp<"bitwise_and", "BitwiseAnd",
    Strata_IntegerTensor, [Commutative]>;
def Strata_BitwiseOrOp : Strata_ArithBinaryOp<"bitwise_or", "BitwiseOr",
    Strata_IntegerTensor, [Commutative]>;
def Strata_BitwiseXorOp : Strata_ArithBinaryOp<"bitwise_xor", "BitwiseXor",
    Strata_IntegerTensor, [Commutative]>;
def Strata_ShiftLeftOp : Strata_ArithBinaryOp<"shift_left",
    "BitShift(direction = LEFT)", Strata_IntegerTensor> {
  let summary = "elementwise left shift; shifts of the bit width or more give 0";
}
def Strata_ShiftRightOp : Strata_ArithBinaryOp<"shift_right",
    "BitShift(direction = RIGHT)", Strata_IntegerTensor> {
  let summary = "elementwise right shift (logical on unsigned, arithmetic on "
                "signed); shifts of the bit width or more give 0 or the sign";
}

class Strata_CompareOp<string mnemonic, string onnxName, string relation,
                       list<Trait> traits = []>
    : Strata_BroadcastBinaryOp<mnemonic, Strata_NumericTensor,
                               Strata_BoolTensor, traits> {
  let summary = "elementwise `" # relation # "` comparison to i1";
  let description = [{
    Compares `lhs }] # relation # [{ rhs` elementwise after broadcasting and
    yields an `i1` tensor. From ONNX `}] # onnxName # [{`.

    ```mlir
    %m = strata.}] # mnemonic # [{ %a, %b : (tensor<4x4xi64>, tensor<4x1xi64>) -> tensor<4x4xi1>
    ```
  }];
}

def Strata_EqualOp : Strata_CompareOp<"equal", "Equal", "==", [Commutative]>;
def Strata_LessOp : Strata_CompareOp<"less", "Less", "<">;
def Strata_LessEqualOp : Strata_CompareOp<"less_equal", "LessOrEqual", "<=">;
def Strata_GreaterOp : Strata_CompareOp<"greater", "Greater", ">">;
def Strata_GreaterEqualOp
    : Strata_CompareOp<"greater_equal", "GreaterOrEqual", ">=">;

class Strata_LogicBinaryOp<string mnemonic, string onnxName>
    : Strata_BroadcastBinaryOp<mnemonic, Strata_BoolTensor, Strata_BoolTensor,
                               [Commutative]> {
  let summary = "elementwise logical " # mnemonic # " of i1 tensors";
  let description = [{
    Logical `}] # mnemonic # [{` of two broadcast `i1` tensors. From ONNX
    `}] # onnxName # [{`.

    ```mlir
    %m = strata.}] # mnemonic # [{ %a, %b : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
    ```
  }];
}

def Strata_AndOp : Strata_LogicBinaryOp<"and", "And">;
def Strata_OrOp : Strata_LogicBinaryOp<"or", "Or">;

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

class Strata_UnaryOp<string mnemonic, string formula, string onnxName,
                     Type tensorType = Strata_FloatTensor,
                     list<Trait> traits = []>
    : Strata_Op<mnemonic, !listconcat(traits, [SameOperandsAndResultType])> {
  let summary = "elementwise " # formula;
  let description = [{
    Computes `}] # formula # [{` for every element. From ONNX }] # onnxName # [{.

    ```mlir
    %y = strata.}] # mnemonic # [{ %x : tensor<2x64xf32>
    ```
  }];
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Strata_SqrtOp : Strata_UnaryOp<"sqrt", "sqrt(x)", "`Sqrt`">;
def Strata_RsqrtOp
    : Strata_UnaryOp<"rsqrt", "1 / sqrt(x)", "`Reciprocal(Sqrt(x))`">;
def Strata_ReciprocalOp
    : Strata_UnaryOp<"reciprocal", "1 / x", "`Reciprocal`">;
def Strata_ExpOp : Strata_UnaryOp<"exp", "exp(x)", "`Exp`">;
def Strata_LogOp : Strata_UnaryOp<"log", "log(x)", "`Log`">;
def Strata_ErfOp : Strata_UnaryOp<"erf", "erf(x)", "`Erf`">;
def Strata_TanhOp : Strata_UnaryOp<"tanh", "tanh(x)", "`Tanh`">;
def Strata_SigmoidOp
    : Strata_UnaryOp<"sigmoid", "1 / (1 + exp(-x))", "`Sigmoid`">;
def Strata_SiluOp
    : Strata_UnaryOp<"silu", "x * sigmoid(x)", "`Mul(x, Sigmoid(x))`">;
def Strata_SinOp : Strata_UnaryOp<"sin", "sin(x)", "`Sin`">;
def Strata_CosOp : Strata_UnaryOp<"cos", "cos(x)", "`Cos`">;
def Strata_TanOp : Strata_UnaryOp<"tan", "tan(x)", "`Tan`">;
def Strata_AsinOp : Strata_UnaryOp<"asin", "asin(x)", "`Asin`">;
def Strata_AcosOp : Strata_UnaryOp<"acos", "acos(x)", "`Acos`">;
def Strata_AtanOp : Strata_UnaryOp<"atan", "atan(x)", "`Atan`">;
def Strata_SinhOp : Strata_UnaryOp<"sinh", "sinh(x)", "`Sinh`">;
def Strata_CoshOp : Strata_UnaryOp<"cosh", "cosh(x)", "`Cosh`">;
def Strata_AsinhOp : Strata_UnaryOp<"asinh", "asinh(x)", "`Asinh`">;
def Strata_AcoshOp : Strata_UnaryOp<"acosh", "acosh(x)", "`Acosh`">;
def Strata_AtanhOp : Strata_UnaryOp<"atanh", "atanh(x)", "`Atanh`">;
def Strata_FloorOp : Strata_UnaryOp<"floor", "floor(x)", "`Floor`">;
def Strata_CeilOp : Strata_UnaryOp<"ceil", "ceil(x)", "`Ceil`">;
def Strata_RoundOp
    : Strata_UnaryOp<"round", "x rounded to the nearest integer, halves to even",
                     "`Round`">;
def Strata_NegOp
    : Strata_UnaryOp<"neg", "-x", "`Neg`", Strata_NumericTensor> {
  let hasFolder = 1;
}
def Strata_AbsOp : Strata_UnaryOp<"abs", "|x|", "`Abs`", Strata_NumericTensor>;
def Strata_ReluOp
    : Strata_UnaryOp<"relu", "max(x, 0)", "`Relu`", Strata_NumericTensor>;
def Strata_BitwiseNotOp : Strata_UnaryOp<"bitwise_not", "~x", "`BitwiseNot`",
                                          Strata_IntegerTensor>;
def Strata_NotOp
    : Strata_UnaryOp<"not", "logical not", "`Not`", Strata_BoolTensor> {
  let hasFolder = 1;
}

def Strata_GeluOp : Strata_Op<"gelu", [SameOperandsAndResultType]> {
  let summary = "gaussian error linear unit, exact or tanh-approximated";
  let description = [{
    `approximate = "none"` computes `0.5 * x * (1 + erf(x / sqrt(2)))`;
    `approximate = "tanh"` computes
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.
    From ONNX `Gelu` (opset 20), contrib `Gelu`/`FastGelu`, or the fused
    erf/tanh chains torch exports.

    ```mlir
    %y = strata.gelu %x {approximate = "tanh"} : tensor<2x64xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$input,
                   DefaultValuedStrAttr<Strata_GeluApproximationAttr,
                                        "none">:$approximate);
  let results = (outs Strata_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Selection and conversion
//===----------------------------------------------------------------------===//

def Strata_WhereOp : Strata_Op<"where",
    [AllElementTypesMatch<["true_value", "false_value", "result"]>]> {
  let summary = "elementwise select with three-way broadcasting";
  let description = [{
    `result[i] = condition[i] ? true_value[i] : false_value[i]` after
    broadcasting all three operands. From ONNX `Where`; attention masks are
    often built this way.

    ```mlir
    %m = strata.where %c, %zero, %ninf : (tensor<1x1x8x8xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x8x8xf32>
    ```
  }];
  let arguments = (ins Strata_BoolTensor:$condition,
                   Strata_AnyTensor:$true_value, Strata_AnyTensor:$false_value);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Strata_CastOp : Strata_Op<"cast", [SameOperandsAndResultShape]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Converts each element to the result element type with ONNX `Cast`
    semantics (float to int truncates toward zero, to `i1` tests `!= 0`).
    From ONNX `Cast` and `CastLike`; the precision passes insert it too.

    ```mlir
    %y = strata.cast %x : tensor<2x64xf16> -> tensor<2x64xf32>
    ```
  }];
  let arguments = (ins Strata_CastableTensor:$input);
  let results = (outs Strata_CastableTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Strata_MatmulOp : Strata_Op<"matmul",
    [AllElementTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "batched matrix product with numpy broadcasting";
  let description = [{
    `numpy.matmul` semantics: the last two dims are contracted
    (`[..., M, K] x [..., K, N] -> [..., M, N]`), leading batch dims
    broadcast, and a 1-D operand is promoted to a matrix and the promoted
    dim dropped from the result. From ONNX `MatMul`.

    ```mlir
    %s = strata.matmul %q, %kt : (tensor<1x12x8x64xf32>, tensor<1x12x64x8xf32>) -> tensor<1x12x8x8xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$lhs, Strata_FloatTensor:$rhs);
  let results = (outs Strata_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Strata_LinearOp : Strata_Op<"linear",
    [AllElementTypesMatch<["input", "weight", "result"]>]> {
  let summary = "dense layer: input times a [K, N] weight plus optional bias";
  let description = [{
    `result[..., n] = sum_k input[..., k] * weight[k, n] + bias[n]`. The
    weight is a 2-D `[K, N]` matrix (the ONNX `MatMul`/`Gemm` layout after
    folding any transpose), the bias 1-D `[N]`. From ONNX `Gemm`, or
    `MatMul` + `Add` with constant weights.

    ```mlir
    %y = strata.linear %x, %w, %b : (tensor<1x8x768xf32>, tensor<768x2304xf32>, tensor<2304xf32>) -> tensor<1x8x2304xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$input, Strata_FloatTensor:$weight,
                   Optional<Strata_FloatTensor>:$bias);
  let results = (outs Strata_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Strata_ConvOp : Strata_Op<"conv",
    [AllElementTypesMatch<["input", "weight", "result"]>]> {
  let summary = "grouped N-D convolution with strides, dilations and padding";
  let description = [{
    `result[n, m, o...] = bias[m] + sum_{c, k...} x[n, g * C / G + c,
    o * stride + k * dilation - pad_begin] * weight[m, c, k...]` over
    `input` [N, C, S...] and `weight` [M, C / G, K...] (G = `group`, g =
    m / (M / G)), zero outside the input. `pads` holds the begin pads of
    the D spatial dims, then the end pads (negative ones crop); the result
    is [N, M, O...] with O = (S + begin + end - dilation * (K - 1) - 1) /
    stride + 1. With `input_dilations` the input's elements first move
    that far apart (zeros between them, S becoming (S - 1) * i + 1): a
    transposed convolution is this over the flipped, transposed weight.
    From ONNX `Conv` and `ConvTranspose` (auto_pad resolved to explicit
    pads).

    With `channels_last` the channels are the innermost dim instead:
    `input` [N, S..., C], `weight` [K..., C, M] and the result [N, O...,
    M] (one group, no input dilations). `strata-conv-channels-last`
    rewrites convolutions into this form, where every tap of a position
    is a contiguous run of channels and the weight is the B of a matmul.

    ```mlir
    %y = strata.conv %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 3, 3, 3, 3>, group = 1 : i64} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$input, Strata_FloatTensor:$weight,
                   Optional<Strata_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<I64Attr, "1">:$group,
                   OptionalAttr<DenseI64ArrayAttr>:$input_dilations,
                   UnitAttr:$channels_last);
  let results = (outs Strata_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Strata_PoolOp : Strata_Op<"pool", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "max, average or Lp pooling over N-D windows";
  let description = [{
    Reduces each window `o * stride + k * dilation - pad_begin` (k over
    `kernel`) of `input` [N, C, S...] per (n, c): `kind = "max"` takes the
    largest element (padding never wins), `"avg"` the sum over `divisor`
    (with `count_include_pad` the window positions inside the padded
    extent, else those inside the input), `"lp"` `(sum |x|^p)^(1/p)`.
    `pads` holds the begin pads, then the end pads. The result is [N, C,
    O...] with O = (S + begin + end - dilation * (K - 1) - 1) / stride + 1,
    rounded up with `ceil_mode` (less one when that last window would start
    past the input and its begin padding); the windows past the end padding
    count nothing. From ONNX `MaxPool`, `AveragePool`, `LpPool`. With
    `channels_last` the input is [N, S..., C] and the result [N, O..., C]
    (`strata-conv-channels-last` moves poolings between channels-last
    convolutions into that form).

    ```mlir
    %y = strata.pool %x {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$input, StrAttr:$kind,
                   DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<I64Attr, "2">:$p,
                   UnitAttr:$count_include_pad, UnitAttr:$ceil_mode,
                   UnitAttr:$channels_last);
  let results = (outs Strata_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Strata_QuantizedLinearOp : Strata_Op<"quantized_linear",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "dense layer over a weight-only quantized [K, N] weight";
  let description = [{
    `result[..., n] = sum_k input[..., k] * weight[k, n] * scales[k / group_size, n] + bias[n]`:
    `strata.linear` with the weight stored as symmetric integers (`i8`
    storage holding values of `bits` bits: 8, or 4 for int4 in
    [-8, 7]) and one fp32 scale per `group_size` rows of each column
    (`group_size` = K: one scale per output channel). Accumulation and the
    result stay fp32. With `activation_bits` = 0 (the default) activations
    are fp32 too (weight-only); with 8 each row of `input` is quantized
    at run time to symmetric int8 over the whole row (absmax / 127, per
    token) and the products are integer (W8A8: `bits` 8, one scale per
    column); `activation_block` B > 0 rounds them per block of B k instead
    (at most B: a back end may take a smaller block that divides it), the
    int8 decode policy's choice, which keeps an outlier's coarser step
    inside its block. The plain loops a back end falls back to compute with
    fp32 activations, more exactly. Made by `strata-quantize-weights` from fp32 weights, or
    imported from pre-quantized models.

    ```mlir
    %y = strata.quantized_linear %x, %q, %s {bits = 8 : i64, group_size = 768 : i64} : (tensor<1x1x768xf32>, tensor<768x2304xi8>, tensor<1x2304xf32>) -> tensor<1x1x2304xf32>
    %z = strata.quantized_linear %x, %q, %s {activation_bits = 8 : i64, bits = 8 : i64, group_size = 768 : i64} : (tensor<1x1x768xf32>, tensor<768x2304xi8>, tensor<1x2304xf32>) -> tensor<1x1x2304xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input,
                   RankedTensorOf<[I8]>:$weight,
                   RankedTensorOf<[F32]>:$scales,
                   Optional<RankedTensorOf<[F32]>>:$bias,
                   I64Attr:$bits, I64Attr:$group_size,
                   DefaultValuedAttr<I64Attr, "0">:$activation_bits,
                   DefaultValuedAttr<I64Attr, "0">:$activation_block);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $scales (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and softmax
//===----------------------------------------------------------------------===//

class Strata_ReduceOp<string mnemonic, string onnxName, string formula>
    : Strata_Op<mnemonic, [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "reduces with " # formula # " over the given axes";
  let description = [{
    Reduces `input` with }] # formula # [{ over `axes` (negative values count
    from the back; canonical IR has them sorted and non-negative). With
    `keepdims` the reduced dims stay as size 1. From ONNX `}] # onnxName # [{`.

    ```mlir
    %m = strata.}] # mnemonic # [{ %x {axes = array<i64: -1>, keepdims = true} : tensor<2x8x64xf32> -> tensor<2x8x1xf32>
    ```
  }];
  let arguments = (ins Strata_NumericTensor:$input, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Strata_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Strata_ReduceSumOp : Strata_ReduceOp<"reduce_sum", "ReduceSum", "a sum">;
def Strata_ReduceMeanOp
    : Strata_ReduceOp<"reduce_mean", "ReduceMean", "the mean">;
def Strata_ReduceMaxOp
    : Strata_ReduceOp<"reduce_max", "ReduceMax", "the maximum">;
def Strata_ReduceProdOp
    : Strata_ReduceOp<"reduce_prod", "ReduceProd", "a product">;

class Strata_SoftmaxLikeOp<string mnemonic, string onnxName, string formula>
    : Strata_Op<mnemonic, [SameOperandsAndResultType]> {
  let summary = formula # " along one axis";
  let description = [{
    Computes }] # formula # [{ along `axis` (negative counts from the back),
    numerically stabilised by subtracting the maximum. From ONNX
    `}] # onnxName # [{` (opset >= 13 semantics).

    ```mlir
    %p = strata.}] # mnemonic # [{ %s {axis = -1 : i64} : tensor<1x12x8x8xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$input,
                   DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Strata_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Strata_SoftmaxOp : Strata_SoftmaxLikeOp<"softmax", "Softmax", "softmax">;
def Strata_LogSoftmaxOp
    : Strata_SoftmaxLikeOp<"log_softmax", "LogSoftmax", "log-softmax">;

def Strata_CumsumOp : Strata_Op<"cumsum", [SameOperandsAndResultType]> {
  let summary = "cumulative sum along one axis";
  let description = [{
    Running sum along `axis`; `exclusive` omits the current element and
    `reverse` sums from the end. From ONNX `CumSum` with a constant axis.

    ```mlir
    %p = strata.cumsum %mask {axis = 1 : i64} : tensor<2x8xi64>
    ```
  }];
  let arguments = (ins Strata_NumericTensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Strata_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

class Strata_NormOp<string mnemonic, list<Trait> traits = []>
    : Strata_Op<mnemonic, !listconcat(traits,
          [AllTypesMatch<["input", "result"]>])> {
  let results = (outs Strata_FloatTensor:$result);
  let hasVerifier = 1;
}

def Strata_LayerNormOp : Strata_NormOp<"layer_norm"> {
  let summary = "layer normalization over the trailing dims from `axis`";
  let description = [{
    Normalizes over dims `[axis, rank)`:
    `(x - mean) / sqrt(var + epsilon) * scale + bias`, accumulating in
    fp32. `scale` and `bias` have the normalized shape. From ONNX
    `LayerNormalization` (opset 17), the decomposed mean/variance chain of
    older exports, or contrib `SkipLayerNormalization` after the residual add.

    ```mlir
    %y = strata.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<1x8x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x8x768xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$input, Strata_FloatTensor:$scale,
                   Optional<Strata_FloatTensor>:$bias,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Strata_RmsNormOp : Strata_NormOp<"rms_norm"> {
  let summary = "root-mean-square normalization over the trailing dims";
  let description = [{
    `x / sqrt(mean(x^2) + epsilon) * scale` over dims `[axis, rank)`,
    accumulating in fp32. From ONNX `RMSNormalization` (opset 23), contrib
    `SimplifiedLayerNormalization`, or the Pow/ReduceMean/Sqrt chain of
    Llama exports.

    ```mlir
    %y = strata.rms_norm %x, %g {axis = -1 : i64, epsilon = 1.0e-06 : f32} : (tensor<1x8x512xf32>, tensor<512xf32>) -> tensor<1x8x512xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$input, Strata_FloatTensor:$scale,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<F32Attr, "1.0e-6">:$epsilon);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Strata_AttentionOp : Strata_Op<"attention",
    [AllElementTypesMatch<["query", "key", "value", "result"]>]> {
  let summary = "scaled dot-product attention with optional mask and window";
  let description = [{
    `softmax(scale * Q K^T + mask) V` per head. Shapes:
    `query [B, H, Sq, D]`, `key [B, Hkv, Sk, D]`, `value [B, Hkv, Sk, Dv]`,
    `result [B, H, Sq, Dv]`; `H` must be a multiple of `Hkv` (grouped-query
    attention). `scale` defaults to `1/sqrt(D)`. `mask` broadcasts to
    `[B, H, Sq, Sk]`: an `i1` mask keeps `true` positions, a float mask is
    added to the scores. `causal` masks keys after the query position,
    aligned to the end (query `i` sees keys `<= i + Sk - Sq`). `window`
    limits each query to the last `window` keys and `sinks` keeps the first
    `sinks` keys visible (sliding-window + attention-sink sparsity).
    `global_topk = K` with `global_block = B` (both or neither; causal and
    `window` required) adds to each query's window the K key blocks
    `[cB, cB + B)` it scores highest, the score of block c being
    `q . sum of the block's keys` (per head; ties to the lower c), among
    the blocks wholly before its window and not wholly among its sinks:
    `S < (c + 1)B <= last - window + 1`, `last` the query's own key.
    A key hidden by `causal` or `window` scores the lowest finite float;
    with `mask_hidden` a float mask is added to that score too, as in a
    graph that hides keys first and adds the mask after (GPT-2's
    `where(causal, s, min) + mask`): a fully padded row then sees only its
    visible keys, where without `mask_hidden` it sees every key equally.
    From ONNX `Attention` (opset 23), contrib `Attention`/`MultiHeadAttention`
    and the MatMul/Softmax/MatMul chains the fusion pass matches.

    ```mlir
    %o = strata.attention %q, %k, %v {causal} : (tensor<1x12x8x64xf32>, tensor<1x12x8x64xf32>, tensor<1x12x8x64xf32>) -> tensor<1x12x8x64xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$query, Strata_FloatTensor:$key,
                   Strata_FloatTensor:$value,
                   Optional<RankedTensorOf<[I1, F16, BF16, F32, F64]>>:$mask,
                   OptionalAttr<F32Attr>:$scale, UnitAttr:$causal,
                   OptionalAttr<I64Attr>:$window, OptionalAttr<I64Attr>:$sinks,
                   UnitAttr:$mask_hidden,
                   OptionalAttr<I64Attr>:$global_topk,
                   OptionalAttr<I64Attr>:$global_block);
  let results = (outs Strata_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// KV cache
//===----------------------------------------------------------------------===//

def Strata_CacheWriteOp : Strata_Op<"cache_write",
    [AllTypesMatch<["cache", "result"]>]> {
  let summary = "writes each row's new keys or values into its cache slot";
  let description = [{
    The cache `[slots, H, context, D]` with `update[b, h, t, :]` stored at
    `[slots[b], h, positions[b] + t, :]` for every row `b` of
    `update [B, H, T, D]`; the rest of the cache is unchanged. `slots` and
    `positions` are `[B]`. A slot outside `[0, slots)` or a position range
    outside `[0, context)` fails the run (a run-time input check). Made by
    `strata-split-prefill-decode` from the key/value tensors feeding an
    attention; the cache is a state tensor the result is written back to.

    A ring (`ring_kept` and `ring_context`, both or neither; a sliding
    window's cache) holds a sequence's first `ring_kept` positions and its
    latest `R - ring_kept`, R the cache's `context` dim: position `p < ring_context`
    is stored at row `p` if `p < ring_kept`, else at row `ring_kept + (p -
    ring_kept) mod (R - ring_kept)`, overwriting the older position there.
    One write holds at most `R - ring_kept` new rows.

    A compressed cache takes an fp32 update: `bf16` stores each value
    rounded to nearest even; `i8` stores each D-value row (one token of one
    head) as symmetric int8, `q = round_half_away(clamp(x * 127 / amax,
    -127, 127))` with `amax = max |x|` over the row (NaN skipped, and
    stored as 0), followed by its scale `amax / 127` as the 4 bytes of a
    little-endian fp32 (+inf when the row holds a non-finite value): the
    cache's last dim is D + 4, D a multiple of 4, so each scale is aligned.

    A paged cache (`block_size`) is a pool of blocks `[blocks, H,
    block_size, D]` and `slots` a block table `[B, N]` (N static): row b's
    position `p < N * block_size` lies in block `slots[b, p / block_size]`
    at row `p mod block_size`. Every entry of the table must name a block
    of the pool (a run-time input check); rows must not share a block they
    write. Not with a ring.

    ```mlir
    %k1 = strata.cache_write %kc, %k, %slots, %pos : (tensor<8x4x1024x64xf32>, tensor<?x4x1x64xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<8x4x1024x64xf32>
    %q1 = strata.cache_write %qc, %k, %slots, %pos : (tensor<8x4x1024x68xi8>, tensor<?x4x1x64xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<8x4x1024x68xi8>
    ```
  }];
  let arguments = (ins Strata_CacheTensor:$cache, Strata_FloatTensor:$update,
                   TensorRankOf<[I64], [1, 2]>:$slots,
                   TensorRankOf<[I64], [1]>:$positions,
                   OptionalAttr<I64Attr>:$ring_kept,
                   OptionalAttr<I64Attr>:$ring_context,
                   OptionalAttr<I64Attr>:$block_size);
  let results = (outs Strata_CacheTensor:$result);
  let extraClassDeclaration = [{
    /// The positions a row can reach: a ring's context, a paged row's
    /// blocks, else the cache's context dim.
    int64_t getPositionCapacity();
  }];
  let assemblyFormat = [{
    $cache `,` $update `,` $slots `,` $positions attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Strata_CacheAttentionOp : Strata_Op<"cache_attention",
    [AllElementTypesMatch<["query", "result"]>,
     AllElementTypesMatch<["key_cache", "value_cache"]>]> {
  let summary = "causal attention of each row over its own cache slot";
  let description = [{
    `query [B, H, T, D]` attends over slot `slots[b]` of
    `key_cache [slots, Hkv, context, D]` and `value_cache [slots, Hkv,
    context, Dv]`: row `b` sees its first `lengths[b]` keys (its T new
    ones last), query `t` the keys `j <= t + lengths[b] - T` (causal,
    aligned to the row's end), with `window`, `sinks`, `global_topk` and
    `global_block` as in `strata.attention` relative to that diagonal
    (global blocks need the whole cache: not with a ring). `result [B, H, T, Dv]`.
    `H` is a multiple of `Hkv`; `scale` defaults to `1/sqrt(D)`. Made by
    `strata-split-prefill-decode` from a causal `strata.attention`.
    The caches may be compressed as `strata.cache_write` stores them (both
    `bf16`, or both `i8` with last dims D + 4 and Dv + 4): attention then
    reads the dequantized values. With `ring_kept` and `ring_context` they
    are rings as `strata.cache_write` writes them (lengths up to
    `ring_context`): a `window` is required, `sinks <= ring_kept`, and
    `T + window - 1 <= R - ring_kept`, so that every key a query sees is
    still in the ring. With `block_size` the caches are paged as
    `strata.cache_write` writes them and `slots` is the block table
    (lengths up to `N * block_size`); not with a ring or global blocks.

    ```mlir
    %o = strata.cache_attention %q, %kc, %vc, %slots, %lengths : (tensor<?x12x1x64xf32>, tensor<8x4x1024x64xf32>, tensor<8x4x1024x64xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x12x1x64xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$query, Strata_CacheTensor:$key_cache,
                   Strata_CacheTensor:$value_cache,
                   TensorRankOf<[I64], [1, 2]>:$slots,
                   TensorRankOf<[I64], [1]>:$lengths,
                   OptionalAttr<F32Attr>:$scale,
                   OptionalAttr<I64Attr>:$window, OptionalAttr<I64Attr>:$sinks,
                   OptionalAttr<I64Attr>:$ring_kept,
                   OptionalAttr<I64Attr>:$ring_context,
                   OptionalAttr<I64Attr>:$global_topk,
                   OptionalAttr<I64Attr>:$global_block,
                   OptionalAttr<I64Attr>:$block_size);
  let results = (outs Strata_FloatTensor:$result);
  let extraClassDeclaration = [{
    /// The positions a row can reach (strata.cache_write's).
    int64_t getPositionCapacity();
  }];
  let assemblyFormat = [{
    $query `,` $key_cache `,` $value_cache `,` $slots `,` $lengths attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Strata_GatherOp : Strata_Op<"gather",
    [AllElementTypesMatch<["data", "result"]>]> {
  let summary = "gathers slices along one axis (embedding lookup)";
  let description = [{
    `result = data[..., indices, ...]` along `axis`: the result shape is
    `data.shape[:axis] + indices.shape + data.shape[axis+1:]`. Negative
    indices count from the end. From ONNX `Gather`.

    ```mlir
    %e = strata.gather %wte, %ids {axis = 0 : i64} : (tensor<50257x768xf32>, tensor<1x8xi64>) -> tensor<1x8x768xf32>
    ```
  }];
  let arguments = (ins Strata_AnyTensor:$data, Strata_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat =
      "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Strata_GatherElementsOp : Strata_Op<"gather_elements",
    [AllElementTypesMatch<["data", "result"]>]> {
  let summary = "gathers single elements along one axis by an index tensor";
  let description = [{
    `result[i_0, ..., i_axis, ...] = data[i_0, ..., indices[i_0, ..., i_axis,
    ...], ...]`: `indices` has the rank of `data`, the result its shape, and
    every other dim of `indices` is at most the data's. Negative indices
    count from the end. From ONNX `GatherElements`.

    ```mlir
    %e = strata.gather_elements %x, %i {axis = 1 : i64} : (tensor<4x10xf32>, tensor<4x1xi64>) -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins Strata_AnyTensor:$data, Strata_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat =
      "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Strata_GatherNDOp : Strata_Op<"gather_nd",
    [AllElementTypesMatch<["data", "result"]>]> {
  let summary = "gathers slices addressed by index tuples";
  let description = [{
    The last dim of `indices` (extent K) holds tuples addressing the dims
    `batch_dims .. batch_dims + K - 1` of `data`; the first `batch_dims`
    dims of both are shared batch dims. The result is `indices.shape[:-1] ++
    data.shape[batch_dims + K:]`. Negative indices count from the end. From
    ONNX `GatherND`.

    ```mlir
    %g = strata.gather_nd %x, %i : (tensor<2x3x4xf32>, tensor<5x2xi64>) -> tensor<5x4xf32>
    ```
  }];
  let arguments = (ins Strata_AnyTensor:$data, Strata_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat =
      "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Strata_ScatterElementsOp : Strata_Op<"scatter_elements",
    [AllTypesMatch<["data", "result"]>,
     AllElementTypesMatch<["data", "updates"]>]> {
  let summary = "writes single elements along one axis at an index tensor";
  let description = [{
    The result is `data` with, for every index `u` of `updates`, the element
    at `u` with its `axis` coordinate replaced by `indices[u]` set to
    `updates[u]` (`reduction` "none"), or combined with it ("add", "mul",
    "max", "min"). `indices` has the shape of `updates`, rank of `data`.
    Updates apply in row-major order: with "none", the last of duplicate
    indices wins. Negative indices count from the end. From ONNX
    `ScatterElements` and `Scatter`.

    ```mlir
    %s = strata.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x5xf32>
    ```
  }];
  let arguments = (ins Strata_NumericTensor:$data,
                   Strata_IndexTensor:$indices,
                   Strata_NumericTensor:$updates,
                   DefaultValuedAttr<I64Attr, "0">:$axis,
                   DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs Strata_NumericTensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Strata_ScatterNDOp : Strata_Op<"scatter_nd",
    [AllTypesMatch<["data", "result"]>,
     AllElementTypesMatch<["data", "updates"]>]> {
  let summary = "writes slices addressed by index tuples";
  let description = [{
    The last dim of `indices` (extent K) holds tuples addressing the first K
    dims of `data`; `updates` has the shape `indices.shape[:-1] ++
    data.shape[K:]`. The result is `data` with each addressed slice set to
    (`reduction` "none") or combined with ("add", "mul", "max", "min") its
    update, in row-major order of the tuples. Negative indices count from
    the end. From ONNX `ScatterND`.

    ```mlir
    %s = strata.scatter_nd %x, %i, %u : (tensor<4x4x4xf32>, tensor<2x1xi64>, tensor<2x4x4xf32>) -> tensor<4x4x4xf32>
    ```
  }];
  let arguments = (ins Strata_NumericTensor:$data,
                   Strata_IndexTensor:$indices,
                   Strata_NumericTensor:$updates,
                   DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs Strata_NumericTensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Strata_TopKOp : Strata_Op<"top_k",
    [AllElementTypesMatch<["input", "values"]>]> {
  let summary = "the k largest (or smallest) elements along one axis";
  let description = [{
    Along `axis`, the `k` largest elements (smallest when `largest` is
    false) in order, best first, and their indices (i64). Equal values
    order by index, the lower first; NaN ranks above every number. The
    result dims are the input's with `axis` replaced by `k`. From ONNX
    `TopK` with a constant K (its `sorted` = 0 allows any order; this
    order is one).

    ```mlir
    %v, %i = strata.top_k %x {axis = 1 : i64, k = 3 : i64} : tensor<2x50xf32> -> (tensor<2x3xf32>, tensor<2x3xi64>)
    ```
  }];
  let arguments = (ins Strata_NumericTensor:$input, I64Attr:$k,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$largest);
  let results = (outs Strata_NumericTensor:$values,
                 RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` `(` type($values) `,`
    type($indices) `)`
  }];
  let hasVerifier = 1;
}

def Strata_EinsumOp : Strata_Op<"einsum"> {
  let summary = "a sum of products over named dims";
  let description = [{
    `equation` names each operand's dims with one letter each and the
    result's after `->` ("bij,bjk->bik"); every letter of the result appears
    in some operand, and letters missing from the result are summed over. A
    letter repeated in one operand reads its diagonal. Equal letters have
    equal extents (or 1 in some operands: broadcast). From ONNX `Einsum`,
    its ellipsis expanded and its implicit output made explicit at import.

    ```mlir
    %c = strata.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    ```
  }];
  let arguments = (ins Variadic<Strata_NumericTensor>:$inputs,
                   StrAttr:$equation);
  let results = (outs Strata_NumericTensor:$result);
  let assemblyFormat =
      "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def Strata_QuantizedGatherOp : Strata_Op<"quantized_gather"> {
  let summary = "embedding lookup in a table quantized per row";
  let description = [{
    `result[..., d] = value(table, indices[...], d) * scales[indices[...], d / group_size]`:
    `strata.gather` along axis 0 of a [V, D] fp32 table stored as
    symmetric integers of `bits` bits with one fp32 scale per `group_size`
    columns of each row. With `bits` = 8 `table` is [V, D] int8; with 4 it
    is [V, ceil(D / 2)] bytes, column 2c in the low nibble of byte c and
    2c + 1 in the high one, each holding its value + 8 (values in
    [-8, 7]). Negative indices count from the end, as in ONNX `Gather`.
    Made by `strata-quantize-weights` from the token-embedding table of a
    decoder whose contractions it quantizes.

    ```mlir
    %e = strata.quantized_gather %table, %scales, %ids {bits = 4 : i64, group_size = 32 : i64} : (tensor<50257x384xi8>, tensor<50257x24xf32>, tensor<1x8xi64>) -> tensor<1x8x768xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I8]>:$table,
                   RankedTensorOf<[F32]>:$scales,
                   Strata_IndexTensor:$indices,
                   I64Attr:$bits, I64Attr:$group_size);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $table `,` $scales `,` $indices attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Strata_ReshapeOp : Strata_Op<"reshape",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "reinterprets a tensor with a new shape of the same size";
  let description = [{
    Same elements in row-major order, new shape. When the result type is
    static the shape is implied by it; otherwise the `shape` operand (1-D
    i64) gives the run-time extents with ONNX `Reshape` rules: `0` copies
    the input dim at that position and one `-1` is inferred from the
    element count; with `allow_zero` (ONNX `allowzero`, and the shapes the
    importer builds from real extents) a `0` is an empty dim. From ONNX
    `Reshape`, `Flatten`, `Squeeze`, `Unsqueeze`.

    ```mlir
    %y = strata.reshape %x : (tensor<1x8x768xf32>) -> tensor<1x8x12x64xf32>
    %z = strata.reshape %x, %s : (tensor<?x768xf32>, tensor<3xi64>) -> tensor<?x12x64xf32>
    ```
  }];
  let arguments = (ins Strata_AnyTensor:$input,
                   Optional<Strata_ShapeTensor>:$shape,
                   UnitAttr:$allow_zero);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat = [{
    $input (`,` $shape^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Strata_TransposeOp : Strata_Op<"transpose",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "permutes the dims of a tensor";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]`. From ONNX `Transpose`.

    ```mlir
    %y = strata.transpose %x, [0, 2, 1, 3] : tensor<1x8x12x64xf32> -> tensor<1x12x8x64xf32>
    ```
  }];
  let arguments = (ins Strata_AnyTensor:$input,
                   DenseI64ArrayAttr:$permutation);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Strata_ConcatOp : Strata_Op<"concat", [SameOperandsElementType,
    SameOperandsAndResultElementType]> {
  let summary = "joins tensors along one axis";
  let description = [{
    Concatenates `inputs` along `axis`; all other dims must agree. From ONNX
    `Concat` (also how the KV cache grows in with-past exports).

    ```mlir
    %kv = strata.concat %past, %new {axis = 2 : i64} : (tensor<1x12x?x64xf32>, tensor<1x12x1x64xf32>) -> tensor<1x12x?x64xf32>
    ```
  }];
  let arguments = (ins Variadic<Strata_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat =
      "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Strata_SliceOp : Strata_Op<"slice",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "strided slice along selected axes";
  let description = [{
    For each `axes[i]`, keeps `starts[i] : ends[i] : steps[i]` with ONNX
    `Slice` clamping rules; other dims are untouched. `starts`, `ends` and
    `steps` are 1-D i64 tensors with one entry per axis, so a slice whose
    bounds depend on a sequence length stays expressible. From ONNX
    `Slice` (attribute and input forms).

    ```mlir
    %p = strata.slice %wpe, %s, %e, %st {axes = array<i64: 0>} : (tensor<1024x768xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x768xf32>
    ```
  }];
  let arguments = (ins Strata_AnyTensor:$input, Strata_ShapeTensor:$starts,
                   Strata_ShapeTensor:$ends, Strata_ShapeTensor:$steps,
                   DenseI64ArrayAttr:$axes);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $starts `,` $ends `,` $steps attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Strata_SplitOp : Strata_Op<"split",
    [SameOperandsAndResultElementType]> {
  let summary = "splits a tensor into pieces of static sizes along one axis";
  let description = [{
    Result `i` holds `sizes[i]` consecutive entries along `axis`. From ONNX
    `Split` with constant split sizes (e.g. a fused QKV projection).

    ```mlir
    %q, %k, %v = strata.split %qkv {axis = 2 : i64, sizes = array<i64: 768, 768, 768>} : tensor<1x8x2304xf32> -> tensor<1x8x768xf32>, tensor<1x8x768xf32>, tensor<1x8x768xf32>
    ```
  }];
  let arguments = (ins Strata_AnyTensor:$input, I64Attr:$axis,
                   DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Strata_AnyTensor>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
}

def Strata_ExpandOp : Strata_Op<"expand",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "broadcasts a tensor to a larger shape";
  let description = [{
    Broadcasts `input` against `shape` with numpy rules (ONNX `Expand`: a
    `1` in `shape` keeps the input dim). The result type is that broadcast.

    ```mlir
    %m = strata.expand %x, %s : (tensor<1x1x8x8xi1>, tensor<4xi64>) -> tensor<2x12x8x8xi1>
    ```
  }];
  let arguments = (ins Strata_AnyTensor:$input, Strata_ShapeTensor:$shape);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat =
      "$input `,` $shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Strata_PadOp : Strata_Op<"pad", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "pads (or, with negative pads, crops) every dim";
  let description = [{
    `pads` holds each dim's begin pad, then each dim's end pad; a negative
    pad removes elements. The new elements are `value` (0 when absent)
    with `mode = "constant"`, the input mirrored about its edge element
    with `"reflect"`, the edge element repeated with `"edge"`, and the
    input repeated with `"wrap"`. From ONNX `Pad` and `CenterCropPad`.

    ```mlir
    %y = strata.pad %x {mode = "reflect", pads = array<i64: 0, 2, 0, 2>} : (tensor<3x4xf32>) -> tensor<3x8xf32>
    ```
  }];
  let arguments = (ins Strata_AnyTensor:$input,
                   Optional<Strata_AnyTensor>:$value,
                   DenseI64ArrayAttr:$pads, StrAttr:$mode);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat = [{
    $input (`,` $value^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Strata_TileOp : Strata_Op<"tile",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "repeats a tensor along each dim";
  let description = [{
    `result.shape[i] = input.shape[i] * repeats[i]`. From ONNX `Tile`.

    ```mlir
    %y = strata.tile %x, %r : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Strata_AnyTensor:$input, Strata_ShapeTensor:$repeats);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat =
      "$input `,` $repeats attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Strata_TriluOp : Strata_Op<"trilu", [AllTypesMatch<["input", "result"]>]> {
  let summary = "keeps the upper or lower triangle of the last two dims";
  let description = [{
    Zeroes the elements below (`upper = true`) or above (`upper = false`)
    diagonal `k` (default 0) of every matrix in the last two dims. From ONNX
    `Trilu`, which causal masks are built with.

    ```mlir
    %t = strata.trilu %ones {upper = false} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    ```
  }];
  let arguments = (ins Strata_AnyTensor:$input,
                   Optional<TensorRankOf<[I64], [0]>>:$k,
                   DefaultValuedAttr<BoolAttr, "true">:$upper);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat = [{
    $input (`,` $k^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape computation
//===----------------------------------------------------------------------===//

def Strata_ShapeOp : Strata_Op<"shape"> {
  let summary = "the extents of a tensor as a 1-D i64 tensor";
  let description = [{
    Returns `input.shape[start:end]` (ONNX `Shape` with its opset-15
    `start`/`end`). The importer folds it when the dims are static; what is
    left measures symbolic dims at run time.

    ```mlir
    %s = strata.shape %x : tensor<?x8x768xf32> -> tensor<3xi64>
    ```
  }];
  let arguments = (ins Strata_AnyTensor:$input,
                   DefaultValuedAttr<I64Attr, "0">:$start,
                   OptionalAttr<I64Attr>:$end);
  let results = (outs Strata_ShapeTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Strata_ConstantOfShapeOp : Strata_Op<"constant_of_shape"> {
  let summary = "a tensor of a run-time shape filled with one value";
  let description = [{
    Fills a tensor whose extents come from `shape` with the scalar `value`.
    From ONNX `ConstantOfShape` when the shape is not static.

    ```mlir
    %z = strata.constant_of_shape %s {value = 0.0 : f32} : (tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Strata_ShapeTensor:$shape, TypedAttrInterface:$value);
  let results = (outs Strata_AnyTensor:$result);
  let assemblyFormat =
      "$shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Strata_RangeOp : Strata_Op<"range",
    [AllElementTypesMatch<["start", "limit", "delta", "result"]>]> {
  let summary = "a 1-D arithmetic sequence";
  let description = [{
    `[start, start + delta, ...)` up to but excluding `limit`, from scalar
    tensors. From ONNX `Range` (position ids, causal masks).

    ```mlir
    %r = strata.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins TensorRankOf<[F32, F64, I32, I64], [0]>:$start,
                   TensorRankOf<[F32, F64, I32, I64], [0]>:$limit,
                   TensorRankOf<[F32, F64, I32, I64], [0]>:$delta);
  let results = (outs TensorRankOf<[F32, F64, I32, I64], [1]>:$result);
  let assemblyFormat = [{
    $start `,` $limit `,` $delta attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Collectives of a tensor-parallel rank
//===----------------------------------------------------------------------===//

def Strata_AllReduceOp : Strata_Op<"all_reduce",
    [SameOperandsAndResultType, MemoryEffects<[MemWrite]>]> {
  let summary = "elementwise sum of a tensor over the ranks of a group";
  let description = [{
    Every one of the `ranks` processes holds its own `input` (a partial
    sum: its share of a contraction over a split reduction dim); each gets
    their sum, added in rank order so all hold the same bits. Inserted by
    `strata-shard-tensor-parallel` after a row-parallel linear layer. As
    far as MLIR knows it writes memory, so it is neither moved, merged nor
    removed: every rank must call the same collectives in the same order.

    ```mlir
    %y = strata.all_reduce %x {ranks = 2 : i64} : tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$input, I64Attr:$ranks);
  let results = (outs Strata_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Strata_AllGatherOp : Strata_Op<"all_gather",
    [AllElementTypesMatch<["input", "result"]>, MemoryEffects<[MemWrite]>]> {
  let summary = "the ranks' parts of a tensor stacked along one axis";
  let description = [{
    Rank `r` of `ranks` holds part `r` of a tensor split evenly along
    `axis`; each gets the whole tensor, the parts in rank order. Inserted
    by `strata-shard-tensor-parallel` where a split value leaves the
    entry (a vocabulary-parallel LM head's logits, a with-past export's
    present keys). Ordered like `strata.all_reduce`.

    ```mlir
    %y = strata.all_gather %x {axis = 2 : i64, ranks = 2 : i64} : (tensor<?x1x128xf32>) -> tensor<?x1x256xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$input, I64Attr:$axis,
                   I64Attr:$ranks);
  let results = (outs Strata_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type($input, $result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Hand-over between pipeline stages
//===----------------------------------------------------------------------===//

def Strata_SendOp : Strata_Op<"send", [MemoryEffects<[MemWrite]>]> {
  let summary = "sends a tensor to another pipeline stage";
  let description = [{
    Hands `input` to the process of pipeline stage `stage` (of the same
    tensor rank), which takes it with a `strata.recv` from this stage.
    Inserted by `strata-split-pipeline-stages`: the residual stream at the
    end of a stage, and the entry's outputs this stage computes for the
    others. Ordered like `strata.all_reduce`: the stages call their sends
    and receives in the same order.

    ```mlir
    strata.send %h {stage = 1 : i64} : tensor<?x1x768xf32>
    ```
  }];
  let arguments = (ins Strata_FloatTensor:$input, I64Attr:$stage);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Strata_RecvOp : Strata_Op<"recv", [MemoryEffects<[MemWrite]>]> {
  let summary = "receives a tensor from another pipeline stage";
  let description = [{
    Takes the tensor pipeline stage `stage` sends this one (its
    `strata.send`). The message carries its extents: a dim the result type
    fixes, or the optional `shape` computes from this stage's inputs, that
    the message does not have ends the run. With `shape`, the result's
    extents are known without the message (what an entry's output
    signature needs).

    ```mlir
    %h = strata.recv {stage = 0 : i64} : () -> tensor<?x1x768xf32>
    %logits = strata.recv %s {stage = 1 : i64} : (tensor<2xi64>) -> tensor<?x50257xf32>
    ```
  }];
  let arguments = (ins Optional<Strata_ShapeTensor>:$shape, I64Attr:$stage);
  let results = (outs Strata_FloatTensor:$result);
  let assemblyFormat =
      "($shape^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Run-time checks
//===----------------------------------------------------------------------===//

def Strata_CheckOp : Strata_Op<"check", [MemoryEffects<[MemWrite]>]> {
  let summary = "ends the run with an error when a run-time condition fails";
  let description = [{
    Inserted by the lowering right before an op whose memory safety depends
    on tensor values or data-dependent extents (gather indices, extents that
    must broadcast, reshape element counts, divisors). When `failed` is true
    at run time the run ends there and returns INVALID_ARGUMENT with a
    message of `kind` (strata_check_kind_t in strata_kernel_abi.h) over the
    values `a`, `b`, `c`, naming ONNX node `node` and, when the checked
    tensor is a model input, `input`. The CPU back end turns it into a call
    of the runtime's `strata_rt_check_failed` under an `scf.if`. It writes
    memory as far as MLIR knows, so it is neither moved nor removed; a
    constant false condition folds it away.

    ```mlir
    strata.check %bad, %v, %lo, %hi {kind = 1 : i64, node = "Gather_3",
                                     input = "input_ids"}
    ```
  }];
  let arguments = (ins I1:$failed, I64:$a, I64:$b, I64:$c, I64Attr:$kind,
                   StrAttr:$node, OptionalAttr<StrAttr>:$input);
  let assemblyFormat = "$failed `,` $a `,` $b `,` $c attr-dict";
  let hasCanonicalizeMethod = 1;
}

#endif // STRATA_DIALECTS_STRATA_IR_STRATAOPS_TD
