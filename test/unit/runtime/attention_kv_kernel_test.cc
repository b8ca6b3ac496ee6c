//===- attention_kv_kernel_test.cc - strata_rt_attention_kv vs a reference ===//
// SPDX-License-Identifier: Apache-2.0
// Attention over int8 (per-token scales) and bf16 K/V caches, every ISA the
// CPU has: decode rows (1..4) and prefill blocks (17, 70, 150 rows), grouped
// heads, cache slots and per-row lengths, causal, windows with sinks,
// masks, rows with nothing visible, a dim-major V. The reference is a
// double-precision evaluation of strata.attention over the DEQUANTIZED
// cache (q * scale, or the bf16 value widened), both exact in double, so
// the kernel differs from it by fp32 rounding only: fp32 dot products of up
// to 128 terms, one multiply by the token's scale, the vector exp's ~2e-7
// relative error and sums over up to ~1100 keys. That is the budget of the
// fp32 kernel's test, 2e-5 * max(1, max|ref|), with |K|, |V| <= 2.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "isa_test.h"
#include "kernel_context.h"
#include "kernels/attention_f32.h"
#include "kernels/attention_kv_kernels.h"
#include "strata_kernel_abi.h"
#include "thread_pool.h"

namespace strata::runtime::kernels {
namespace {

constexpr float kLowest = -std::numeric_limits<float>::max();

// The new params sit after strata_rt_attention_f32's block, whose indices
// (and size: code compiled for it allocates exactly that) stay as they are.
TEST(AttentionKvAbiTest, ParamIndices) {
  EXPECT_EQ(STRATA_ATTN_PARAM_COUNT, 39);
  EXPECT_EQ(STRATA_ATTN_KV_DTYPE, 39);
  EXPECT_EQ(STRATA_ATTN_K_SCALES, 40);
  EXPECT_EQ(STRATA_ATTN_V_SCALES, 44);
  EXPECT_EQ(STRATA_ATTN_KV_PARAM_COUNT, 48);
  EXPECT_EQ(STRATA_ATTN_RING_KEPT, 48);
  EXPECT_EQ(STRATA_ATTN_RING_ROWS, 49);
  EXPECT_EQ(STRATA_ATTN_RING_PARAM_COUNT, 50);
  EXPECT_EQ(STRATA_ATTN_GLOBAL_TOPK, 48);
  EXPECT_EQ(STRATA_ATTN_GLOBAL_BLOCK, 49);
  EXPECT_EQ(STRATA_ATTN_GLOBAL_PARAM_COUNT, 50);
  EXPECT_EQ(STRATA_ATTN_BLOCK_TABLE, 48);
  EXPECT_EQ(STRATA_ATTN_BLOCK_COUNT, 51);
  EXPECT_EQ(STRATA_ATTN_PAGED_PARAM_COUNT, 52);
  EXPECT_EQ(STRATA_KVQ_BLOCK_TABLE, 24);
  EXPECT_EQ(STRATA_KVQ_BLOCK_COUNT, 27);
  EXPECT_EQ(STRATA_KVQ_PAGED_PARAM_COUNT, 28);
  EXPECT_EQ(STRATA_KVQ_SRC, 5);
  EXPECT_EQ(STRATA_KVQ_DST, 10);
  EXPECT_EQ(STRATA_KVQ_SCALES, 15);
  EXPECT_EQ(STRATA_KVQ_CAPACITY, 23);
  EXPECT_EQ(STRATA_KVQ_PARAM_COUNT, 24);
}

// One of K or V: [slots, heads, capacity, dim] values in [-2, 2], stored
// as |dtype| sequence-major (or dim-major inside each head), with the
// dequantized values the kernel must see.
struct Cache {
  int64_t dtype;
  int64_t sb, sh, ss, sd;  // element strides
  std::vector<float> f32;
  std::vector<int8_t> i8;
  std::vector<uint16_t> bf16;
  std::vector<float> scales;  // [slots, heads, capacity]
  std::vector<double> deq;    // index as the elements

