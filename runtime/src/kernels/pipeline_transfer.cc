//===- pipeline_transfer.cc - Activations handed between pipeline stages --===//
// SPDX-License-Identifier: Apache-2.0
// A failure ends the run by a non-local return (run_context.h); a packed
// copy lives in the session's kernel scratch. Every hand-over is two
// messages, the extents and then the elements (an empty tensor's too), so
// that sender and receiver stay in step whatever the sizes.

#include "kernels/pipeline_transfer.h"

#include <cinttypes>
#include <cstring>

#include "kernels/rank_transport.h"
#include "run_context.h"
#include "strata/runtime/communicator.h"
#include "strata/runtime/status.h"

namespace strata::runtime::kernels {
namespace {

constexpr uint32_t kTag = STRATA_COMMUNICATOR_TAG_STAGE;

// Static strings for failRunInternal, one set per import.
struct Names {
  const char* import;
  const char* size;
  const char* stride;
  const char* stage;
  const char* count;
  const char* pointer;
};

const Names kSend = {"strata_rt_send_f32",
                     "strata_rt_send_f32 size",
                     "strata_rt_send_f32 stride",
                     "strata_rt_send_f32 stage",
                     "strata_rt_send_f32 element count",
                     "strata_rt_send_f32 null BUF with elements"};
const Names kRecvExtents = {"strata_rt_recv_extents_f32",
                            nullptr,
                            nullptr,
                            "strata_rt_recv_extents_f32 stage",
                            nullptr,
                            "strata_rt_recv_extents_f32 null EXTENTS"};
const Names kRecv = {"strata_rt_recv_f32",
                     "strata_rt_recv_f32 size",
                     "strata_rt_recv_f32 stride",
                     "strata_rt_recv_f32 stage",
                     "strata_rt_recv_f32 element count",
                     "strata_rt_recv_f32 null BUF with elements"};

// The world rank of the peer STAGE names; false once the run has been
// ended (or, with no trap, would have been).
bool decodePeer(strata_rt_context_t* context, const int64_t* params,
                const Names& names, uint32_t* peer) {
  if (!params) {
    failRunInternal(context, names.pointer, 0);
    return false;
  }
  // A stage that is no other stage of this model is a bug of the code,
  // whatever the communicator.
  const ParallelLayout& layout = context->parallel;
  const int64_t stage = params[STRATA_P2P_STAGE];
  if (stage < 0 || stage >= int64_t{layout.stages} ||
      stage == int64_t{layout.stage}) {
    failRunInternal(context, names.stage, stage);
    return false;
  }
  const strata_communicator_t* comm = context->communicator;
  if (!comm || !comm->send || !comm->recv) {
    failRunWithStatus(
        context, STRATA_STATUS_FAILED_PRECONDITION,
        "%s: the run has no communicator able to send and receive, and its "
        "code is pipeline stage %" PRIu32 " of %" PRIu32
        "; give the session a communicator with send and recv "
        "(strata_session_set_communicator)",
        names.import, layout.stage, layout.stages);
    return false;
  }
  const uint64_t world = uint64_t{layout.tensorRanks} * layout.stages;
  if (comm->size != world) {
    failRunWithStatus(context, STRATA_STATUS_FAILED_PRECONDITION,
                      "%s: the code is pipeline stage %" PRIu32 " of %" PRIu32
                      " of %" PRIu32 " tensor ranks each, %" PRIu64
                      " ranks in all; the session's communicator has %" PRIu32,
                      names.import, layout.stage, layout.stages,
                      layout.tensorRanks, world, comm->size);
    return false;
  }
  *peer = layout.worldRank(static_cast<uint32_t>(stage), layout.tensorRank);
  return true;
}

// The elements of |sizes|, or UINT64_MAX when negative, overflowing or
// more than one message should carry.
uint64_t elementCount(const int64_t* sizes) {
  uint64_t count = 1;
  for (int d = 0; d < 4; ++d) {
    if (sizes[d] < 0 || __builtin_mul_overflow(
                            count, static_cast<uint64_t>(sizes[d]), &count)) {
      return UINT64_MAX;
    }
  }
  return count > kMaxTransferBytes / sizeof(float) ? UINT64_MAX : count;
}

// One send or recv call's decoded and checked parameters.
struct Transfer {
  F32View buf;
  float* data = nullptr;  // buf.data, which recv writes
  uint64_t count = 0;     // elements of BUF
  uint32_t peer = 0;      // the peer's world rank
};

// Decodes |params| into |*t|; false once the run has been ended (or, with
// no trap, would have been). Recv ignores STRIDES.
bool decode(strata_rt_context_t* context, const int64_t* params,
            const Names& names, bool send, Transfer* t) {
  if (!decodePeer(context, params, names, &t->peer)) return false;
  t->data = reinterpret_cast<float*>(params[STRATA_P2P_BUF]);
  t->buf.data = t->data;
  for (int d = 0; d < 4; ++d) {
    t->buf.sizes[d] = params[STRATA_P2P_SIZES + d];
    t->buf.strides[d] = send ? params[STRATA_P2P_STRIDES + d] : 0;
    if (t->buf.sizes[d] < 0) {
      failRunInternal(context, names.size, t->buf.sizes[d]);
      return false;
    }
    if (t->buf.strides[d] < 0) {
      failRunInternal(context, names.stride, t->buf.strides[d]);
      return false;
    }
  }
  t->count = elementCount(t->buf.sizes);
  if (t->count == UINT64_MAX) {
    failRunInternal(context, names.count, INT64_MAX);
    return false;
  }
  if (t->count > 0 && !t->data) {
    failRunInternal(context, names.pointer, 0);
    return false;
  }
  return true;
}

}  // namespace

extern "C" void strataSendF32(strata_rt_context_t* context,
                              const int64_t* params) {
  Transfer t;
  if (!decode(context, params, kSend, /*send=*/true, &t)) return;
  const float* data = t.buf.data;
  if (t.count > 0 && !isContiguous(t.buf)) {
    float* packed = scratchFloats(context, t.count);
    if (!packed) return;
    packView(t.buf, packed);
    data = packed;
  }
  // The receiver allocates BUF from the first message.
  if (!sendToRank(context, kSend.import, t.peer, kTag, t.buf.sizes,
                  sizeof(t.buf.sizes))) {
    return;
  }
  sendToRank(context, kSend.import, t.peer, kTag, data,
             static_cast<size_t>(t.count) * sizeof(float));
}

extern "C" void strataRecvExtentsF32(strata_rt_context_t* context,
                                     const int64_t* params) {
  uint32_t peer = 0;
  if (!decodePeer(context, params, kRecvExtents, &peer)) return;
  auto* extents = reinterpret_cast<int64_t*>(params[STRATA_P2P_EXTENTS]);
  if (!extents) {
    failRunInternal(context, kRecvExtents.pointer, 0);
    return;
  }
  int64_t sizes[4] = {};
  if (!recvFromRank(context, kRecvExtents.import, peer, kTag, sizes,
                    sizeof(sizes))) {
    return;
  }
  // Another process's bytes: no tensor's extents means they are damaged.
  if (elementCount(sizes) == UINT64_MAX) {
    failRunWithStatus(
        context, STRATA_STATUS_DATA_LOSS,
        "%s: rank %" PRIu32 " sent the extents [%" PRId64 ", %" PRId64
        ", %" PRId64 ", %" PRId64 "], which no tensor has",
        kRecvExtents.import, peer, sizes[0], sizes[1], sizes[2], sizes[3]);
    return;
  }
  // The code's static dims (and a lower rank's leading 1s) must match.
  for (int d = 0; d < 4; ++d) {
    if (extents[d] >= 0 && extents[d] != sizes[d]) {
      failRunWithStatus(
          context, STRATA_STATUS_DATA_LOSS,
          "%s: rank %" PRIu32 " sent a tensor of extents [%" PRId64
          ", %" PRId64 ", %" PRId64 ", %" PRId64 "] where the code expects [%" PRId64
          ", %" PRId64 ", %" PRId64 ", %" PRId64 "] (-1: any)",
          kRecvExtents.import, peer, sizes[0], sizes[1], sizes[2], sizes[3],
          extents[0], extents[1], extents[2], extents[3]);
      return;
    }
  }
  std::memcpy(extents, sizes, sizeof(sizes));
}

extern "C" void strataRecvF32(strata_rt_context_t* context,
                              const int64_t* params) {
  Transfer t;
  if (!decode(context, params, kRecv, /*send=*/false, &t)) return;
  // Generated code allocated BUF contiguous: the message lands in place.
  recvFromRank(context, kRecv.import, t.peer, kTag, t.data,
               static_cast<size_t>(t.count) * sizeof(float));
}

}  // namespace strata::runtime::kernels
