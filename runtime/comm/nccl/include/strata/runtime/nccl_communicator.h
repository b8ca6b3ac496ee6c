//===- nccl_communicator.h - A communicator over NCCL ---------------------===//
// SPDX-License-Identifier: Apache-2.0
// libstrata_nccl: the ranks of a tensor-parallel model exchange data through
// NCCL on their GPUs. NCCL (libnccl.so.2) and the CUDA runtime (libcudart)
// are loaded with dlopen when a communicator is created, so the library
// builds, links and loads on machines without CUDA; there create returns
// UNAVAILABLE. Kept out of libstrata_runtime, which links no transport.
// Thread-safety: the functions of one communicator are called by one thread
// at a time (a session's run), any thread; create and release likewise.

#ifndef STRATA_RUNTIME_NCCL_COMMUNICATOR_H_
#define STRATA_RUNTIME_NCCL_COMMUNICATOR_H_

#include <stdint.h>

#include "strata/runtime/communicator.h"
#include "strata/runtime/status.h"

#if defined(STRATA_NCCL_BUILDING)
#define STRATA_NCCL_EXPORT __attribute__((visibility("default")))
#else
#define STRATA_NCCL_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// Creates a communicator over NCCL with the rank and size of |bootstrap|
/// (borrowed, used only during this call: e.g. libstrata_mpi's), whose
/// all_gather carries rank 0's ncclUniqueId to the others. Every rank of
/// |bootstrap| must call this together. The process uses GPU |device|, or
/// rank % (the number of GPUs) when |device| is negative.
///
/// The returned table's all_gather takes host buffers: they are copied to a
/// device buffer kept between calls (grown as needed), gathered by NCCL and
/// copied back. send/recv move host buffers with ncclSend/ncclRecv; NCCL has
/// no tags, so each tag the runtime uses (0, STRATA_COMMUNICATOR_TAG_GROUP,
/// STRATA_COMMUNICATOR_TAG_STAGE) is an NCCL communicator of its own, made
/// here, in which messages between two ranks match in call order; another
/// tag is INVALID_ARGUMENT. A send to this process's own rank passes
/// through NCCL into a device buffer that holds it until the next recv
/// from this rank with the same tag (one such message per tag at a time).
///
/// Returns INVALID_ARGUMENT for a NULL |bootstrap| or |out|, a bootstrap
/// without all_gather, of size 0 or with its rank outside its size, or a
/// |device| this process does not have; UNAVAILABLE naming the library and
/// the call when libnccl or libcudart cannot be loaded, the process has no
/// GPU, NCCL cannot start, or another rank failed (every rank still takes
/// part in the bootstrap's all_gather, so none is left waiting);
/// RESOURCE_EXHAUSTED when memory runs out. |*out| belongs to the caller
/// (strata_nccl_communicator_release); give it to each session with
/// strata_session_set_communicator.
STRATA_NCCL_EXPORT strata_status_t
strata_nccl_communicator_create(const strata_communicator_t* bootstrap,
                                int32_t device, strata_communicator_t** out);

/// Frees |communicator| (NULL allowed): the NCCL communicator, the device
/// buffers and the stream, then closes the libraries (dlclose; they stay
/// mapped, for the thread-exit hooks of CUDA and NCCL). No session may use
/// it any more.
STRATA_NCCL_EXPORT void strata_nccl_communicator_release(
    strata_communicator_t* communicator);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_NCCL_COMMUNICATOR_H_