  Cache(int64_t slots, int64_t heads, int64_t cap, int64_t d, bool dimMajor,
        int64_t type, std::mt19937& rng)
      : dtype(type) {
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    sd = dimMajor ? cap : 1;
    ss = dimMajor ? 1 : d;
    sh = cap * d;
    sb = heads * cap * d;
    f32.resize(slots * sb);
    for (float& x : f32) x = dist(rng);
    deq.resize(f32.size());
    scales.assign(slots * heads * cap, 0.0f);
    i8.assign(f32.size(), 0);
    bf16.assign(f32.size(), 0);
    for (int64_t row = 0; row < slots * heads * cap; ++row) {
      const int64_t base = (row / cap) * sh + (row % cap) * ss;
      if (type == STRATA_DTYPE_I8)
        kvQuantizeI8Reference(d, &f32[base], sd, &i8[base], sd, &scales[row]);
      for (int64_t e = 0; e < d; ++e) {
        const int64_t n = base + e * sd;
        if (type == STRATA_DTYPE_I8) {
          deq[n] = double(i8[n]) * scales[row];
        } else if (type == STRATA_DTYPE_BF16) {
          bf16[n] = strata_f32_to_bf16(f32[n]);
          const uint32_t bits = uint32_t(bf16[n]) << 16;
          float widened;
          std::memcpy(&widened, &bits, sizeof(widened));
          deq[n] = widened;
        } else {
          deq[n] = f32[n];
        }
      }
    }
  }
  const void* data() const {
    if (dtype == STRATA_DTYPE_I8) return i8.data();
    if (dtype == STRATA_DTYPE_BF16) return bf16.data();
    return f32.data();
  }
  double at(int64_t b, int64_t h, int64_t j, int64_t e) const {
    return deq[b * sb + h * sh + j * ss + e * sd];
  }
};

struct Case {
  Case(int64_t b, int64_t h, int64_t kvh, int64_t q, int64_t k, int64_t dk,
       int64_t dval)
      : batch(b), heads(h), kvHeads(kvh), sq(q), sk(k), d(dk), dv(dval) {}
  int64_t batch, heads, kvHeads, sq, sk, d, dv;
  bool causal = true;
  bool mask = false;  // additive [B, 1, 1, Sk]: every 7th key at -1e4
  bool window = false;
  int64_t windowSize = 0, sinks = 0;
  std::vector<int64_t> slots, lengths;  // empty: batch b, Sk keys
  int64_t slotCount = 0;                // 0: batch
  bool dimMajorV = false;
  bool maskEverything = false;  // every key at the lowest float
  bool maskHidden = false;
  int64_t globalTopk = 0, globalBlock = 0;  // strata_rt_attention_global
};

void setOperand(int64_t* p, int64_t slot, const void* data, int64_t sb,
                int64_t sh, int64_t ss, int64_t sd) {
  p[slot] = reinterpret_cast<intptr_t>(data);
  p[slot + 1] = sb;
  p[slot + 2] = sh;
  p[slot + 3] = ss;
  p[slot + 4] = sd;
}

void setScales(int64_t* p, int64_t slot, const Cache& c, int64_t heads,
               int64_t cap) {
  p[slot] = reinterpret_cast<intptr_t>(c.scales.data());
  p[slot + 1] = heads * cap;
  p[slot + 2] = cap;
  p[slot + 3] = 1;
}

struct Inputs {
  std::vector<float> q, mask;
  Cache k, v;
};

Inputs makeInputs(const Case& c, int64_t dtype) {
  std::mt19937 rng(static_cast<uint32_t>(c.sq * 977 + c.sk * 31 + c.d));
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const int64_t slots = c.slotCount ? c.slotCount : c.batch;
  Inputs in{std::vector<float>(c.batch * c.heads * c.sq * c.d),
            std::vector<float>(c.batch * c.sk, 0.0f),
            Cache(slots, c.kvHeads, c.sk, c.d, false, dtype, rng),
            Cache(slots, c.kvHeads, c.sk, c.dv, c.dimMajorV, dtype, rng)};
  for (float& x : in.q) x = dist(rng);
  for (int64_t n = 0; n < c.batch * c.sk; ++n) {
    if (c.maskEverything)
      in.mask[n] = kLowest;
    else if (n % 7 == 3)
      in.mask[n] = -1e4f;
  }
  return in;
}

// A ring-buffer layout of the caches (strata_rt_attention_ring): positions
// below |kept| in place, the later ones cycling through rows [kept, rows).
struct Ring {
  int64_t kept, rows;
  int64_t index(int64_t j) const {
    return j < kept ? j : kept + (j - kept) % (rows - kept);
  }
};

// |lin| (capacity |cap|) in ring rows, as a sequence that wrote positions
// 0 .. lengths[slot] - 1 in order leaves it: each row holds the last
// position that maps to it.
Cache ringOf(const Cache& lin, int64_t slots, int64_t heads, int64_t cap,
             int64_t d, const Ring& ring,
             const std::vector<int64_t>& slotLengths) {
  Cache r = lin;
  const bool dimMajor = lin.sd != 1;
  r.sd = dimMajor ? ring.rows : 1;
  r.ss = dimMajor ? 1 : d;
  r.sh = ring.rows * d;
  r.sb = heads * ring.rows * d;
  r.f32.assign(slots * r.sb, 0.0f);
  r.i8.assign(r.f32.size(), 0);
  r.bf16.assign(r.f32.size(), 0);
  r.scales.assign(slots * heads * ring.rows, 0.0f);
  r.deq.clear();  // the reference reads the linear cache
  for (int64_t b = 0; b < slots; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t j = 0; j < std::min(slotLengths[b], cap); ++j) {
        const int64_t row = ring.index(j);
        r.scales[(b * heads + h) * ring.rows + row] =
            lin.scales[(b * heads + h) * cap + j];
        for (int64_t e = 0; e < d; ++e) {
          const int64_t from = b * lin.sb + h * lin.sh + j * lin.ss + e * lin.sd;
          const int64_t to = b * r.sb + h * r.sh + row * r.ss + e * r.sd;
          r.f32[to] = lin.f32[from];
          r.i8[to] = lin.i8[from];
          r.bf16[to] = lin.bf16[from];
        }
      }
  return r;
}

// A paged layout of the caches (strata_rt_attention_paged): row b's
// position j in block table[b * perRow + j / size], at j % size of it.
struct Paging {
  int64_t size, perRow, count;
  std::vector<int64_t> table;
};

// The blocks of |lin| (capacity |cap|, slot b's positions [0, cap)) dealt
// out of a pool of |count| blocks in a shuffled order, each batch row's
// table naming its slot's blocks: rows that share a slot share its blocks.
// Blocks nobody reads hold garbage.
Paging pagingOf(const Case& c, int64_t size, std::mt19937& rng) {
  const int64_t slots = c.slotCount ? c.slotCount : c.batch;
  Paging g{size, (c.sk + size - 1) / size, 0, {}};
  g.count = slots * g.perRow + 3;
  std::vector<int64_t> pool(g.count);
  for (int64_t n = 0; n < g.count; ++n) pool[n] = n;
  std::shuffle(pool.begin(), pool.end(), rng);
  for (int64_t b = 0; b < c.batch; ++b) {
    const int64_t slot = c.slots.empty() ? b : c.slots[b];
    for (int64_t n = 0; n < g.perRow; ++n)
      g.table.push_back(pool[slot * g.perRow + n]);
  }
  return g;
}

// |lin|'s rows moved into the blocks |g| gives them.
Cache pagedOf(const Cache& lin, const Case& c, int64_t heads, int64_t d,
              const Paging& g) {
  Cache r = lin;
  const bool dimMajor = lin.sd != 1;
  r.sd = dimMajor ? g.size : 1;
  r.ss = dimMajor ? 1 : d;
  r.sh = g.size * d;
  r.sb = heads * g.size * d;
  r.f32.assign(g.count * r.sb, 9.0f);
  r.i8.assign(r.f32.size(), 99);
  r.bf16.assign(r.f32.size(), 0x7fc0);  // NaN: a block read by mistake shows
  r.scales.assign(g.count * heads * g.size, 1.0f);
  r.deq.clear();  // the reference reads the linear cache
  for (int64_t b = 0; b < c.batch; ++b) {
    const int64_t slot = c.slots.empty() ? b : c.slots[b];
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t j = 0; j < c.sk; ++j) {
        const int64_t block = g.table[b * g.perRow + j / g.size];
        const int64_t row = j % g.size;
        r.scales[(block * heads + h) * g.size + row] =
            lin.scales[(slot * heads + h) * c.sk + j];
        for (int64_t e = 0; e < d; ++e) {
          const int64_t from =
              slot * lin.sb + h * lin.sh + j * lin.ss + e * lin.sd;
          const int64_t to = block * r.sb + h * r.sh + row * r.ss + e * r.sd;
          r.f32[to] = lin.f32[from];
          r.i8[to] = lin.i8[from];
          r.bf16[to] = lin.bf16[from];
        }
      }
  }
  return r;
}

// Runs strata_rt_attention_kv (with |ring|: strata_rt_attention_ring over
// caches in that layout; with |paging|: strata_rt_attention_paged); O is
// [B, H, Sq, Dv] contiguous.
std::vector<float> runKernel(const Case& c, const Inputs& in, int64_t dtype,
                             uint32_t threads, bool f32Import = false,
                             const Ring* ring = nullptr,
                             const Paging* paging = nullptr) {
  const float scale = 1.0f / std::sqrt(float(c.d));
  std::vector<float> o(c.batch * c.heads * c.sq * c.dv, 12345.0f);
  int64_t p[STRATA_ATTN_PAGED_PARAM_COUNT] = {};
  p[STRATA_ATTN_FLAGS] = (c.causal ? STRATA_ATTN_FLAG_CAUSAL : 0) |
                         (c.window ? STRATA_ATTN_FLAG_WINDOW : 0) |
                         (c.maskHidden ? STRATA_ATTN_FLAG_MASK_HIDDEN : 0);
  p[STRATA_ATTN_BATCH] = c.batch;
  p[STRATA_ATTN_HEADS] = c.heads;
  p[STRATA_ATTN_KV_HEADS] = c.kvHeads;
  p[STRATA_ATTN_SQ] = c.sq;
  p[STRATA_ATTN_SK] = c.sk;
  p[STRATA_ATTN_HEAD_DIM] = c.d;
  p[STRATA_ATTN_VALUE_DIM] = c.dv;
  uint32_t bits;
  std::memcpy(&bits, &scale, sizeof(bits));
  p[STRATA_ATTN_SCALE] = bits;
  p[STRATA_ATTN_WINDOW] = c.windowSize;
  p[STRATA_ATTN_SINKS] = c.sinks;
  setOperand(p, STRATA_ATTN_Q, in.q.data(), c.heads * c.sq * c.d, c.sq * c.d,
             c.d, 1);
  setOperand(p, STRATA_ATTN_K, in.k.data(), in.k.sb, in.k.sh, in.k.ss, in.k.sd);
  setOperand(p, STRATA_ATTN_V, in.v.data(), in.v.sb, in.v.sh, in.v.ss, in.v.sd);
  if (c.mask || c.maskEverything)
    setOperand(p, STRATA_ATTN_MASK, in.mask.data(), c.sk, 0, 0, 1);
  setOperand(p, STRATA_ATTN_O, o.data(), c.heads * c.sq * c.dv, c.sq * c.dv,
             c.dv, 1);
  if (!c.slots.empty() && !paging) {
    p[STRATA_ATTN_KV_SLOTS] = reinterpret_cast<intptr_t>(c.slots.data());
    p[STRATA_ATTN_KV_SLOT_COUNT] = c.slotCount;
  }
  if (!c.lengths.empty())
    p[STRATA_ATTN_KV_LENGTHS] = reinterpret_cast<intptr_t>(c.lengths.data());
  p[STRATA_ATTN_KV_DTYPE] = dtype;
  const int64_t rows = ring ? ring->rows : paging ? paging->size : c.sk;
  if (dtype == STRATA_DTYPE_I8) {
    setScales(p, STRATA_ATTN_K_SCALES, in.k, c.kvHeads, rows);
    setScales(p, STRATA_ATTN_V_SCALES, in.v, c.kvHeads, rows);
  }
  ThreadPool pool(threads);
  KernelContext context(&pool);
  if (paging) {
    p[STRATA_ATTN_BLOCK_TABLE] =
        reinterpret_cast<intptr_t>(paging->table.data());
    p[STRATA_ATTN_BLOCKS_PER_ROW] = paging->perRow;
    p[STRATA_ATTN_BLOCK_SIZE] = paging->size;
    p[STRATA_ATTN_BLOCK_COUNT] = paging->count;
    strataAttentionPaged(context.get(), p);
  } else if (ring) {
    p[STRATA_ATTN_RING_KEPT] = ring->kept;
    p[STRATA_ATTN_RING_ROWS] = ring->rows;
    strataAttentionRing(context.get(), p);
  } else if (c.globalTopk > 0) {
    p[STRATA_ATTN_GLOBAL_TOPK] = c.globalTopk;
    p[STRATA_ATTN_GLOBAL_BLOCK] = c.globalBlock;
    strataAttentionGlobal(context.get(), p);
  } else if (f32Import)
    strataAttentionF32(context.get(), p);
  else
    strataAttentionKv(context.get(), p);
  return o;
}

// The key blocks query row (b, h, i) chose (global_topk): the candidates
// sinks < (c + 1) * block <= last - window + 1 ranked by q . key sum in
// double, the globalTopk highest (ties to the lower block).
std::vector<bool> chosenBlocks(const Case& c, const Inputs& in, int64_t b,
                               int64_t kb, int64_t h, int64_t i,
                               int64_t last) {
  const int64_t blocks = c.sk / c.globalBlock + 1;
  std::vector<bool> chosen(blocks, false);
  std::vector<std::pair<double, int64_t>> ranked;
  for (int64_t cb = 0; cb < blocks; ++cb) {
    const int64_t end = (cb + 1) * c.globalBlock;
    if (end <= c.sinks || end > last - c.windowSize + 1) continue;
    double score = 0;
    for (int64_t e = 0; e < c.d; ++e) {
      double sum = 0;
      for (int64_t j = cb * c.globalBlock; j < end; ++j)
        sum += in.k.at(kb, h / (c.heads / c.kvHeads), j, e);
      score += double(in.q[((b * c.heads + h) * c.sq + i) * c.d + e]) * sum;
    }
    ranked.push_back({-score, cb});
  }
  std::sort(ranked.begin(), ranked.end());
  for (size_t n = 0; n < ranked.size() && int64_t(n) < c.globalTopk; ++n)
    chosen[ranked[n].second] = true;
  return chosen;
}

// strata.attention's definition in double over the dequantized cache.
std::vector<double> reference(const Case& c, const Inputs& in) {
  const float scale = 1.0f / std::sqrt(float(c.d));
  const int64_t group = c.heads / c.kvHeads;
  std::vector<double> ref(c.batch * c.heads * c.sq * c.dv);
  for (int64_t b = 0; b < c.batch; ++b) {
    const int64_t kb = c.slots.empty() ? b : c.slots[b];
    const int64_t len = c.lengths.empty() ? c.sk : c.lengths[b];
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t i = 0; i < c.sq; ++i) {
        const int64_t last = i + len - c.sq;
        const bool masked = c.mask || c.maskEverything;
        std::vector<bool> chosen;
        if (c.globalTopk > 0) chosen = chosenBlocks(c, in, b, kb, h, i, last);
        std::vector<double> s(len);
        for (int64_t j = 0; j < len; ++j) {
          bool visible = !c.causal || j <= last;
          if (c.window)
            visible = visible && (j > last - c.windowSize || j < c.sinks ||
                                  (c.globalTopk > 0 &&
                                   chosen[j / c.globalBlock]));
          double dot = 0;
          for (int64_t e = 0; e < c.d; ++e)
            dot += double(in.q[((b * c.heads + h) * c.sq + i) * c.d + e]) *
                   in.k.at(kb, h / group, j, e);
          // fp32 arithmetic for the masked sum, as the definition runs.
          float x = float(dot) * scale;
          float hidden = kLowest;
          if (masked) {
            x += in.mask[b * c.sk + j];
            if (c.maskHidden) hidden += in.mask[b * c.sk + j];
          }
          s[j] = visible ? double(x) : double(hidden);
        }
        double best = -INFINITY, sum = 0;
        for (double x : s) best = std::max(best, x);
        for (double& x : s) sum += (x = std::exp(x - best));
        for (int64_t e = 0; e < c.dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < len; ++j)
            acc += s[j] * in.v.at(kb, h / group, j, e);
          ref[((b * c.heads + h) * c.sq + i) * c.dv + e] = len ? acc / sum : 0;
        }
      }
  }
  return ref;
}

