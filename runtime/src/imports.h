//===- imports.h - Runtime functions bound into loaded code ---------------===//
// SPDX-License-Identifier: Apache-2.0
// Kernel ABI v2 imports (codegen/abi/strata_kernel_abi.h): after the code
// section is loaded, every `__strata_import_<name>` pointer it defines gets
// the runtime's implementation of <name>.

#ifndef STRATA_RUNTIME_SRC_IMPORTS_H_
#define STRATA_RUNTIME_SRC_IMPORTS_H_

#include <cstddef>
#include <cstdint>

#include "native_code.h"
#include "strata/runtime/status.h"

namespace strata::runtime {

/// Binds the imports of |code| and sets bit i of |bound| for each import i
/// (importName) it binds. INCOMPATIBLE if the code imports a function this
/// runtime does not provide (it reports how many it imports in
/// `__strata_import_count`).
strata_status_t bindImports(const NativeCode& code, uint32_t* bound);

/// The runtime's imports: their number, the name of import |i| (a static
/// string; null past the end) and, for a kernel, the set that serves it on
/// this host now ("amx-bf16", "avx512", ...; null for the others).
size_t importCount();
const char* importName(size_t i);
const char* importKernelSet(size_t i);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_IMPORTS_H_
