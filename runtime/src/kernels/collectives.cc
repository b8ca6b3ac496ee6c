//===- collectives.cc - All-reduce and all-gather of tensor-parallel ranks ===//
// SPDX-License-Identifier: Apache-2.0
// A failure ends the run by a non-local return (run_context.h), so nothing
// here owns memory across a call that can end it: the packed part and the
// gathered parts live in the session's kernel scratch, which the session
// owns. There is no cancel point: a rank that stopped alone would leave the
// others waiting in their exchange.

#include "kernels/collectives.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "run_context.h"
#include "strata/runtime/communicator.h"
#include "strata/runtime/status.h"

namespace strata::runtime::kernels {
namespace {

constexpr int kRank = 4;

// Scratch is asked for in one block; more would be no model's activations.
constexpr uint64_t kMaxScratchBytes = uint64_t{1} << 44;

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
  const float* in = nullptr;
  int64_t sizes[kRank] = {};
  int64_t strides[kRank] = {};
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
  if (c->ranks != c->communicator->size) {
    failRunWithStatus(context, STRATA_STATUS_FAILED_PRECONDITION,
                      "%s: the code was compiled for a tensor-parallel group "
                      "of %" PRId64 " ranks, the session's communicator has "
                      "%" PRIu32,
                      names.import, c->ranks, c->communicator->size);
    return false;
  }
  if (c->ranks < 1) {
    failRunInternal(context, names.ranks, c->ranks);
    return false;
  }
  c->in = reinterpret_cast<const float*>(params[STRATA_COLL_IN]);
  c->out = reinterpret_cast<float*>(params[STRATA_COLL_OUT]);
  uint64_t count = 1;
  for (int d = 0; d < kRank; ++d) {
    c->sizes[d] = params[STRATA_COLL_SIZES + d];
    c->strides[d] = params[STRATA_COLL_STRIDES + d];
    if (c->sizes[d] < 0) {
      failRunInternal(context, names.size, c->sizes[d]);
      return false;
    }
    if (c->strides[d] < 0) {
      failRunInternal(context, names.stride, c->strides[d]);
      return false;
    }
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(c->sizes[d]),
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
      bytes > kMaxScratchBytes) {
    failRunInternal(context, names.count,
                    count > INT64_MAX ? INT64_MAX : static_cast<int64_t>(count));
    return false;
  }
  c->count = static_cast<int64_t>(count);
  if (c->count > 0 && (!c->in || !c->out)) {
    failRunInternal(context, names.pointer, 0);
    return false;
  }
  return true;
}

// Whether IN is contiguous row-major (dims of extent 1 take any stride).
bool contiguous(const Collective& c) {
  int64_t expected = 1;
  for (int d = kRank - 1; d >= 0; --d) {
    if (c.sizes[d] != 1 && c.strides[d] != expected) return false;
    expected *= c.sizes[d];
  }
  return true;
}

// Copies IN, strided, into |to| row-major.
void pack(const Collective& c, float* to) {
  const int64_t* n = c.sizes;
  const int64_t* s = c.strides;
  for (int64_t i0 = 0; i0 < n[0]; ++i0) {
    for (int64_t i1 = 0; i1 < n[1]; ++i1) {
      for (int64_t i2 = 0; i2 < n[2]; ++i2) {
        const float* row = c.in + i0 * s[0] + i1 * s[1] + i2 * s[2];
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

// |floats| floats of the session's kernel scratch; null once the run has
// been ended for want of memory.
float* scratchFloats(strata_rt_context_t* context, uint64_t floats) {
  const uint64_t bytes = floats * sizeof(float);
  size_t stride = 0;
  uint8_t* block = context->scratch
                       ? context->scratch->reserve(1, bytes, &stride)
                       : nullptr;
  if (!block) failRunOutOfMemory(context, bytes);
  return reinterpret_cast<float*>(block);
}

// Every rank's part into |recv|, rank r's at r * count; false once the run
// has been ended because the transport failed.
bool exchange(strata_rt_context_t* context, const Collective& c,
              const char* import, const float* send, float* recv) {
  const strata_communicator_t* comm = c.communicator;
  strata_status_t status = comm->all_gather(
      comm->self, send, recv, static_cast<size_t>(c.count) * sizeof(float));
  if (!status) return true;
  // Copied out: the status is freed before the run ends past this frame.
  char message[256];
  std::snprintf(message, sizeof(message), "%s: %s",
                strata_status_code_string(strata_status_code(status)),
                strata_status_message(status));
  strata_status_free(status);
  failRunWithStatus(context, STRATA_STATUS_UNAVAILABLE,
                    "%s: the communicator's all_gather failed on rank "
                    "%" PRIu32 " of %" PRIu32 ": %s",
                    import, comm->rank, comm->size, message);
  return false;
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
  const bool packed = !contiguous(c);
  const uint64_t n = static_cast<uint64_t>(c.count);
  const uint64_t parts = gathered ? n * static_cast<uint64_t>(c.ranks) : 0;
  *recv = nullptr;
  *send = c.in;
  if (parts == 0 && !packed) return true;
  float* scratch = scratchFloats(context, parts + (packed ? n : 0));
  if (!scratch) return false;
  if (gathered) *recv = scratch;
  if (packed) {
    pack(c, scratch + parts);
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
  for (int d = 0; d < c.axis; ++d) outer *= c.sizes[d];
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
