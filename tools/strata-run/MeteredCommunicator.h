//===- MeteredCommunicator.h - Counts what a rank exchanges -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// A communicator that passes every call to another and counts the calls,
// the bytes this rank contributes and the time spent in them (transfer and
// waiting for the other ranks), so strata-run can report a run's
// communication beside its compute.
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_RUN_METEREDCOMMUNICATOR_H_
#define STRATA_TOOLS_STRATA_RUN_METEREDCOMMUNICATOR_H_

#include <cstdint>

#include "strata/runtime/api.h"

namespace strata::tools {

class MeteredCommunicator {
public:
  /// Wraps |inner| (borrowed; null: table() is null too).
  explicit MeteredCommunicator(const strata_communicator_t *inner);
  MeteredCommunicator(const MeteredCommunicator &) = delete;
  MeteredCommunicator &operator=(const MeteredCommunicator &) = delete;

  /// The table to give sessions; null without an inner communicator.
  const strata_communicator_t *table() const {
    return inner_ ? &table_ : nullptr;
  }

  struct Totals {
    uint64_t allGathers = 0, sends = 0, receives = 0;
    /// Bytes this rank contributed: all_gather's bytes_per_rank, sent bytes.
    uint64_t bytes = 0;
    double seconds = 0;
  };
  const Totals &totals() const { return totals_; }

private:
  static strata_status_t allGather(void *self, const void *send, void *recv,
                                   size_t bytes);
  static strata_status_t sendTo(void *self, const void *buffer, size_t bytes,
                                uint32_t peer, uint32_t tag);
  static strata_status_t receiveFrom(void *self, void *buffer, size_t bytes,
                                     uint32_t peer, uint32_t tag);
  static strata_status_t probeFor(void *self, uint32_t peer, uint32_t tag,
                                  int *ready);

  const strata_communicator_t *inner_;
  strata_communicator_t table_;
  Totals totals_;
};

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_RUN_METEREDCOMMUNICATOR_H_