void check(const Case& c, int64_t dtype, uint32_t threads,
           const Ring* ring = nullptr, int64_t blockSize = 0) {
  const Inputs in = makeInputs(c, dtype);
  std::vector<float> o;
  if (blockSize > 0) {
    std::mt19937 rng(static_cast<uint32_t>(blockSize * 131 + c.sq));
    const Paging paging = pagingOf(c, blockSize, rng);
    const Inputs pagedIn{in.q, in.mask, pagedOf(in.k, c, c.kvHeads, c.d, paging),
                         pagedOf(in.v, c, c.kvHeads, c.dv, paging)};
    o = runKernel(c, pagedIn, dtype, threads, false, nullptr, &paging);
  } else if (ring) {
    // Each slot holds what its row wrote (one row per slot here).
    const int64_t slots = c.slotCount ? c.slotCount : c.batch;
    std::vector<int64_t> written(slots, 0);
    for (int64_t b = 0; b < c.batch; ++b)
      written[c.slots.empty() ? b : c.slots[b]] = c.lengths[b];
    const Inputs ringIn{in.q, in.mask,
                        ringOf(in.k, slots, c.kvHeads, c.sk, c.d, *ring,
                               written),
                        ringOf(in.v, slots, c.kvHeads, c.sk, c.dv, *ring,
                               written)};
    o = runKernel(c, ringIn, dtype, threads, false, ring);
  } else {
    o = runKernel(c, in, dtype, threads);
  }
  const std::vector<double> ref = reference(c, in);
  double maxRef = 0;
  for (double y : ref) maxRef = std::max(maxRef, std::fabs(y));
  const double tolerance = 2e-5 * std::max(1.0, maxRef);
  for (size_t n = 0; n < ref.size(); ++n)
    ASSERT_NEAR(o[n], ref[n], tolerance)
        << "element " << n << " dtype " << dtype << " B" << c.batch << " H"
        << c.heads << "/" << c.kvHeads << " Sq" << c.sq << " Sk" << c.sk << " D"
        << c.d << " Dv" << c.dv << " threads " << threads;
}

