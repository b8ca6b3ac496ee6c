//===- session_communicator.cc - A session's communicator, checked --------===//
// SPDX-License-Identifier: Apache-2.0

#include "session_communicator.h"

#include <cinttypes>

#include "versioned_struct.h"

namespace strata::runtime {

strata_status_t acceptCommunicator(const strata_module_t* module,
                                   const strata_communicator_t* given,
                                   strata_communicator_t* out) {
  strata_communicator_t copy;
  STRATA_RETURN_IF_ERROR(
      copyVersioned(given, sizeof(copy), &copy, "strata_communicator_t"));
  if (!copy.all_gather) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "the communicator has no all_gather function");
  }
  if (copy.size == 0 || copy.rank >= copy.size) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "the communicator's rank %" PRIu32
                              " is not below its size %" PRIu32,
                              copy.rank, copy.size);
  }
  uint32_t rank = 0, ranks = 1;
  strata_module_parallel(module, &rank, &ranks);
  // A whole model calls no collective: any group may run it.
  if (ranks > 1 && (copy.size != ranks || copy.rank != rank)) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "the module is rank %" PRIu32 " of a tensor-parallel group of %" PRIu32
        " ranks, but the communicator is rank %" PRIu32 " of %" PRIu32
        "; load the artifact written for rank %" PRIu32 " of %" PRIu32,
        rank, ranks, copy.rank, copy.size, copy.rank, copy.size);
  }
  *out = copy;
  return nullptr;
}

strata_status_t checkRunCommunicator(const strata_module_t* module,
                                     const strata_communicator_t* communicator,
                                     const char* entry) {
  uint32_t rank = 0, ranks = 1;
  strata_module_parallel(module, &rank, &ranks);
  if (ranks <= 1 || communicator) return nullptr;
  return STRATA_MAKE_STATUS(
      STRATA_STATUS_FAILED_PRECONDITION,
      "cannot run entry '%s': the module is rank %" PRIu32 " of %" PRIu32
      " of a tensor-parallel group; give the session a communicator "
      "(strata_session_set_communicator) of size %" PRIu32
      " in which this process is rank %" PRIu32,
      entry, rank, ranks, ranks, rank);
}

}  // namespace strata::runtime
