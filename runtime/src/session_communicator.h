//===- session_communicator.h - A session's communicator, checked ---------===//
// SPDX-License-Identifier: Apache-2.0
// A module with a PARALLEL section is one rank of a split model: its
// session needs a communicator of the model's world size in which it has
// the module's world rank (and send/recv when the model has pipeline
// stages), and refuses to run without one, before any generated code runs
// (an exchange would otherwise end the run halfway, after the other ranks
// had started theirs).

#ifndef STRATA_RUNTIME_SRC_SESSION_COMMUNICATOR_H_
#define STRATA_RUNTIME_SRC_SESSION_COMMUNICATOR_H_

#include "strata/runtime/communicator.h"
#include "strata/runtime/module.h"
#include "strata/runtime/status.h"

namespace strata::runtime {

/// Checks |given| (non-null) and copies the fields this library knows into
/// |*out|: a struct_size of a known version, all_gather set, rank below
/// size, and the world size and rank of |module|'s PARALLEL section if it
/// has one (any for a whole model), with send and recv set if the section
/// has 2 or more pipeline stages. INVALID_ARGUMENT naming what differs.
strata_status_t acceptCommunicator(const strata_module_t* module,
                                   const strata_communicator_t* given,
                                   strata_communicator_t* out);

/// FAILED_PRECONDITION when |module| is a rank of a group and |communicator|
/// is null, naming |entry| and the rank; else OK.
strata_status_t checkRunCommunicator(const strata_module_t* module,
                                     const strata_communicator_t* communicator,
                                     const char* entry);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_SESSION_COMMUNICATOR_H_
