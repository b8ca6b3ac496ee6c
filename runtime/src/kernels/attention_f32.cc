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
// strata_rt_attention_kv runs the same code over a bf16 or int8 K/V cache:
// decode rows widen it in registers (attention_kv_kernels.h), prefill
// blocks dequantize it while packing the panels they pack anyway.

#include "attention_f32.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "../run_context.h"
#include "amx.h"
#include "attention_amx.h"
#include "attention_bf16.h"
#include "attention_kv_kernels.h"
#include "matmul_f32.h"
#include "matmul_f32_tiles.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {
namespace {

constexpr int64_t kW = STRATA_PACK_PANEL_WIDTH;
constexpr int64_t kBlockRows = 64;  // query rows per block
constexpr int64_t kKc = 256;        // k block of P x V (a V slice in L1)
// Sinks up to this many are scored row by row in a windowed block.
constexpr int64_t kSinkDotKeys = 8;
constexpr int64_t kRowPathMaxRows = 4;
// How many times more keys a block of rows may read through tiles than its
// rows see one by one, before they go one by one (global blocks).
constexpr int64_t kTileAdvantage = 4;

struct Operand {
  const float* p;
  int64_t sb, sh, ss, sd;  // batch, head, sequence, dim strides
};

// Element type of K and V (strata_rt_attention_kv's KV_DTYPE).
enum class KvType { kF32, kI8, kBf16 };

// K or V: elements of the problem's KvType, strides in elements; int8 adds
// one fp32 scale per (batch, head, position), strides in floats.
struct KvOperand {
  const uint8_t* p;
  int64_t sb, sh, ss, sd;
  const float* scales;
  int64_t scb, sch, scs;
};

struct Problem {
  bool causal, window;
  bool maskHidden;    // STRATA_ATTN_FLAG_MASK_HIDDEN
  bool bf16Products;  // STRATA_ATTN_FLAG_BF16_PRODUCTS
  int64_t batch, heads, kvHeads, sq, sk, d, dv, windowSize, sinks;
  float scale;
  Operand q, mask, o;
  KvType kvType;
  int64_t kvBytes;  // bytes of one K/V element
  KvOperand k, v;
  const AttentionKvKernels* kvKernels;
  // Per batch row: the K/V batch index it reads and its key count (null:
  // row b reads batch b and has sk keys).
  const int64_t* kvSlots;
  const int64_t* kvLengths;
  int64_t kvSlotCount;
  // A ring-buffer cache (strata_rt_attention_ring): positions below
  // ringKept in place, the later ones cycling through rows [ringKept,
  // ringRows). ringRows 0: position j is row j.
  int64_t ringKept, ringRows;
  // A paged cache (strata_rt_attention_paged): position j of batch row b
  // in block blockTable[b * blocksPerRow + j / blockSize], at j %
  // blockSize of it. blockSize 0: not paged (a row's rows are its slot's).
  const int64_t* blockTable;
  int64_t blocksPerRow, blockSize, blockCount;
  // log2(blockSize) when it is a power of two, else -1: a decode row meets
  // a block end every few keys, and a division there costs more than the
  // shift.
  int blockShift;
  // Keys no query row sees, between the sinks' panels and the first row's
  // window, dropped from view (dropKeysBeforeWindow): key j >= gapAt is
  // position j + gap. gap 0: key j is position j.
  int64_t gapAt, gap;
  // Top-k global blocks (strata_rt_attention_global): each query row also
  // sees the globalTopk candidate blocks of globalBlock keys it scores
  // highest. 0: none.
  int64_t globalTopk, globalBlock;
  // Append (strata_rt_attention_append): rows from |past| on are those of
  // kNew/vNew, and every row is also written to kPresent/vPresent. past
  // -1: none.
  int64_t past;
  KvOperand kNew, vNew;
  Operand kPresent, vPresent;
};

float lowestFloat() { return -std::numeric_limits<float>::max(); }
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The position of key j (past a dropped gap) and the row of K and V
// holding it.
int64_t kvPosition(const Problem& p, int64_t j) {
  return p.gap != 0 && j >= p.gapAt ? j + p.gap : j;
}
int64_t kvIndex(const Problem& p, int64_t j) {
  j = kvPosition(p, j);
  if (p.ringRows == 0 || j < p.ringKept) return j;
  return p.ringKept + (j - p.ringKept) % (p.ringRows - p.ringKept);
}

// The end of the keys from j on (before j1) that lie in consecutive rows
// of one slot: j1, or where a dropped gap, the kept rows or the ring end.
int64_t slotRunEnd(const Problem& p, int64_t j, int64_t j1) {
  if (p.gap != 0 && j < p.gapAt) j1 = std::min(j1, p.gapAt);
  if (p.past >= 0) {
    const int64_t position = kvPosition(p, j);
    if (position < p.past) j1 = std::min(j1, j + p.past - position);
  }
  if (p.ringRows == 0) return j1;
  const int64_t shift = kvPosition(p, j) - j;
  const int64_t position = j + shift;
  if (position < p.ringKept) return std::min(j1, p.ringKept - shift);
  const int64_t ring = p.ringRows - p.ringKept;
  return std::min(j1, j + ring - (position - p.ringKept) % ring);
}

// A paged cache's block of position r (its index in the row's table) and
// r's position in it.
int64_t blockIndex(const Problem& p, int64_t r) {
  return p.blockShift >= 0 ? r >> p.blockShift : r / p.blockSize;
}
int64_t positionInBlock(const Problem& p, int64_t r) {
  return p.blockShift >= 0 ? r & (p.blockSize - 1) : r % p.blockSize;
}

// slotRunEnd, also ending at a paged cache's block boundary.
int64_t kvRunEnd(const Problem& p, int64_t j, int64_t j1) {
  j1 = slotRunEnd(p, j, j1);
  if (p.blockSize == 0) return j1;
  return std::min(j1, j + p.blockSize - positionInBlock(p, kvIndex(p, j)));
}

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

// The global blocks one query row chose: blocks [first, end) of |block|
// keys, block c taken when chosen[c] != 0. end == first: none.
struct GlobalPick {
  const float* chosen;
  int64_t first, end, block;
  bool has(int64_t j) const {
    const int64_t c = end > first ? j / block : -1;
    return c >= first && c < end && chosen[c] != 0.0f;
  }
};

// One pool thread's scratch: regions of one block of the run context's
// kernel scratch, sized for the problem before the loop starts. The bf16
// blocks use the bf16 regions (attention_bf16.h's layouts) instead of the
// fp32 packed K and V.
struct Scratch {
  float *kPacked, *vPacked, *scores, *q, *out, *exact, *kvRow, *part;
  // Global blocks: each block's key sum ([blocks][d]), a row's block
  // scores, and which blocks it chose (nonzero).
  float *blockSums, *blockScores, *chosen, *scoredPanels;
  uint16_t *keyPairs, *valuePairs, *qRows, *probRows;
  float* outTile;
  // A paged cache: one range's runs of V rows (valueSums).
  KvRun* kvRuns;
};

// Floats of each region (a multiple of 16, so regions stay 64-byte
// aligned). The row path needs no packed K/V and one row of scores.
struct ScratchSizes {
  int64_t kPacked, vPacked, scores, q, out, exact, kvRow, part;
  int64_t blockSums, blockScores, chosen, scoredPanels;
  int64_t keyPairs, valuePairs, qRows, probRows, outTile, kvRuns;
  int64_t total() const {
    return kPacked + vPacked + scores + q + out + exact + kvRow + part +
           blockSums + blockScores + chosen + scoredPanels + keyPairs +
           valuePairs + qRows + probRows + outTile + kvRuns;
  }
};

int64_t roundUp16(int64_t n) { return (std::max<int64_t>(n, 1) + 15) / 16 * 16; }

ScratchSizes scratchSizes(const Problem& p, bool blocked, bool bf16) {
  const int64_t kPanels = ceilDiv(p.sk, kW), vPanels = ceilDiv(p.dv, kW);
  ScratchSizes z;
  const bool fp32Blocks = blocked && !bf16;
  z.kPacked = fp32Blocks ? roundUp16(kPanels * p.d * kW) : 0;
  z.vPacked = fp32Blocks ? roundUp16(vPanels * p.sk * kW) : 0;
  // bf16 regions: two elements a float.
  const int64_t dp = bf16RoundUp32(p.d), skp = bf16RoundUp32(p.sk);
  z.keyPairs = bf16 ? roundUp16(skp * dp / 2) : 0;
  z.valuePairs = bf16 ? roundUp16(bf16RoundUp32(p.dv) * skp / 2) : 0;
  z.qRows = bf16 ? roundUp16(kBlockRows * dp / 2) : 0;
  z.probRows = bf16 ? roundUp16(kBlockRows * skp / 2) : 0;
  z.outTile = bf16 ? roundUp16(kBlockRows * kW) : 0;
  z.scores = roundUp16(blocked ? kBlockRows * kPanels * kW : p.sk);
  z.q = roundUp16(blocked ? kBlockRows * p.d : p.d);
  z.out = roundUp16(p.dv);
  z.exact = roundUp16(std::max(p.sk, p.dv));  // also the sinks' sums
  z.kvRow = roundUp16(std::max(p.d, p.dv));
  // A range read in runs (a ring's wrap, a paged cache's blocks) sums its
  // later runs here.
  z.part = roundUp16(p.dv);
  const int64_t blocks = p.globalTopk > 0 ? p.sk / p.globalBlock : 0;
  z.blockSums = blocks > 0 ? roundUp16(blocks * p.d) : 0;
  // Blocks of rows: each row's choice, then which any row chose.
  z.blockScores = blocks > 0 ? roundUp16(blocks) : 0;
  z.chosen = blocks > 0 ? roundUp16((blocked ? kBlockRows + 1 : 1) * blocks)
                        : 0;
  z.scoredPanels = p.globalTopk > 0 && blocked ? roundUp16(kPanels) : 0;
  // A range of keys spans at most this many blocks, a slot's one run
  // (KvRun: 8 floats).
  static_assert(sizeof(KvRun) == 8 * sizeof(float), "KvRun in floats");
  z.kvRuns = roundUp16(
      (p.blockSize > 0 ? ceilDiv(p.sk, p.blockSize) + 2 : 1) * 8);
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
  s.kvRow = s.exact + z.exact;
  s.part = s.kvRow + z.kvRow;
  s.blockSums = s.part + z.part;
  s.blockScores = s.blockSums + z.blockSums;
  s.chosen = s.blockScores + z.blockScores;
  s.scoredPanels = s.chosen + z.chosen;
  float* next = s.scoredPanels + z.scoredPanels;
  auto bf16Region = [&](int64_t floats) {
    uint16_t* region = reinterpret_cast<uint16_t*>(next);
    next += floats;
    return region;
  };
  s.keyPairs = bf16Region(z.keyPairs);
  s.valuePairs = bf16Region(z.valuePairs);
  s.qRows = bf16Region(z.qRows);
  s.probRows = bf16Region(z.probRows);
  s.outTile = next;
  s.kvRuns = reinterpret_cast<KvRun*>(s.outTile + z.outTile);
  return s;
}

// One head's K or V: its first element and, for int8, its first scale;
// with an append, also the first element of its new rows.
struct KvRows {
  const uint8_t* p;
  const float* scales;
  const uint8_t* newRows = nullptr;
  // A paged cache: the row's block table (p and scales are then block 0's
  // rows of the head).
  const int64_t* blocks = nullptr;
};

// Row r of one head's K or V where it lies (its part's strides).
struct KvRow {
  const uint8_t* p;
  const float* scales;
  int64_t ss, sd;
};

KvRow kvRow(const Problem& p, const KvOperand& o, const KvOperand& added,
            const KvRows& x, int64_t r) {
  if (x.newRows && r >= p.past)
    return {x.newRows + (r - p.past) * added.ss * p.kvBytes, nullptr,
            added.ss, added.sd};
  if (x.blocks) {
    const int64_t block = x.blocks[blockIndex(p, r)];
    const int64_t at = positionInBlock(p, r);
    return {x.p + (block * o.sb + at * o.ss) * p.kvBytes,
            x.scales ? x.scales + block * o.scb + at * o.scs : nullptr, o.ss,
            o.sd};
  }
  return {x.p + r * o.ss * p.kvBytes, x.scales ? x.scales + r * o.scs
                                               : nullptr,
          o.ss, o.sd};
}

struct Head {
  const float *q, *mask;
  KvRows k, v;
  float* o;
};

// Values [e0, e0 + n) of position j of one head's K or V, widened and
// dequantized to fp32: dst[i * dstStride]. The element type is switched
// on once per row.
void loadKvRow(const Problem& p, const KvOperand& o, const KvOperand& added,
               const KvRows& x, int64_t j, int64_t e0, int64_t n, float* dst,
               int64_t dstStride) {
  const KvRow at = kvRow(p, o, added, x, kvIndex(p, j));
  const uint8_t* row = at.p + e0 * at.sd * p.kvBytes;
  switch (p.kvType) {
    case KvType::kF32: {
      const float* src = reinterpret_cast<const float*>(row);
      if (at.sd == 1 && dstStride == 1) {
        std::memcpy(dst, src, n * sizeof(float));
        break;
      }
      for (int64_t i = 0; i < n; ++i) dst[i * dstStride] = src[i * at.sd];
      break;
    }
    case KvType::kI8: {
      const int8_t* src = reinterpret_cast<const int8_t*>(row);
      const float scale = *at.scales;
      for (int64_t i = 0; i < n; ++i)
        dst[i * dstStride] = static_cast<float>(src[i * at.sd]) * scale;
      break;
    }
    case KvType::kBf16: {
      const uint16_t* src = reinterpret_cast<const uint16_t*>(row);
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t bits = static_cast<uint32_t>(src[i * at.sd]) << 16;
        __builtin_memcpy(dst + i * dstStride, &bits, sizeof(float));
      }
      break;
    }
  }
}

