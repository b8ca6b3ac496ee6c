//===- cpu_target.h - The host against a CPU target descriptor ------------===//
// SPDX-License-Identifier: Apache-2.0
// Detects the x86-64 features of strata_x86_features.h on this CPU (CPUID,
// and XCR0 for the register state the OS enables) and compares a code
// section's target descriptor with them.

#ifndef STRATA_RUNTIME_SRC_CPU_TARGET_H_
#define STRATA_RUNTIME_SRC_CPU_TARGET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/format/Manifest.h"
#include "strata/runtime/status.h"

namespace strata::runtime {

/// Whether this CPU supports |feature| (a strata_x86_features.h name).
/// |*known| (if non-null) says whether this runtime knows the name at all.
bool hostSupportsCpuFeature(const char* feature, bool* known);

/// The STRATA_CPU_FEATURE_* bits of the legacy subset of |features|.
uint64_t legacyCpuFeatureBits(const std::vector<std::string>& features);

/// OK if code compiled for |target| runs on this CPU. Otherwise
/// INCOMPATIBLE naming every feature this CPU lacks and every one this
/// runtime cannot detect, or the architecture it does not run.
strata_status_t checkCpuTarget(const format::CpuTarget& target);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_CPU_TARGET_H_
