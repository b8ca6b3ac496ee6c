//===- attention_f32.cc - Attention per head on the matmul tiles ----------===//
// SPDX-License-Identifier: Apache-2.0
// One task per (batch, head). Many query rows (prefill): K^T and V of the
// head are packed once into 32-wide panels, then each block of 64 query rows
// computes its scores against only the keys it can see (a causal block stops
// at its last row's key), turns them into probabilities in place (they stay
// in L2) and multiplies them by V with the same register tiles as the
// matmul. Few rows (decode): each row is streamed against K and V in place.
// Rows whose visible scores are all at the lowest float (or none) take an
// exact scalar path that reproduces strata.attention's definition.

#include "attention_f32.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../run_context.h"
#include "matmul_f32_tiles.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {
namespace {

constexpr int64_t kW = STRATA_PACK_PANEL_WIDTH;
constexpr int64_t kBlockRows = 64;  // query rows per block
constexpr int64_t kKc = 256;        // k block of P x V (a V slice in L1)
constexpr int64_t kRowPathMaxRows = 4;

struct Operand {
  const float* p;
  int64_t sb, sh, ss, sd;  // batch, head, sequence, dim strides
};

struct Problem {
  bool causal, window;
  bool maskHidden;  // STRATA_ATTN_FLAG_MASK_HIDDEN
  int64_t batch, heads, kvHeads, sq, sk, d, dv, windowSize, sinks;
  float scale;
  Operand q, k, v, mask, o;
  // Per batch row: the K/V batch index it reads and its key count (null:
  // row b reads batch b and has sk keys).
  const int64_t* kvSlots;
  const int64_t* kvLengths;
  int64_t kvSlotCount;
};

float lowestFloat() { return -std::numeric_limits<float>::max(); }
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Keys query row i sees: [0, sinkEnd) and [lo, hi] (empty when hi < lo).
struct Visible {
  int64_t sinkEnd, lo, hi;
};

Visible visibleKeys(const Problem& p, int64_t i) {
  const int64_t last = i + p.sk - p.sq;
  Visible v{0, 0, p.sk - 1};
  if (p.causal) v.hi = std::min(v.hi, last);
  if (p.window) {
    v.lo = std::max<int64_t>(0, last - p.windowSize + 1);
    v.sinkEnd = std::max<int64_t>(0, std::min({p.sinks, v.lo, v.hi + 1}));
  }
  return v;
}

bool isVisible(const Visible& v, int64_t j) {
  return j < v.sinkEnd || (j >= v.lo && j <= v.hi);
}

// One pool thread's scratch: regions of one block of the run context's
// kernel scratch, sized for the problem before the loop starts.
struct Scratch {
  float *kPacked, *vPacked, *scores, *q, *out, *exact;
};

// Floats of each region (a multiple of 16, so regions stay 64-byte
// aligned). The row path needs no packed K/V and one row of scores.
struct ScratchSizes {
  int64_t kPacked, vPacked, scores, q, out, exact;
  int64_t total() const { return kPacked + vPacked + scores + q + out + exact; }
};

int64_t roundUp16(int64_t n) { return (std::max<int64_t>(n, 1) + 15) / 16 * 16; }

ScratchSizes scratchSizes(const Problem& p, bool blocked) {
  const int64_t kPanels = ceilDiv(p.sk, kW), vPanels = ceilDiv(p.dv, kW);
  ScratchSizes z;
  z.kPacked = blocked ? roundUp16(kPanels * p.d * kW) : 0;
  z.vPacked = blocked ? roundUp16(vPanels * p.sk * kW) : 0;
  z.scores = roundUp16(blocked ? kBlockRows * kPanels * kW : p.sk);
  z.q = roundUp16(blocked ? kBlockRows * p.d : p.d);
  z.out = roundUp16(p.dv);
  z.exact = roundUp16(p.sk);
  return z;
}

Scratch scratchAt(uint8_t* block, const ScratchSizes& z) {
  float* f = reinterpret_cast<float*>(block);
  Scratch s;
  s.kPacked = f;
  s.vPacked = s.kPacked + z.kPacked;
  s.scores = s.vPacked + z.vPacked;
  s.q = s.scores + z.scores;
  s.out = s.q + z.q;
  s.exact = s.out + z.out;
  return s;
}

// Row i of one head by the definition: every key scored (hidden ones at the
// lowest float, plus the mask with maskHidden), softmax over all of them. For rows the fast path cannot
// take: no visible key, or every visible score at the lowest float.
void exactRow(const Problem& p, const Scratch& s, const float* q,
              const float* k, const float* v, const float* maskRow, int64_t i,
              float* o) {
  if (p.sk == 0) {
    // No keys: the product with V sums nothing.
    for (int64_t c = 0; c < p.dv; ++c) o[c * p.o.sd] = 0.0f;
    return;
  }
  const Visible vis = visibleKeys(p, i);
  float* e = s.exact;
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < p.sk; ++j) {
    float s = lowestFloat();
    if (isVisible(vis, j)) {
      float dot = 0.0f;
      for (int64_t c = 0; c < p.d; ++c)
        dot += q[c * p.q.sd] * k[j * p.k.ss + c * p.k.sd];
      s = dot * p.scale;
      if (maskRow) s += maskRow[j * p.mask.sd];
    } else if (p.maskHidden && maskRow) {
      s += maskRow[j * p.mask.sd];
    }
    e[j] = s;
    best = std::max(best, s);
  }
  float sum = 0.0f;
  for (int64_t j = 0; j < p.sk; ++j) {
    e[j] = std::exp(e[j] - best);
    sum += e[j];
  }
  for (int64_t c = 0; c < p.dv; ++c) {
    float acc = 0.0f;
    for (int64_t j = 0; j < p.sk; ++j) acc += e[j] * v[j * p.v.ss + c * p.v.sd];
    o[c * p.o.sd] = acc / sum;
  }
}

