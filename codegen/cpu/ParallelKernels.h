//===- ParallelKernels.h - Parallel kernels on the runtime's pool -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_CODEGEN_CPU_PARALLELKERNELS_H_
#define STRATA_CODEGEN_CPU_PARALLELKERNELS_H_

namespace llvm {
class Module;
} // namespace llvm

namespace strata::codegen::cpu {

/// Turns every call `strata_pkernel_<n>(begin, end, work, args...)` into
/// `strata_rt_parallel_for(task, ctx, begin, end, work)`, where ctx holds
/// args in 8-byte slots and `strata_pkernel_<n>.task(ctx, b, e)` unpacks them
/// and runs the kernel on [b, e). Run before bindRuntimeImports.
void dispatchParallelKernels(llvm::Module &module);

} // namespace strata::codegen::cpu

#endif // STRATA_CODEGEN_CPU_PARALLELKERNELS_H_
