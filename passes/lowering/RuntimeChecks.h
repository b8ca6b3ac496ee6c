//===- RuntimeChecks.h - Checks on values the compiler cannot see --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Builders of strata.check ops for the lowering: everything whose memory
// safety depends on tensor values or on extents only known at run time
// (gather indices, broadcasting extents, reshape counts, divisors, extents
// computed from data) is checked right before the op that relies on it.
// A failed check ends the run with INVALID_ARGUMENT naming the ONNX node
// (docs/runtime-input-contract.md).

#ifndef STRATA_PASSES_LOWERING_RUNTIMECHECKS_H_
#define STRATA_PASSES_LOWERING_RUNTIMECHECKS_H_

#include "codegen/abi/strata_kernel_abi.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace strata::lowering {

/// The ONNX node name |loc| carries (the first one of a fused location),
/// or "" if none.
std::string nodeNameOf(mlir::Location loc);

/// Adds a check that fails the run when |failed| (i1) is true, with the
/// message of |kind| over |a|, |b|, |c| (integers or indices), naming the
/// node of |loc| and the model input |checked| is, if it is one.
void emitCheck(mlir::OpBuilder &b, mlir::Location loc, mlir::Value failed,
               strata_check_kind_t kind, mlir::Value a, mlir::Value bv,
               mlir::Value c, mlir::Value checked = {});

/// Fails the run unless every element of integer tensor |indices| lies in
/// [-extent, extent - 1] (ONNX index semantics; |extent| is an index).
void checkIndicesInRange(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value indices, mlir::Value extent);

/// Fails the run unless every tuple in the last dim of |indices| ([..., K])
/// addresses |data|: element j in range for dim |firstDim| + j.
void checkIndexTuplesInRange(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value indices, mlir::Value data,
                             int64_t firstDim);

/// Fails the run unless extent |actual| equals |expected| (both indices);
/// |dim| names the dim in the message. Static pairs need no check.
void checkExtentsEqual(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value actual, mlir::Value expected, int64_t dim,
                       strata_check_kind_t kind, mlir::Value checked = {});

/// Fails the run when an extent computed from tensor data (an index) is
/// negative or above STRATA_MAX_DATA_EXTENT, and returns it clamped into
/// that range, so that nothing is sized by a hostile value.
mlir::Value checkDataExtent(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value extent, mlir::Value checked = {});

/// Fails the run unless each operand of an elementwise op producing |type|
/// has, in every dim it does not broadcast statically, the result's extent
/// (the generic reads it at the result's indices there).
void checkBroadcastExtents(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::RankedTensorType type,
                           mlir::ValueRange operands);

/// Fails the run unless the [B, H, S, D] operands of an attention agree:
/// key and value batch, heads and sequence, key head dim, and each mask
/// dim 1 or the extent of the scores' dim it aligns with (the mask
/// broadcasts to [B, H, Sq, Sk] from the last dim, as numpy does).
void checkAttentionOperands(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value query, mlir::Value key,
                            mlir::Value value, mlir::Value mask);

/// checkAttentionOperands for an attention whose key and value are each the
/// concatenation along the sequence of a past and a new part: the parts
/// agree outside that dim (what the concatenation checked), and the past
/// parts have one length, the new parts another.
void checkAttentionAppendOperands(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value query, mlir::Value pastKey,
                                  mlir::Value newKey, mlir::Value pastValue,
                                  mlir::Value newValue, mlir::Value mask);

/// Fails the run unless each dim of the attention |mask| is 1 or the extent
/// of the scores' dim it aligns with ([B, H, Sq, |keys|], numpy-style from
/// the last dim; |keys| an index).
void checkAttentionMask(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value query, mlir::Value keys, mlir::Value mask);

/// Fails the run when integer tensor |divisor| has a zero element.
void checkNoZeroDivisor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value divisor);

/// Fails the run unless each row r of KV cache writes lands in the cache:
/// slots[r] in [0, |slotCount|) and positions [positions[r],
/// positions[r] + |count|) in [0, |context|) (|slots|, |positions| [B] i64
/// tensors, |count| an index).
void checkCacheRows(mlir::OpBuilder &b, mlir::Location loc, mlir::Value slots,
                    mlir::Value positions, mlir::Value count,
                    int64_t slotCount, int64_t context);

/// Fails the run when |count| (an index) new tokens exceed |capacity|, what
/// a ring-buffer cache holds at once.
void checkRingWrite(mlir::OpBuilder &b, mlir::Location loc, mlir::Value count,
                    int64_t capacity);

/// The same for rows reading their slot's first lengths[r] keys, the last
/// |count| of them new: positions [lengths[r] - |count|, lengths[r]).
void checkCacheLengths(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value slots, mlir::Value lengths,
                       mlir::Value count, int64_t slotCount, int64_t context);

} // namespace strata::lowering

#endif // STRATA_PASSES_LOWERING_RUNTIMECHECKS_H_
