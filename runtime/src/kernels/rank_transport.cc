//===- rank_transport.cc - What the imports that talk to other ranks share ===//
// SPDX-License-Identifier: Apache-2.0

#include "kernels/rank_transport.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "run_context.h"
#include "strata/runtime/communicator.h"

namespace strata::runtime::kernels {

bool isContiguous(const F32View& view) {
  int64_t expected = 1;
  for (int d = 3; d >= 0; --d) {
    if (view.sizes[d] != 1 && view.strides[d] != expected) return false;
    expected *= view.sizes[d];
  }
  return true;
}

void packView(const F32View& view, float* to) {
  const int64_t* n = view.sizes;
  const int64_t* s = view.strides;
  for (int64_t i0 = 0; i0 < n[0]; ++i0) {
    for (int64_t i1 = 0; i1 < n[1]; ++i1) {
      for (int64_t i2 = 0; i2 < n[2]; ++i2) {
        const float* row = view.data + i0 * s[0] + i1 * s[1] + i2 * s[2];
        if (s[3] == 1) {
          std::memcpy(to, row, static_cast<size_t>(n[3]) * sizeof(float));
        } else {
          for (int64_t i3 = 0; i3 < n[3]; ++i3) to[i3] = row[i3 * s[3]];
        }
        to += n[3];
      }
    }
  }
}

float* scratchFloats(strata_rt_context_t* context, uint64_t floats) {
  const uint64_t bytes = floats * sizeof(float);
  size_t stride = 0;
  uint8_t* block =
      context->scratch ? context->scratch->reserve(1, bytes, &stride) : nullptr;
  if (!block) failRunOutOfMemory(context, bytes);
  return reinterpret_cast<float*>(block);
}

void failTransport(strata_rt_context_t* context, const char* import,
                   const char* what, strata_status_t status) {
  // Copied out: the status is freed before the run ends past this frame.
  char message[256];
  std::snprintf(message, sizeof(message), "%s: %s",
                strata_status_code_string(strata_status_code(status)),
                strata_status_message(status));
  strata_status_free(status);
  const strata_communicator_t* comm = context->communicator;
  failRunWithStatus(context, STRATA_STATUS_UNAVAILABLE,
                    "%s: the communicator's %s failed on rank %" PRIu32
                    " of %" PRIu32 ": %s",
                    import, what, comm->rank, comm->size, message);
}

bool sendToRank(strata_rt_context_t* context, const char* import, uint32_t peer,
                uint32_t tag, const void* data, size_t bytes) {
  const strata_communicator_t* comm = context->communicator;
  strata_status_t status = comm->send(comm->self, data, bytes, peer, tag);
  if (!status) return true;
  char what[48];
  std::snprintf(what, sizeof(what), "send to rank %" PRIu32, peer);
  failTransport(context, import, what, status);
  return false;
}

bool recvFromRank(strata_rt_context_t* context, const char* import,
                  uint32_t peer, uint32_t tag, void* data, size_t bytes) {
  const strata_communicator_t* comm = context->communicator;
  strata_status_t status = comm->recv(comm->self, data, bytes, peer, tag);
  if (!status) return true;
  char what[48];
  std::snprintf(what, sizeof(what), "recv from rank %" PRIu32, peer);
  failTransport(context, import, what, status);
  return false;
}

}  // namespace strata::runtime::kernels
