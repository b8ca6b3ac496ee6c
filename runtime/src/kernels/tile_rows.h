//===- tile_rows.h - A register tile's row count as a constant -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The per-ISA tiles are templates on their row count (so that the rows'
// accumulators stay in registers); this turns the run-time count into one.

#ifndef STRATA_RUNTIME_SRC_KERNELS_TILE_ROWS_H_
#define STRATA_RUNTIME_SRC_KERNELS_TILE_ROWS_H_

#include <cstdint>
#include <type_traits>
#include <utility>

namespace strata::runtime::kernels {

/// withTileRows over the counts 1..sizeof...(I).
template <typename F, int... I>
void withTileRowsOf(int64_t rows, const F& f,
                    std::integer_sequence<int, I...>) {
  constexpr int kMax = sizeof...(I);
  const bool partial = ((I + 1 < kMax && rows == I + 1
                             ? (f(std::integral_constant<int, I + 1>()), true)
                             : false) ||
                        ...);
  if (!partial) f(std::integral_constant<int, kMax>());
}

/// Calls f(std::integral_constant<int, R>()) with R = |rows| for rows in
/// [1, kMax), else R = kMax (a full tile). Used only with a lambda of the
/// calling unit, so each ISA's unit has its own instance.
template <int kMax, typename F>
void withTileRows(int64_t rows, const F& f) {
  withTileRowsOf(rows, f, std::make_integer_sequence<int, kMax>());
}

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_TILE_ROWS_H_
