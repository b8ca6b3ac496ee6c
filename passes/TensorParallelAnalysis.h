//===- TensorParallelAnalysis.h - Which ops a rank splits how ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The analysis of strata-shard-tensor-parallel (ShardTensorParallel.cpp):
// from the contractions allowed to start a split, which values stay split
// along which axis, and what the rewrite must change for that (weights,
// reshape targets, slices, collectives). One function at a time.

#ifndef STRATA_PASSES_TENSORPARALLELANALYSIS_H_
#define STRATA_PASSES_TENSORPARALLELANALYSIS_H_

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <utility>

namespace strata::tensor_parallel {

using mlir::ArrayRef;
using mlir::BlockArgument;
using mlir::ElementsAttr;
using mlir::Location;
using mlir::LogicalResult;
using mlir::OpOperand;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::SmallVector;
using mlir::Value;

/// A range of indices along an axis.
struct Interval {
  int64_t start, size;
};

/// The indices rank |rank| of |ranks| keeps of an axis made of consecutive
/// |parts| (fused q/k/v: each part split evenly on its own).
SmallVector<Interval> rankIntervals(ArrayRef<int64_t> parts, int64_t ranks,
                                    int64_t rank);

/// Marks the contractions split: "column" or "row" (strata-compile's
/// report counts them).
inline constexpr llvm::StringLiteral kTensorParallelAttr =
    "strata.tensor_parallel";

/// |v|'s ranked tensor type, or null.
RankedTensorType tensorType(Value v);

/// |type| with |axis| divided by |ranks| (a static extent).
RankedTensorType divided(RankedTensorType type, int64_t axis, int64_t ranks);

/// A contraction's weight: a constant [K, N], or the transpose of a
/// constant [N, K] (a tied embedding read as the LM head).
struct Weight {
  ElementsAttr attr;
  bool transposed = false;
};

std::optional<Weight> weightOf(Value v);

/// The activation, weight and bias of a contraction by a constant weight
/// (strata.linear, or strata.matmul of an activation of rank >= 2).
struct Contraction {
  Value input;
  Weight weight;
  Value weightValue;
  Value bias;
};

std::optional<Contraction> contractionOf(Operation *op);

/// [K, N] of a contraction's weight.
std::pair<int64_t, int64_t> weightShape(const Weight &w);

/// Whether |op| acts elementwise (numpy broadcasting), so a split of an
/// operand passes to its result.
bool isElementwise(Operation *op);

/// How a split value is split: along |axis|, whose extent was |extent|
/// before the split, made of |parts| each split evenly, derived from the
/// column-parallel contractions in |roots|.
struct Split {
  int64_t axis = 0;
  int64_t extent = 0;
  SmallVector<int64_t> parts;
  llvm::BitVector roots;
};

/// What a reshape's shape operand needs: the element at |index| divided.
struct ShapeEdit {
  ir::ReshapeOp reshape;
  int64_t index;
};

/// A whole operand of an op with split operands, sliced to the rank's share.
struct OperandSlice {
  OpOperand *operand;
  int64_t axis;
  SmallVector<int64_t> parts;
};

/// Where a split value could not go: the contractions it came from, why.
struct Conflict {
  llvm::BitVector roots;
  std::string reason;
  Location loc;
};

/// Slices of one part of a split axis: their new [start, end).
struct SliceEdit {
  ir::SliceOp slice;
  int64_t start, end;
};

/// Ops that need their split input whole: gathered before, cut after.
struct Regather {
  Operation *op;
  int64_t axis;
};

/// What one run of the rules found.
struct Plan {
  std::optional<Conflict> conflict;
  llvm::MapVector<Value, Split> splits;
  /// Column-parallel contractions and their result's parts.
  llvm::MapVector<Operation *, SmallVector<int64_t>> columns;
  SmallVector<Operation *> rows;
  SmallVector<ShapeEdit> shapeEdits;
  SmallVector<SliceEdit> sliceEdits;
  SmallVector<Regather> regathered;
  SmallVector<OperandSlice> operandSlices;
  /// Split state arguments (KV caches hold the rank's heads).
  llvm::SetVector<BlockArgument> states;
  /// Returned split values that are gathered.
  SmallVector<OpOperand *> gathers;
  /// Split values sent to another pipeline stage, gathered first; their
  /// whole types.
  SmallVector<std::pair<OpOperand *, mlir::Type>> sendGathers;
  /// Ops whose results' types change, in order; split ops' sizes.
  SmallVector<Operation *> touched;
};

/// Runs the rules over |func| with the contractions of |candidates| not in
/// |banned| starting splits; a split reaching an op no rule covers stops
/// it with |plan.conflict| set (failure).
LogicalResult analyze(mlir::func::FuncOp func, int64_t ranks,
                      const llvm::BitVector &banned,
                      ArrayRef<Operation *> candidates, Plan &plan);

/// The constant element |index| of a 1-D shape tensor: a constant, or a
/// concatenation of pieces whose piece there is one.
std::optional<int64_t> shapeElement(Value shape, int64_t index);

/// [start, end) of a slice of |axis| alone (extent |n|) by constants with
/// step 1, clamped as ONNX Slice clamps.
std::optional<std::pair<int64_t, int64_t>>
sliceRange(ir::SliceOp slice, int64_t axis, int64_t n);

} // namespace strata::tensor_parallel

#endif // STRATA_PASSES_TENSORPARALLELANALYSIS_H_
