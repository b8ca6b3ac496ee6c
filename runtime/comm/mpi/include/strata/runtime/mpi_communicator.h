//===- mpi_communicator.h - A communicator over MPI -----------------------===//
// SPDX-License-Identifier: Apache-2.0
// libstrata_mpi: the ranks of a tensor-parallel model as the processes of
// MPI_COMM_WORLD (one process per rank, started by mpirun or srun). Kept
// out of libstrata_runtime, which links no transport: only programs that
// want MPI link this library, and through it libmpi. Thread-safety: the
// functions of one communicator are called by one thread at a time (a
// session's run); create and release from the thread that owns MPI.
// Several communicators may be used by several threads at once where
// strata_mpi_communicators_concurrent() says MPI allows it.

#ifndef STRATA_RUNTIME_MPI_COMMUNICATOR_H_
#define STRATA_RUNTIME_MPI_COMMUNICATOR_H_

#include "strata/runtime/communicator.h"
#include "strata/runtime/status.h"

#if defined(STRATA_MPI_BUILDING)
#define STRATA_MPI_EXPORT __attribute__((visibility("default")))
#else
#define STRATA_MPI_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// Creates a communicator over a duplicate of MPI_COMM_WORLD (so that its
/// messages never match the embedder's, nor another communicator's: each
/// create makes a new one), whose rank and size are the process's in the
/// world. Initializes MPI (MPI_Init_thread, asking for
/// MPI_THREAD_MULTIPLE, so that several communicators may run at once,
/// and accepting MPI_THREAD_SERIALIZED, as a session may run on any
/// thread) when nothing has yet, and then finalizes it at the release. Transport failures are
/// returned as UNAVAILABLE with MPI's error string (the communicator sets
/// MPI_ERRORS_RETURN on its duplicate). |*out_communicator| belongs to the
/// caller (strata_mpi_communicator_release); give it to each session with
/// strata_session_set_communicator. Returns FAILED_PRECONDITION when MPI
/// was finalized already or gives less thread support than serialized
/// calls, UNAVAILABLE when MPI cannot be initialized, INVALID_ARGUMENT for
/// a NULL |out_communicator|.
STRATA_MPI_EXPORT strata_status_t
strata_mpi_communicator_create(strata_communicator_t** out_communicator);

/// 1 when MPI runs and gives MPI_THREAD_MULTIPLE: communicators from
/// strata_mpi_communicator_create may then be used by different threads at
/// the same time (each still by one thread at a time), as sessions running
/// side by side do; else 0.
STRATA_MPI_EXPORT int strata_mpi_communicators_concurrent(void);

/// Frees |communicator| (NULL allowed) and finalizes MPI if its create
/// initialized it; no session may use it any more.
STRATA_MPI_EXPORT void strata_mpi_communicator_release(
    strata_communicator_t* communicator);

/// Ends every process of |communicator|'s job with exit status |code|
/// (MPI_Abort): what a rank that failed alone calls, since the others
/// would otherwise wait for its messages forever. Returns only if
/// |communicator| is NULL or MPI is not running.
STRATA_MPI_EXPORT void strata_mpi_communicator_abort(
    strata_communicator_t* communicator, int code);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_MPI_COMMUNICATOR_H_
