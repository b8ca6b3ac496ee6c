//===- nccl_communicator.cc - A communicator over NCCL --------------------===//
// SPDX-License-Identifier: Apache-2.0
// Host buffers in, host buffers out: every call stages its bytes in device
// memory on the communicator's own stream and waits for it, so the table
// behaves like the MPI one to the runtime. NCCL has no message tags, and
// its sends and receives between two ranks match in call order; the tags
// the runtime uses each get an NCCL communicator of their own (a channel),
// so a stage hand-over and a tensor group's gather never take each other's
// messages, as they do not over MPI.

#include "strata/runtime/nccl_communicator.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "nccl_api.h"

namespace strata::nccl {
namespace {

// The message tags with a channel: 0 (an embedder's messages), the
// tensor group's gathers and the stages' hand-overs. The first channel
// also carries all_gather.
constexpr uint32_t kChannelTags[] = {0, STRATA_COMMUNICATOR_TAG_GROUP,
                                     STRATA_COMMUNICATOR_TAG_STAGE};
constexpr size_t kChannels = sizeof(kChannelTags) / sizeof(kChannelTags[0]);

// What each rank contributes to the bootstrap's all_gather: whether its
// local setup worked and, from rank 0, an NCCL id per channel. A rank that
// failed still takes part, so that no rank waits for it; zeros read as
// failed.
struct Hello {
  uint32_t ready;
  ncclUniqueId ids[kChannels];
};

// A device buffer that only grows.
struct DeviceBuffer {
  void* data = nullptr;
  size_t bytes = 0;
};

struct NcclCommunicator {
  // First, so that the public struct's address is the record's.
  strata_communicator_t base;
  Api api;
  int device = 0;
  cudaStream_t stream = nullptr;
  DeviceBuffer staging;
  struct Channel {
    ncclComm_t comm = nullptr;
    // A message this rank sent itself with the channel's tag, held until
    // its recv.
    DeviceBuffer mailbox;
    size_t mailboxBytes = 0;
    bool mailboxFull = false;
  };
  Channel channels[kChannels];
};

NcclCommunicator* recordOf(void* self) {
  return static_cast<NcclCommunicator*>(self);
}

strata_status_t cudaCheck(const NcclCommunicator& c, const char* call,
                          cudaError_t error) {
  return error == kCudaSuccess ? nullptr : cudaFailure(c.api, call, error);
}

strata_status_t ncclCheck(const NcclCommunicator& c, const char* call,
                          ncclResult_t result, ncclComm_t comm) {
  return result == kNcclSuccess ? nullptr
                                : ncclFailure(c.api, call, result, comm);
}

// The CUDA runtime's current device is per thread, and a session may run
// on any thread.
strata_status_t selectDevice(const NcclCommunicator& c) {
  return cudaCheck(c, "cudaSetDevice", c.api.cudaSetDevice(c.device));
}

strata_status_t reserve(NcclCommunicator& c, DeviceBuffer* buffer,
                        size_t bytes) {
  if (buffer->bytes >= bytes) return nullptr;
  if (buffer->data) {
    STRATA_RETURN_IF_ERROR(
        cudaCheck(c, "cudaFree", c.api.cudaFree(buffer->data)));
    *buffer = DeviceBuffer();
  }
  STRATA_RETURN_IF_ERROR(
      cudaCheck(c, "cudaMalloc", c.api.cudaMalloc(&buffer->data, bytes)));
  buffer->bytes = bytes;
  return nullptr;
}

strata_status_t copy(const NcclCommunicator& c, void* to, const void* from,
                     size_t bytes, int kind) {
  return cudaCheck(c, "cudaMemcpyAsync",
                   c.api.cudaMemcpyAsync(to, from, bytes, kind, c.stream));
}

strata_status_t wait(const NcclCommunicator& c) {
  return cudaCheck(c, "cudaStreamSynchronize",
                   c.api.cudaStreamSynchronize(c.stream));
}

// The channel of a message to or from |peer| with |tag|.
strata_status_t channelOf(NcclCommunicator& c, uint32_t peer, uint32_t tag,
                          NcclCommunicator::Channel** out) {
  if (peer >= c.base.size) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "peer rank %u is outside the group of %u", peer,
                              c.base.size);
  }
  for (size_t i = 0; i < kChannels; ++i) {
    if (kChannelTags[i] == tag) {
      *out = &c.channels[i];
      return nullptr;
    }
  }
  return STRATA_MAKE_STATUS(
      STRATA_STATUS_INVALID_ARGUMENT,
      "message tag %u: NCCL has no tags, so each tag is an NCCL communicator "
      "made when this one was, and only 0, %u (tensor group) and %u "
      "(pipeline stages) have one",
      tag, STRATA_COMMUNICATOR_TAG_GROUP, STRATA_COMMUNICATOR_TAG_STAGE);
}