const int64_t kDtypes[] = {STRATA_DTYPE_I8, STRATA_DTYPE_BF16};

class AttentionKvKernelTest : public IsaTest {};

// Decode rows 1..4 (the row path) against a long cache, grouped heads,
// a padding mask; head dims that are and are not whole vectors.
TEST_P(AttentionKvKernelTest, DecodeRows) {
  for (int64_t dtype : kDtypes)
    for (int64_t sq = 1; sq <= 4; ++sq) {
      Case c{2, 8, 2, sq, 1025, 64, 64};
      c.mask = true;
      check(c, dtype, 2);
      check({1, 2, 1, sq, 77, 40, 72}, dtype, 1);
      check({1, 2, 2, sq, 50, 128, 128}, dtype, 1);
    }
}

// More than 4 rows: K^T and V dequantized into the fp32 panels; blocks of
// 64 rows with a ragged last one.
TEST_P(AttentionKvKernelTest, PrefillBlocks) {
  for (int64_t dtype : kDtypes) {
    check({1, 4, 2, 17, 17, 64, 64}, dtype, 2);
    Case c{2, 4, 1, 150, 150, 64, 64};
    c.mask = true;
    check(c, dtype, 2);
    check({1, 2, 2, 70, 90, 40, 24}, dtype, 1);
  }
}