// Raw dot products s[0, ncols) of row i -> unnormalized probabilities (0 for
// hidden keys); their sum in |sum|. False if the row needs exactRow.
bool softmaxRow(const Problem& p, const MatmulTiles& t, float* s,
                int64_t ncols, const Visible& vis, const float* maskRow,
                float* sum) {
  float best = -std::numeric_limits<float>::infinity();
  auto prepare = [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      float x = s[j] * p.scale;
      if (maskRow) x += maskRow[j * p.mask.sd];
      s[j] = x;
      best = x > best ? x : best;
    }
  };
  const int64_t windowEnd = std::max(vis.lo, vis.hi + 1);
  prepare(0, vis.sinkEnd);
  prepare(vis.lo, windowEnd);
  if (!(best > lowestFloat())) return false;
  std::fill(s + vis.sinkEnd, s + vis.lo, 0.0f);
  std::fill(s + windowEnd, s + ncols, 0.0f);
  *sum = t.expShifted(s, vis.sinkEnd, best) +
         t.expShifted(s + vis.lo, windowEnd - vis.lo, best);
  return true;
}

struct Head {
  const float *q, *k, *v, *mask;
  float* o;
};

Head headOf(const Problem& p, int64_t b, int64_t h) {
  const int64_t kvh = h / (p.heads / p.kvHeads);
  const int64_t kvb = p.kvSlots ? p.kvSlots[b] : b;
  Head x;
  x.q = p.q.p + b * p.q.sb + h * p.q.sh;
  x.k = p.k.p + kvb * p.k.sb + kvh * p.k.sh;
  x.v = p.v.p + kvb * p.v.sb + kvh * p.v.sh;
  x.mask = p.mask.p ? p.mask.p + b * p.mask.sb + h * p.mask.sh : nullptr;
  x.o = const_cast<float*>(p.o.p) + b * p.o.sb + h * p.o.sh;
  return x;
}

// Few query rows: each row against K and V where they lie.
void runRows(const Problem& p, const MatmulTiles& t, const Scratch& s,
             const Head& x) {
  for (int64_t i = 0; i < p.sq; ++i) {
    const Visible vis = visibleKeys(p, i);
    const float* qRow = x.q + i * p.q.ss;
    const float* maskRow = x.mask ? x.mask + i * p.mask.ss : nullptr;
    float* oRow = x.o + i * p.o.ss;
    const int64_t ncols = std::min(p.sk, std::max(vis.hi + 1, vis.sinkEnd));
    float sum = 0.0f;
    float* scores = s.scores;
    if (ncols > 0) {
      if (p.q.sd != 1) {
        float* copy = s.q;
        for (int64_t c = 0; c < p.d; ++c) copy[c] = qRow[c * p.q.sd];
        qRow = copy;
      }
      if (p.k.sd == 1) {
        t.rowDotColumns(p.d, ncols, qRow, x.k, p.k.ss, scores, 1, false);
      } else {
        for (int64_t j = 0; j < ncols; ++j) {
          float dot = 0.0f;
          for (int64_t c = 0; c < p.d; ++c)
            dot += qRow[c] * x.k[j * p.k.ss + c * p.k.sd];
          scores[j] = dot;
        }
      }
    }
    if (ncols <= 0 || !softmaxRow(p, t, scores, ncols, vis, maskRow, &sum)) {
      exactRow(p, s, x.q + i * p.q.ss, x.k, x.v, maskRow, i, oRow);
      continue;
    }
    float* out = s.out;
    if (p.v.sd == 1) {
      t.rowTimesRows(ncols, p.dv, scores, 1, x.v, p.v.ss, out, false);
    } else {
      for (int64_t c = 0; c < p.dv; ++c) {
        float acc = 0.0f;
        for (int64_t j = 0; j < ncols; ++j)
          acc += scores[j] * x.v[j * p.v.ss + c * p.v.sd];
        out[c] = acc;
      }
    }
    const float inv = 1.0f / sum;
    for (int64_t c = 0; c < p.dv; ++c) oRow[c * p.o.sd] = out[c] * inv;
  }
}