// Row i of one head by the definition: every key scored (hidden ones at the
// lowest float, plus the mask with maskHidden), softmax over all of them.
// For rows the fast path cannot take: no visible key, or every visible
// score at the lowest float.
void exactRow(const Problem& p, const Scratch& s, const float* q,
              const Head& x, const float* maskRow, int64_t i, float* o,
              const GlobalPick& pick = {nullptr, 0, 0, 1}) {
  if (p.sk == 0) {
    // No keys: the product with V sums nothing.
    for (int64_t c = 0; c < p.dv; ++c) o[c * p.o.sd] = 0.0f;
    return;
  }
  const Visible vis = visibleKeys(p, i);
  float* e = s.exact;
  float* row = s.kvRow;
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < p.sk; ++j) {
    float s = lowestFloat();
    if (isVisible(vis, j) || pick.has(j)) {
      loadKvRow(p, p.k, p.kNew, x.k, j, 0, p.d, row, 1);
      float dot = 0.0f;
      for (int64_t c = 0; c < p.d; ++c) dot += q[c * p.q.sd] * row[c];
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
  // Key by key (each output's sum still runs over j in order).
  float* acc = s.out;
  std::fill(acc, acc + p.dv, 0.0f);
  for (int64_t j = 0; j < p.sk; ++j) {
    loadKvRow(p, p.v, p.vNew, x.v, j, 0, p.dv, row, 1);
    for (int64_t c = 0; c < p.dv; ++c) acc[c] += e[j] * row[c];
  }
  for (int64_t c = 0; c < p.dv; ++c) o[c * p.o.sd] = acc[c] / sum;
}

// Scores [j0, j1) of a row scaled and masked in place; |best| raised to
// their maximum.
void scaleAndMask(const Problem& p, const MatmulTiles& t, float* s,
                  const float* maskRow, int64_t j0, int64_t j1, float* best) {
  if (j1 <= j0) return;
  if (!maskRow || p.mask.sd == 1) {
    const float top = t.scaleMax(s + j0, j1 - j0, p.scale,
                                 maskRow ? maskRow + j0 : nullptr);
    *best = top > *best ? top : *best;
    return;
  }
  for (int64_t j = j0; j < j1; ++j) {
    float x = s[j] * p.scale;
    if (maskRow) x += maskRow[j * p.mask.sd];
    s[j] = x;
    *best = x > *best ? x : *best;
  }
}

// The probabilities of a row's visible keys in place (unnormalized; their
// sum in |sum|), and zeros for the hidden keys the value product reads:
// those in [0, sinkKeys) and [windowKeys, ncols), the rest left as they are
// (a window's row is not charged for the whole context). False when no
// visible key scores above the lowest float.
bool softmaxRow(const Problem& p, const MatmulTiles& t, float* s,
                int64_t ncols, const Visible& vis, const float* maskRow,
                int64_t sinkKeys, int64_t windowKeys, float* sum) {
  float best = -std::numeric_limits<float>::infinity();
  auto prepare = [&](int64_t j0, int64_t j1) {
    scaleAndMask(p, t, s, maskRow, j0, j1, &best);
  };
  const int64_t windowEnd = std::max(vis.lo, vis.hi + 1);
  prepare(0, vis.sinkEnd);
  prepare(vis.lo, windowEnd);
  if (!(best > lowestFloat())) return false;
  auto zero = [&](int64_t from, int64_t to) {
    if (to > from) std::fill(s + from, s + to, 0.0f);
  };
  // Hidden: [sinkEnd, lo) and [windowEnd, ncols); each met with the two
  // ranges read.
  zero(vis.sinkEnd, std::min(vis.lo, sinkKeys));
  zero(std::max(vis.sinkEnd, windowKeys), vis.lo);
  zero(windowEnd, std::min(ncols, sinkKeys));
  zero(std::max(windowEnd, windowKeys), ncols);
  *sum = t.expShifted(s, vis.sinkEnd, best) +
         t.expShifted(s + vis.lo, windowEnd - vis.lo, best);
  return true;
}

Head headOf(const Problem& p, int64_t b, int64_t h) {
  const int64_t kvh = h / (p.heads / p.kvHeads);
  // A paged row's blocks are found row by row (kvRow): block 0 here.
  const int64_t kvb = p.blockSize ? 0 : p.kvSlots ? p.kvSlots[b] : b;
  const int64_t* blocks =
      p.blockSize ? p.blockTable + b * p.blocksPerRow : nullptr;
  const auto rows = [&](const KvOperand& o) {
    return KvRows{o.p + (kvb * o.sb + kvh * o.sh) * p.kvBytes,
                  o.scales ? o.scales + kvb * o.scb + kvh * o.sch : nullptr,
                  nullptr, blocks};
  };
  Head x;
  x.q = p.q.p + b * p.q.sb + h * p.q.sh;
  x.k = rows(p.k);
  x.v = rows(p.v);
  if (p.past >= 0 && p.sk > p.past) {
    x.k.newRows = rows(p.kNew).p;
    x.v.newRows = rows(p.vNew).p;
  }
  x.mask = p.mask.p ? p.mask.p + b * p.mask.sb + h * p.mask.sh : nullptr;
  x.o = const_cast<float*>(p.o.p) + b * p.o.sb + h * p.o.sh;
  return x;
}

// keyDots over keys in consecutive rows.
void keyDotsRun(const Problem& p, const MatmulTiles& t, const Scratch& s,
                const Head& x, const float* q, int64_t j0, int64_t j1,
                float* scores) {
  if (j1 <= j0) return;
  // The run's first row (its rows are consecutive up to kvRunEnd).
  const KvRow k = kvRow(p, p.k, p.kNew, x.k, kvIndex(p, j0));
  const int64_t n = j1 - j0;
  scores += j0;
  if (k.sd == 1) {
    switch (p.kvType) {
      case KvType::kF32:
        return t.rowDotColumns(p.d, n, q, reinterpret_cast<const float*>(k.p),
                               k.ss, scores, 1, false);
      case KvType::kI8:
        return p.kvKernels->dotI8(p.d, n, q,
                                  reinterpret_cast<const int8_t*>(k.p), k.ss,
                                  k.scales, p.k.scs, scores);
      case KvType::kBf16:
        return p.kvKernels->dotBf16(p.d, n, q,
                                    reinterpret_cast<const uint16_t*>(k.p),
                                    k.ss, scores);
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    loadKvRow(p, p.k, p.kNew, x.k, j0 + j, 0, p.d, s.kvRow, 1);
    float dot = 0.0f;
    for (int64_t c = 0; c < p.d; ++c) dot += q[c] * s.kvRow[c];
    scores[j] = dot;
  }
}

// Whether one head's K or V rows lie where a walk finds them by position
// alone: in a slot (position j at row j) or a paged cache's blocks, with
// no dropped gap, ring or appended rows, and unit element stride.
bool plainRows(const Problem& p, const KvOperand& o) {
  return p.gap == 0 && p.ringRows == 0 && p.past < 0 && o.sd == 1;
}

// A plainRows walk over [j0, j1) in runs of consecutive rows: fn(j, end,
// rows, scales), |rows| the first row's elements and |scales| its int8
// scale (null otherwise); a paged cache's block by block, a slot's as one
// run. Straight from the position: kvRunEnd and kvRow cost as much as a
// block's 16 rows where gaps, rings and appends may apply. False (nothing
// called) for any other walk.
template <typename Fn>
bool forPlainRuns(const Problem& p, const KvOperand& o, const KvRows& x,
                  int64_t j0, int64_t j1, Fn&& fn) {
  if (!plainRows(p, o)) return false;
  for (int64_t j = j0; j < j1;) {
    const int64_t end =
        x.blocks ? std::min(j1, j + p.blockSize - positionInBlock(p, j)) : j1;
    // A plain walk has no appended rows: |o| stands in for them.
    const KvRow row = kvRow(p, o, o, x, j);
    fn(j, end, row.p, row.scales);
    j = end;
  }
  return true;
}

// The kernels of a walk's runs: the import's, or for the fp32 import (no
// KV kernels of its own) the same set, so that an fp32 cache gives the
// same bits through either import.
const AttentionKvKernels& runKernels(const Problem& p) {
  return p.kvKernels ? *p.kvKernels : attentionKvKernels();
}

// scores[j] = q . K row j for j in [j0, j1) (int8: times the row's scale),
// with unit-stride rows read where they lie (a ring's range in two runs, a
// paged cache's in blocks).
void keyDots(const Problem& p, const MatmulTiles& t, const Scratch& s,
             const Head& x, const float* q, int64_t j0, int64_t j1,
             float* scores, bool fetchAhead = false) {
  // A plain walk's runs (a paged cache's blocks, a slot's rows) in one
  // call, which also fetches them ahead (RunsAhead in attention_kv_impl.h).
  int64_t runs = 0;
  KeyRun* keyRuns = reinterpret_cast<KeyRun*>(s.kvRuns);
  if (forPlainRuns(p, p.k, x.k, j0, j1,
                   [&](int64_t j, int64_t end, const uint8_t* rows,
                       const float* scales) {
                     keyRuns[runs++] = KeyRun{rows, scales, scores + j, end - j};
                   })) {
    const AttentionKvKernels& kv = runKernels(p);
    switch (p.kvType) {
      case KvType::kF32:
        return kv.dotRunsF32(runs, keyRuns, p.d, q, p.k.ss, fetchAhead);
      case KvType::kI8:
        return kv.dotRunsI8(runs, keyRuns, p.d, q, p.k.ss, p.k.scs,
                            fetchAhead);
      case KvType::kBf16:
        return kv.dotRunsBf16(runs, keyRuns, p.d, q, p.k.ss, fetchAhead);
    }
  }
  for (int64_t j = j0; j < j1;) {
    const int64_t end = kvRunEnd(p, j, j1);
    keyDotsRun(p, t, s, x, q, j, end, scores);
    j = end;
  }
}

// valueSums over keys in consecutive rows; with |add|, added to |out|
// (an fp32 run straight into it, others through s.part).
void valueSumsRun(const Problem& p, const MatmulTiles& t, const Scratch& s,
                  const Head& x, const float* probs, int64_t j0, int64_t j1,
                  float* out, bool add) {
  const KvRow v = kvRow(p, p.v, p.vNew, x.v, kvIndex(p, j0));
  const int64_t n = std::max<int64_t>(j1 - j0, 0);
  probs += j0;
  if (v.sd == 1 && p.kvType == KvType::kF32)
    return t.rowTimesRows(n, p.dv, probs, 1,
                          reinterpret_cast<const float*>(v.p), v.ss, out, add);
  float* sum = add ? s.part : out;
  if (v.sd == 1 && p.kvType == KvType::kI8) {
    p.kvKernels->axpyI8(n, p.dv, probs, reinterpret_cast<const int8_t*>(v.p),
                        v.ss, v.scales, p.v.scs, sum);
  } else if (v.sd == 1 && p.kvType == KvType::kBf16) {
    p.kvKernels->axpyBf16(n, p.dv, probs,
                          reinterpret_cast<const uint16_t*>(v.p), v.ss, sum);
  } else {
    std::fill(sum, sum + p.dv, 0.0f);
    for (int64_t j = 0; j < n; ++j) {
      loadKvRow(p, p.v, p.vNew, x.v, j0 + j, 0, p.dv, s.kvRow, 1);
      for (int64_t c = 0; c < p.dv; ++c) sum[c] += probs[j] * s.kvRow[c];
    }
  }
  if (add)
    for (int64_t c = 0; c < p.dv; ++c) out[c] += sum[c];
}

// out[0, dv) = sum_j probs[j] * V row j over j in [j0, j1) (int8: each
// row's scale folded into its probability), run by run of consecutive rows
// (a ring's wrap, a paged cache's blocks).
void valueSums(const Problem& p, const MatmulTiles& t, const Scratch& s,
               const Head& x, const float* probs, int64_t j0, int64_t j1,
               float* out, bool fetchAhead = false) {
  // A paged cache's blocks in one call that keeps its sums in registers
  // (a call per block reloads them, and costs as much as a block's rows), a
  // slot's rows as one run: the same sums in the same order (with blocks of
  // an even size: the kernel pairs even and odd rows), so a row's output
  // has the same bits from either cache, whichever head of a task fetches
  // ahead, and through the fp32 import (no KV kernels of its own), which
  // takes the same kernels.
  const AttentionKvKernels* kv = &runKernels(p);
  int64_t runs = 0;
  if (forPlainRuns(p, p.v, x.v, j0, j1,
                   [&](int64_t j, int64_t end, const uint8_t* rows,
                       const float* scales) {
                     s.kvRuns[runs++] = KvRun{rows, scales, probs + j, end - j};
                   })) {
    switch (p.kvType) {
      case KvType::kF32:
        return kv->axpyRunsF32(runs, s.kvRuns, p.dv, p.v.ss, out, fetchAhead);
      case KvType::kI8:
        return kv->axpyRunsI8(runs, s.kvRuns, p.dv, p.v.ss, p.v.scs, out,
                              fetchAhead);
      case KvType::kBf16:
        return kv->axpyRunsBf16(runs, s.kvRuns, p.dv, p.v.ss, out,
                                fetchAhead);
    }
  }
  for (int64_t j = j0; j < j1;) {
    const int64_t end = kvRunEnd(p, j, j1);
    valueSumsRun(p, t, s, x, probs, j, end, out, j > j0);
    j = end;
  }
}

// Few query rows: each row against K and V where they lie. The first row
// of the first head of a task pulls the rows ahead of its reads
// (RunsAhead); later rows and heads sharing the K/V head find them in this
// core's cache.
void runRows(const Problem& p, const MatmulTiles& t, const Scratch& s,
             const Head& x, bool firstHead) {
  for (int64_t i = 0; i < p.sq; ++i) {
    const bool fetchAhead = firstHead && i == 0;
    const Visible vis = visibleKeys(p, i);
    const float* qRow = x.q + i * p.q.ss;
    const float* maskRow = x.mask ? x.mask + i * p.mask.ss : nullptr;
    float* oRow = x.o + i * p.o.ss;
    const int64_t ncols = std::min(p.sk, std::max(vis.hi + 1, vis.sinkEnd));
    const int64_t windowEnd = std::min(ncols, std::max(vis.lo, vis.hi + 1));
    float sum = 0.0f;
    float* scores = s.scores;
    if (ncols > 0) {
      if (p.q.sd != 1) {
        float* copy = s.q;
        for (int64_t c = 0; c < p.d; ++c) copy[c] = qRow[c * p.q.sd];
        qRow = copy;
      }
      // Only the visible keys: the sinks and the window (a window makes
      // the row's cost its width, not the context).
      keyDots(p, t, s, x, qRow, 0, vis.sinkEnd, scores);
      keyDots(p, t, s, x, qRow, vis.lo, windowEnd, scores, fetchAhead);
    }
    // The value sums below read the sinks and the window only.
    if (ncols <= 0 || !softmaxRow(p, t, scores, ncols, vis, maskRow,
                                  vis.sinkEnd, vis.lo, &sum)) {
      exactRow(p, s, x.q + i * p.q.ss, x, maskRow, i, oRow);
      continue;
    }
    float* out = s.out;
    if (windowEnd > vis.lo)
      valueSums(p, t, s, x, scores, vis.lo, windowEnd, out, fetchAhead);
    else
      std::fill(out, out + p.dv, 0.0f);
    if (vis.sinkEnd > 0) {
      float* sinks = s.exact;
      valueSums(p, t, s, x, scores, 0, vis.sinkEnd, sinks);
      for (int64_t c = 0; c < p.dv; ++c) out[c] += sinks[c];
    }
    const float inv = 1.0f / sum;
    for (int64_t c = 0; c < p.dv; ++c) oRow[c * p.o.sd] = out[c] * inv;
  }
}

// The key sum of every block a query row of this head may choose (those
// before the last row's window), in s.blockSums: each block's keys added
// in order, dequantized.
void sumKeyBlocks(const Problem& p, const Scratch& s, const Head& x) {
  const int64_t block = p.globalBlock;
  const int64_t blocks = visibleKeys(p, p.sq - 1).lo / block;
  for (int64_t c = 0; c < blocks; ++c) {
    float* sum = s.blockSums + c * p.d;
    std::fill(sum, sum + p.d, 0.0f);
    for (int64_t j = c * block; j < (c + 1) * block; ++j) {
      loadKvRow(p, p.k, p.kNew, x.k, j, 0, p.d, s.kvRow, 1);
      for (int64_t e = 0; e < p.d; ++e) sum[e] += s.kvRow[e];
    }
  }
}

// Query row i's global blocks: the candidates (wholly before its window,
// not wholly among its sinks) scored by q . key sum, the globalTopk
// highest taken (ties to the lower block; a NaN score is never taken).
GlobalPick chooseBlocks(const Problem& p, const MatmulTiles& t,
                        const Scratch& s, const float* q, const Visible& vis,
                        float* chosen) {
  const int64_t block = p.globalBlock;
  GlobalPick pick{chosen, 0, vis.lo / block, block};
  pick.first = std::min(std::max<int64_t>(p.sinks, 0) / block, pick.end);
  const int64_t n = pick.end - pick.first;
  if (n <= 0) return pick;
  float* score = s.blockScores;
  if (p.globalTopk >= n) {
    std::fill(chosen + pick.first, chosen + pick.end, 1.0f);
    return pick;
  }
  std::fill(chosen + pick.first, chosen + pick.end, 0.0f);
  t.rowDotColumns(p.d, n, q, s.blockSums + pick.first * p.d, p.d,
                  score + pick.first, 1, false);
  for (int64_t taken = 0; taken < p.globalTopk; ++taken) {
    int64_t best = -1;
    for (int64_t c = pick.first; c < pick.end; ++c)
      if (chosen[c] == 0.0f && score[c] == score[c] &&
          (best < 0 || score[c] > score[best]))
        best = c;
    if (best < 0) break;
    chosen[best] = 1.0f;
  }
  return pick;
}

// Calls fn(j0, j1) on a row's visible keys as ascending disjoint ranges:
// its sinks, the runs of its chosen blocks (less any sinks in them), its
// window.
template <typename Fn>
void forVisibleRanges(const Problem& p, const Visible& vis,
                      const GlobalPick& pick, Fn&& fn) {
  if (vis.sinkEnd > 0) fn(int64_t{0}, vis.sinkEnd);
  for (int64_t c = pick.first; c < pick.end;) {
    if (pick.chosen[c] == 0.0f) {
      ++c;
      continue;
    }
    int64_t c1 = c + 1;
    while (c1 < pick.end && pick.chosen[c1] != 0.0f) ++c1;
    fn(std::max(c * pick.block, vis.sinkEnd), c1 * pick.block);
    c = c1;
  }
  const int64_t windowEnd = std::min(p.sk, std::max(vis.lo, vis.hi + 1));
  if (windowEnd > vis.lo) fn(vis.lo, windowEnd);
}

// Query row i (its query |qRow|, unit stride) over the keys it sees with
// the blocks |pick| holds, against K and V where they lie.
void attendGlobalRow(const Problem& p, const MatmulTiles& t, const Scratch& s,
                     const Head& x, int64_t i, const float* qRow,
                     const GlobalPick& pick) {
  const Visible vis = visibleKeys(p, i);
  const float* maskRow = x.mask ? x.mask + i * p.mask.ss : nullptr;
  float* oRow = x.o + i * p.o.ss;
  auto forRanges = [&](auto&& fn) { forVisibleRanges(p, vis, pick, fn); };
  float* scores = s.scores;
  float best = -std::numeric_limits<float>::infinity();
  forRanges([&](int64_t j0, int64_t j1) {
    keyDots(p, t, s, x, qRow, j0, j1, scores);
    scaleAndMask(p, t, scores, maskRow, j0, j1, &best);
  });
  if (!(best > lowestFloat())) {
    exactRow(p, s, x.q + i * p.q.ss, x, maskRow, i, oRow, pick);
    return;
  }
  float sum = 0.0f;
  forRanges([&](int64_t j0, int64_t j1) {
    sum += t.expShifted(scores + j0, j1 - j0, best);
  });
  float* out = s.out;
  std::fill(out, out + p.dv, 0.0f);
  forRanges([&](int64_t j0, int64_t j1) {
    valueSums(p, t, s, x, scores, j0, j1, s.exact);
    for (int64_t c = 0; c < p.dv; ++c) out[c] += s.exact[c];
  });
  const float inv = 1.0f / sum;
  for (int64_t c = 0; c < p.dv; ++c) oRow[c * p.o.sd] = out[c] * inv;
}

// The row path with top-k global blocks: each row scores and sums its
// sinks, its chosen blocks and its window. |sumKeys|: the task's first
// head, which forms the block sums its heads share.
void runGlobalRows(const Problem& p, const MatmulTiles& t, const Scratch& s,
                   const Head& x, bool sumKeys) {
  if (sumKeys) sumKeyBlocks(p, s, x);
  for (int64_t i = 0; i < p.sq; ++i) {
    const float* qRow = x.q + i * p.q.ss;
    if (p.q.sd != 1) {
      for (int64_t c = 0; c < p.d; ++c) s.q[c] = qRow[c * p.q.sd];
      qRow = s.q;
    }
    const GlobalPick pick =
        chooseBlocks(p, t, s, qRow, visibleKeys(p, i), s.chosen);
    attendGlobalRow(p, t, s, x, i, qRow, pick);
  }
}

// Four fp32 keys (rows |ss| floats apart, |d| dims each) into columns
// 0..3 of a K^T panel ([d][32]).
void transposeKeys4(const float* k, int64_t ss, int64_t d, float* panel) {
  int64_t e = 0;
#if defined(__SSE2__)
  for (; e + 4 <= d; e += 4) {
    __m128 r0 = _mm_loadu_ps(k + e), r1 = _mm_loadu_ps(k + ss + e),
           r2 = _mm_loadu_ps(k + 2 * ss + e), r3 = _mm_loadu_ps(k + 3 * ss + e);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(panel + e * kW, r0);
    _mm_storeu_ps(panel + (e + 1) * kW, r1);
    _mm_storeu_ps(panel + (e + 2) * kW, r2);
    _mm_storeu_ps(panel + (e + 3) * kW, r3);
  }
#endif
  for (; e < d; ++e)
    for (int64_t c = 0; c < 4; ++c) panel[e * kW + c] = k[c * ss + e];
}

// A block's query rows [i0, i0 + rows) with unit stride: where they lie,
// or copied into s.q; |ldq| gets their row stride.
const float* blockQueries(const Problem& p, const Scratch& s, const Head& x,
                          int64_t i0, int64_t rows, int64_t* ldq) {
  const float* q = x.q + i0 * p.q.ss;
  *ldq = p.q.ss;
  if (p.q.sd == 1) return q;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < p.d; ++c)
      s.q[r * p.d + c] = q[r * p.q.ss + c * p.q.sd];
  *ldq = p.d;
  return s.q;
}

// The softmax of a block's score rows (softmaxRow; the value product reads
// keys [0, sinkKeys) and [windowKeys, ncols)): a row with nothing visible
// is written by exactRow and flagged in |exact|, the others get their
// 1 / sum in |inverse|.
void blockSoftmax(const Problem& p, const MatmulTiles& t, const Scratch& s,
                  const Head& x, float* scores, int64_t ldS, int64_t i0,
                  int64_t rows, int64_t ncols, int64_t sinkKeys,
                  int64_t windowKeys, bool* exact, float* inverse) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    const float* maskRow = x.mask ? x.mask + i * p.mask.ss : nullptr;
    float sum = 0.0f;
    exact[r] = ncols <= 0 ||
               !softmaxRow(p, t, scores + r * ldS, ncols, visibleKeys(p, i),
                           maskRow, sinkKeys, windowKeys, &sum);
    if (exact[r])
      exactRow(p, s, x.q + i * p.q.ss, x, maskRow, i, x.o + i * p.o.ss);
    else
      inverse[r] = 1.0f / sum;
  }
}

