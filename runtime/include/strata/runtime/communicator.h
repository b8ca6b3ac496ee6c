//===- communicator.h - How the ranks of a split model talk ---------------===//
// SPDX-License-Identifier: Apache-2.0
// A model compiled for tensor or pipeline parallelism is one artifact per
// rank, each loaded by its own process; their generated code exchanges
// activations through collectives (strata_rt_all_reduce_f32,
// strata_rt_all_gather_f32) and hand-overs between pipeline stages
// (strata_rt_send_f32, strata_rt_recv_extents_f32, strata_rt_recv_f32) that
// run over a communicator the embedder gives the session. The runtime
// links no transport: the embedder supplies one (libstrata_mpi's
// strata_mpi_communicator_create over MPI, or its own) as this table of
// functions. Thread-safety: a session calls its communicator only on the
// thread running the session's call, one call at a time.

#ifndef STRATA_RUNTIME_COMMUNICATOR_H_
#define STRATA_RUNTIME_COMMUNICATOR_H_

#include <stddef.h>
#include <stdint.h>

#include "strata/runtime/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A group of |size| processes of which this one is |rank|. Every function
/// blocks until its part is done and returns NULL (OK) or a status the
/// runtime takes over and frees (any code; a collective that fails ends
/// the run with UNAVAILABLE quoting its message). Initialize with
/// strata_communicator_init, then fill every field; fields are only ever
/// appended (struct_size says which a caller knows).
typedef struct strata_communicator_t {
  /// sizeof(strata_communicator_t) as the caller compiled it.
  size_t struct_size;
  /// Passed to every function; the communicator's state.
  void* self;
  /// This process's rank, in [0, size).
  uint32_t rank;
  /// The processes in the group, at least 1.
  uint32_t size;
  /// Every rank contributes |bytes_per_rank| bytes at |send|; on return
  /// |recv| holds size * bytes_per_rank bytes, rank r's at r *
  /// bytes_per_rank (its own included). Every rank of the group must call
  /// it with the same |bytes_per_rank|. |send| and |recv| do not overlap.
  /// Required.
  strata_status_t (*all_gather)(void* self, const void* send, void* recv,
                                size_t bytes_per_rank);
  /// Sends |bytes| bytes at |buffer| to rank |peer|, matched by the
  /// recv of |peer| with this rank and the same |tag|; |bytes| may be 0 (a
  /// message all the same). Tags the runtime uses:
  /// STRATA_COMMUNICATOR_TAG_GROUP, STRATA_COMMUNICATOR_TAG_STAGE (an
  /// embedder's own messages over the same group take others). Required
  /// by a module of 2 or more pipeline stages, else may be NULL.
  strata_status_t (*send)(void* self, const void* buffer, size_t bytes,
                          uint32_t peer, uint32_t tag);
  /// Receives exactly |bytes| bytes from rank |peer| with |tag| into
  /// |buffer|; a message of another size is an error, not a partial
  /// receive. Required or may be NULL, as send.
  strata_status_t (*recv)(void* self, void* buffer, size_t bytes,
                          uint32_t peer, uint32_t tag);
  /// Without waiting: sets |*out_ready| to 1 if a message from |peer| with
  /// |tag| has arrived (a recv would take it at once), else 0. Lets a
  /// process go on working between messages; may be NULL.
  strata_status_t (*probe)(void* self, uint32_t peer, uint32_t tag,
                           int* out_ready);
} strata_communicator_t;

/// The tag of the messages by which the tensor-parallel group of one
/// pipeline stage gathers its parts (the collectives of a split model of 2
/// or more stages, which cannot use all_gather: the other stages run other
/// code meanwhile).
#define STRATA_COMMUNICATOR_TAG_GROUP 0x5301u
/// The tag of the activations one pipeline stage hands to another.
#define STRATA_COMMUNICATOR_TAG_STAGE 0x5302u
/// The tag of the calls a leading generator sends the generators that
/// follow it (strata_generator_options_t.lead_group).
#define STRATA_COMMUNICATOR_TAG_LEAD 0x5303u

/// Zero-fills |communicator| and sets its struct_size (rank 0 of size 1,
/// no functions).
STRATA_API_EXPORT void strata_communicator_init(
    strata_communicator_t* communicator);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_COMMUNICATOR_H_
