//===- nccl_api.cc - Loading NCCL and the CUDA runtime --------------------===//
// SPDX-License-Identifier: Apache-2.0
// Each communicator opens its own references (dlopen counts them), so the
// library keeps no global state and release closes what create opened.

#include "nccl_api.h"

#include <dlfcn.h>

#include <string>

namespace strata::nccl {
namespace {

// The loader's search path (LD_LIBRARY_PATH, ldconfig) first; the
// unversioned names need a -dev package, the sonames do not. Last, the
// toolkit's default install location, which ldconfig often lacks.
constexpr const char* kNcclNames[] = {"libnccl.so.2", "libnccl.so"};
constexpr const char* kCudartNames[] = {"libcudart.so", "libcudart.so.13",
                                        "libcudart.so.12", "libcudart.so.11.0",
                                        "/usr/local/cuda/lib64/libcudart.so"};

template <size_t N>
void* openFirst(const char* const (&names)[N], std::string* tried) {
  for (const char* name : names) {
    dlerror();
    // NODELETE: dlclose drops the reference but keeps the code mapped, as
    // thread-exit hooks the CUDA runtime and NCCL install may run later.
    if (void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE))
      return library;
    const char* why = dlerror();
    if (tried->empty()) *tried = why ? why : name;
  }
  return nullptr;
}

template <typename F>
bool bind(void* library, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(library, name));
  return *out != nullptr;
}

}  // namespace

strata_status_t loadApi(Api* api) {
  std::string why;
  api->nccl = openFirst(kNcclNames, &why);
  if (!api->nccl) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_UNAVAILABLE,
        "NCCL (libnccl.so.2) could not be loaded: %s; install NCCL or put "
        "its lib directory on LD_LIBRARY_PATH",
        why.c_str());
  }
  why.clear();
  api->cudart = openFirst(kCudartNames, &why);
  if (!api->cudart) {
    unloadApi(api);
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_UNAVAILABLE,
        "the CUDA runtime (libcudart.so) could not be loaded: %s; install "
        "the CUDA runtime or put its lib64 on LD_LIBRARY_PATH",
        why.c_str());
  }
  // Optional: only for better messages.
  bind(api->nccl, "ncclGetLastError", &api->ncclGetLastError);
  const char* missing = nullptr;
  const char* library = "libnccl.so.2";
  auto need = [&](void* from, const char* name, auto* out) {
    if (!missing && !bind(from, name, out)) missing = name;
  };
  need(api->nccl, "ncclGetErrorString", &api->ncclGetErrorString);
  need(api->nccl, "ncclGetVersion", &api->ncclGetVersion);
  need(api->nccl, "ncclGetUniqueId", &api->ncclGetUniqueId);
  need(api->nccl, "ncclCommInitRank", &api->ncclCommInitRank);
  need(api->nccl, "ncclCommDestroy", &api->ncclCommDestroy);
  need(api->nccl, "ncclAllGather", &api->ncclAllGather);
  // Point-to-point calls and groups arrived in NCCL 2.7.
  need(api->nccl, "ncclSend", &api->ncclSend);
  need(api->nccl, "ncclRecv", &api->ncclRecv);
  need(api->nccl, "ncclGroupStart", &api->ncclGroupStart);
  need(api->nccl, "ncclGroupEnd", &api->ncclGroupEnd);
  if (!missing) library = "libcudart";
  need(api->cudart, "cudaGetErrorString", &api->cudaGetErrorString);
  need(api->cudart, "cudaGetDeviceCount", &api->cudaGetDeviceCount);
  need(api->cudart, "cudaSetDevice", &api->cudaSetDevice);
  need(api->cudart, "cudaMalloc", &api->cudaMalloc);
  need(api->cudart, "cudaFree", &api->cudaFree);
  need(api->cudart, "cudaMemcpyAsync", &api->cudaMemcpyAsync);
  need(api->cudart, "cudaStreamCreateWithFlags",
       &api->cudaStreamCreateWithFlags);
  need(api->cudart, "cudaStreamSynchronize", &api->cudaStreamSynchronize);
  need(api->cudart, "cudaStreamDestroy", &api->cudaStreamDestroy);
  if (missing) {
    unloadApi(api);
    return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                              "%s lacks '%s' (NCCL 2.7 or later and CUDA 11 "
                              "or later are needed)",
                              library, missing);
  }
  return nullptr;
}

void unloadApi(Api* api) {
  // NCCL first: it may hold references into the CUDA runtime's state.
  if (api->nccl) dlclose(api->nccl);
  if (api->cudart) dlclose(api->cudart);
  *api = Api();
}

strata_status_t ncclFailure(const Api& api, const char* call,
                            ncclResult_t result, ncclComm_t comm) {
  const char* text = api.ncclGetErrorString(result);
  const char* detail =
      api.ncclGetLastError ? api.ncclGetLastError(comm) : nullptr;
  // NCCL's own misuse codes mean this library called it wrongly.
  const bool misuse = result == kNcclInternalError ||
                      result == kNcclInvalidArgument ||
                      result == kNcclInvalidUsage;
  return STRATA_MAKE_STATUS(
      misuse ? STRATA_STATUS_INTERNAL : STRATA_STATUS_UNAVAILABLE,
      "libnccl: %s failed: %s (%d)%s%s", call, text ? text : "unknown error",
      result, detail && *detail ? ": " : "", detail ? detail : "");
}

strata_status_t cudaFailure(const Api& api, const char* call,
                            cudaError_t error) {
  const char* text = api.cudaGetErrorString(error);
  return STRATA_MAKE_STATUS(error == kCudaErrorMemoryAllocation
                                ? STRATA_STATUS_RESOURCE_EXHAUSTED
                                : STRATA_STATUS_UNAVAILABLE,
                            "libcudart: %s failed: %s (%d)", call,
                            text ? text : "unknown error", error);
}

}  // namespace strata::nccl
