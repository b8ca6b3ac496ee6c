//===- CudaKernels.h - Dispatch regions -> CUDA C++ kernels ------*- C++
//-*-===//
// SPDX-License-Identifier: Apache-2.0
// The first part of the CUDA back end: the module lowered to linalg on
// tensors is bufferized with the dispatch regions the CPU back end uses,
// and each region whose work is loops (elementwise, reduction, data
// movement) becomes one CUDA C++ `__global__` function. Contractions are
// left to cuBLASLt and runtime-kernel regions (attention) to hand-written
// device kernels; both are counted, not emitted. docs/design/cuda.md.

#ifndef STRATA_CODEGEN_CUDA_CUDAKERNELS_H_
#define STRATA_CODEGEN_CUDA_CUDAKERNELS_H_

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace strata::codegen::cuda {

/// One loop region's kernel.
struct CudaKernel {
  std::string name;     // the `extern "C" __global__` symbol (shared by
                        // regions whose kernels have the same text)
  std::string function; // the public function it comes from
  int64_t region = 0;   // its dispatch region id
  std::string kind;     // elementwise, reduction or data_movement
};

/// The CUDA C++ of a module's loop regions.
struct CudaKernels {
  std::string source; // one translation unit, deterministic
  std::vector<CudaKernel> kernels;  // one per loop region
  unsigned distinct = 0;            // kernels in |source|
  unsigned contractions = 0;   // regions left to cuBLASLt
  unsigned runtimeRegions = 0; // regions calling a runtime kernel
};

/// Bufferizes linalg on tensors (after strata-lower-to-linalg) with
/// dispatch regions, named ops generalized, for emitCudaKernels.
void buildCudaBufferizePipeline(mlir::OpPassManager &pm);

/// The kernels of every loop region of |module| (after
/// buildCudaBufferizePipeline). An op the emitter cannot express is an
/// error at its location.
mlir::FailureOr<CudaKernels> emitCudaKernels(mlir::ModuleOp module);

} // namespace strata::codegen::cuda

#endif // STRATA_CODEGEN_CUDA_CUDAKERNELS_H_