// Row b reads cache slot slots[b] and only its first lengths[b] keys, the
// causal diagonal following its own count.
TEST_P(AttentionKvKernelTest, SlotsAndLengths) {
  for (int64_t dtype : kDtypes)
    for (int64_t sq : {1, 3, 9}) {
      Case c{4, 4, 2, sq, 40, 32, 32};
      c.slots = {3, 0, 4, 1};
      c.slotCount = 5;
      c.lengths = {17, 40, 9, 33};
      check(c, dtype, 2);
    }
}

TEST_P(AttentionKvKernelTest, WindowWithSinks) {
  for (int64_t dtype : kDtypes)
    for (int64_t sq : {1, 100}) {
      Case c{1, 2, 2, sq, sq == 1 ? 300 : 100, 32, 32};
      c.window = true;
      c.windowSize = sq == 1 ? 64 : 16;
      c.sinks = 4;
      check(c, dtype, 2);
    }
}

// Rows that see nothing (more queries than keys) or only keys at the
// lowest float take the exact path, which dequantizes element by element.
TEST_P(AttentionKvKernelTest, RowsWithNothingVisible) {
  for (int64_t dtype : kDtypes) {
    check({2, 2, 2, 80, 70, 16, 16}, dtype, 2);
    for (bool maskHidden : {false, true})
      for (int64_t sq : {1, 3, 80}) {
        Case c{2, 2, 2, sq, 90, 16, 16};
        c.maskEverything = true;
        c.maskHidden = maskHidden;
        check(c, dtype, 2);
      }
  }
}

// V dim-major inside each head (element stride = capacity): no vector
// kernel applies, so rows are widened one by one in both paths.
TEST_P(AttentionKvKernelTest, DimMajorValues) {
  for (int64_t dtype : kDtypes)
    for (int64_t sq : {2, 40}) {
      Case c{1, 4, 2, sq, 60, 32, 48};
      c.dimMajorV = true;
      check(c, dtype, 2);
    }
}

// KV_DTYPE fp32 runs the fp32 kernel's code: the same bits as the
// strata_rt_attention_f32 import.
TEST_P(AttentionKvKernelTest, Fp32CacheMatchesTheF32Import) {
  for (int64_t sq : {1, 33}) {
    Case c{2, 4, 2, sq, 70, 32, 32};
    c.mask = true;
    const Inputs in = makeInputs(c, STRATA_DTYPE_F32);
    const std::vector<float> kv = runKernel(c, in, STRATA_DTYPE_F32, 2);
    const std::vector<float> f32 =
        runKernel(c, in, STRATA_DTYPE_F32, 2, /*f32Import=*/true);
    ASSERT_EQ(0, std::memcmp(kv.data(), f32.data(), kv.size() * 4));
  }
}

