//===- api.h - Strata runtime public C API: version and export macros ----===//
// SPDX-License-Identifier: Apache-2.0
// Umbrella header of the runtime C API. Thread-safety: every function declared
// under strata/runtime/ is safe to call concurrently unless its header says
// otherwise.

#ifndef STRATA_RUNTIME_API_H_
#define STRATA_RUNTIME_API_H_

#include "strata/runtime/allocator.h"
#include "strata/runtime/communicator.h"
#include "strata/runtime/cpu.h"
#include "strata/runtime/generate.h"
#include "strata/runtime/io_binding.h"
#include "strata/runtime/module.h"
#include "strata/runtime/scheduler.h"
#include "strata/runtime/session.h"
#include "strata/runtime/status.h"
#include "strata/runtime/tensor.h"
#include "strata/runtime/thread_pool.h"

/// Runtime API version: (major << 16) | minor. A major bump breaks the ABI.
#define STRATA_RUNTIME_API_VERSION ((0 << 16) | 9)

#ifdef __cplusplus
extern "C" {
#endif

/// Returns STRATA_RUNTIME_API_VERSION of the library actually loaded, so a
/// caller can detect a header/library mismatch.
STRATA_API_EXPORT uint32_t strata_runtime_api_version(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_API_H_
