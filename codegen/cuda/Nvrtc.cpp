//===- Nvrtc.cpp - CUDA C++ -> PTX and cubins through NVRTC ---------------===//
// SPDX-License-Identifier: Apache-2.0

#include "codegen/cuda/Nvrtc.h"

#include <dlfcn.h>

#include <cstdlib>

namespace strata::codegen::cuda {
namespace {

// The slice of nvrtc.h used here (the C API is stable across releases).
using nvrtcProgram = struct _nvrtcProgram *;
using nvrtcResult = int;
constexpr nvrtcResult kNvrtcSuccess = 0;

struct NvrtcApi {
  void *library = nullptr;
  std::string error;
  const char *(*errorString)(nvrtcResult) = nullptr;
  nvrtcResult (*createProgram)(nvrtcProgram *, const char *, const char *, int,
                               const char *const *,
                               const char *const *) = nullptr;
  nvrtcResult (*compileProgram)(nvrtcProgram, int,
                                const char *const *) = nullptr;
  nvrtcResult (*destroyProgram)(nvrtcProgram *) = nullptr;
  nvrtcResult (*getProgramLogSize)(nvrtcProgram, size_t *) = nullptr;
  nvrtcResult (*getProgramLog)(nvrtcProgram, char *) = nullptr;
  nvrtcResult (*getPTXSize)(nvrtcProgram, size_t *) = nullptr;
  nvrtcResult (*getPTX)(nvrtcProgram, char *) = nullptr;
  nvrtcResult (*getCUBINSize)(nvrtcProgram, size_t *) = nullptr;
  nvrtcResult (*getCUBIN)(nvrtcProgram, char *) = nullptr;
};

template <typename F> bool bind(void *library, const char *name, F *out) {
  *out = reinterpret_cast<F>(dlsym(library, name));
  return *out != nullptr;
}

// The loader's search path first, then the toolkit's usual places.
const NvrtcApi &api() {
  static NvrtcApi loaded = [] {
    NvrtcApi a;
    std::vector<std::string> candidates = {"libnvrtc.so", "libnvrtc.so.13",
                                           "libnvrtc.so.12"};
    const char *homes[] = {std::getenv("CUDA_HOME"), std::getenv("CUDA_PATH"),
                           "/usr/local/cuda"};
    for (const char *home : homes)
      if (home && *home)
        candidates.push_back(std::string(home) + "/lib64/libnvrtc.so");
    for (const std::string &name : candidates)
      if ((a.library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!a.library) {
      a.error = "NVRTC (libnvrtc.so) was not found: install the CUDA "
                "toolkit or put its lib64 on LD_LIBRARY_PATH";
      return a;
    }
    bool ok = bind(a.library, "nvrtcGetErrorString", &a.errorString) &&
              bind(a.library, "nvrtcCreateProgram", &a.createProgram) &&
              bind(a.library, "nvrtcCompileProgram", &a.compileProgram) &&
              bind(a.library, "nvrtcDestroyProgram", &a.destroyProgram) &&
              bind(a.library, "nvrtcGetProgramLogSize", &a.getProgramLogSize) &&
              bind(a.library, "nvrtcGetProgramLog", &a.getProgramLog) &&
              bind(a.library, "nvrtcGetPTXSize", &a.getPTXSize) &&
              bind(a.library, "nvrtcGetPTX", &a.getPTX) &&
              bind(a.library, "nvrtcGetCUBINSize", &a.getCUBINSize) &&
              bind(a.library, "nvrtcGetCUBIN", &a.getCUBIN);
    if (!ok) {
      a.error = "libnvrtc.so lacks a function this compiler needs (a CUDA "
                "toolkit older than 11.1?)";
      dlclose(a.library);
      a.library = nullptr;
    }
    return a;
  }();
  return loaded;
}

} // namespace

const std::vector<std::string> &defaultCudaTargets() {
  static const std::vector<std::string> targets = {"sm_80", "sm_89", "sm_90",
                                                   "compute_80"};
  return targets;
}

bool nvrtcCompile(const std::string &source, const std::string &name,
                  const std::vector<std::string> &targets,
                  std::vector<NvrtcOutput> *outputs, std::string *log) {
  const NvrtcApi &a = api();
  if (!a.library) {
    *log = a.error;
    return false;
  }
  for (const std::string &target : targets) {
    nvrtcProgram program = nullptr;
    nvrtcResult status = a.createProgram(&program, source.c_str(), name.c_str(),
                                         0, nullptr, nullptr);
    if (status != kNvrtcSuccess) {
      *log = std::string("nvrtcCreateProgram: ") + a.errorString(status);
      return false;
    }
    std::string arch = "--gpu-architecture=" + target;
    const char *options[] = {arch.c_str(), "--std=c++17", "--fmad=false"};
    status = a.compileProgram(program, 3, options);
    size_t logSize = 0;
    a.getProgramLogSize(program, &logSize);
    std::string programLog(logSize, '\0');
    if (logSize)
      a.getProgramLog(program, programLog.data());
    if (status != kNvrtcSuccess) {
      *log = target + ": " + a.errorString(status) + "\n" + programLog;
      a.destroyProgram(&program);
      return false;
    }
    bool cubin = target.rfind("sm_", 0) == 0;
    size_t size = 0;
    NvrtcOutput output{target, ""};
    status =
        cubin ? a.getCUBINSize(program, &size) : a.getPTXSize(program, &size);
    if (status == kNvrtcSuccess) {
      output.bytes.resize(size);
      status = cubin ? a.getCUBIN(program, output.bytes.data())
                     : a.getPTX(program, output.bytes.data());
    }
    a.destroyProgram(&program);
    if (status != kNvrtcSuccess) {
      *log = target + ": " + a.errorString(status);
      return false;
    }
    if (!cubin && !output.bytes.empty() && output.bytes.back() == '\0')
      output.bytes.pop_back();
    outputs->push_back(std::move(output));
  }
  return true;
}

} // namespace strata::codegen::cuda
