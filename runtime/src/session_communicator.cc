//===- session_communicator.cc - A session's communicator, checked --------===//
// SPDX-License-Identifier: Apache-2.0

#include "session_communicator.h"

#include <cinttypes>
#include <cstdio>

#include "versioned_struct.h"

namespace strata::runtime {
namespace {

// The module's place in its split model, as the messages name it.
struct Place {
  uint32_t rank = 0, ranks = 1;
  uint32_t tensorRank = 0, tensorRanks = 1, stage = 0, stages = 1;
  // "rank R of a tensor-parallel group of N ranks", or with stages "rank R
  // of a parallel group of N ranks (pipeline stage s of S, tensor rank t
  // of T)".
  char text[160] = {};
};

Place placeOf(const strata_module_t* module) {
  Place p;
  strata_module_parallel(module, &p.rank, &p.ranks);
  strata_module_parallel_layout(module, &p.tensorRank, &p.tensorRanks, &p.stage,
                                &p.stages);
  if (p.stages == 1) {
    std::snprintf(p.text, sizeof(p.text),
                  "rank %" PRIu32 " of a tensor-parallel group of %" PRIu32
                  " ranks",
                  p.rank, p.ranks);
  } else {
    std::snprintf(p.text, sizeof(p.text),
                  "rank %" PRIu32 " of a parallel group of %" PRIu32
                  " ranks (pipeline stage %" PRIu32 " of %" PRIu32
                  ", tensor rank %" PRIu32 " of %" PRIu32 ")",
                  p.rank, p.ranks, p.stage, p.stages, p.tensorRank,
                  p.tensorRanks);
  }
  return p;
}

}  // namespace

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
  const Place place = placeOf(module);
  // A whole model calls no collective: any group may run it.
  if (place.ranks > 1 &&
      (copy.size != place.ranks || copy.rank != place.rank)) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "the module is %s, but the communicator is rank %" PRIu32 " of %" PRIu32
        "; load the artifact written for rank %" PRIu32 " of %" PRIu32,
        place.text, copy.rank, copy.size, copy.rank, copy.size);
  }
  // Stages hand activations over, and their groups gather, by send/recv.
  if (place.stages > 1 && (!copy.send || !copy.recv)) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "the communicator has no %s function, which the module needs: it "
        "is %s",
        copy.send ? "recv" : "send", place.text);
  }
  *out = copy;
  return nullptr;
}

strata_status_t checkRunCommunicator(const strata_module_t* module,
                                     const strata_communicator_t* communicator,
                                     const char* entry) {
  const Place place = placeOf(module);
  if (place.ranks <= 1 || communicator) return nullptr;
  return STRATA_MAKE_STATUS(
      STRATA_STATUS_FAILED_PRECONDITION,
      "cannot run entry '%s': the module is %s; give the session a "
      "communicator (strata_session_set_communicator) of size %" PRIu32
      " in which this process is rank %" PRIu32,
      entry, place.text, place.ranks, place.rank);
}

}  // namespace strata::runtime
