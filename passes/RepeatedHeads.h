//===- RepeatedHeads.h - K/V heads repeated for grouped queries -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Recognizes a [B, H, S, D] key or value tensor built by repeating the heads
// of a [B, Hkv, S, D] one, in any of the spellings exporters produce for
// grouped-query attention, so the attention can read the unrepeated heads.

#ifndef STRATA_PASSES_REPEATEDHEADS_H_
#define STRATA_PASSES_REPEATEDHEADS_H_

#include "mlir/IR/Value.h"

#include <cstdint>
#include <optional>

namespace strata {

/// A rank-4 tensor whose dim 1 repeats the heads of |source|: |copies|
/// copies of each of the source's heads, the other dims unchanged.
struct RepeatedHeads {
  /// The unrepeated tensor, [B, Hkv, S, D].
  mlir::Value source;
  /// H / Hkv.
  int64_t copies = 1;
  /// True if head h is source head h / copies (HF `repeat_kv`,
  /// `repeat_interleave`: the grouping strata.attention applies), false if
  /// it is head h % Hkv (the head block tiled). Both hold for one KV head.
  bool grouped = true;
};

/// |v| as repeated heads, or std::nullopt. The spellings, each with the
/// batch, sequence and head-size extents checked unchanged (symbolically):
/// - reshape([B, Hkv, n, S, D] -> [B, Hkv * n, S, D]) of a [B, Hkv, 1, S, D]
///   unsqueeze (reshape) of the source, repeated by expand, tile
///   (repeats [1, 1, n, 1, 1]) or concat of n copies along dim 2; grouped;
/// - the same with the new dim in front, [B, n, Hkv, S, D]; tiled;
/// - tile(source, [1, n, 1, 1]) or concat of n copies along dim 1; tiled;
/// - expand of a one-head source; grouped.
std::optional<RepeatedHeads> peelRepeatedHeads(mlir::Value v);

} // namespace strata

#endif // STRATA_PASSES_REPEATEDHEADS_H_
