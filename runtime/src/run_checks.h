//===- run_checks.h - Failed run-time checks end the run ------------------===//
// SPDX-License-Identifier: Apache-2.0
// Generated code checks what depends on input values (indices, extents
// computed from data, divisors) right before the op that relies on it and
// calls the strata_rt_check_failed import when a check fails
// (codegen/abi/strata_kernel_abi.h). That import ends the run by a
// non-local return to callEntryChecked: the frames it skips are generated
// code, which holds no locks and no resources other than buffers of the
// session's cache (taken back by BufferCache::reclaimLive).

#ifndef STRATA_RUNTIME_SRC_RUN_CHECKS_H_
#define STRATA_RUNTIME_SRC_RUN_CHECKS_H_

#include <cstddef>
#include <cstdint>

#include "strata/runtime/status.h"

namespace strata::runtime {

/// What a failed check reported (strata_check_kind_t and its values).
struct CheckFailure {
  const char* node = "";
  const char* input = "";
  int64_t kind = 0;
  int64_t a = 0, b = 0, c = 0;
};

/// Calls entry |function| with |args| (as callEntry) on this thread.
/// Returns false if generated code reported a failed check; |failure| then
/// says which, and the entry did not run to its end.
bool callEntryChecked(void* function, void* const* args, size_t count,
                      CheckFailure* failure);

/// INVALID_ARGUMENT naming the node, the values and the input of |failure|
/// (RESOURCE_EXHAUSTED for a failed allocation, CANCELLED for a cancel).
strata_status_t checkFailureStatus(const CheckFailure& failure);

/// Ends the run in progress on this thread with RESOURCE_EXHAUSTED because
/// an allocation of |bytes| for generated code failed; returns outside a
/// run (the caller then returns null).
void failRunOutOfMemory(uint64_t bytes);

/// Ends the run in progress on this thread with CANCELLED (the handler of
/// ScopedCancelRequest, reached only through pollCancel); returns outside a
/// run.
void failRunCancelled();

/// CheckFailure::kind of a failed allocation (not a strata_check_kind_t).
constexpr int64_t kOutOfMemoryFailure = -1;
/// CheckFailure::kind of a cancelled run.
constexpr int64_t kCancelledFailure = -2;

/// The strata_rt_check_failed import. Ends the run in progress on this
/// thread; outside callEntryChecked it returns (generated code calls it only
/// from the entry function itself, never from a worker).
extern "C" void strataRtCheckFailed(const char* node, const char* input,
                                    int64_t kind, int64_t a, int64_t b,
                                    int64_t c);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_RUN_CHECKS_H_
