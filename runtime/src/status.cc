//===- status.cc - Strata runtime status objects ---------------------------===//
// SPDX-License-Identifier: Apache-2.0
// Heap-allocated failure records; OK is NULL so the success path is free.

#include "strata/runtime/status.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "strata/runtime/api.h"

struct strata_status_record_t {
  strata_status_code_t code;
  std::string message;
};

namespace {

// Returned when a failure record itself cannot be allocated. It is never
// freed, so callers can treat it like any other status.
strata_status_record_t kOutOfMemoryStatus = {
    STRATA_STATUS_RESOURCE_EXHAUSTED,
    "out of memory while creating a status"};

}  // namespace

extern "C" {

uint32_t strata_runtime_api_version(void) { return STRATA_RUNTIME_API_VERSION; }

strata_status_t strata_status_create(strata_status_code_t code,
                                     const char* file, int line,
                                     const char* format, ...) {
  if (code == STRATA_STATUS_OK) return nullptr;
  auto* status = new (std::nothrow) strata_status_record_t;
  if (!status) return &kOutOfMemoryStatus;
  status->code = code;
  if (file) {
    const char* base = std::strrchr(file, '/');
    status->message = std::string(base ? base + 1 : file) + ":" +
                      std::to_string(line) + ": ";
  }
  if (format) {
    va_list args;
    va_start(args, format);
    va_list copy;
    va_copy(copy, args);
    int n = std::vsnprintf(nullptr, 0, format, copy);
    va_end(copy);
    if (n > 0) {
      std::string text(static_cast<size_t>(n) + 1, '\0');
      std::vsnprintf(text.data(), text.size(), format, args);
      text.resize(static_cast<size_t>(n));
      status->message += text;
    }
    va_end(args);
  }
  return status;
}

strata_status_code_t strata_status_code(strata_status_t status) {
  return status ? status->code : STRATA_STATUS_OK;
}

const char* strata_status_message(strata_status_t status) {
  return status ? status->message.c_str() : "";
}

const char* strata_status_code_string(strata_status_code_t code) {
  switch (code) {
    case STRATA_STATUS_OK: return "OK";
    case STRATA_STATUS_CANCELLED: return "CANCELLED";
    case STRATA_STATUS_UNKNOWN: return "UNKNOWN";
    case STRATA_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case STRATA_STATUS_NOT_FOUND: return "NOT_FOUND";
    case STRATA_STATUS_ALREADY_EXISTS: return "ALREADY_EXISTS";
    case STRATA_STATUS_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case STRATA_STATUS_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case STRATA_STATUS_OUT_OF_RANGE: return "OUT_OF_RANGE";
    case STRATA_STATUS_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case STRATA_STATUS_INTERNAL: return "INTERNAL";
    case STRATA_STATUS_UNAVAILABLE: return "UNAVAILABLE";
    case STRATA_STATUS_DATA_LOSS: return "DATA_LOSS";
    case STRATA_STATUS_INCOMPATIBLE: return "INCOMPATIBLE";
  }
  return "UNKNOWN_CODE";
}

void strata_status_free(strata_status_t status) {
  if (status && status != &kOutOfMemoryStatus) delete status;
}

strata_status_t strata_status_annotate(strata_status_t status,
                                       const char* context) {
  if (!status || !context || status == &kOutOfMemoryStatus) return status;
  status->message.insert(0, std::string(context) + ": ");
  return status;
}

}  // extern "C"