// K^T panel pk: [d][32 keys]; V panel pv: [key][32 value dims], in the
// scratch's packed regions. A bf16 or int8 cache is widened and dequantized
// here, so the tiles only ever see fp32. Only panels below
// |sinkPanelsRead| and from |windowPanelsFrom| on are packed.
void packPanels(const Problem& p, const Scratch& s, const Head& x,
                int64_t sinkPanelsRead, int64_t windowPanelsFrom) {
  const int64_t kPanels = ceilDiv(p.sk, kW), vPanels = ceilDiv(p.dv, kW);
  auto packed = [&](int64_t panel) {
    return panel < sinkPanelsRead || panel >= windowPanelsFrom;
  };
  float* kp = s.kPacked;
  for (int64_t pk = 0; pk < kPanels; ++pk) {
    if (!packed(pk)) continue;
    float* panel = kp + pk * p.d * kW;
    int64_t c = 0;
    if (p.kvType == KvType::kF32 && p.k.sd == 1) {
      // Whole fp32 keys four at a time, four dims at a time, through 4 x 4
      // transposes (a scalar copy is most of a windowed block's cost).
      for (; c + 4 <= kW && pk * kW + c + 4 <= p.sk; c += 4) {
        const int64_t j = pk * kW + c;
        if (kvRunEnd(p, j, j + 4) == j + 4) {
          const KvRow k = kvRow(p, p.k, p.kNew, x.k, kvIndex(p, j));
          transposeKeys4(reinterpret_cast<const float*>(k.p), p.k.ss, p.d,
                         panel + c);
          continue;
        }
        // Four keys across a ring's end or a block's.
        for (int64_t i = 0; i < 4; ++i)
          loadKvRow(p, p.k, p.kNew, x.k, j + i, 0, p.d, panel + c + i, kW);
      }
    }
    for (; c < kW; ++c) {
      const int64_t j = pk * kW + c;
      float* dst = panel + c;
      if (j < p.sk) {
        loadKvRow(p, p.k, p.kNew, x.k, j, 0, p.d, dst, kW);
      } else {
        for (int64_t e = 0; e < p.d; ++e) dst[e * kW] = 0.0f;
      }
    }
  }
  float* vp = s.vPacked;
  for (int64_t pv = 0; pv < vPanels; ++pv) {
    const int64_t cols = std::min(kW, p.dv - pv * kW);
    for (int64_t j = 0; j < p.sk; ++j) {
      if (!packed(j / kW)) {
        j = windowPanelsFrom * kW - 1;
        continue;
      }
      float* dst = vp + (pv * p.sk + j) * kW;
      if (cols == kW && p.kvType == KvType::kF32 && p.v.sd == 1) {
        // A whole fp32 panel row: a fixed-length copy the compiler unrolls
        // (a memcpy call per 128 bytes cost a windowed prefill 7%).
        const float* src =
            reinterpret_cast<const float*>(
                kvRow(p, p.v, p.vNew, x.v, kvIndex(p, j)).p) +
            pv * kW;
        for (int64_t c = 0; c < kW; ++c) dst[c] = src[c];
        continue;
      }
      loadKvRow(p, p.v, p.vNew, x.v, j, pv * kW, cols, dst, 1);
      std::fill(dst + cols, dst + kW, 0.0f);
    }
  }
}