// How far compression moves the output: attention over the int8 (bf16)
// cache of random K/V in [-2, 2] against attention over the fp32 cache of
// the same values, at context 1024 (head dim 64, scale 1/8). int8 moves
// each value by at most amax / 254 (<= 7.9e-3 here); bf16 by at most 2^-9
// relative (<= 3.9e-3). Measured largest output differences: 1.7e-3 and
// 3.1e-3 (int8, 1 and 64 rows), 0.9e-3 and 1.2e-3 (bf16); the bounds
// leave about 3x.
TEST_P(AttentionKvKernelTest, FidelityAgainstFp32Cache) {
  for (int64_t sq : {1, 64}) {
    Case c{1, 8, 2, sq, 1024, 64, 64};
    const Inputs exact = makeInputs(c, STRATA_DTYPE_F32);
    const std::vector<float> base = runKernel(c, exact, STRATA_DTYPE_F32, 2);
    for (int64_t dtype : kDtypes) {
      const Inputs in = makeInputs(c, dtype);  // same seed: same values
      ASSERT_EQ(in.k.f32, exact.k.f32);
      const std::vector<float> o = runKernel(c, in, dtype, 2);
      double worst = 0;
      for (size_t n = 0; n < o.size(); ++n)
        worst = std::max(worst, std::fabs(double(o[n]) - base[n]));
      EXPECT_LT(worst, dtype == STRATA_DTYPE_I8 ? 1e-2 : 4e-3)
          << "dtype " << dtype << " sq " << sq;
    }
  }
}

// Calls the import as a checked run would (a trap set); returns the
// failure kind if it ended the run, 0 if it returned.
int64_t endedRunKind(strata_rt_context_t* context, const int64_t* params,
                     void (*import)(strata_rt_context_t*, const int64_t*) =
                         strataAttentionKv) {
  RunTrap trap;
  context->trap = &trap;
  if (setjmp(trap.jump) != 0) {
    context->trap = nullptr;
    return trap.failure.kind;
  }
  import(context, params);
  context->trap = nullptr;
  return 0;
}

// Parameters no compiler emits end the run (INTERNAL) before anything is
// written.
TEST(AttentionKvErrorsTest, UnknownDtypeAndMissingScales) {
  Case c{1, 2, 2, 1, 16, 16, 16};
  const Inputs in = makeInputs(c, STRATA_DTYPE_I8);
  for (int64_t dtype : {int64_t{STRATA_DTYPE_F16}, int64_t{STRATA_DTYPE_I8}}) {
    int64_t p[STRATA_ATTN_KV_PARAM_COUNT] = {};
    std::vector<float> o(c.heads * c.dv, 7.0f);
    p[STRATA_ATTN_BATCH] = 1;
    p[STRATA_ATTN_HEADS] = p[STRATA_ATTN_KV_HEADS] = 2;
    p[STRATA_ATTN_SQ] = 1;
    p[STRATA_ATTN_SK] = 16;
    p[STRATA_ATTN_HEAD_DIM] = p[STRATA_ATTN_VALUE_DIM] = 16;
    setOperand(p, STRATA_ATTN_Q, in.q.data(), 32, 16, 16, 1);
    setOperand(p, STRATA_ATTN_K, in.k.data(), in.k.sb, in.k.sh, 16, 1);
    setOperand(p, STRATA_ATTN_V, in.v.data(), in.v.sb, in.v.sh, 16, 1);
    setOperand(p, STRATA_ATTN_O, o.data(), 32, 16, 16, 1);
    p[STRATA_ATTN_KV_DTYPE] = dtype;  // int8 here has no scales
    KernelContext context;
    EXPECT_EQ(endedRunKind(context.get(), p), kInternalFailure) << dtype;
    EXPECT_EQ(o, std::vector<float>(c.heads * c.dv, 7.0f));
  }
}

// A paged cache gives what the contiguous one gives: decode rows and
// prefill blocks (whose packing reads four keys at a time, some across a
// block's end), blocks of 16 and of 5 positions, rows sharing their blocks
// (two rows of one slot), ragged lengths, a window with sinks, a mask, a
// dim-major V; fp32, int8 and bf16.
TEST_P(AttentionKvKernelTest, PagedCache) {
  for (int64_t dtype :
       {int64_t{STRATA_DTYPE_F32}, int64_t{STRATA_DTYPE_I8},
        int64_t{STRATA_DTYPE_BF16}})
    for (int64_t blockSize : {16, 5})
      for (int64_t sq : {1, 4, 9, 70}) {
        Case c{4, 4, 2, sq, 150, 32, 32};
        c.slots = {2, 0, 2, 1};
        c.slotCount = 3;
        c.lengths = {150, 97, 80, std::max<int64_t>(sq, 33)};
        c.mask = true;
        check(c, dtype, 2, nullptr, blockSize);
        Case w{1, 2, 1, sq, 200, 64, 48};
        w.window = true;
        w.windowSize = 40;
        w.sinks = 4;
        w.lengths = {200};
        w.dimMajorV = sq == 4;
        check(w, dtype, 1, nullptr, blockSize);
      }
}

