//===- RuntimeImports.h - Calls into the runtime through pointers -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_CODEGEN_CPU_RUNTIMEIMPORTS_H_
#define STRATA_CODEGEN_CPU_RUNTIMEIMPORTS_H_

namespace llvm {
class Module;
} // namespace llvm

namespace strata::codegen::cpu {

/// Kernel ABI v2 imports: gives every declared `strata_rt_*` function a body
/// that calls through the exported pointer `__strata_import_<name>` (set by
/// the runtime after loading), and exports `__strata_import_count`, the
/// number of such pointers. Run before optimization so the stubs inline.
void bindRuntimeImports(llvm::Module &module);

} // namespace strata::codegen::cpu

#endif // STRATA_CODEGEN_CPU_RUNTIMEIMPORTS_H_
