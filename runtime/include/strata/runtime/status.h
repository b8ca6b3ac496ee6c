//===- status.h - Strata runtime status objects ----------------------------===//
// SPDX-License-Identifier: Apache-2.0
// A status is an opaque pointer; NULL means OK. A failure carries a code and
// a message and must be freed or propagated by the caller (STYLE.md §10).

#ifndef STRATA_RUNTIME_STATUS_H_
#define STRATA_RUNTIME_STATUS_H_

#include <stddef.h>
#include <stdint.h>

#if defined(STRATA_RUNTIME_BUILDING)
#define STRATA_API_EXPORT __attribute__((visibility("default")))
#else
#define STRATA_API_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// Status codes use the absl/IREE numbering and never change.
typedef enum strata_status_code_e {
  STRATA_STATUS_OK = 0,
  STRATA_STATUS_CANCELLED = 1,
  STRATA_STATUS_UNKNOWN = 2,
  STRATA_STATUS_INVALID_ARGUMENT = 3,
  STRATA_STATUS_NOT_FOUND = 5,
  STRATA_STATUS_ALREADY_EXISTS = 6,
  STRATA_STATUS_RESOURCE_EXHAUSTED = 8,
  STRATA_STATUS_FAILED_PRECONDITION = 9,
  STRATA_STATUS_OUT_OF_RANGE = 11,
  STRATA_STATUS_UNIMPLEMENTED = 12,
  STRATA_STATUS_INTERNAL = 13,
  STRATA_STATUS_UNAVAILABLE = 14,
  STRATA_STATUS_DATA_LOSS = 15,
  STRATA_STATUS_INCOMPATIBLE = 18,
} strata_status_code_t;

/// Opaque failure record; NULL is OK.
typedef struct strata_status_record_t* strata_status_t;

/// The OK status.
#define strata_ok_status() ((strata_status_t)NULL)

/// Creates a failure with |code| and a printf-style message. Never returns
/// NULL for a non-OK code: if memory is exhausted it returns a preallocated
/// RESOURCE_EXHAUSTED status (freeing it is a no-op). |code| OK returns NULL.
STRATA_API_EXPORT strata_status_t strata_status_create(strata_status_code_t code,
                                                       const char* file,
                                                       int line,
                                                       const char* format, ...)
    __attribute__((format(printf, 4, 5)));

/// Returns the code of |status| (STRATA_STATUS_OK for NULL).
STRATA_API_EXPORT strata_status_code_t
strata_status_code(strata_status_t status);

/// Returns the message of |status| (borrowed, valid until the status is
/// freed; "" for NULL). In debug builds it is prefixed with file:line.
STRATA_API_EXPORT const char* strata_status_message(strata_status_t status);

/// Returns a stable upper-case name for |code|, e.g. "DATA_LOSS".
STRATA_API_EXPORT const char* strata_status_code_string(
    strata_status_code_t code);

/// Frees |status|; NULL is allowed.
STRATA_API_EXPORT void strata_status_free(strata_status_t status);

/// Prepends "|context|: " to the message of a failed |status| and returns it
/// (the same or a replacement object; the input must not be used again).
STRATA_API_EXPORT strata_status_t strata_status_annotate(strata_status_t status,
                                                         const char* context);

#ifdef NDEBUG
#define STRATA_STATUS_FILE NULL
#define STRATA_STATUS_LINE 0
#else
#define STRATA_STATUS_FILE __FILE__
#define STRATA_STATUS_LINE __LINE__
#endif

/// Makes a failure with the caller's file:line (recorded in debug builds).
#define STRATA_MAKE_STATUS(code, ...) \
  strata_status_create((code), STRATA_STATUS_FILE, STRATA_STATUS_LINE, __VA_ARGS__)

/// Returns from the enclosing function if |expr| failed.
#define STRATA_RETURN_IF_ERROR(expr)         \
  do {                                       \
    strata_status_t strata_status__ = (expr); \
    if (strata_status__) return strata_status__; \
  } while (0)

/// Explicitly drops the status of |expr|.
#define STRATA_IGNORE_ERROR(expr) strata_status_free(expr)

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_STATUS_H_
