//===- StrataOps.h - Operations of the strata dialect -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Declares the op classes generated from StrataOps.td.

#ifndef STRATA_DIALECTS_STRATA_IR_STRATAOPS_H_
#define STRATA_DIALECTS_STRATA_IR_STRATAOPS_H_

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/strata/IR/StrataDialect.h"

#define GET_OP_CLASSES
#include "dialects/strata/IR/StrataOps.h.inc"

namespace strata::ir {
/// Discardable attribute on the contraction strata.quantized_linear lowers
/// to: the bits of its integer weight's values (8, or 4 in i8 storage).
inline constexpr llvm::StringLiteral kWeightBitsAttr = "strata.weight_bits";
/// Discardable attribute on that contraction when its activations are
/// quantized per row at run time (8: W8A8); absent for weight-only.
inline constexpr llvm::StringLiteral kActivationBitsAttr =
    "strata.activation_bits";
/// With it, the block of k each row is quantized in (absent: the whole
/// row, W8A8 per token).
inline constexpr llvm::StringLiteral kActivationBlockAttr =
    "strata.activation_block";
/// Discardable TypeAttr on strata.linear / strata.matmul and on the
/// contraction they lower to: the products may be computed in this type
/// (bf16: operands rounded to bf16, sums in fp32). Set by
/// strata-bf16-contractions.
inline constexpr llvm::StringLiteral kComputeTypeAttr = "strata.compute_type";
/// Discardable I64Attr on strata.conv / strata.linear: how many
/// per-channel scale/shift ops (an inference BatchNormalization's) were
/// folded into its weight and bias. Set by strata-fold-channel-affine.
inline constexpr llvm::StringLiteral kFoldedChannelOpsAttr =
    "strata.folded_channel_ops";
/// Module attribute (I64) the prefill/decode split sets: the tokens one
/// sequence may hold, the `context` dim of the generation contract (no
/// state has that extent when every KV cache is a ring).
inline constexpr llvm::StringLiteral kGenerationContextAttr =
    "strata.generation_context";
/// Module attribute (I64) a pipeline stage that holds no KV cache keeps:
/// the sequence slots of the generation contract (the `slots` dim its
/// dropped states had).
inline constexpr llvm::StringLiteral kGenerationSlotsAttr =
    "strata.generation_slots";
} // namespace strata::ir

#endif // STRATA_DIALECTS_STRATA_IR_STRATAOPS_H_
