//===- run_checks.cc - Failed run-time checks end the run -----------------===//
// SPDX-License-Identifier: Apache-2.0

#include "run_checks.h"

#include <csetjmp>
#include <cstdio>
#include <cinttypes>
#include <string>

#include "native_code.h"
#include "strata_kernel_abi.h"

namespace strata::runtime {

// No object with a destructor lives in this frame: longjmp returns into it.
bool callEntryChecked(strata_rt_context_t* context, void* function,
                      void* const* args, size_t count, CheckFailure* failure) {
  RunTrap trap;
  RunTrap* const previous = context->trap;
  context->trap = &trap;
  if (setjmp(trap.jump) != 0) {
    context->trap = previous;
    *failure = trap.failure;
    return false;
  }
  callEntry(function, args, count);
  context->trap = previous;
  return true;
}

extern "C" void strataRtCheckFailed(strata_rt_context_t* context,
                                    const char* node, const char* input,
                                    int64_t kind, int64_t a, int64_t b,
                                    int64_t c) {
  CheckFailure failure;
  failure.node = node ? node : "";
  failure.input = input ? input : "";
  failure.kind = kind;
  failure.a = a;
  failure.b = b;
  failure.c = c;
  endRun(context, failure);
}

strata_status_t checkFailureStatus(const CheckFailure& f) {
  if (f.kind == kCancelledFailure) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_CANCELLED,
                              "the run was cancelled (strata_session_cancel)");
  }
  if (f.kind == kInternalFailure) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INTERNAL,
                              "the code passed a runtime kernel %s %" PRId64
                              "; recompile it with this release's compiler",
                              f.node, f.a);
  }
  if (f.kind == kStatusFailure) {
    return STRATA_MAKE_STATUS(static_cast<strata_status_code_t>(f.a), "%s",
                              f.message);
  }
  if (f.kind == kOutOfMemoryFailure) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory: a buffer of %" PRIu64
                              " bytes for the run could not be allocated",
                              static_cast<uint64_t>(f.a));
  }
  char what[256];
  switch (f.kind) {
    case STRATA_CHECK_INDEX_RANGE:
      std::snprintf(what, sizeof what,
                    "index %" PRId64 " is out of range [%" PRId64 ", %" PRId64
                    "]",
                    f.a, f.b, f.c);
      break;
    case STRATA_CHECK_BROADCAST:
      std::snprintf(what, sizeof what,
                    "an operand extent %" PRId64
                    " does not broadcast to %" PRId64 " (output dim %" PRId64
                    ")",
                    f.a, f.b, f.c);
      break;
    case STRATA_CHECK_RESHAPE:
      std::snprintf(what, sizeof what,
                    "cannot reshape %" PRId64
                    " elements into a shape of %" PRId64 " elements",
                    f.a, f.b);
      break;
    case STRATA_CHECK_DIVISION_BY_ZERO:
      std::snprintf(what, sizeof what, "integer division by zero");
      break;
    case STRATA_CHECK_EXTENT_RANGE:
      std::snprintf(what, sizeof what,
                    "an extent computed from data, %" PRId64
                    ", is outside [%" PRId64 ", %" PRId64 "]",
                    f.a, f.b, f.c);
      break;
    case STRATA_CHECK_EXPAND:
      std::snprintf(what, sizeof what,
                    "cannot expand extent %" PRId64 " to %" PRId64
                    " (output dim %" PRId64 ")",
                    f.a, f.b, f.c);
      break;
    case STRATA_CHECK_EXTENT_MISMATCH:
      std::snprintf(what, sizeof what,
                    "extents %" PRId64 " and %" PRId64 " differ (dim %" PRId64
                    ")",
                    f.a, f.b, f.c);
      break;
    case STRATA_CHECK_CACHE_SLOT:
      std::snprintf(what, sizeof what,
                    "KV cache slot %" PRId64 " is outside [0, %" PRId64 ")",
                    f.a, f.b);
      break;
    case STRATA_CHECK_CACHE_POSITIONS:
      std::snprintf(what, sizeof what,
                    "KV cache positions [%" PRId64 ", %" PRId64
                    ") fall outside the context [0, %" PRId64 ")",
                    f.a, f.b, f.c);
      break;
    case STRATA_CHECK_CACHE_RING:
      std::snprintf(what, sizeof what,
                    "%" PRId64 " new tokens at once exceed the %" PRId64
                    " a ring-buffer KV cache holds",
                    f.a, f.b);
      break;
    default:
      std::snprintf(what, sizeof what,
                    "run-time check %" PRId64 " failed (%" PRId64 ", %" PRId64
                    ", %" PRId64 ")",
                    f.kind, f.a, f.b, f.c);
      break;
  }
  std::string input =
      *f.input ? std::string(" (input '") + f.input + "')" : std::string();
  return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT, "node '%s': %s%s",
                            f.node, what, input.c_str());
}

}  // namespace strata::runtime