// In place: this rank's part goes at its offset of the gathered buffer,
// which NCCL accepts as the send buffer, so one staging buffer serves.
strata_status_t allGather(void* self, const void* send, void* recv,
                          size_t bytes) {
  NcclCommunicator& c = *recordOf(self);
  if (bytes == 0) return nullptr;
  if (!send || !recv) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "all_gather of %zu bytes with a NULL buffer",
                              bytes);
  }
  if (bytes > SIZE_MAX / c.base.size) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "all_gather of %zu bytes from each of %u ranks "
                              "overflows size_t",
                              bytes, c.base.size);
  }
  const size_t total = bytes * c.base.size;
  STRATA_RETURN_IF_ERROR(selectDevice(c));
  STRATA_RETURN_IF_ERROR(reserve(c, &c.staging, total));
  uint8_t* gathered = static_cast<uint8_t*>(c.staging.data);
  uint8_t* mine = gathered + bytes * c.base.rank;
  STRATA_RETURN_IF_ERROR(copy(c, mine, send, bytes, kCudaMemcpyHostToDevice));
  ncclComm_t comm = c.channels[0].comm;
  STRATA_RETURN_IF_ERROR(
      ncclCheck(c, "ncclAllGather",
                c.api.ncclAllGather(mine, gathered, bytes, kNcclUint8, comm,
                                    c.stream),
                comm));
  STRATA_RETURN_IF_ERROR(
      copy(c, recv, gathered, total, kCudaMemcpyDeviceToHost));
  return wait(c);
}

// A send to this rank itself is grouped with its recv into the mailbox:
// alone, a blocking ncclSend to self would wait forever for the recv.
strata_status_t sendToSelf(NcclCommunicator& c,
                           NcclCommunicator::Channel& channel, size_t bytes) {
  if (channel.mailboxFull) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_FAILED_PRECONDITION,
                              "a message rank %u sent itself is still "
                              "waiting for its recv; NCCL holds one per tag "
                              "at a time",
                              c.base.rank);
  }
  STRATA_RETURN_IF_ERROR(reserve(c, &channel.mailbox, bytes));
  const int self = static_cast<int>(c.base.rank);
  ncclComm_t comm = channel.comm;
  STRATA_RETURN_IF_ERROR(
      ncclCheck(c, "ncclGroupStart", c.api.ncclGroupStart(), comm));
  const ncclResult_t sent =
      c.api.ncclSend(c.staging.data, bytes, kNcclUint8, self, comm, c.stream);
  const ncclResult_t received = c.api.ncclRecv(
      channel.mailbox.data, bytes, kNcclUint8, self, comm, c.stream);
  // The group is closed whatever happened inside it.
  const ncclResult_t ended = c.api.ncclGroupEnd();
  STRATA_RETURN_IF_ERROR(ncclCheck(c, "ncclSend", sent, comm));
  STRATA_RETURN_IF_ERROR(ncclCheck(c, "ncclRecv", received, comm));
  STRATA_RETURN_IF_ERROR(ncclCheck(c, "ncclGroupEnd", ended, comm));
  STRATA_RETURN_IF_ERROR(wait(c));
  channel.mailboxBytes = bytes;
  channel.mailboxFull = true;
  return nullptr;
}

