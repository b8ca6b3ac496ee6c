//===- collectives.cc - All-reduce and all-gather of tensor-parallel ranks ===//
// SPDX-License-Identifier: Apache-2.0
// A failure ends the run by a non-local return (run_context.h), so nothing
// here owns memory across a call that can end it: the packed part and the
// gathered parts live in the session's kernel scratch, which the session
// owns. There is no cancel point: a rank that stopped alone would leave the
// others waiting in their exchange. A model of one stage gathers with the
// communicator's all_gather over the whole world; the group of one stage of
// several cannot (the other stages run other code meanwhile) and trades
// parts pairwise with send and recv.

#include "kernels/collectives.h"

#include <cinttypes>
#include <cstring>

#include "kernels/rank_transport.h"
#include "run_context.h"
#include "strata/runtime/communicator.h"
#include "strata/runtime/status.h"

namespace strata::runtime::kernels {
namespace {

constexpr int kRank = 4;

// Loops over fewer elements run on the calling thread.
constexpr int64_t kParallelElements = 1 << 16;

// Static strings for failRunInternal, one set per import.
struct Names {
  const char* import;
  const char* size;
  const char* stride;
  const char* axis;
  const char* count;
  const char* pointer;
  const char* ranks;
};

const Names kAllReduce = {
    "strata_rt_all_reduce_f32",         "strata_rt_all_reduce_f32 size",
    "strata_rt_all_reduce_f32 stride",  "strata_rt_all_reduce_f32 axis",
    "strata_rt_all_reduce_f32 element count",
    "strata_rt_all_reduce_f32 null IN or OUT with elements",
    "strata_rt_all_reduce_f32 rank count"};
const Names kAllGather = {
    "strata_rt_all_gather_f32",         "strata_rt_all_gather_f32 size",
    "strata_rt_all_gather_f32 stride",  "strata_rt_all_gather_f32 axis",
    "strata_rt_all_gather_f32 element count",
    "strata_rt_all_gather_f32 null IN or OUT with elements",
    "strata_rt_all_gather_f32 rank count"};

// One call's decoded and checked parameters.
struct Collective {
  F32View in;
  float* out = nullptr;
  int64_t axis = 0;
  int64_t ranks = 0;
  int64_t count = 0;  // elements of IN
  const strata_communicator_t* communicator = nullptr;
};

// Decodes |params| into |*c|; false once the run has been ended (or, with
// no trap, would have been).
bool decode(strata_rt_context_t* context, const int64_t* params,
            const Names& names, bool gather, Collective* c) {
  if (!params) {
    failRunInternal(context, names.pointer, 0);
    return false;
  }
  c->ranks = params[STRATA_COLL_RANKS];
  c->communicator = context->communicator;
  const ParallelLayout& layout = context->parallel;
  if (!c->communicator || !c->communicator->all_gather) {
    failRunWithStatus(
        context, STRATA_STATUS_FAILED_PRECONDITION,
        "%s: the run has no communicator, and its code is a rank of a "
        "tensor-parallel group of %" PRId64
        " ranks; give the session a communicator "
        "(strata_session_set_communicator)",
        names.import, c->ranks);
    return false;
  }
  if (layout.stages == 1 && c->ranks != c->communicator->size) {
    failRunWithStatus(context, STRATA_STATUS_FAILED_PRECONDITION,
                      "%s: the code was compiled for a tensor-parallel group "
                      "of %" PRId64 " ranks, the session's communicator has "
                      "%" PRIu32,
                      names.import, c->ranks, c->communicator->size);
    return false;
  }
  if (layout.stages > 1) {
    // The group is the stage's tensor ranks, reached by send and recv.
    if (c->ranks != layout.tensorRanks) {
      failRunWithStatus(
          context, STRATA_STATUS_FAILED_PRECONDITION,
          "%s: the code was compiled for a tensor-parallel group of %" PRId64
          " ranks, the module's pipeline stage has %" PRIu32,
          names.import, c->ranks, layout.tensorRanks);
      return false;
    }
    const uint64_t world = uint64_t{layout.tensorRanks} * layout.stages;
    if (!c->communicator->send || !c->communicator->recv ||
        c->communicator->size != world) {
      failRunWithStatus(
          context, STRATA_STATUS_FAILED_PRECONDITION,
          "%s: the code is pipeline stage %" PRIu32 " of %" PRIu32
          ", whose group exchanges by send and recv over a communicator of "
          "%" PRIu64 " ranks; the session's communicator has %" PRIu32
          " ranks%s",
          names.import, layout.stage, layout.stages, world,
          c->communicator->size,
          c->communicator->send && c->communicator->recv
              ? ""
              : " and no send or recv");
      return false;
    }
  }
  if (c->ranks < 1) {
    failRunInternal(context, names.ranks, c->ranks);
    return false;
  }
  c->in.data = reinterpret_cast<const float*>(params[STRATA_COLL_IN]);
  c->out = reinterpret_cast<float*>(params[STRATA_COLL_OUT]);
  int64_t* sizes = c->in.sizes;
  int64_t* strides = c->in.strides;
  uint64_t count = 1;
  for (int d = 0; d < kRank; ++d) {
    sizes[d] = params[STRATA_COLL_SIZES + d];
    strides[d] = params[STRATA_COLL_STRIDES + d];
    if (sizes[d] < 0) {
      failRunInternal(context, names.size, sizes[d]);
      return false;
    }
    if (strides[d] < 0) {
      failRunInternal(context, names.stride, strides[d]);
      return false;
    }
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(sizes[d]),
                               &count)) {
      count = UINT64_MAX;
    }
  }
  if (gather) {
    c->axis = params[STRATA_COLL_AXIS];
    if (c->axis < 0 || c->axis >= kRank) {
      failRunInternal(context, names.axis, c->axis);
      return false;
    }
  }
  // The gathered parts and a packed copy of IN must fit one scratch block.
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(c->ranks) + 1,
                             &bytes) ||
      __builtin_mul_overflow(bytes, sizeof(float), &bytes) ||
      bytes > kMaxTransferBytes) {
    failRunInternal(context, names.count,
                    count > INT64_MAX ? INT64_MAX : static_cast<int64_t>(count));
    return false;
  }
  c->count = static_cast<int64_t>(count);
  if (c->count > 0 && (!c->in.data || !c->out)) {
    failRunInternal(context, names.pointer, 0);
    return false;
  }
  return true;
}

