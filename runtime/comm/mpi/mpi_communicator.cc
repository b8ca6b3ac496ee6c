//===- mpi_communicator.cc - A communicator over MPI ----------------------===//
// SPDX-License-Identifier: Apache-2.0
// MPI counts bytes in int: a transfer above INT_MAX bytes goes in pieces of
// 1 GiB (an all-gather's pieces land at each rank's offset through a
// receive type whose extent is a whole rank's part). Every transfer is
// started non-blocking and waited for by waitPolitely.

#include "strata/runtime/mpi_communicator.h"

#include <mpi.h>

#include <time.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <new>

namespace {

constexpr size_t kPiece = size_t{1} << 30;

struct MpiCommunicator {
  // First, so that the public struct's address is the record's.
  strata_communicator_t base;
  MPI_Comm comm = MPI_COMM_NULL;
  bool finalizeAtRelease = false;
};

strata_status_t mpiFailure(int error, const char* what) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(error, text, &length) != MPI_SUCCESS)
    text[0] = '\0';
  return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE, "%s failed: %s (%d)",
                            what, text, error);
}

MPI_Comm commOf(void* self) { return static_cast<MpiCommunicator*>(self)->comm; }

// How long a wait spins before it sleeps between polls, and the sleep.
constexpr auto kSpin = std::chrono::microseconds(200);
constexpr long kPollSleepNs = 20000;

// Waits for |request| as MPI_Wait does, but only spins for kSpin: a longer
// wait (a pipeline stage waiting for the stage before it, a rank waiting
// for a slower one) polls between short sleeps, leaving the core to the
// threads that have work (another micro-batch's session, the other ranks
// of an oversubscribed host) instead of burning it in MPI's progress loop.
// A wait that sleeps returns up to a sleep (~20-80 us) late.
int waitPolitely(MPI_Request* request, MPI_Status* status) {
  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  bool spinning = true;
  while (true) {
    const int error = MPI_Test(request, &done, status);
    if (error != MPI_SUCCESS || done) return error;
    if (spinning) {
      spinning = std::chrono::steady_clock::now() - start < kSpin;
      continue;
    }
    const timespec pause{0, kPollSleepNs};
    nanosleep(&pause, nullptr);
  }
}

strata_status_t allGather(void* self, const void* send, void* recv,
                          size_t bytes) {
  const MPI_Comm comm = commOf(self);
  if (bytes <= static_cast<size_t>(INT_MAX)) {
    MPI_Request request = MPI_REQUEST_NULL;
    int error = MPI_Iallgather(send, static_cast<int>(bytes), MPI_BYTE, recv,
                               static_cast<int>(bytes), MPI_BYTE, comm,
                               &request);
    if (error == MPI_SUCCESS) error = waitPolitely(&request, MPI_STATUS_IGNORE);
    return error == MPI_SUCCESS ? nullptr : mpiFailure(error, "MPI_Allgather");
  }
  for (size_t offset = 0; offset < bytes; offset += kPiece) {
    const int piece =
        static_cast<int>(bytes - offset < kPiece ? bytes - offset : kPiece);
    // A piece from every rank, each landing |bytes| after the previous
    // rank's.
    MPI_Datatype contiguous = MPI_DATATYPE_NULL, spaced = MPI_DATATYPE_NULL;
    int error = MPI_Type_contiguous(piece, MPI_BYTE, &contiguous);
    if (error == MPI_SUCCESS)
      error = MPI_Type_create_resized(contiguous, 0,
                                      static_cast<MPI_Aint>(bytes), &spaced);
    if (error == MPI_SUCCESS) error = MPI_Type_commit(&spaced);
    MPI_Request request = MPI_REQUEST_NULL;
    if (error == MPI_SUCCESS)
      error = MPI_Iallgather(static_cast<const uint8_t*>(send) + offset,
                             piece, MPI_BYTE,
                             static_cast<uint8_t*>(recv) + offset, 1, spaced,
                             comm, &request);
    if (error == MPI_SUCCESS) error = waitPolitely(&request, MPI_STATUS_IGNORE);
    if (contiguous != MPI_DATATYPE_NULL) MPI_Type_free(&contiguous);
    if (spaced != MPI_DATATYPE_NULL) MPI_Type_free(&spaced);
    if (error != MPI_SUCCESS) return mpiFailure(error, "MPI_Allgather");
  }
  return nullptr;
}

// MPI tags are ints no larger than the MPI_TAG_UB attribute (at least
// 32767).
strata_status_t checkTag(MPI_Comm comm, uint32_t tag) {
  int* upper = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &upper, &found);
  const int64_t limit = found && upper ? *upper : 32767;
  if (static_cast<int64_t>(tag) > limit) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "message tag %u is above MPI's limit %lld", tag,
                              static_cast<long long>(limit));
  }
  return nullptr;
}

strata_status_t send(void* self, const void* buffer, size_t bytes,
                     uint32_t peer, uint32_t tag) {
  const MPI_Comm comm = commOf(self);
  STRATA_RETURN_IF_ERROR(checkTag(comm, tag));
  size_t offset = 0;
  do {
    const int piece =
        static_cast<int>(bytes - offset < kPiece ? bytes - offset : kPiece);
    MPI_Request request = MPI_REQUEST_NULL;
    int error =
        MPI_Isend(static_cast<const uint8_t*>(buffer) + offset, piece,
                  MPI_BYTE, static_cast<int>(peer), static_cast<int>(tag),
                  comm, &request);
    if (error == MPI_SUCCESS) error = waitPolitely(&request, MPI_STATUS_IGNORE);
    if (error != MPI_SUCCESS) return mpiFailure(error, "MPI_Send");
    offset += static_cast<size_t>(piece);
  } while (offset < bytes);
  return nullptr;
}