strata_status_t send(void* self, const void* buffer, size_t bytes,
                     uint32_t peer, uint32_t tag) {
  NcclCommunicator& c = *recordOf(self);
  NcclCommunicator::Channel* channel = nullptr;
  STRATA_RETURN_IF_ERROR(channelOf(c, peer, tag, &channel));
  if (bytes == 0) return nullptr;
  if (!buffer) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "send of %zu bytes from a NULL buffer", bytes);
  }
  STRATA_RETURN_IF_ERROR(selectDevice(c));
  STRATA_RETURN_IF_ERROR(reserve(c, &c.staging, bytes));
  STRATA_RETURN_IF_ERROR(
      copy(c, c.staging.data, buffer, bytes, kCudaMemcpyHostToDevice));
  if (peer == c.base.rank) return sendToSelf(c, *channel, bytes);
  STRATA_RETURN_IF_ERROR(
      ncclCheck(c, "ncclSend",
                c.api.ncclSend(c.staging.data, bytes, kNcclUint8,
                               static_cast<int>(peer), channel->comm,
                               c.stream),
                channel->comm));
  return wait(c);
}

strata_status_t recv(void* self, void* buffer, size_t bytes, uint32_t peer,
                     uint32_t tag) {
  NcclCommunicator& c = *recordOf(self);
  NcclCommunicator::Channel* channel = nullptr;
  STRATA_RETURN_IF_ERROR(channelOf(c, peer, tag, &channel));
  if (bytes == 0) return nullptr;
  if (!buffer) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "recv of %zu bytes into a NULL buffer", bytes);
  }
  STRATA_RETURN_IF_ERROR(selectDevice(c));
  if (peer == c.base.rank) {
    if (!channel->mailboxFull || channel->mailboxBytes != bytes) {
      return STRATA_MAKE_STATUS(
          STRATA_STATUS_FAILED_PRECONDITION,
          "recv of %zu bytes from rank %u itself with tag %u, which has %s",
          bytes, peer, tag,
          channel->mailboxFull ? "sent a message of another size"
                               : "sent nothing");
    }
    channel->mailboxFull = false;
    STRATA_RETURN_IF_ERROR(copy(c, buffer, channel->mailbox.data, bytes,
                                kCudaMemcpyDeviceToHost));
    return wait(c);
  }
  STRATA_RETURN_IF_ERROR(reserve(c, &c.staging, bytes));
  STRATA_RETURN_IF_ERROR(
      ncclCheck(c, "ncclRecv",
                c.api.ncclRecv(c.staging.data, bytes, kNcclUint8,
                               static_cast<int>(peer), channel->comm,
                               c.stream),
                channel->comm));
  STRATA_RETURN_IF_ERROR(
      copy(c, buffer, c.staging.data, bytes, kCudaMemcpyDeviceToHost));
  return wait(c);
}

// Frees what |c| holds; safe on a partly built record.
void destroy(NcclCommunicator* c) {
  if (c->api.cudart) {
    c->api.cudaSetDevice(c->device);
    for (NcclCommunicator::Channel& channel : c->channels) {
      if (channel.comm) c->api.ncclCommDestroy(channel.comm);
      if (channel.mailbox.data) c->api.cudaFree(channel.mailbox.data);
    }
    if (c->staging.data) c->api.cudaFree(c->staging.data);
    if (c->stream) c->api.cudaStreamDestroy(c->stream);
  }
  unloadApi(&c->api);
  delete c;
}

strata_status_t checkBootstrap(const strata_communicator_t* bootstrap) {
  if (!bootstrap) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "bootstrap communicator must be non-null");
  }
  if (bootstrap->struct_size < sizeof(strata_communicator_t) ||
      !bootstrap->all_gather) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "bootstrap communicator has no all_gather "
                              "(struct_size %zu; initialize it with "
                              "strata_communicator_init, then fill it)",
                              bootstrap->struct_size);
  }
  if (bootstrap->size == 0 || bootstrap->rank >= bootstrap->size) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "bootstrap communicator is rank %u of %u ranks",
                              bootstrap->rank, bootstrap->size);
  }
  if (bootstrap->size > INT32_MAX) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "bootstrap communicator has %u ranks, more "
                              "than NCCL counts",
                              bootstrap->size);
  }
  return nullptr;
}