// Every rank's part into |recv|, rank r's at r * count, over the whole
// world; false once the run has been ended because the transport failed.
bool gatherWorld(strata_rt_context_t* context, const Collective& c,
                 const char* import, const float* send, float* recv) {
  const strata_communicator_t* comm = c.communicator;
  strata_status_t status = comm->all_gather(
      comm->self, send, recv, static_cast<size_t>(c.count) * sizeof(float));
  if (!status) return true;
  failTransport(context, import, "all_gather", status);
  return false;
}

// Every member's part of the group of this rank's pipeline stage into
// |recv|, tensor rank g's at g * count, by send and recv. Each pair (i, j),
// i < j, trades its parts in lexicographic order of the pairs, the lower
// sending first, the higher receiving first; each rank walks only its own
// pairs. With sends that wait for their receive, the first unfinished pair
// has both its members at it, so the exchange always progresses.
bool gatherGroup(strata_rt_context_t* context, const Collective& c,
                 const char* import, const float* send, float* recv) {
  const ParallelLayout& layout = context->parallel;
  const uint32_t me = layout.tensorRank;
  const size_t n = static_cast<size_t>(c.count);
  const size_t bytes = n * sizeof(float);
  std::memcpy(recv + me * n, send, bytes);
  constexpr uint32_t kTag = STRATA_COMMUNICATOR_TAG_GROUP;
  // Pairs (other, me) sort before (me, other): ascending |other| is their
  // order.
  for (uint32_t other = 0; other < layout.tensorRanks; ++other) {
    if (other == me) continue;
    const uint32_t peer = layout.worldRank(layout.stage, other);
    float* theirs = recv + other * n;
    const bool ok =
        other > me
            ? sendToRank(context, import, peer, kTag, send, bytes) &&
                  recvFromRank(context, import, peer, kTag, theirs, bytes)
            : recvFromRank(context, import, peer, kTag, theirs, bytes) &&
                  sendToRank(context, import, peer, kTag, send, bytes);
    if (!ok) return false;
  }
  return true;
}

