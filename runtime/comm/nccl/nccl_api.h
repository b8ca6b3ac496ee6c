//===- nccl_api.h - The NCCL and CUDA runtime calls, loaded at run time ---===//
// SPDX-License-Identifier: Apache-2.0
// The slice of nccl.h (NCCL 2.x) and cuda_runtime_api.h this library calls,
// declared here with their C signatures so that nothing includes CUDA
// headers at build time, and resolved from libnccl.so.2 and libcudart with
// dlopen. Both C APIs are stable across releases.

#ifndef STRATA_RUNTIME_COMM_NCCL_NCCL_API_H_
#define STRATA_RUNTIME_COMM_NCCL_NCCL_API_H_

#include <stddef.h>

#include "strata/runtime/status.h"

namespace strata::nccl {

// nccl.h: ncclResult_t is an enum, ncclDataType_t too; both are int-sized.
using ncclResult_t = int;
using ncclDataType_t = int;
using ncclComm_t = struct ncclComm*;
constexpr ncclResult_t kNcclSuccess = 0;
constexpr ncclResult_t kNcclInternalError = 3;
constexpr ncclResult_t kNcclInvalidArgument = 4;
constexpr ncclResult_t kNcclInvalidUsage = 5;
constexpr ncclDataType_t kNcclUint8 = 1;
constexpr size_t kNcclUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
struct ncclUniqueId {
  char internal[kNcclUniqueIdBytes];
};

// cuda_runtime_api.h / driver_types.h.
using cudaError_t = int;
using cudaStream_t = struct CUstream_st*;
constexpr cudaError_t kCudaSuccess = 0;
constexpr cudaError_t kCudaErrorMemoryAllocation = 2;
constexpr int kCudaMemcpyHostToDevice = 1;  // enum cudaMemcpyKind
constexpr int kCudaMemcpyDeviceToHost = 2;
constexpr unsigned kCudaStreamNonBlocking = 0x01;

/// The two libraries and the functions used from them.
struct Api {
  void* nccl = nullptr;
  void* cudart = nullptr;

  const char* (*ncclGetErrorString)(ncclResult_t) = nullptr;
  /// Optional (NCCL 2.13 and later): the last error's detail.
  const char* (*ncclGetLastError)(ncclComm_t) = nullptr;
  ncclResult_t (*ncclGetVersion)(int*) = nullptr;
  ncclResult_t (*ncclGetUniqueId)(ncclUniqueId*) = nullptr;
  ncclResult_t (*ncclCommInitRank)(ncclComm_t*, int, ncclUniqueId,
                                   int) = nullptr;
  ncclResult_t (*ncclCommDestroy)(ncclComm_t) = nullptr;
  ncclResult_t (*ncclAllGather)(const void*, void*, size_t, ncclDataType_t,
                                ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*ncclSend)(const void*, size_t, ncclDataType_t, int, ncclComm_t,
                           cudaStream_t) = nullptr;
  ncclResult_t (*ncclRecv)(void*, size_t, ncclDataType_t, int, ncclComm_t,
                           cudaStream_t) = nullptr;
  ncclResult_t (*ncclGroupStart)() = nullptr;
  ncclResult_t (*ncclGroupEnd)() = nullptr;

  const char* (*cudaGetErrorString)(cudaError_t) = nullptr;
  cudaError_t (*cudaGetDeviceCount)(int*) = nullptr;
  cudaError_t (*cudaSetDevice)(int) = nullptr;
  cudaError_t (*cudaMalloc)(void**, size_t) = nullptr;
  cudaError_t (*cudaFree)(void*) = nullptr;
  cudaError_t (*cudaMemcpyAsync)(void*, const void*, size_t, int,
                                 cudaStream_t) = nullptr;
  cudaError_t (*cudaStreamCreateWithFlags)(cudaStream_t*, unsigned) = nullptr;
  cudaError_t (*cudaStreamSynchronize)(cudaStream_t) = nullptr;
  cudaError_t (*cudaStreamDestroy)(cudaStream_t) = nullptr;
};

/// Loads both libraries into |api| (empty on entry). UNAVAILABLE names the
/// library that could not be loaded or the function it lacks; |api| is left
/// empty then.
strata_status_t loadApi(Api* api);

/// Closes the libraries |api| holds and empties it.
void unloadApi(Api* api);

/// A failed NCCL call: UNAVAILABLE (INTERNAL for a misuse NCCL reports)
/// naming |call| with NCCL's text, and its last error's detail where NCCL
/// has ncclGetLastError (|comm| may be NULL).
strata_status_t ncclFailure(const Api& api, const char* call,
                            ncclResult_t result, ncclComm_t comm);

/// A failed CUDA runtime call: UNAVAILABLE (RESOURCE_EXHAUSTED when device
/// memory ran out) naming |call| with cudaGetErrorString's text.
strata_status_t cudaFailure(const Api& api, const char* call,
                            cudaError_t error);

}  // namespace strata::nccl

#endif  // STRATA_RUNTIME_COMM_NCCL_NCCL_API_H_