// A paged run whose table does not cover its rows, or that names no
// table, slots beside it, or a block outside the pool, ends the run
// (INTERNAL) before anything is written.
TEST(AttentionKvErrorsTest, PagedTablesOutOfRange) {
  Case c{2, 2, 2, 1, 32, 16, 16};
  c.lengths = {32, 20};
  const Inputs in = makeInputs(c, STRATA_DTYPE_F32);
  std::vector<int64_t> table = {0, 1, 2, 3};
  const std::vector<int64_t> slots = {0, 1};
  enum Fault { kNone, kBlockOutside, kNegativeBlock, kShortTable, kNoTable,
               kSlotsToo, kNoLengths };
  for (Fault fault : {kNone, kBlockOutside, kNegativeBlock, kShortTable,
                      kNoTable, kSlotsToo, kNoLengths}) {
    table = {0, 1, 2, 3};
    int64_t p[STRATA_ATTN_PAGED_PARAM_COUNT] = {};
    std::vector<float> o(c.batch * c.heads * c.dv, 7.0f);
    p[STRATA_ATTN_BATCH] = c.batch;
    p[STRATA_ATTN_HEADS] = p[STRATA_ATTN_KV_HEADS] = 2;
    p[STRATA_ATTN_SQ] = 1;
    p[STRATA_ATTN_SK] = 32;
    p[STRATA_ATTN_HEAD_DIM] = p[STRATA_ATTN_VALUE_DIM] = 16;
    setOperand(p, STRATA_ATTN_Q, in.q.data(), 32, 16, 16, 1);
    // Four blocks of 16 positions: the first two slots' caches.
    setOperand(p, STRATA_ATTN_K, in.k.data(), 2 * 16 * 16, 16 * 16, 16, 1);
    setOperand(p, STRATA_ATTN_V, in.v.data(), 2 * 16 * 16, 16 * 16, 16, 1);
    setOperand(p, STRATA_ATTN_O, o.data(), 32, 16, 16, 1);
    p[STRATA_ATTN_KV_LENGTHS] = reinterpret_cast<intptr_t>(c.lengths.data());
    p[STRATA_ATTN_BLOCK_TABLE] = reinterpret_cast<intptr_t>(table.data());
    p[STRATA_ATTN_BLOCKS_PER_ROW] = 2;
    p[STRATA_ATTN_BLOCK_SIZE] = 16;
    p[STRATA_ATTN_BLOCK_COUNT] = 4;
    if (fault == kBlockOutside) table[3] = 4;
    if (fault == kNegativeBlock) table[2] = -1;
    if (fault == kShortTable) p[STRATA_ATTN_BLOCKS_PER_ROW] = 1;
    if (fault == kNoTable) p[STRATA_ATTN_BLOCK_TABLE] = 0;
    if (fault == kSlotsToo) {
      p[STRATA_ATTN_KV_SLOTS] = reinterpret_cast<intptr_t>(slots.data());
      p[STRATA_ATTN_KV_SLOT_COUNT] = 2;
    }
    if (fault == kNoLengths) p[STRATA_ATTN_KV_LENGTHS] = 0;
    KernelContext context;
    EXPECT_EQ(endedRunKind(context.get(), p, strataAttentionPaged),
              fault == kNone ? 0 : kInternalFailure)
        << fault;
    if (fault != kNone) {
      EXPECT_EQ(o, std::vector<float>(c.batch * c.heads * c.dv, 7.0f));
    }
  }
}

// A ring-buffer cache gives what the whole cache gives: decode rows whose
// windows wrap around the ring or not, a prefill chunk that wrapped it
// (the smallest ring that holds it), sinks kept apart, kept rows past the
// sinks, no sinks, a dim-major V; fp32, int8 and bf16.
TEST_P(AttentionKvKernelTest, RingBufferCache) {
  for (int64_t dtype :
       {int64_t{STRATA_DTYPE_F32}, int64_t{STRATA_DTYPE_I8},
        int64_t{STRATA_DTYPE_BF16}}) {
    for (int64_t sq : {1, 3}) {
      Case c{3, 4, 2, sq, 300, 32, 32};
      c.window = true;
      c.windowSize = 64;
      c.sinks = 4;
      c.slots = {1, 2, 0};
      c.slotCount = 3;
      c.lengths = {300, 151, 60};
      const Ring ring{4, 4 + 64 + sq - 1 + 5};
      check(c, dtype, 2, &ring);
    }
    {
      Case c{1, 4, 1, 40, 300, 64, 64};  // a chunk at the end of 300
      c.window = true;
      c.windowSize = 32;
      c.sinks = 4;
      c.lengths = {300};
      const Ring exact{4, 4 + 32 + 40 - 1};
      check(c, dtype, 2, &exact);
      const Ring keptMore{8, 8 + 32 + 40 + 20};
      check(c, dtype, 1, &keptMore);
    }
    {
      Case c{2, 2, 2, 70, 500, 40, 24};  // no sinks, ragged dims
      c.window = true;
      c.windowSize = 16;
      c.lengths = {500, 70};
      c.dimMajorV = true;
      const Ring ring{0, 16 + 70 - 1 + 3};
      check(c, dtype, 2, &ring);
    }
  }
}

// Top-k global blocks beside a window and sinks match the reference that
// chooses the same blocks: decode rows over slots and lengths, grouped
// heads, a prefill chunk at the end of a longer context, a whole prompt
// with a padding mask, sinks that end inside a block, more blocks asked
// for than there are candidates, a dim-major V; fp32, int8 and bf16.
TEST_P(AttentionKvKernelTest, GlobalBlocks) {
  for (int64_t dtype :
       {int64_t{STRATA_DTYPE_F32}, int64_t{STRATA_DTYPE_I8},
        int64_t{STRATA_DTYPE_BF16}}) {
    for (int64_t sq : {1, 3}) {
      Case c{3, 4, 2, sq, 300, 32, 32};
      c.window = true;
      c.windowSize = 48;
      c.sinks = 4;
      c.globalTopk = 3;
      c.globalBlock = 16;
      c.slots = {1, 2, 0};
      c.slotCount = 3;
      c.lengths = {300, 151, 60};
      check(c, dtype, 2);
    }
    {
      Case c{1, 4, 1, 40, 300, 64, 64};  // a chunk at the end of 300
      c.window = true;
      c.windowSize = 32;
      c.sinks = 20;  // block 1 partly among the sinks
      c.globalTopk = 2;
      c.globalBlock = 16;
      c.lengths = {300};
      check(c, dtype, 2);
    }
    {
      Case c{2, 2, 2, 70, 70, 40, 24};  // whole prompts, a padding mask
      c.window = true;
      c.windowSize = 8;
      c.mask = true;
      c.globalTopk = 4;
      c.globalBlock = 5;
      c.dimMajorV = true;
      check(c, dtype, 1);
      c.globalTopk = 100;  // every candidate
      check(c, dtype, 2);
    }
  }
}

