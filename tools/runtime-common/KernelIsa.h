//===- KernelIsa.h - --kernel-isa: cap the runtime's kernels -------------===//
// SPDX-License-Identifier: Apache-2.0
// strata-run and strata-bench take --kernel-isa amx|avx512|avx2|scalar to run
// the runtime's kernels below the host's best set (the AVX2 kernels on an
// AVX-512 host, to measure or check them there).

#ifndef STRATA_TOOLS_RUNTIME_COMMON_KERNELISA_H_
#define STRATA_TOOLS_RUNTIME_COMMON_KERNELISA_H_

#include <string>

#include "strata/runtime/cpu.h"
#include "strata/runtime/status.h"

namespace strata::tools {

/// Caps the kernels at |isa|; "" on success, else the problem.
inline std::string applyKernelIsa(const char *isa) {
  strata_status_t status = strata_cpu_cap_kernel_isa(isa);
  if (!status)
    return "";
  std::string problem = std::string("--kernel-isa: ") +
                        strata_status_message(status);
  strata_status_free(status);
  return problem;
}

} // namespace strata::tools

#endif // STRATA_TOOLS_RUNTIME_COMMON_KERNELISA_H_
