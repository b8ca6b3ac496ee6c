//===- CpuCodegen.h - linalg on tensors -> native shared object -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The CPU back end: bufferize the lowered module, move weights out of the
// code into a separate weights image, lower to LLVM, optimize, emit an
// object for the target CPU and link it in-process into a shared object.

#ifndef STRATA_CODEGEN_CPU_CPUCODEGEN_H_
#define STRATA_CODEGEN_CPU_CPUCODEGEN_H_

#include "codegen/cpu/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace strata::codegen::cpu {

/// What to generate code for.
struct CpuTarget {
  /// "x86-64-v3" (AVX2+FMA), "x86-64-v4" (AVX-512), "native" or an LLVM
  /// CPU name.
  std::string cpu = "x86-64-v3";
  /// Also return the target assembly (`strata-compile --emit kernels`).
  bool emitAssembly = false;
};

/// The result of code generation.
struct CpuCode {
  /// An ELF x86-64 shared object exporting one `_mlir_ciface_<entry>` per
  /// public function (kernel ABI v2, codegen/abi/strata_kernel_abi.h).
  std::string sharedObject;
  /// Constant data referenced by the code through its trailing weights
  /// argument; every blob starts 64-byte aligned.
  std::vector<char> weights;
  /// The x86-64 features the code may use (strata_x86_features.h names).
  std::vector<std::string> cpuFeatures;
  CpuCodegenStats stats;
  /// The target assembly, if CpuTarget::emitAssembly.
  std::string assembly;
  /// Wall time of each step in order ("mlir": the passes to the LLVM
  /// dialect; "translate": to LLVM IR; "llvm": optimization and objects;
  /// "link"), in seconds.
  std::vector<std::pair<std::string, double>> phaseSeconds;
};

/// Generates code for every public function of |module|, which must hold
/// only linalg/tensor/arith/math/func ops (after strata-lower-to-linalg):
/// buildCpuLLVMPipeline, then LLVM.
/// Each public function gains a trailing `memref<?xi8>` weights argument.
/// Errors are reported as diagnostics on |module|.
mlir::FailureOr<CpuCode> generateCpuCode(mlir::ModuleOp module,
                                         const CpuTarget &target);

/// buildCpuLLVMPipeline alone (for --emit llvm); returns the weights image.
mlir::FailureOr<std::vector<char>>
lowerToLLVMDialect(mlir::ModuleOp module, CpuCodegenStats *stats = nullptr);

} // namespace strata::codegen::cpu

#endif // STRATA_CODEGEN_CPU_CPUCODEGEN_H_
