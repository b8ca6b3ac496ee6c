//===- Nvrtc.h - CUDA C++ -> PTX and cubins through NVRTC --------*- C++
//-*-===//
// SPDX-License-Identifier: Apache-2.0
// NVRTC is loaded with dlopen when first needed, so the compiler neither
// links nor requires the CUDA toolkit: without it, CUDA output is an error
// that says so, and everything else works.

#ifndef STRATA_CODEGEN_CUDA_NVRTC_H_
#define STRATA_CODEGEN_CUDA_NVRTC_H_

#include <string>
#include <vector>

namespace strata::codegen::cuda {

/// One compiled form of a translation unit.
struct NvrtcOutput {
  std::string target; // "sm_90" (a cubin) or "compute_80" (PTX)
  std::string bytes;
};

/// Compiles |source| for every entry of |targets| (`sm_XX`: a cubin,
/// `compute_XX`: PTX). On failure returns false with NVRTC's whole program
/// log in |log|.
bool nvrtcCompile(const std::string &source, const std::string &name,
                  const std::vector<std::string> &targets,
                  std::vector<NvrtcOutput> *outputs, std::string *log);

/// The targets every artifact carries: cubins for Ampere, Ada and Hopper,
/// and Ampere PTX for the driver to compile for anything newer.
const std::vector<std::string> &defaultCudaTargets();

} // namespace strata::codegen::cuda

#endif // STRATA_CODEGEN_CUDA_NVRTC_H_
