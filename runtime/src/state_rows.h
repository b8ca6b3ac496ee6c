//===- state_rows.h - Positions of one sequence in a state tensor ---------===//
// SPDX-License-Identifier: Apache-2.0
// A KV cache state [slots, kv_heads, context, row] keeps each position of a
// sequence in one row per head. Copying a range of positions out of one
// slot and into another session's slot hands a prompt's cache from a
// prefill process to a decode process. The position dim is the one the
// manifest names `context`, wherever it is.

#ifndef STRATA_RUNTIME_SRC_STATE_ROWS_H_
#define STRATA_RUNTIME_SRC_STATE_ROWS_H_

#include <cstddef>
#include <cstdint>

#include "strata/runtime/module.h"
#include "strata/runtime/status.h"

namespace strata::runtime {

/// Which way copyStateRows copies.
enum class RowsDirection { kOut, kIn };

/// Copies positions [first, first + count) of slot |slot| of the state
/// |state| (its dims at full extent in |fullDims|, its memory at |memory|)
/// to (kOut) or from (kIn) |buffer|, packed as [outer][count][inner]: the
/// dims between `slots` and `context`, the positions, the dims after.
/// INVALID_ARGUMENT for a shared state or |bytes| other than the packed
/// size, UNIMPLEMENTED for a state without a `context` dim, OUT_OF_RANGE
/// for a slot or a range outside the state. Nothing is copied on failure.
strata_status_t copyStateRows(const strata_state_signature_t& state,
                              const int64_t* fullDims, uint8_t* memory,
                              int64_t slot, int64_t first, int64_t count,
                              void* buffer, size_t bytes,
                              RowsDirection direction);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_STATE_ROWS_H_
