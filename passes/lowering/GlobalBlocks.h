//===- GlobalBlocks.h - A window's keys in linalg ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The generic lowering's spelling of strata.attention's window, sinks and
// global_topk / global_block: which keys a window keeps, including the key
// blocks a query adds to it, by the definition (block sums, block scores,
// each block's rank among the query's candidates), for the attention and
// cache-attention masks.

#ifndef STRATA_PASSES_LOWERING_GLOBALBLOCKS_H
#define STRATA_PASSES_LOWERING_GLOBALBLOCKS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace strata::lowering {

/// The attributes that define the blocks a query may add.
struct GlobalBlocks {
  int64_t topk, block, window, sinks;
};

/// The key a query sees last (its causal diagonal), from the batch row and
/// query indices inside a linalg body.
using LastKeyFn = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::Value row, mlir::Value query)>;

/// ranks[b, h, i, c] (i32, [B, H, T, ceil(S / block)]): how many of query
/// i's candidate blocks outscore key block c (higher q . block key sum,
/// or equal and a lower block), for |query| [B, H, T, D] and |keys|
/// [B, Hkv, S, D] (H a multiple of Hkv). Sums and scores are fp32.
mlir::Value globalBlockRanks(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value query, mlir::Value keys,
                             const GlobalBlocks &spec, LastKeyFn lastKey);

/// Inside a linalg body: whether key |j| of query (|row|, |head|,
/// |queryIndex|), whose last key is |last|, lies in a block the query
/// chose (a candidate ranked below topk in |ranks|).
mlir::Value isInChosenBlock(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value ranks, const GlobalBlocks &spec,
                            mlir::Value row, mlir::Value head,
                            mlir::Value queryIndex, mlir::Value j,
                            mlir::Value last);

/// Inside a linalg body: whether the window keeps key |j| of a query whose
/// last key is |last|: j > last - window, j < sinks, or (with |global|) j
/// in a block query (|row|, |head|, |queryIndex|) chose (isInChosenBlock).
mlir::Value isKeptByWindow(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value j, mlir::Value last, int64_t window,
                           int64_t sinks,
                           const std::optional<GlobalBlocks> &global,
                           mlir::Value ranks, mlir::Value row,
                           mlir::Value head, mlir::Value queryIndex);

} // namespace strata::lowering

#endif // STRATA_PASSES_LOWERING_GLOBALBLOCKS_H