// Many query rows: packed K^T and V, blocks of kBlockRows rows.
void runBlocks(const Problem& p, const MatmulTiles& t, const Scratch& s,
               const Head& x) {
  const int64_t kPanels = ceilDiv(p.sk, kW), vPanels = ceilDiv(p.dv, kW);
  // K^T panel pk: [d][32 keys]; V panel pv: [key][32 value dims].
  float* kp = s.kPacked;
  for (int64_t pk = 0; pk < kPanels; ++pk)
    for (int64_t c = 0; c < kW; ++c) {
      const int64_t j = pk * kW + c;
      float* dst = kp + pk * p.d * kW + c;
      if (j < p.sk) {
        const float* src = x.k + j * p.k.ss;
        for (int64_t e = 0; e < p.d; ++e) dst[e * kW] = src[e * p.k.sd];
      } else {
        for (int64_t e = 0; e < p.d; ++e) dst[e * kW] = 0.0f;
      }
    }
  float* vp = s.vPacked;
  for (int64_t pv = 0; pv < vPanels; ++pv)
    for (int64_t j = 0; j < p.sk; ++j) {
      const float* src = x.v + j * p.v.ss;
      float* dst = vp + (pv * p.sk + j) * kW;
      for (int64_t c = 0; c < kW; ++c) {
        const int64_t e = pv * kW + c;
        dst[c] = e < p.dv ? src[e * p.v.sd] : 0.0f;
      }
    }

  float inverse[kBlockRows];
  bool exact[kBlockRows];
  float cTile[8 * kW];
  for (int64_t i0 = 0; i0 < p.sq; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, p.sq - i0);
    // Keys the block's rows see lie below its last row's bound.
    const Visible lastRow = visibleKeys(p, i0 + rows - 1);
    const int64_t ncols =
        std::min(p.sk, std::max(lastRow.hi + 1, lastRow.sinkEnd));
    const int64_t panels = ceilDiv(std::max<int64_t>(ncols, 0), kW);
    const int64_t ldS = std::max<int64_t>(panels * kW, 1);
    float* scores = s.scores;
    const float* qBlock = x.q + i0 * p.q.ss;
    int64_t ldq = p.q.ss;
    if (p.q.sd != 1) {
      float* copy = s.q;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < p.d; ++c)
          copy[r * p.d + c] = qBlock[r * p.q.ss + c * p.q.sd];
      qBlock = copy;
      ldq = p.d;
    }
    for (int64_t pk = 0; pk < panels; ++pk)
      for (int64_t r = 0; r < rows; r += t.mr)
        t.tile(std::min(t.mr, rows - r), p.d, qBlock + r * ldq, ldq,
               kp + pk * p.d * kW, scores + r * ldS + pk * kW, ldS, false);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      const float* maskRow = x.mask ? x.mask + i * p.mask.ss : nullptr;
      float sum = 0.0f;
      exact[r] = ncols <= 0 ||
                 !softmaxRow(p, t, scores + r * ldS, ncols, visibleKeys(p, i),
                             maskRow, &sum);
      if (exact[r])
        exactRow(p, s, x.q + i * p.q.ss, x.k, x.v, maskRow, i,
                 x.o + i * p.o.ss);
      else
        inverse[r] = 1.0f / sum;
    }
    if (ncols <= 0) continue;
    for (int64_t pv = 0; pv < vPanels; ++pv) {
      const int64_t cols = std::min(kW, p.dv - pv * kW);
      for (int64_t r = 0; r < rows; r += t.mr) {
        const int64_t tileRows = std::min(t.mr, rows - r);
        for (int64_t k0 = 0; k0 < ncols; k0 += kKc)
          t.tile(tileRows, std::min(kKc, ncols - k0),
                 scores + r * ldS + k0, ldS, vp + (pv * p.sk + k0) * kW,
                 cTile, kW, k0 > 0);
        for (int64_t rr = 0; rr < tileRows; ++rr) {
          if (exact[r + rr]) continue;
          float* oRow = x.o + (i0 + r + rr) * p.o.ss + pv * kW * p.o.sd;
          for (int64_t c = 0; c < cols; ++c)
            oRow[c * p.o.sd] = cTile[rr * kW + c] * inverse[r + rr];
        }
      }
    }
  }
}

