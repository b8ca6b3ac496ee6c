//===- state_rows.cc - Positions of one sequence in a state tensor --------===//
// SPDX-License-Identifier: Apache-2.0

#include "state_rows.h"

#include <cinttypes>
#include <cstring>

#include "strata/runtime/tensor.h"

namespace strata::runtime {

strata_status_t copyStateRows(const strata_state_signature_t& state,
                              const int64_t* fullDims, uint8_t* memory,
                              int64_t slot, int64_t first, int64_t count,
                              void* buffer, size_t bytes,
                              RowsDirection direction) {
  if (state.scope != STRATA_STATE_SCOPE_PER_SEQUENCE) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "state '%s' is shared by the session, not kept "
                              "per sequence: it has no slots",
                              state.name);
  }
  uint32_t contextDim = 0;
  for (uint32_t d = 1; d < state.rank; ++d) {
    if (state.dims[d].symbol &&
        std::strcmp(state.dims[d].symbol, "context") == 0) {
      contextDim = d;
      break;
    }
  }
  if (contextDim == 0) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_UNIMPLEMENTED,
        "state '%s' has no 'context' dim: its positions are not rows of a "
        "slot (a paged block pool or the ring cache of a windowed "
        "attention), so they cannot be copied by position",
        state.name);
  }
  const int64_t slots = fullDims[0];
  const int64_t positions = fullDims[contextDim];
  if (slot < 0 || slot >= slots) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_OUT_OF_RANGE,
                              "sequence slot %" PRId64
                              " is out of range: state '%s' has %" PRId64
                              " slots",
                              slot, state.name, slots);
  }
  if (first < 0 || count < 0 || first > positions ||
      count > positions - first) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_OUT_OF_RANGE,
                              "positions [%" PRId64 ", %" PRId64 " + %" PRId64
                              ") are outside the %" PRId64
                              " positions of state '%s'",
                              first, first, count, positions, state.name);
  }
  size_t outer = 1;
  for (uint32_t d = 1; d < contextDim; ++d) {
    outer *= static_cast<size_t>(fullDims[d]);
  }
  size_t rowBytes = strata_dtype_size(state.dtype);
  for (uint32_t d = contextDim + 1; d < state.rank; ++d) {
    rowBytes *= static_cast<size_t>(fullDims[d]);
  }
  const size_t expected = outer * static_cast<size_t>(count) * rowBytes;
  if (bytes != expected) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "%zu bytes given for %" PRId64
                              " positions of state '%s', which "
                              "take %zu (%zu x %" PRId64 " rows of %zu bytes)",
                              bytes, count, state.name, expected, outer, count,
                              rowBytes);
  }
  const size_t run = static_cast<size_t>(count) * rowBytes;
  const size_t perOuter = static_cast<size_t>(positions) * rowBytes;
  uint8_t* slotBase = memory + static_cast<size_t>(slot) * outer * perOuter +
                      static_cast<size_t>(first) * rowBytes;
  auto* packed = static_cast<uint8_t*>(buffer);
  for (size_t o = 0; o < outer && run > 0; ++o) {
    uint8_t* inState = slotBase + o * perOuter;
    uint8_t* inBuffer = packed + o * run;
    if (direction == RowsDirection::kOut) {
      std::memcpy(inBuffer, inState, run);
    } else {
      std::memcpy(inState, inBuffer, run);
    }
  }
  return nullptr;
}

}  // namespace strata::runtime
