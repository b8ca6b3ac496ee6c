//===- RepeatedHeads.cpp - K/V heads repeated for grouped queries ---------===//
// SPDX-License-Identifier: Apache-2.0
// See RepeatedHeads.h.

#include "passes/RepeatedHeads.h"

#include "dialects/strata/IR/StrataOps.h"
#include "passes/ShapeArithmetic.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace strata::ir;

namespace strata {

namespace {

int64_t rankOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type ? type.getRank() : -1;
}

/// Extent |dim| of |v| if it is a constant, else std::nullopt.
std::optional<int64_t> constantExtent(Value v, int64_t dim) {
  return extentOf(v, dim).getConstant();
}

/// True if extents |da| of |a| equal extents |db| of |b| pairwise.
bool sameExtents(Value a, ArrayRef<int64_t> da, Value b,
                 ArrayRef<int64_t> db) {
  for (auto [x, y] : llvm::zip(da, db))
    if (extentOf(a, x) != extentOf(b, y))
      return false;
  return true;
}

/// |v| without expands by all-ones shapes, which change nothing (torch
/// exports `x.repeat(...)` as an expand to ones before the tile).
Value skipIdentityExpands(Value v) {
  while (auto expand = v.getDefiningOp<ExpandOp>()) {
    std::optional<SmallVector<SymbolicIndex>> shape =
        elementsOf(expand.getShape());
    if (!shape || expand.getType() != expand.getInput().getType() ||
        llvm::any_of(*shape,
                     [](const SymbolicIndex &e) { return e.getConstant() != 1; }))
      break;
    v = expand.getInput();
  }
  return v;
}

/// The |axis| repeat count of |op| (expand, tile or concat of one value)
/// whose input has extent 1 there, or std::nullopt; |input| is set to the
/// repeated value. Every other dim must be unchanged.
std::optional<int64_t> repeatAlong(Operation *op, int64_t axis,
                                   Value &input) {
  if (!op)
    return std::nullopt;
  Value result = op->getResult(0);
  int64_t rank = rankOf(result);
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    int64_t a = concat.getAxis();
    if (a < 0)
      a += rank;
    if (a != axis || concat.getInputs().empty() ||
        !llvm::all_equal(concat.getInputs()))
      return std::nullopt;
    input = concat.getInputs().front();
    if (constantExtent(input, axis) != 1)
      return std::nullopt;
    return static_cast<int64_t>(concat.getInputs().size());
  }
  if (auto tile = dyn_cast<TileOp>(op)) {
    std::optional<SmallVector<SymbolicIndex>> repeats =
        elementsOf(tile.getRepeats());
    if (!repeats || static_cast<int64_t>(repeats->size()) != rank)
      return std::nullopt;
    for (auto [d, r] : llvm::enumerate(*repeats))
      if (static_cast<int64_t>(d) != axis && r.getConstant() != 1)
        return std::nullopt;
    input = skipIdentityExpands(tile.getInput());
    std::optional<int64_t> n = (*repeats)[axis].getConstant();
    if (!n || *n < 1)
      return std::nullopt;
    return n;
  }
  if (auto expand = dyn_cast<ExpandOp>(op)) {
    input = expand.getInput();
    if (rankOf(input) != rank || constantExtent(input, axis) != 1)
      return std::nullopt;
    SmallVector<int64_t> others;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        others.push_back(d);
    if (!sameExtents(result, others, input, others))
      return std::nullopt;
    return constantExtent(result, axis);
  }
  return std::nullopt;
}

} // namespace

std::optional<RepeatedHeads> peelRepeatedHeads(Value v) {
  if (rankOf(v) != 4)
    return std::nullopt;
  std::optional<int64_t> heads = constantExtent(v, 1);
  if (!heads)
    return std::nullopt;
  Operation *op = v.getDefiningOp();
  // Repeats on dim 1 of the rank-4 tensor itself.
  Value input;
  if (std::optional<int64_t> n = repeatAlong(op, 1, input)) {
    std::optional<int64_t> hkv = constantExtent(input, 1);
    if (!hkv || *hkv * *n != *heads || rankOf(input) != 4 ||
        !sameExtents(v, {0, 2, 3}, input, {0, 2, 3}))
      return std::nullopt;
    return RepeatedHeads{input, *n, *hkv == 1};
  }
  // A [B, a, b, S, D] tensor merged into [B, a * b, S, D].
  auto merge = dyn_cast_if_present<ReshapeOp>(op);
  if (!merge)
    return std::nullopt;
  Value wide = merge.getInput();
  if (rankOf(wide) != 5 || !sameExtents(v, {0, 2, 3}, wide, {0, 3, 4}))
    return std::nullopt;
  // The repeated dim is 2 (grouped) or 1 (the head block tiled).
  for (int64_t axis : {2, 1}) {
    Value unsqueezed;
    std::optional<int64_t> n =
        repeatAlong(wide.getDefiningOp(), axis, unsqueezed);
    auto unsqueeze =
        n ? unsqueezed.getDefiningOp<ReshapeOp>() : ReshapeOp();
    if (!unsqueeze)
      continue;
    Value source = unsqueeze.getInput();
    int64_t kvAxis = axis == 2 ? 1 : 2;
    std::optional<int64_t> hkv = constantExtent(source, 1);
    if (rankOf(source) != 4 || !hkv || *hkv * *n != *heads ||
        constantExtent(wide, kvAxis) != *hkv ||
        !sameExtents(unsqueezed, {0, kvAxis, 3, 4}, source, {0, 1, 2, 3}))
      return std::nullopt;
    return RepeatedHeads{source, *n, axis == 2 || *hkv == 1};
  }
  return std::nullopt;
}

} // namespace strata