Operand operandAt(const int64_t* params, int64_t slot) {
  return {reinterpret_cast<const float*>(static_cast<intptr_t>(params[slot])),
          params[slot + 1], params[slot + 2], params[slot + 3],
          params[slot + 4]};
}

}  // namespace

extern "C" void strataAttentionF32(strata_rt_context_t* context,
                                   const int64_t* params) {
  pollCancel(context);  // before any object: a cancel skips this frame
  Problem p;
  const int64_t flags = params[STRATA_ATTN_FLAGS];
  p.causal = (flags & STRATA_ATTN_FLAG_CAUSAL) != 0;
  p.window = (flags & STRATA_ATTN_FLAG_WINDOW) != 0;
  p.maskHidden = (flags & STRATA_ATTN_FLAG_MASK_HIDDEN) != 0;
  p.batch = params[STRATA_ATTN_BATCH];
  p.heads = params[STRATA_ATTN_HEADS];
  p.kvHeads = params[STRATA_ATTN_KV_HEADS];
  p.sq = params[STRATA_ATTN_SQ];
  p.sk = params[STRATA_ATTN_SK];
  p.d = params[STRATA_ATTN_HEAD_DIM];
  p.dv = params[STRATA_ATTN_VALUE_DIM];
  const uint32_t scaleBits =
      static_cast<uint32_t>(params[STRATA_ATTN_SCALE] & 0xffffffff);
  static_assert(sizeof(float) == sizeof(uint32_t), "fp32 scale bits");
  __builtin_memcpy(&p.scale, &scaleBits, sizeof(float));
  p.windowSize = params[STRATA_ATTN_WINDOW];
  p.sinks = params[STRATA_ATTN_SINKS];
  p.q = operandAt(params, STRATA_ATTN_Q);
  p.k = operandAt(params, STRATA_ATTN_K);
  p.v = operandAt(params, STRATA_ATTN_V);
  p.mask = operandAt(params, STRATA_ATTN_MASK);
  p.o = operandAt(params, STRATA_ATTN_O);
  p.kvSlots = reinterpret_cast<const int64_t*>(
      static_cast<intptr_t>(params[STRATA_ATTN_KV_SLOTS]));
  p.kvSlotCount = params[STRATA_ATTN_KV_SLOT_COUNT];
  p.kvLengths = reinterpret_cast<const int64_t*>(
      static_cast<intptr_t>(params[STRATA_ATTN_KV_LENGTHS]));
  // Shapes come from verified IR (heads a multiple of kv heads); an empty
  // problem has nothing to write.
  if (p.batch <= 0 || p.heads <= 0 || p.kvHeads <= 0 || p.sq <= 0 ||
      p.dv <= 0 || p.heads % p.kvHeads != 0)
    return;
  p.sk = std::max<int64_t>(p.sk, 0);
  p.d = std::max<int64_t>(p.d, 0);
  // Slots and lengths come from inputs the generated code checked; values
  // outside their ranges mean the code was not generated for this kernel.
  for (int64_t b = 0; b < p.batch; ++b) {
    if (p.kvSlots && (p.kvSlots[b] < 0 || p.kvSlots[b] >= p.kvSlotCount)) {
      failRunInternal(context, "strata_rt_attention_f32: KV slot",
                      p.kvSlots[b]);
      return;
    }
    if (p.kvLengths && (p.kvLengths[b] < 0 || p.kvLengths[b] > p.sk)) {
      failRunInternal(context, "strata_rt_attention_f32: KV length",
                      p.kvLengths[b]);
      return;
    }
  }
  const MatmulTiles& t = matmulTiles();
  const bool blocked = p.sq > kRowPathMaxRows && p.sk > 0;
  const ScratchSizes sizes = scratchSizes(p, blocked);
  size_t stride = 0;
  uint8_t* scratch = kernelScratch(
      context, static_cast<size_t>(sizes.total()) * sizeof(float), &stride);
  if (!scratch) return;
  parallelFor(context, static_cast<size_t>(p.batch * p.heads),
              [&](size_t task, uint32_t thread) {
    const int64_t b = static_cast<int64_t>(task) / p.heads;
    const int64_t h = static_cast<int64_t>(task) % p.heads;
    const Head x = headOf(p, b, h);
    const Scratch s = scratchAt(scratch + thread * stride, sizes);
    // The row's own key count (at most sk, so the scratch fits it).
    Problem row = p;
    if (p.kvLengths) row.sk = p.kvLengths[b];
    if (blocked && row.sk > 0)
      runBlocks(row, t, s, x);
    else
      runRows(row, t, s, x);
  });
}

}  // namespace strata::runtime::kernels