// Every rank's part into |recv| (the world's, or the stage's group's with
// pipeline stages); false once the run has been ended.
bool exchange(strata_rt_context_t* context, const Collective& c,
              const char* import, const float* send, float* recv) {
  return context->parallel.stages > 1
             ? gatherGroup(context, c, import, send, recv)
             : gatherWorld(context, c, import, send, recv);
}

// Runs body(begin, end) over [0, n) in chunks of |grain| items, on the
// pool when there is more than one chunk.
template <typename F>
void chunked(strata_rt_context_t* context, int64_t n, int64_t grain,
             const F& body) {
  if (grain < 1) grain = 1;
  if (n <= grain || loopThreads(context) == 1) {
    body(int64_t{0}, n);
    return;
  }
  const int64_t chunks = (n + grain - 1) / grain;
  parallelFor(context, static_cast<size_t>(chunks), [&](size_t i, uint32_t) {
    const int64_t begin = static_cast<int64_t>(i) * grain;
    body(begin, begin + grain < n ? begin + grain : n);
  });
}

// The scratch of one call: the gathered parts unless they go straight to
// OUT (|gathered| false), then a packed copy of IN unless it is
// contiguous. Sets |*recv| (null when not gathered here) and |*send|;
// false once the run has been ended for want of memory.
bool prepare(strata_rt_context_t* context, const Collective& c,
             bool gathered, float** recv, const float** send) {
  const bool packed = !isContiguous(c.in);
  const uint64_t n = static_cast<uint64_t>(c.count);
  const uint64_t parts = gathered ? n * static_cast<uint64_t>(c.ranks) : 0;
  *recv = nullptr;
  *send = c.in.data;
  if (parts == 0 && !packed) return true;
  float* scratch = scratchFloats(context, parts + (packed ? n : 0));
  if (!scratch) return false;
  if (gathered) *recv = scratch;
  if (packed) {
    packView(c.in, scratch + parts);
    *send = scratch + parts;
  }
  return true;
}

}  // namespace

extern "C" void strataAllReduceF32(strata_rt_context_t* context,
                                   const int64_t* params) {
  Collective c;
  if (!decode(context, params, kAllReduce, /*gather=*/false, &c)) return;
  if (c.count == 0) return;
  float* recv = nullptr;
  const float* send = nullptr;
  if (!prepare(context, c, /*gathered=*/true, &recv, &send)) return;
  if (!exchange(context, c, kAllReduce.import, send, recv)) return;
  // Each element is rank 0's + rank 1's + ... in that order, from the same
  // gathered bytes on every rank: the same bits everywhere.
  const int64_t n = c.count;
  chunked(context, n, kParallelElements, [&](int64_t begin, int64_t end) {
    float* out = c.out;
    std::memcpy(out + begin, recv + begin,
                static_cast<size_t>(end - begin) * sizeof(float));
    for (int64_t r = 1; r < c.ranks; ++r) {
      const float* part = recv + r * n;
      for (int64_t i = begin; i < end; ++i) out[i] += part[i];
    }
  });
}

extern "C" void strataAllGatherF32(strata_rt_context_t* context,
                                   const int64_t* params) {
  Collective c;
  if (!decode(context, params, kAllGather, /*gather=*/true, &c)) return;
  if (c.count == 0) return;
  const int64_t n = c.count;
  int64_t outer = 1;
  for (int d = 0; d < c.axis; ++d) outer *= c.in.sizes[d];
  const int64_t inner = n / outer;
  // With nothing before AXIS, OUT is the ranks' parts back to back: they
  // are gathered into it directly.
  const bool direct = outer == 1;
  float* recv = nullptr;
  const float* send = nullptr;
  if (!prepare(context, c, /*gathered=*/!direct, &recv, &send)) return;
  if (direct) recv = c.out;
  if (!exchange(context, c, kAllGather.import, send, recv)) return;
  if (direct) return;
  // Row o (|inner| elements) of rank r goes to slot r of OUT's row o.
  chunked(context, outer * c.ranks, kParallelElements / inner,
          [&](int64_t begin, int64_t end) {
            for (int64_t k = begin; k < end; ++k) {
              const int64_t o = k / c.ranks;
              const int64_t r = k % c.ranks;
              std::memcpy(c.out + k * inner, recv + r * n + o * inner,
                          static_cast<size_t>(inner) * sizeof(float));
            }
          });
}

}  // namespace strata::runtime::kernels