strata_status_t recv(void* self, void* buffer, size_t bytes, uint32_t peer,
                     uint32_t tag) {
  const MPI_Comm comm = commOf(self);
  STRATA_RETURN_IF_ERROR(checkTag(comm, tag));
  size_t offset = 0;
  do {
    const int piece =
        static_cast<int>(bytes - offset < kPiece ? bytes - offset : kPiece);
    MPI_Status status;
    MPI_Request request = MPI_REQUEST_NULL;
    int error =
        MPI_Irecv(static_cast<uint8_t*>(buffer) + offset, piece, MPI_BYTE,
                  static_cast<int>(peer), static_cast<int>(tag), comm,
                  &request);
    if (error == MPI_SUCCESS) error = waitPolitely(&request, &status);
    if (error != MPI_SUCCESS) return mpiFailure(error, "MPI_Recv");
    int received = 0;
    MPI_Get_count(&status, MPI_BYTE, &received);
    if (received != piece) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                                "rank %u sent %d bytes with tag %u, expected "
                                "%d",
                                peer, received, tag, piece);
    }
    offset += static_cast<size_t>(piece);
  } while (offset < bytes);
  return nullptr;
}

strata_status_t probe(void* self, uint32_t peer, uint32_t tag,
                      int* out_ready) {
  if (!out_ready) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "out_ready must be non-null");
  }
  const MPI_Comm comm = commOf(self);
  STRATA_RETURN_IF_ERROR(checkTag(comm, tag));
  int flag = 0;
  const int error = MPI_Iprobe(static_cast<int>(peer), static_cast<int>(tag),
                               comm, &flag, MPI_STATUS_IGNORE);
  if (error != MPI_SUCCESS) return mpiFailure(error, "MPI_Iprobe");
  *out_ready = flag ? 1 : 0;
  return nullptr;
}

}  // namespace

extern "C" strata_status_t strata_mpi_communicator_create(
    strata_communicator_t** out_communicator) {
  if (!out_communicator) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "out_communicator must be non-null");
  }
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_FAILED_PRECONDITION,
                              "MPI has been finalized in this process");
  }
  bool initializedHere = false;
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    const int error = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE,
                                      &provided);
    if (error != MPI_SUCCESS) return mpiFailure(error, "MPI_Init_thread");
    initializedHere = true;
  } else {
    MPI_Query_thread(&provided);
  }
  auto finalizeIfOurs = [&] {
    if (initializedHere) MPI_Finalize();
  };
  if (provided < MPI_THREAD_SERIALIZED) {
    finalizeIfOurs();
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_FAILED_PRECONDITION,
        "MPI provides thread level %d, below MPI_THREAD_SERIALIZED (%d), "
        "which a session running on any thread needs",
        provided, MPI_THREAD_SERIALIZED);
  }
  auto* record = new (std::nothrow) MpiCommunicator;
  if (!record) {
    finalizeIfOurs();
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory creating the MPI communicator");
  }
  int error = MPI_Comm_dup(MPI_COMM_WORLD, &record->comm);
  if (error == MPI_SUCCESS)
    error = MPI_Comm_set_errhandler(record->comm, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  if (error == MPI_SUCCESS) error = MPI_Comm_rank(record->comm, &rank);
  if (error == MPI_SUCCESS) error = MPI_Comm_size(record->comm, &size);
  if (error != MPI_SUCCESS) {
    if (record->comm != MPI_COMM_NULL) MPI_Comm_free(&record->comm);
    delete record;
    strata_status_t status = mpiFailure(error, "MPI_Comm_dup of the world");
    finalizeIfOurs();
    return status;
  }
  strata_communicator_init(&record->base);
  record->base.self = record;
  record->base.rank = static_cast<uint32_t>(rank);
  record->base.size = static_cast<uint32_t>(size);
  record->base.all_gather = allGather;
  record->base.send = send;
  record->base.recv = recv;
  record->base.probe = probe;
  record->finalizeAtRelease = initializedHere;
  *out_communicator = &record->base;
  return nullptr;
}

extern "C" int strata_mpi_communicators_concurrent(void) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return 0;
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return provided >= MPI_THREAD_MULTIPLE ? 1 : 0;
}

extern "C" void strata_mpi_communicator_release(
    strata_communicator_t* communicator) {
  if (!communicator) return;
  auto* record = static_cast<MpiCommunicator*>(communicator->self);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && record->comm != MPI_COMM_NULL)
    MPI_Comm_free(&record->comm);
  const bool finalize = record->finalizeAtRelease && !finalized;
  delete record;
  if (finalize) MPI_Finalize();
}

extern "C" void strata_mpi_communicator_abort(
    strata_communicator_t* communicator, int code) {
  if (!communicator) return;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return;
  auto* record = static_cast<MpiCommunicator*>(communicator->self);
  MPI_Abort(record->comm != MPI_COMM_NULL ? record->comm : MPI_COMM_WORLD,
            code);
}