// The params of one 2-head row of |c|'s 8 queries (d = 16) over |rows| key
// rows of |in|, writing |o|, with |flags| and a window of |window| keys:
// the error tests' problem, each then breaking it its own way.
void setSmallProblem(int64_t* p, const Case& c, const Inputs& in, float* o,
                     int64_t flags, int64_t window, int64_t rows) {
  p[STRATA_ATTN_FLAGS] = flags;
  p[STRATA_ATTN_BATCH] = 1;
  p[STRATA_ATTN_HEADS] = p[STRATA_ATTN_KV_HEADS] = 2;
  p[STRATA_ATTN_SQ] = c.sq;
  p[STRATA_ATTN_SK] = 64;
  p[STRATA_ATTN_HEAD_DIM] = p[STRATA_ATTN_VALUE_DIM] = 16;
  p[STRATA_ATTN_WINDOW] = window;
  setOperand(p, STRATA_ATTN_Q, in.q.data(), 2 * 8 * 16, 8 * 16, 16, 1);
  setOperand(p, STRATA_ATTN_K, in.k.data(), 2 * rows * 16, rows * 16, 16, 1);
  setOperand(p, STRATA_ATTN_V, in.v.data(), 2 * rows * 16, rows * 16, 16, 1);
  setOperand(p, STRATA_ATTN_O, o, 2 * 8 * 16, 8 * 16, 16, 1);
}

// Global blocks without a causal window, or with no blocks or no keys a
// block, end the run (INTERNAL) before anything is written.
TEST(AttentionKvErrorsTest, GlobalBlocksWithoutAWindow) {
  Case c{1, 2, 2, 8, 64, 16, 16};
  const Inputs in = makeInputs(c, STRATA_DTYPE_F32);
  struct Bad {
    int64_t flags, window, topk, block;
  };
  const int64_t causalWindow = STRATA_ATTN_FLAG_CAUSAL | STRATA_ATTN_FLAG_WINDOW;
  for (const Bad& bad : {
           Bad{STRATA_ATTN_FLAG_CAUSAL, 16, 2, 8},  // no window
           Bad{STRATA_ATTN_FLAG_WINDOW, 16, 2, 8},  // not causal
           Bad{causalWindow, 0, 2, 8},              // an empty window
           Bad{causalWindow, 16, 0, 8},             // no blocks
           Bad{causalWindow, 16, 2, 0},             // empty blocks
       }) {
    int64_t p[STRATA_ATTN_GLOBAL_PARAM_COUNT] = {};
    std::vector<float> o(c.heads * c.sq * c.dv, 7.0f);
    setSmallProblem(p, c, in, o.data(), bad.flags, bad.window, 64);
    p[STRATA_ATTN_GLOBAL_TOPK] = bad.topk;
    p[STRATA_ATTN_GLOBAL_BLOCK] = bad.block;
    KernelContext context;
    EXPECT_EQ(endedRunKind(context.get(), p, strataAttentionGlobal),
              kInternalFailure)
        << bad.flags << " " << bad.window << " " << bad.topk << " "
        << bad.block;
    EXPECT_EQ(o, std::vector<float>(c.heads * c.sq * c.dv, 7.0f));
  }
}

// A ring that cannot hold a row's window and the new rows, or a ring call
// without a window or lengths, ends the run (INTERNAL) before anything is
// written.
TEST(AttentionKvErrorsTest, RingThatCannotHoldTheWindow) {
  Case c{1, 2, 2, 8, 64, 16, 16};
  const Inputs in = makeInputs(c, STRATA_DTYPE_F32);
  const int64_t lengths[1] = {64};
  struct Bad {
    int64_t flags, window, sinks, kept, rows;
    bool lengths;
  };
  const int64_t causalWindow = STRATA_ATTN_FLAG_CAUSAL | STRATA_ATTN_FLAG_WINDOW;
  for (const Bad& bad : {
           Bad{causalWindow, 16, 2, 2, 2 + 16 + 8 - 2, true},  // one row short
           Bad{causalWindow, 16, 4, 2, 40, true},   // sinks past the kept rows
           Bad{causalWindow, 16, 2, 40, 40, true},  // no ring rows
           Bad{causalWindow, 16, 2, 2, 0, true},    // no rows at all
           Bad{STRATA_ATTN_FLAG_CAUSAL, 16, 2, 2, 40, true},  // no window
           Bad{causalWindow, 16, 2, 2, 40, false},            // no lengths
       }) {
    int64_t p[STRATA_ATTN_RING_PARAM_COUNT] = {};
    std::vector<float> o(c.heads * c.sq * c.dv, 7.0f);
    setSmallProblem(p, c, in, o.data(), bad.flags, bad.window, 40);
    p[STRATA_ATTN_SINKS] = bad.sinks;
    if (bad.lengths)
      p[STRATA_ATTN_KV_LENGTHS] = reinterpret_cast<intptr_t>(lengths);
    p[STRATA_ATTN_RING_KEPT] = bad.kept;
    p[STRATA_ATTN_RING_ROWS] = bad.rows;
    KernelContext context;
    EXPECT_EQ(endedRunKind(context.get(), p, strataAttentionRing),
              kInternalFailure)
        << bad.kept << " " << bad.rows;
    EXPECT_EQ(o, std::vector<float>(c.heads * c.sq * c.dv, 7.0f));
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, AttentionKvKernelTest, kAllIsas, isaName);

}  // namespace
}  // namespace strata::runtime::kernels