// Many query rows: packed K^T and V (with |packKv|; else the previous
// head's, the same K/V head), blocks of kBlockRows rows (a quarter of that
// under a short window).
void runBlocks(const Problem& p, const MatmulTiles& t, const Scratch& s,
               const Head& x, bool packKv) {
  const int64_t kPanels = ceilDiv(p.sk, kW), vPanels = ceilDiv(p.dv, kW);
  // Under a window only the panels some block reads are packed: the
  // sinks' and those from the first row's window on.
  if (packKv) {
    int64_t sinkPanelsRead = kPanels, windowPanelsFrom = kPanels;
    if (p.window) {
      sinkPanelsRead =
          std::min(kPanels, ceilDiv(std::min(p.sinks, p.sk), kW));
      windowPanelsFrom = std::max(sinkPanelsRead, visibleKeys(p, 0).lo / kW);
    }
    packPanels(p, s, x, sinkPanelsRead, windowPanelsFrom);
  }
  const float* kp = s.kPacked;
  const float* vp = s.vPacked;

  float inverse[kBlockRows];
  bool exact[kBlockRows];
  float cTile[8 * kW];
  // A block scores the keys from its first row's window start to its last
  // row's key: a short window wastes less of that trapezoid in 16-row
  // blocks (5.4x -> 5.8x over dense at T = 4096, W = 256, than 32 rows).
  const int64_t blockRows =
      p.window && p.windowSize <= 8 * kBlockRows ? kBlockRows / 4 : kBlockRows;
  for (int64_t i0 = 0; i0 < p.sq; i0 += blockRows) {
    const int64_t rows = std::min(blockRows, p.sq - i0);
    // Keys the block's rows see lie below its last row's bound.
    const Visible lastRow = visibleKeys(p, i0 + rows - 1);
    const int64_t ncols =
        std::min(p.sk, std::max(lastRow.hi + 1, lastRow.sinkEnd));
    const int64_t panels = ceilDiv(std::max<int64_t>(ncols, 0), kW);
    const int64_t ldS = std::max<int64_t>(panels * kW, 1);
    // With a window, the key panels no row of the block sees (between the
    // sinks and the first row's window) are neither scored nor multiplied:
    // a block costs its window's width, not the context. Their scores are
    // left for softmaxRow, which zeroes every hidden one.
    const int64_t windowPanel = visibleKeys(p, i0).lo / kW;
    const int64_t sinkPanels = std::min(panels, ceilDiv(lastRow.sinkEnd, kW));
    const int64_t firstPanel =
        std::min(panels, std::max(sinkPanels, windowPanel));
    // Keys [0, sinkKeys) and [windowKeys, ncols) hold every visible one:
    // the value product reads no more of the sink panel than the sinks,
    // nor of the first window panel than from the first row's window on.
    const int64_t sinkKeys = std::min(ncols, lastRow.sinkEnd);
    const int64_t windowKeys =
        std::max(sinkKeys, std::min(ncols, visibleKeys(p, i0).lo));
    float* scores = s.scores;
    int64_t ldq;
    const float* qBlock = blockQueries(p, s, x, i0, rows, &ldq);
    auto score = [&](int64_t fromPanel, int64_t toPanel) {
      for (int64_t pk = fromPanel; pk < toPanel; ++pk)
        for (int64_t r = 0; r < rows; r += t.mr)
          t.tile(std::min(t.mr, rows - r), p.d, qBlock + r * ldq, ldq,
                 kp + pk * p.d * kW, scores + r * ldS + pk * kW, ldS, false);
    };
    // A few sinks before the block's window: each row's dots with the sink
    // keys where they lie rather than a tile over their whole 32-key panel
    // (4 sinks: 3-4% of a windowed prefill at T = 4096, W = 256).
    const bool sinkDots = sinkKeys > 0 && sinkKeys <= kSinkDotKeys &&
                          windowPanel >= sinkPanels;
    if (sinkDots) {
      for (int64_t r = 0; r < rows; ++r)
        keyDots(p, t, s, x, qBlock + r * ldq, 0, sinkKeys, scores + r * ldS);
    } else {
      score(0, sinkPanels);
    }
    score(firstPanel, panels);
    blockSoftmax(p, t, s, x, scores, ldS, i0, rows, ncols, sinkKeys,
                 windowKeys, exact, inverse);
    if (ncols <= 0) continue;
    for (int64_t pv = 0; pv < vPanels; ++pv) {
      const int64_t cols = std::min(kW, p.dv - pv * kW);
      for (int64_t r = 0; r < rows; r += t.mr) {
        const int64_t tileRows = std::min(t.mr, rows - r);
        bool started = false;
        auto product = [&](int64_t from, int64_t to) {
          for (int64_t k0 = from; k0 < to; k0 += kKc) {
            t.tile(tileRows, std::min(kKc, to - k0), scores + r * ldS + k0,
                   ldS, vp + (pv * p.sk + k0) * kW, cTile, kW, started);
            started = true;
          }
        };
        product(0, sinkKeys);
        product(windowKeys, ncols);
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

// Many query rows with global blocks: runBlocks' packed panels (all of
// them: a block may be anywhere) and tiles over the keys a block of rows
// reads: the sinks, the blocks any of its rows chose, and its window span.
// Each row's softmax keeps its own visible keys and zeroes the rest of
// what the block reads.
void runGlobalBlocks(const Problem& p, const MatmulTiles& t, const Scratch& s,
                     const Head& x, bool packKv) {
  const int64_t kPanels = ceilDiv(p.sk, kW), vPanels = ceilDiv(p.dv, kW);
  if (packKv) {
    sumKeyBlocks(p, s, x);
    packPanels(p, s, x, kPanels, kPanels);
  }
  const float* kp = s.kPacked;
  const float* vp = s.vPacked;
  const int64_t block = p.globalBlock;
  const int64_t blocks = p.sk / block;
  float* anyChose = s.chosen + kBlockRows * blocks;
  float* scoredPanel = s.scoredPanels;
  float inverse[kBlockRows];
  bool exact[kBlockRows];
  Visible views[kBlockRows];
  GlobalPick picks[kBlockRows];
  float cTile[8 * kW];
  const int64_t blockRows =
      p.windowSize <= 8 * kBlockRows ? kBlockRows / 4 : kBlockRows;
  for (int64_t i0 = 0; i0 < p.sq; i0 += blockRows) {
    const int64_t rows = std::min(blockRows, p.sq - i0);
    const Visible firstRow = visibleKeys(p, i0);
    const Visible lastRow = visibleKeys(p, i0 + rows - 1);
    const int64_t ncols =
        std::min(p.sk, std::max(lastRow.hi + 1, lastRow.sinkEnd));
    if (ncols <= 0) {
      for (int64_t r = 0; r < rows; ++r)
        exactRow(p, s, x.q + (i0 + r) * p.q.ss, x,
                 x.mask ? x.mask + (i0 + r) * p.mask.ss : nullptr, i0 + r,
                 x.o + (i0 + r) * p.o.ss);
      continue;
    }
    const int64_t ldS = ceilDiv(ncols, kW) * kW;
    int64_t ldq;
    const float* qBlock = blockQueries(p, s, x, i0, rows, &ldq);
    // Each row's blocks, and which any row chose.
    const int64_t lastEnd = lastRow.lo / block;
    std::fill(anyChose, anyChose + lastEnd, 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
      views[r] = visibleKeys(p, i0 + r);
      picks[r] = chooseBlocks(p, t, s, qBlock + r * ldq, views[r],
                              s.chosen + r * blocks);
      for (int64_t c = picks[r].first; c < picks[r].end; ++c)
        if (picks[r].chosen[c] != 0.0f) anyChose[c] = 1.0f;
    }
    // The keys the block reads, as ascending disjoint ranges.
    const int64_t sinkKeys = std::min(ncols, lastRow.sinkEnd);
    const int64_t windowKeys = std::max(sinkKeys, std::min(ncols, firstRow.lo));
    auto forRead = [&](auto&& fn) {
      if (sinkKeys > 0) fn(int64_t{0}, sinkKeys);
      for (int64_t c = 0; c < lastEnd;) {
        if (anyChose[c] == 0.0f) {
          ++c;
          continue;
        }
        int64_t c1 = c + 1;
        while (c1 < lastEnd && anyChose[c1] != 0.0f) ++c1;
        const int64_t j0 = std::max(c * block, sinkKeys);
        const int64_t j1 = std::min(c1 * block, windowKeys);
        if (j1 > j0) fn(j0, j1);
        c = c1;
      }
      if (ncols > windowKeys) fn(windowKeys, ncols);
    };
    // Rows that chose apart make the block read much more than each row
    // sees: then each row alone, against K and V where they lie (a tile's
    // product costs about a quarter of a row's per key).
    int64_t readKeys = 0, seenKeys = 0;
    forRead([&](int64_t j0, int64_t j1) { readKeys += j1 - j0; });
    for (int64_t r = 0; r < rows; ++r)
      forVisibleRanges(p, views[r], picks[r],
                       [&](int64_t j0, int64_t j1) { seenKeys += j1 - j0; });
    if (readKeys * rows > kTileAdvantage * seenKeys) {
      for (int64_t r = 0; r < rows; ++r)
        attendGlobalRow(p, t, s, x, i0 + r, qBlock + r * ldq, picks[r]);
      continue;
    }
    // Score every panel the read keys touch, once.
    const int64_t panels = ldS / kW;
    std::fill(scoredPanel, scoredPanel + panels, 0.0f);
    forRead([&](int64_t j0, int64_t j1) {
      for (int64_t pk = j0 / kW; pk < ceilDiv(j1, kW); ++pk)
        scoredPanel[pk] = 1.0f;
    });
    float* scores = s.scores;
    for (int64_t pk = 0; pk < panels; ++pk) {
      if (scoredPanel[pk] == 0.0f) continue;
      for (int64_t r = 0; r < rows; r += t.mr)
        t.tile(std::min(t.mr, rows - r), p.d, qBlock + r * ldq, ldq,
               kp + pk * p.d * kW, scores + r * ldS + pk * kW, ldS, false);
    }
    // Each row: the softmax of its own keys; zeros for the rest it reads.
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      const Visible& vis = views[r];
      const float* maskRow = x.mask ? x.mask + i * p.mask.ss : nullptr;
      float* row = scores + r * ldS;
      float best = -std::numeric_limits<float>::infinity();
      forVisibleRanges(p, vis, picks[r], [&](int64_t j0, int64_t j1) {
        scaleAndMask(p, t, row, maskRow, j0, j1, &best);
      });
      exact[r] = !(best > lowestFloat());
      if (exact[r]) {
        exactRow(p, s, x.q + i * p.q.ss, x, maskRow, i, x.o + i * p.o.ss,
                 picks[r]);
        continue;
      }
      float sum = 0.0f;
      float* kept = s.exact;
      forVisibleRanges(p, vis, picks[r], [&](int64_t j0, int64_t j1) {
        sum += t.expShifted(row + j0, j1 - j0, best);
        std::copy(row + j0, row + j1, kept + j0);
      });
      forRead([&](int64_t j0, int64_t j1) {
        std::fill(row + j0, row + j1, 0.0f);
      });
      forVisibleRanges(p, vis, picks[r], [&](int64_t j0, int64_t j1) {
        std::copy(kept + j0, kept + j1, row + j0);
      });
      inverse[r] = 1.0f / sum;
    }
    for (int64_t pv = 0; pv < vPanels; ++pv) {
      const int64_t cols = std::min(kW, p.dv - pv * kW);
      for (int64_t r = 0; r < rows; r += t.mr) {
        const int64_t tileRows = std::min(t.mr, rows - r);
        bool started = false;
        forRead([&](int64_t from, int64_t to) {
          for (int64_t k0 = from; k0 < to; k0 += kKc) {
            t.tile(tileRows, std::min(kKc, to - k0), scores + r * ldS + k0,
                   ldS, vp + (pv * p.sk + k0) * kW, cTile, kW, started);
            started = true;
          }
        });
        for (int64_t rr = 0; rr < tileRows; ++rr) {
          if (exact[r + rr]) continue;
          float* oRow = x.o + (i0 + r + rr) * p.o.ss + pv * kW * p.o.sd;
          for (int64_t c = 0; c < cols; ++c)
            oRow[c * p.o.sd] = started ? cTile[rr * kW + c] * inverse[r + rr]
                                       : 0.0f;
        }
      }
    }
  }
}

// Where the bf16 products of STRATA_ATTN_FLAG_BF16_PRODUCTS run.
enum class Bf16Blocks { kNone, kAmx, kAvx512Bf16 };

// runBlocks with the products in bf16 (bf16BlocksFor): K and V packed once
// as bf16 pairs, each block's query rows and probabilities converted to
// bf16 rows, the products on AMX tiles or with vdpbf16ps. The softmax, the
// rows with nothing visible and the output scaling are runBlocks'.
void runBlocksBf16(const Problem& p, const MatmulTiles& t, const Scratch& s,
                   const Head& x, bool packKv, Bf16Blocks unit) {
  const bool amx = unit == Bf16Blocks::kAmx;
  const int64_t dp = bf16RoundUp32(p.d), skp = bf16RoundUp32(p.sk);
  const int64_t vPanels = ceilDiv(p.dv, kW);
  if (packKv) {
    packKeyPairs(reinterpret_cast<const float*>(x.k.p), p.k.ss, p.sk, p.d,
                 s.keyPairs);
    packValuePairs(reinterpret_cast<const float*>(x.v.p), p.v.ss, p.sk, p.dv,
                   s.valuePairs);
  }
  float inverse[kBlockRows];
  bool exact[kBlockRows];
  for (int64_t i0 = 0; i0 < p.sq; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, p.sq - i0);
    const Visible lastRow = visibleKeys(p, i0 + rows - 1);
    const int64_t ncols = std::min(p.sk, lastRow.hi + 1);
    const int64_t panels = ceilDiv(std::max<int64_t>(ncols, 0), kW);
    const int64_t ldS = std::max<int64_t>(panels * kW, 1);
    float* scores = s.scores;
    if (panels > 0) {
      int64_t ldq;
      const float* qBlock = blockQueries(p, s, x, i0, rows, &ldq);
      convertRowsToBf16(qBlock, ldq, rows, p.d, s.qRows, dp);
      (amx ? queryKeyTilesAmx : queryKeyProductsBf16)(
          rows, dp, s.qRows, s.keyPairs, 0, panels, scores, ldS);
    }
    blockSoftmax(p, t, s, x, scores, ldS, i0, rows, ncols, 0, 0, exact,
                 inverse);
    if (ncols <= 0) continue;
    // Keys past ncols (and the hidden ones softmaxRow zeroed) weigh 0.
    convertRowsToBf16(scores, ldS, rows, ncols, s.probRows, skp);
    for (int64_t pv = 0; pv < vPanels; ++pv) {
      const int64_t cols = std::min(kW, p.dv - pv * kW);
      (amx ? probValueTilesAmx : probValueProductsBf16)(
          rows, bf16RoundUp32(ncols), s.probRows, skp, s.valuePairs, skp, pv,
          s.outTile);
      for (int64_t r = 0; r < rows; ++r) {
        if (exact[r]) continue;
        float* oRow = x.o + (i0 + r) * p.o.ss + pv * kW * p.o.sd;
        for (int64_t c = 0; c < cols; ++c)
          oRow[c * p.o.sd] = s.outTile[r * kW + c] * inverse[r];
      }
    }
  }
}

// Where runBlocksBf16 takes prefill blocks: on AMX tiles; else with
// vdpbf16ps where the bf16 matmul runs on it (the CPUs where it
// is faster than fp32 FMAs are the ones its kernel set is chosen for);
// else none (fp32 blocks: the flag is a licence, not a demand).
Bf16Blocks bf16Unit() {
  if (matmulIsa() == MatmulIsa::kAmx) return Bf16Blocks::kAmx;
  if (matmulIsa() == MatmulIsa::kAvx512 &&
      std::strcmp(matmulBf16KernelSet(), "avx512bf16") == 0)
    return Bf16Blocks::kAvx512Bf16;
  return Bf16Blocks::kNone;
}

// bf16Unit for a problem whose K/V the bf16 blocks can read (fp32,
// contiguous rows, no window), else none.
Bf16Blocks bf16BlocksFor(const Problem& p) {
  if (!p.bf16Products || p.kvType != KvType::kF32 || p.window ||
      p.k.sd != 1 || p.v.sd != 1 || p.blockSize != 0)
    return Bf16Blocks::kNone;
  return bf16Unit();
}

Operand operandAt(const int64_t* params, int64_t slot) {
  return {reinterpret_cast<const float*>(static_cast<intptr_t>(params[slot])),
          params[slot + 1], params[slot + 2], params[slot + 3],
          params[slot + 4]};
}

// K or V at |slot| (address, 4 strides) with its scales at |scaleSlot|
// (address, 3 strides; -1: none).
KvOperand kvOperandAt(const int64_t* params, int64_t slot,
                      int64_t scaleSlot) {
  KvOperand o;
  o.p = reinterpret_cast<const uint8_t*>(static_cast<intptr_t>(params[slot]));
  o.sb = params[slot + 1];
  o.sh = params[slot + 2];
  o.ss = params[slot + 3];
  o.sd = params[slot + 4];
  o.scales = nullptr;
  o.scb = o.sch = o.scs = 0;
  if (scaleSlot >= 0) {
    o.scales = reinterpret_cast<const float*>(
        static_cast<intptr_t>(params[scaleSlot]));
    o.scb = params[scaleSlot + 1];
    o.sch = params[scaleSlot + 2];
    o.scs = params[scaleSlot + 3];
  }
  return o;
}

// The fields both imports share (indices below STRATA_ATTN_PARAM_COUNT),
// K and V as fp32.
Problem decodeProblem(const int64_t* params) {
  Problem p;
  const int64_t flags = params[STRATA_ATTN_FLAGS];
  p.causal = (flags & STRATA_ATTN_FLAG_CAUSAL) != 0;
  p.window = (flags & STRATA_ATTN_FLAG_WINDOW) != 0;
  p.maskHidden = (flags & STRATA_ATTN_FLAG_MASK_HIDDEN) != 0;
  p.bf16Products = (flags & STRATA_ATTN_FLAG_BF16_PRODUCTS) != 0;
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
  p.mask = operandAt(params, STRATA_ATTN_MASK);
  p.o = operandAt(params, STRATA_ATTN_O);
  p.kvType = KvType::kF32;
  p.kvBytes = sizeof(float);
  p.k = kvOperandAt(params, STRATA_ATTN_K, -1);
  p.v = kvOperandAt(params, STRATA_ATTN_V, -1);
  p.kvKernels = nullptr;
  p.kvSlots = reinterpret_cast<const int64_t*>(
      static_cast<intptr_t>(params[STRATA_ATTN_KV_SLOTS]));
  p.kvSlotCount = params[STRATA_ATTN_KV_SLOT_COUNT];
  p.kvLengths = reinterpret_cast<const int64_t*>(
      static_cast<intptr_t>(params[STRATA_ATTN_KV_LENGTHS]));
  p.ringKept = p.ringRows = 0;
  p.blockTable = nullptr;
  p.blocksPerRow = p.blockSize = p.blockCount = 0;
  p.blockShift = -1;
  p.gapAt = p.gap = 0;
  p.globalTopk = p.globalBlock = 0;
  p.past = -1;
  p.kNew = p.vNew = KvOperand{};
  p.kPresent = p.vPresent = Operand{};
  return p;
}

// Drops from |row|'s view the keys between its sinks' panels and its first
// query's window, which no query row sees (causal, windowed, no mask to
// read them by position): its scratch and packing then span the window and
// the new rows, not the whole context. Key panels stay aligned.
void dropKeysBeforeWindow(Problem& row) {
  if (!row.window || !row.causal || row.mask.p || row.sk <= 0 ||
      row.globalTopk > 0)
    return;
  const int64_t kept =
      ceilDiv(std::min(std::max<int64_t>(row.sinks, 0), row.sk), kW) * kW;
  const int64_t from = visibleKeys(row, 0).lo / kW * kW;
  if (from <= kept) return;
  row.gapAt = kept;
  row.gap = from - kept;
  row.sk -= row.gap;
}

// The rows of one kv head's K or V of an append (the past part's below
// p.past, then the new part's) copied to the same rows of |present|; with
// |stream|, around the caches (the present is a run's output, read after
// it, and writing it through the caches would first read every line).
void appendRows(const Problem& p, const KvOperand& past,
                const KvOperand& added, const Operand& present, int64_t width,
                int64_t b, int64_t kvh, bool stream) {
  // A part with no rows may have no address: no offset from it.
  const float* from = reinterpret_cast<const float*>(past.p);
  if (p.past > 0) from += b * past.sb + kvh * past.sh;
  const float* fromNew = reinterpret_cast<const float*>(added.p);
  if (p.sk > p.past) fromNew += b * added.sb + kvh * added.sh;
  float* to = const_cast<float*>(present.p) + b * present.sb +
              kvh * present.sh;
  for (int64_t r = 0; r < p.sk; ++r) {
    const bool old = r < p.past;
    const float* src =
        old ? from + r * past.ss : fromNew + (r - p.past) * added.ss;
    const int64_t sd = old ? past.sd : added.sd;
    float* dst = to + r * present.ss;
#if defined(__SSE2__)
    if (stream && sd == 1 && present.sd == 1 && width % 4 == 0 &&
        reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
      for (int64_t e = 0; e < width; e += 4)
        _mm_stream_ps(dst + e, _mm_loadu_ps(src + e));
      continue;
    }
#endif
    for (int64_t e = 0; e < width; ++e) dst[e * present.sd] = src[e * sd];
  }
}

// Both caches' rows of one kv head (appendRows).
void appendHead(const Problem& p, int64_t b, int64_t kvh, bool stream) {
  appendRows(p, p.k, p.kNew, p.kPresent, p.d, b, kvh, stream);
  appendRows(p, p.v, p.vNew, p.vPresent, p.dv, b, kvh, stream);
#if defined(__SSE2__)
  // Streaming stores are weakly ordered: visible before the task ends.
  if (stream) _mm_sfence();
#endif
}

// Writes every kv head's present rows, one task per head.
void appendAll(strata_rt_context_t* context, const Problem& p) {
  parallelFor(context, static_cast<size_t>(p.batch * p.kvHeads),
              [&](size_t task, uint32_t) {
                appendHead(p, static_cast<int64_t>(task) / p.kvHeads,
                           static_cast<int64_t>(task) % p.kvHeads, false);
              });
}

// Failure messages of one import (static strings, as failRunInternal
// keeps them).
struct ImportNames {
  const char* slot;
  const char* length;
  const char* ring;
  const char* global;
  const char* append;
  const char* paged = "";
};

void run(strata_rt_context_t* context, Problem& p, const ImportNames& names) {
  // An append reads its own rows (no slots or lengths), its past within
  // its keys.
  if (p.past >= 0 && (p.kvSlots || p.kvLengths || p.past > p.sk)) {
    failRunInternal(context, names.append, p.past);
    return;
  }
  // Shapes come from verified IR (heads a multiple of kv heads); an empty
  // problem has nothing to write but an append's present rows.
  if (p.batch <= 0 || p.heads <= 0 || p.kvHeads <= 0 || p.sq <= 0 ||
      p.dv <= 0 || p.heads % p.kvHeads != 0) {
    if (p.past >= 0 && p.batch > 0 && p.kvHeads > 0) {
      p.d = std::max<int64_t>(p.d, 0);
      p.dv = std::max<int64_t>(p.dv, 0);
      appendAll(context, p);
    }
    return;
  }
  p.sk = std::max<int64_t>(p.sk, 0);
  p.d = std::max<int64_t>(p.d, 0);
  // Slots and lengths come from inputs the generated code checked; values
  // outside their ranges mean the code was not generated for this kernel.
  for (int64_t b = 0; b < p.batch; ++b) {
    if (p.kvSlots && (p.kvSlots[b] < 0 || p.kvSlots[b] >= p.kvSlotCount)) {
      failRunInternal(context, names.slot, p.kvSlots[b]);
      return;
    }
    if (p.kvLengths && (p.kvLengths[b] < 0 || p.kvLengths[b] > p.sk)) {
      failRunInternal(context, names.length, p.kvLengths[b]);
      return;
    }
  }
  // A ring holds every key a row sees: the kept sinks, then the window of
  // the first query row up to the last one's key.
  if (p.ringRows != 0 &&
      (!p.causal || !p.window || !p.kvLengths || p.sinks < 0 ||
       p.sinks > p.ringKept || p.ringKept >= p.ringRows ||
       p.windowSize < 1 ||
       p.sq > p.ringRows - p.ringKept - p.windowSize + 1)) {
    failRunInternal(context, names.ring, p.ringRows);
    return;
  }
  // A paged row names the blocks its length reaches; nothing else says
  // where its keys are.
  if (p.blockSize != 0) {
    bool valid = p.blockSize > 0 && p.blocksPerRow > 0 && p.blockTable &&
                 p.kvLengths && !p.kvSlots && p.ringRows == 0 &&
                 p.globalTopk == 0 && p.past < 0;
    for (int64_t b = 0; valid && b < p.batch; ++b) {
      const int64_t used = ceilDiv(p.kvLengths[b], p.blockSize);
      valid = used <= p.blocksPerRow;
      for (int64_t n = 0; valid && n < used; ++n) {
        const int64_t block = p.blockTable[b * p.blocksPerRow + n];
        valid = block >= 0 && block < p.blockCount;
      }
    }
    if (!valid) {
      failRunInternal(context, names.paged, p.blockSize);
      return;
    }
  }
  // Global blocks add to a causal window over a whole cache.
  if (p.globalTopk != 0 &&
      (!p.causal || !p.window || p.ringRows != 0 || p.globalTopk < 1 ||
       p.globalBlock < 1 || p.windowSize < 1)) {
    failRunInternal(context, names.global, p.globalTopk);
    return;
  }
  // Each row's own view: its key count, less the keys before its window
  // (dropKeysBeforeWindow). The scratch is sized for the widest view, not
  // for the whole cache.
  auto rowView = [&](int64_t b) {
    Problem row = p;
    if (p.kvLengths) row.sk = p.kvLengths[b];
    dropKeysBeforeWindow(row);
    return row;
  };
  Problem widest = p;
  widest.sk = 0;
  for (int64_t b = 0; b < p.batch; ++b)
    widest.sk = std::max(widest.sk, rowView(b).sk);
  const MatmulTiles& t = matmulTiles();
  const bool blocked = p.sq > kRowPathMaxRows && widest.sk > 0;
  // Blocks of rows pack K and V from one array: an append writes the
  // present first (through the caches, which the blocks then read) and
  // attends over it. Rows read both parts where they lie, and their tasks
  // write the present after (appendHead).
  const bool appendAfter = p.past >= 0 && !blocked;
  if (p.past >= 0 && blocked) {
    appendAll(context, p);
    auto present = [](const Operand& o) {
      return KvOperand{reinterpret_cast<const uint8_t*>(o.p), o.sb, o.sh, o.ss,
                       o.sd, nullptr, 0, 0, 0};
    };
    p.k = present(p.kPresent);
    p.v = present(p.vPresent);
    p.past = -1;
  }
  const Bf16Blocks bf16 = blocked ? bf16BlocksFor(p) : Bf16Blocks::kNone;
  const bool amx = bf16 == Bf16Blocks::kAmx;
  const ScratchSizes sizes =
      scratchSizes(widest, blocked, bf16 != Bf16Blocks::kNone);
  size_t stride = 0;
  uint8_t* scratch = kernelScratch(
      context, static_cast<size_t>(sizes.total()) * sizeof(float), &stride);
  if (!scratch) return;
  // The query heads that share a K/V head (GQA) run in one task, one after
  // another, so the K and V rows they all read come from memory once and
  // from this core's cache after; a group is split only where there would
  // be fewer than two tasks per thread.
  const int64_t group = p.heads / p.kvHeads;
  const int64_t threads = loopThreads(context);
  int64_t parts = 1;
  if (p.batch * p.kvHeads < threads * 2)
    parts = std::min(group, (threads * 2 + p.batch * p.kvHeads - 1) /
                                (p.batch * p.kvHeads));
  const int64_t perPart = (group + parts - 1) / parts;
  parts = (group + perPart - 1) / perPart;
  parallelFor(context, static_cast<size_t>(p.batch * p.kvHeads * parts),
              [&](size_t task, uint32_t thread) {
    const int64_t b = static_cast<int64_t>(task) / (p.kvHeads * parts);
    const int64_t rest = static_cast<int64_t>(task) % (p.kvHeads * parts);
    const int64_t first = (rest / parts) * group + (rest % parts) * perPart;
    const int64_t last =
        std::min((rest / parts + 1) * group, first + perPart);
    const Scratch s = scratchAt(scratch + thread * stride, sizes);
    // The row's own view (the scratch fits it).
    const Problem row = rowView(b);
    if (amx) configureAmxTiles();
    for (int64_t h = first; h < last; ++h) {
      const Head x = headOf(p, b, h);
      // A task's heads share one K/V head: packed for the first only.
      if (p.globalTopk > 0 && blocked && row.sk > 0)
        runGlobalBlocks(row, t, s, x, h == first);
      else if (p.globalTopk > 0)
        runGlobalRows(row, t, s, x, h == first);
      else if (blocked && row.sk > 0 && bf16 != Bf16Blocks::kNone)
        runBlocksBf16(row, t, s, x, h == first, bf16);
      else if (blocked && row.sk > 0)
        runBlocks(row, t, s, x, h == first);
      else
        runRows(row, t, s, x, h == first);
    }
    if (amx) releaseAmxTiles();
    // One task per kv head writes its present rows: the first of its
    // query heads' parts, right after reading them.
    if (appendAfter && rest % parts == 0) appendHead(p, b, rest / parts, true);
  });
}

}  // namespace

const char* attentionF32KernelSet() {
  switch (bf16Unit()) {
    case Bf16Blocks::kAmx: return "avx512 (bf16 products: amx-bf16)";
    case Bf16Blocks::kAvx512Bf16: return "avx512 (bf16 products: avx512bf16)";
    case Bf16Blocks::kNone: break;
  }
  return matmulTiles().name;
}

extern "C" void strataAttentionF32(strata_rt_context_t* context,
                                   const int64_t* params) {
  pollCancel(context);  // before any object: a cancel skips this frame
  Problem p = decodeProblem(params);
  run(context, p,
      {"strata_rt_attention_f32: KV slot",
       "strata_rt_attention_f32: KV length", "", "", ""});
}

namespace {

// strata_rt_attention_kv's fields: the element type of K and V (false when
// the run has ended).
bool decodeKvFields(strata_rt_context_t* context, const int64_t* params,
                    Problem& p) {
  const int64_t dtype = params[STRATA_ATTN_KV_DTYPE];
  switch (dtype) {
    case 0:
    case STRATA_DTYPE_F32:
      break;
    case STRATA_DTYPE_BF16:
      p.kvType = KvType::kBf16;
      p.kvBytes = sizeof(uint16_t);
      break;
    case STRATA_DTYPE_I8:
      p.kvType = KvType::kI8;
      p.kvBytes = sizeof(int8_t);
      p.k = kvOperandAt(params, STRATA_ATTN_K, STRATA_ATTN_K_SCALES);
      p.v = kvOperandAt(params, STRATA_ATTN_V, STRATA_ATTN_V_SCALES);
      if (!p.k.scales || !p.v.scales) {
        failRunInternal(context, "strata_rt_attention_kv: int8 scales", 0);
        return false;
      }
      break;
    default:
      failRunInternal(context, "strata_rt_attention_kv: KV_DTYPE", dtype);
      return false;
  }
  p.kvKernels = &attentionKvKernels();
  return true;
}

}  // namespace

extern "C" void strataAttentionKv(strata_rt_context_t* context,
                                  const int64_t* params) {
  pollCancel(context);  // before any object: a cancel skips this frame
  Problem p = decodeProblem(params);
  if (!decodeKvFields(context, params, p)) return;
  run(context, p,
      {"strata_rt_attention_kv: KV slot", "strata_rt_attention_kv: KV length",
       "", "", ""});
}

extern "C" void strataAttentionRing(strata_rt_context_t* context,
                                    const int64_t* params) {
  pollCancel(context);  // before any object: a cancel skips this frame
  Problem p = decodeProblem(params);
  if (!decodeKvFields(context, params, p)) return;
  p.ringKept = params[STRATA_ATTN_RING_KEPT];
  p.ringRows = params[STRATA_ATTN_RING_ROWS];
  if (p.ringRows <= 0) p.ringRows = -1;  // never linear: refused in run
  run(context, p,
      {"strata_rt_attention_ring: KV slot",
       "strata_rt_attention_ring: KV length",
       "strata_rt_attention_ring: ring rows", "", ""});
}

extern "C" void strataAttentionGlobal(strata_rt_context_t* context,
                                      const int64_t* params) {
  pollCancel(context);  // before any object: a cancel skips this frame
  Problem p = decodeProblem(params);
  if (!decodeKvFields(context, params, p)) return;
  p.globalTopk = params[STRATA_ATTN_GLOBAL_TOPK];
  p.globalBlock = params[STRATA_ATTN_GLOBAL_BLOCK];
  if (p.globalTopk <= 0) p.globalTopk = -1;  // never dense: refused in run
  run(context, p,
      {"strata_rt_attention_global: KV slot",
       "strata_rt_attention_global: KV length", "",
       "strata_rt_attention_global: global blocks", ""});
}

extern "C" void strataAttentionPaged(strata_rt_context_t* context,
                                     const int64_t* params) {
  pollCancel(context);  // before any object: a cancel skips this frame
  Problem p = decodeProblem(params);
  if (!decodeKvFields(context, params, p)) return;
  p.blockTable = reinterpret_cast<const int64_t*>(
      static_cast<intptr_t>(params[STRATA_ATTN_BLOCK_TABLE]));
  p.blocksPerRow = params[STRATA_ATTN_BLOCKS_PER_ROW];
  p.blockSize = params[STRATA_ATTN_BLOCK_SIZE];
  p.blockCount = params[STRATA_ATTN_BLOCK_COUNT];
  if (p.blockSize == 0) p.blockSize = -1;  // never unpaged: refused in run
  if (p.blockSize > 0 && (p.blockSize & (p.blockSize - 1)) == 0)
    p.blockShift = __builtin_ctzll(static_cast<uint64_t>(p.blockSize));
  run(context, p,
      {"strata_rt_attention_paged: KV slot",
       "strata_rt_attention_paged: KV length", "", "", "",
       "strata_rt_attention_paged: block table"});
}

extern "C" void strataAttentionAppend(strata_rt_context_t* context,
                                      const int64_t* params) {
  pollCancel(context);  // before any object: a cancel skips this frame
  if (params[STRATA_ATTN_PAST] < 0) {
    failRunInternal(context, "strata_rt_attention_append: past rows",
                    params[STRATA_ATTN_PAST]);
    return;
  }
  Problem p = decodeProblem(params);
  p.past = params[STRATA_ATTN_PAST];
  p.kNew = kvOperandAt(params, STRATA_ATTN_K_NEW, -1);
  p.vNew = kvOperandAt(params, STRATA_ATTN_V_NEW, -1);
  p.kPresent = operandAt(params, STRATA_ATTN_K_PRESENT);
  p.vPresent = operandAt(params, STRATA_ATTN_V_PRESENT);
  run(context, p,
      {"strata_rt_attention_append: KV slot",
       "strata_rt_attention_append: KV length", "", "",
       "strata_rt_attention_append: past rows"});
}

}  // namespace strata::runtime::kernels
