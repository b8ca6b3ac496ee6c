//===- rank_transport.h - What the imports that talk to other ranks share -===//
// SPDX-License-Identifier: Apache-2.0
// The collectives and the hand-overs between pipeline stages send strided
// fp32 views as contiguous bytes over the run's communicator: a view packed
// into kernel scratch when it is not contiguous, and a transport failure
// ending the run with UNAVAILABLE quoting the communicator's status.

#ifndef STRATA_RUNTIME_SRC_KERNELS_RANK_TRANSPORT_H_
#define STRATA_RUNTIME_SRC_KERNELS_RANK_TRANSPORT_H_

#include <cstddef>
#include <cstdint>

#include "strata/runtime/status.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

/// Scratch is asked for in one block; more would be no model's activations.
constexpr uint64_t kMaxTransferBytes = uint64_t{1} << 44;

/// An fp32 tensor viewed as rank 4, strides in elements.
struct F32View {
  const float* data = nullptr;
  int64_t sizes[4] = {};
  int64_t strides[4] = {};
};

/// Whether |view| is contiguous row-major (dims of extent 1 take any
/// stride).
bool isContiguous(const F32View& view);

/// Copies |view|, strided, into |to| row-major.
void packView(const F32View& view, float* to);

/// |floats| floats of the session's kernel scratch; null once the run has
/// been ended for want of memory.
float* scratchFloats(strata_rt_context_t* context, uint64_t floats);

/// Ends the run with UNAVAILABLE because the communicator's |what| (e.g.
/// "all_gather", "send to rank 3") failed with |status|, which this takes
/// over: "<import>: the communicator's <what> failed on rank R of N: CODE:
/// message". Returns when the run has no trap.
void failTransport(strata_rt_context_t* context, const char* import,
                   const char* what, strata_status_t status);

/// The communicator's send of |bytes| at |data| to rank |peer| with |tag|;
/// false once the run has been ended because it failed.
bool sendToRank(strata_rt_context_t* context, const char* import, uint32_t peer,
                uint32_t tag, const void* data, size_t bytes);

/// The communicator's recv of exactly |bytes| into |data| from rank
/// |peer| with |tag|; false once the run has been ended because it failed.
bool recvFromRank(strata_rt_context_t* context, const char* import,
                  uint32_t peer, uint32_t tag, void* data, size_t bytes);

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_RANK_TRANSPORT_H_
