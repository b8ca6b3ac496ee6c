//===- run_checks.h - Failed run-time checks end the run ------------------===//
// SPDX-License-Identifier: Apache-2.0
// Generated code checks what depends on input values (indices, extents
// computed from data, divisors) right before the op that relies on it and
// calls the strata_rt_check_failed import when a check fails
// (codegen/abi/strata_kernel_abi.h). That import ends the run by a
// non-local return to callEntryChecked: the frames it skips are generated
// code, which holds no locks and no resources other than buffers of the
// session's cache (taken back by BufferCache::reclaimLive). Where to return
// to is the run context's trap (run_context.h), set only on the thread that
// called the entry: tasks on other threads never end the run.

#ifndef STRATA_RUNTIME_SRC_RUN_CHECKS_H_
#define STRATA_RUNTIME_SRC_RUN_CHECKS_H_

#include <cstddef>
#include <cstdint>

#include "run_context.h"
#include "strata/runtime/status.h"

namespace strata::runtime {

/// Calls entry |function| with |args| (as callEntry; args[0] must be
/// |context|) on this thread, with |context|'s trap set for the call.
/// Returns false if generated code or an import ended the run; |failure|
/// then says why, and the entry did not run to its end.
bool callEntryChecked(strata_rt_context_t* context, void* function,
                      void* const* args, size_t count, CheckFailure* failure);

/// INVALID_ARGUMENT naming the node, the values and the input of |failure|
/// (RESOURCE_EXHAUSTED for a failed allocation, CANCELLED for a cancel,
/// INTERNAL for import parameters no compiler emits, and the code and
/// message of failRunWithStatus).
strata_status_t checkFailureStatus(const CheckFailure& failure);

/// The strata_rt_check_failed import. Ends the run of |context|; without a
/// trap it returns (generated code calls it only from the entry function
/// itself, never from a task).
extern "C" void strataRtCheckFailed(strata_rt_context_t* context,
                                    const char* node, const char* input,
                                    int64_t kind, int64_t a, int64_t b,
                                    int64_t c);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_RUN_CHECKS_H_
