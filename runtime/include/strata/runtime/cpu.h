//===- cpu.h - CPU features of the host and of artifacts
//-------------------===//
// SPDX-License-Identifier: Apache-2.0
// Artifacts name every x86-64 ISA extension their code may use, in LLVM's
// spelling ("avx2", "bmi2", "avx512f"); the STRATA_CPU_FEATURE_* bits
// (strata_artifact_format.h) are a legacy subset of them. Thread-safety:
// every function is safe to call concurrently.

#ifndef STRATA_RUNTIME_CPU_H_
#define STRATA_RUNTIME_CPU_H_

#include <stdint.h>

#include "strata/runtime/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Returns the STRATA_CPU_FEATURE_* bits this CPU supports.
STRATA_API_EXPORT uint64_t strata_cpu_features_host(void);

/// Returns the lower-case name of the single feature bit |feature|
/// ("avx2", "avx512f", ...), or NULL for a bit this runtime does not know.
STRATA_API_EXPORT const char* strata_cpu_feature_name(uint64_t feature);

/// Returns 1 if this CPU (and the operating system) supports the feature
/// named |feature| ("avx2", "avx512bf16", ...; strata_module_cpu_feature
/// lists an artifact's), 0 if not or if this runtime does not know the name.
STRATA_API_EXPORT int strata_cpu_host_supports(const char* feature);

/// Checks that code needing |required| can run on a CPU with |available|.
/// Returns INCOMPATIBLE naming the first missing feature, or naming an
/// unknown bit in |required| (code built by a newer compiler).
STRATA_API_EXPORT strata_status_t strata_cpu_features_check(uint64_t required,
                                                            uint64_t available);

/// The instruction set of the runtime's own kernels (matmuls, attention,
/// quantizers) in this process: "amx" (the AVX-512 kernels, with the bf16
/// and W8A8 matmuls on AMX tiles), "avx512", "avx2" or "scalar". They are
/// chosen from the host's features when first used; AMX also needs Linux's
/// grant of tile data to the process, requested once (session creation
/// requests it), and without it the kernels stay at "avx512".
STRATA_API_EXPORT const char* strata_cpu_kernel_isa(void);
/// Caps the runtime's kernels at |isa| ("amx", "avx512", "avx2" or
/// "scalar"; never above what the host has) for this process: to measure
/// or test the lower kernels on a better host. The generated code of an
/// artifact keeps the instruction set it was compiled for (--target-cpu).
/// INVALID_ARGUMENT for another name. Meant for start-up: kernel calls
/// already running finish on the set they started with.
STRATA_API_EXPORT strata_status_t strata_cpu_cap_kernel_isa(const char* isa);
/// NULL when the kernels use AMX tiles; else why not, in words ("this CPU
/// ... has no AMX", "Linux refused AMX tile data ...", capped): what a tool
/// prints so that a user on an AMX host learns why bf16 is not faster.
STRATA_API_EXPORT const char* strata_cpu_amx_status(void);
#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_CPU_H_