// What one rank does alone before the exchange: load the libraries, pick
// the device, make the stream and, on rank 0, the NCCL id.
strata_status_t prepare(NcclCommunicator& c, int32_t device, Hello* hello) {
  STRATA_RETURN_IF_ERROR(loadApi(&c.api));
  int count = 0;
  STRATA_RETURN_IF_ERROR(
      cudaCheck(c, "cudaGetDeviceCount", c.api.cudaGetDeviceCount(&count)));
  if (count <= 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                              "the CUDA runtime sees no GPU in this process");
  }
  if (device >= count) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "device %d asked for, but this process has %d "
                              "GPU%s",
                              device, count, count == 1 ? "" : "s");
  }
  c.device =
      device >= 0 ? device : static_cast<int>(c.base.rank % uint32_t(count));
  STRATA_RETURN_IF_ERROR(selectDevice(c));
  STRATA_RETURN_IF_ERROR(cudaCheck(
      c, "cudaStreamCreateWithFlags",
      c.api.cudaStreamCreateWithFlags(&c.stream, kCudaStreamNonBlocking)));
  if (c.base.rank == 0) {
    for (ncclUniqueId& id : hello->ids) {
      STRATA_RETURN_IF_ERROR(ncclCheck(c, "ncclGetUniqueId",
                                       c.api.ncclGetUniqueId(&id), nullptr));
    }
  }
  hello->ready = 1;
  return nullptr;
}

// Every rank exchanges a Hello, failed or not, before NCCL starts.
strata_status_t create(const strata_communicator_t* bootstrap, int32_t device,
                       strata_communicator_t** out) {
  if (!out) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "out communicator must be non-null");
  }
  STRATA_RETURN_IF_ERROR(checkBootstrap(bootstrap));
  auto* c = new (std::nothrow) NcclCommunicator;
  std::unique_ptr<Hello[]> hellos(new (std::nothrow) Hello[bootstrap->size]);
  if (!c || !hellos) {
    delete c;
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory creating the NCCL communicator");
  }
  strata_communicator_init(&c->base);
  c->base.self = c;
  c->base.rank = bootstrap->rank;
  c->base.size = bootstrap->size;

  Hello mine;
  std::memset(&mine, 0, sizeof(mine));
  strata_status_t local = prepare(*c, device, &mine);
  if (local) std::memset(&mine, 0, sizeof(mine));
  strata_status_t exchanged = bootstrap->all_gather(
      bootstrap->self, &mine, hellos.get(), sizeof(Hello));
  if (local || exchanged) {
    destroy(c);
    if (!local) {
      return strata_status_annotate(
          exchanged, "the bootstrap all_gather of the NCCL id failed");
    }
    strata_status_free(exchanged);
    return local;
  }
  for (uint32_t r = 0; r < bootstrap->size; ++r) {
    if (hellos[r].ready != 1) {
      destroy(c);
      return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                                "rank %u could not set up NCCL (its own "
                                "error says why), so rank %u stops too",
                                r, bootstrap->rank);
    }
  }
  // Every rank makes the channels in the same order: each init waits for
  // the group's other ranks to make that one.
  for (size_t i = 0; i < kChannels; ++i) {
    ncclComm_t& comm = c->channels[i].comm;
    const ncclResult_t result = c->api.ncclCommInitRank(
        &comm, static_cast<int>(bootstrap->size), hellos[0].ids[i],
        static_cast<int>(bootstrap->rank));
    if (result != kNcclSuccess) {
      // What a failed init leaves in the handle is not NCCL's contract.
      comm = nullptr;
      strata_status_t status =
          ncclFailure(c->api, "ncclCommInitRank", result, nullptr);
      destroy(c);
      return status;
    }
  }
  c->base.all_gather = allGather;
  c->base.send = send;
  c->base.recv = recv;
  *out = &c->base;
  return nullptr;
}

}  // namespace
}  // namespace strata::nccl

extern "C" strata_status_t strata_nccl_communicator_create(
    const strata_communicator_t* bootstrap, int32_t device,
    strata_communicator_t** out) {
  return strata::nccl::create(bootstrap, device, out);
}

extern "C" void strata_nccl_communicator_release(
    strata_communicator_t* communicator) {
  if (!communicator) return;
  strata::nccl::destroy(strata::nccl::recordOf(communicator->self));
}
