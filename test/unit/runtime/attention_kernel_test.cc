//===- attention_kernel_test.cc - strata_rt_attention_f32 vs a reference --===//
// SPDX-License-Identifier: Apache-2.0
// Every ISA the CPU has; prefill blocks and decode rows; causal, padding
// masks broadcast over heads and queries, grouped-query heads, windows with
// sinks, transposed operands, head dims that are not multiples of 32, and
// rows with nothing visible, compared with a double-precision evaluation of
// strata.attention's definition (hidden keys score the lowest float).
// Tolerance 2e-5 * max(1, max|ref|): fp32 sums of up to ~1000 terms plus
// the ~2e-7 relative error of the vector exp.

#include <algorithm>
#include <csetjmp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_context.h"
#include "kernels/attention_f32.h"
#include "isa_test.h"
#include "kernels/matmul_f32.h"
#include "strata_kernel_abi.h"
#include "thread_pool.h"

namespace strata::runtime::kernels {
namespace {

struct Case {
  int64_t batch, heads, kvHeads, sq, sk, d, dv;
  bool causal, mask, window;
  int64_t windowSize, sinks;
  bool transposeQ, transposeV;  // dim-major instead of sequence-major
  float maskFill;               // value of masked-out padding entries
  bool maskAllButLast = false;  // batch 1: only the last key unmasked
  bool maskHidden = false;      // STRATA_ATTN_FLAG_MASK_HIDDEN
  bool maskEverything = false;  // every key of every batch at maskFill
  bool bf16Products = false;    // STRATA_ATTN_FLAG_BF16_PRODUCTS
};

// A [B, H, S, X] tensor, sequence-major or dim-major inside each head.
struct Tensor4 {
  std::vector<float> data;
  int64_t sb, sh, ss, sd;
  Tensor4(int64_t b, int64_t h, int64_t s, int64_t x, bool dimMajor)
      : data(b * h * s * x) {
    sd = dimMajor ? s : 1;
    ss = dimMajor ? 1 : x;
    sh = s * x;
    sb = h * s * x;
  }
  float& at(int64_t b, int64_t h, int64_t s, int64_t x) {
    return data[b * sb + h * sh + s * ss + x * sd];
  }
};

void setOperand(int64_t* params, int64_t slot, const float* p, int64_t sb,
                int64_t sh, int64_t ss, int64_t sd) {
  params[slot] = reinterpret_cast<intptr_t>(p);
  params[slot + 1] = sb;
  params[slot + 2] = sh;
  params[slot + 3] = ss;
  params[slot + 4] = sd;
}

// |out|: the kernel's output, if wanted.
void check(const Case& c, uint32_t threads,
           std::vector<float>* out = nullptr) {
  std::mt19937 rng(static_cast<uint32_t>(c.sq * 977 + c.sk * 31 + c.d));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor4 q(c.batch, c.heads, c.sq, c.d, c.transposeQ);
  Tensor4 k(c.batch, c.kvHeads, c.sk, c.d, false);
  Tensor4 v(c.batch, c.kvHeads, c.sk, c.dv, c.transposeV);
  Tensor4 o(c.batch, c.heads, c.sq, c.dv, false);
  for (auto* t : {&q, &k, &v})
    for (float& x : t->data) x = 2.0f * dist(rng);
  std::fill(o.data.begin(), o.data.end(), 12345.0f);
  // Padding mask [B, 1, 1, Sk]: the last key of batch 0 and, in batch 1,
  // every key but the first two (or all but the last) are masked out.
  std::vector<float> mask(c.batch * c.sk, 0.0f);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t j = 0; j < c.sk; ++j) {
      const bool batch1 = c.maskAllButLast ? j != c.sk - 1 : j >= 2;
      if ((b == 0 && j == c.sk - 1) || (b == 1 && batch1) ||
          c.maskEverything)
        mask[b * c.sk + j] = c.maskFill;
    }
  const float scale = 1.0f / std::sqrt(static_cast<float>(std::max<int64_t>(c.d, 1)));

  int64_t p[STRATA_ATTN_PARAM_COUNT] = {};
  p[STRATA_ATTN_FLAGS] = (c.causal ? STRATA_ATTN_FLAG_CAUSAL : 0) |
                         (c.window ? STRATA_ATTN_FLAG_WINDOW : 0) |
                         (c.maskHidden ? STRATA_ATTN_FLAG_MASK_HIDDEN : 0) |
                         (c.bf16Products ? STRATA_ATTN_FLAG_BF16_PRODUCTS : 0);
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
  setOperand(p, STRATA_ATTN_Q, q.data.data(), q.sb, q.sh, q.ss, q.sd);
  setOperand(p, STRATA_ATTN_K, k.data.data(), k.sb, k.sh, k.ss, k.sd);
  setOperand(p, STRATA_ATTN_V, v.data.data(), v.sb, v.sh, v.ss, v.sd);
  if (c.mask) setOperand(p, STRATA_ATTN_MASK, mask.data(), c.sk, 0, 0, 1);
  setOperand(p, STRATA_ATTN_O, o.data.data(), o.sb, o.sh, o.ss, o.sd);
  ThreadPool pool(threads);
  KernelContext context(&pool);
  strataAttentionF32(context.get(), p);

  const double lowest = -std::numeric_limits<float>::max();
  const int64_t group = c.heads / c.kvHeads;
  std::vector<double> ref(o.data.size());
  // With bf16 products, each output's bound (tolerance below).
  std::vector<double> bound(o.data.size(), 0.0);
  double maxRef = 0;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t i = 0; i < c.sq; ++i) {
        const int64_t last = i + c.sk - c.sq;
        std::vector<double> s(c.sk);
        double scoreError = 0, maxV = 0;
        for (int64_t j = 0; j < c.sk; ++j) {
          bool visible = !c.causal || j <= last;
          if (c.window) visible = visible && (j > last - c.windowSize || j < c.sinks);
          double dot = 0, magnitude = 0;
          for (int64_t e = 0; e < c.d; ++e) {
            dot += double(q.at(b, h, i, e)) * k.at(b, h / group, j, e);
            magnitude +=
                std::fabs(double(q.at(b, h, i, e)) * k.at(b, h / group, j, e));
          }
          if (visible) scoreError = std::max(scoreError, magnitude * scale);
          // fp32 arithmetic for the masked sum, as the definition runs.
          float x = static_cast<float>(dot) * scale;
          if (c.mask) x += mask[b * c.sk + j];
          // A hidden key: the lowest float, plus the mask with maskHidden
          // (in fp32: lowest + lowest is -inf).
          float hidden = static_cast<float>(lowest);
          if (c.maskHidden && c.mask) hidden += mask[b * c.sk + j];
          s[j] = visible ? double(x) : double(hidden);
        }
        double best = -INFINITY;
        for (double x : s) best = std::max(best, x);
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - best));
        for (int64_t j = 0; j < c.sk; ++j)
          for (int64_t e = 0; e < c.dv; ++e)
            maxV = std::max(maxV, double(std::fabs(v.at(b, h / group, j, e))));
        // bf16 products: each operand rounded (relative 2^-9), so a score
        // moves by at most 2^-8 of its terms' magnitude; the probabilities
        // (relative to their sum) by twice the largest score move, then
        // their own rounding (2^-8 with V's): the output by that much of
        // max |V|.
        const double rowBound =
            (2 * 0x1p-8 * scoreError + 0x1p-7) * maxV * 1.01;
        for (int64_t e = 0; e < c.dv; ++e) {
          bound[b * o.sb + h * o.sh + i * o.ss + e] = rowBound;
          double acc = 0;
          for (int64_t j = 0; j < c.sk; ++j) acc += s[j] * v.at(b, h / group, j, e);
          const double y = c.sk ? acc / sum : 0.0;
          ref[b * o.sb + h * o.sh + i * o.ss + e] = y;
          maxRef = std::max(maxRef, std::fabs(y));
        }
      }
  const double tolerance = 2e-5 * std::max(1.0, maxRef);
  for (size_t n = 0; n < ref.size(); ++n)
    ASSERT_NEAR(o.data[n], ref[n],
                tolerance + (c.bf16Products ? bound[n] : 0.0))
        << "element " << n << " of B" << c.batch << " H" << c.heads << "/"
        << c.kvHeads << " Sq" << c.sq << " Sk" << c.sk << " D" << c.d << " Dv"
        << c.dv << " causal=" << c.causal << " mask=" << c.mask
        << " window=" << c.window << " threads=" << threads;
  if (out) *out = o.data;
}

class AttentionKernelTest : public IsaTest {};

// With STRATA_ATTN_FLAG_BF16_PRODUCTS: the prefill blocks' products run in
// bf16 on AMX tiles, or with vdpbf16ps where the bf16 matmul does (within
// the rounding bound), elsewhere in fp32 (the flag is a licence); causal
// with a padding mask, GQA, head dims that are
// not multiples of 32, a ragged last block, rows with nothing visible,
// decode rows, and a window (which keeps the fp32 blocks).
class AttentionBf16ProductsTest : public IsaTest {};

TEST_P(AttentionBf16ProductsTest, PrefillBlocks) {
  const float lowest = -std::numeric_limits<float>::max();
  auto bf16 = [](Case c) {
    c.bf16Products = true;
    return c;
  };
  for (uint32_t threads : {1u, 2u})
    check(bf16({2, 3, 3, 150, 150, 64, 64, true, true, false, 0, 0, false,
                false, lowest}), threads);
  check(bf16({1, 2, 2, 70, 70, 40, 24, true, false, false, 0, 0, false, false,
              lowest}), 2);
  check(bf16({1, 8, 2, 40, 40, 32, 32, true, false, false, 0, 0, true, true,
              lowest}), 2);
  check(bf16({1, 4, 4, 33, 97, 80, 72, false, true, false, 0, 0, false,
              false, lowest}), 2);
  Case everything = bf16({2, 2, 2, 20, 20, 16, 16, true, true, false, 0, 0,
                          false, false, lowest});
  everything.maskEverything = true;
  check(everything, 2);
  check(bf16({2, 4, 4, 1, 300, 64, 64, true, true, false, 0, 0, false, false,
              lowest}), 2);
  check(bf16({1, 2, 2, 100, 100, 64, 64, true, false, true, 16, 4, false,
              false, lowest}), 2);
}

// Where the bf16 products run (AMX tiles; vdpbf16ps where the bf16 matmul
// uses it) the flag changes the results, elsewhere nothing.
TEST_P(AttentionBf16ProductsTest, FlagReachesTheTiles) {
  Case c{1, 2, 2, 64, 64, 64, 64, true, false, false, 0, 0, false, false,
         -std::numeric_limits<float>::max()};
  std::vector<float> fp32, bf16;
  check(c, 1, &fp32);
  c.bf16Products = true;
  check(c, 1, &bf16);
  const bool bf16Products =
      matmulIsa() == MatmulIsa::kAmx ||
      (matmulIsa() == MatmulIsa::kAvx512 &&
       std::string(matmulBf16KernelSet()) == "avx512bf16");
  EXPECT_EQ(fp32 != bf16, bf16Products);
  EXPECT_EQ(std::string(attentionF32KernelSet()).find("bf16 products") !=
                std::string::npos,
            bf16Products);
}

INSTANTIATE_TEST_SUITE_P(Isa, AttentionBf16ProductsTest, kPackedGemmIsas,
                         isaName);

constexpr float kLowest = -std::numeric_limits<float>::max();

// GPT-2's prefill: causal plus an additive padding mask, blocks of 64 rows
// with a ragged last block.
TEST_P(AttentionKernelTest, CausalPrefillWithPaddingMask) {
  for (uint32_t threads : {1u, 2u})
    check({2, 3, 3, 150, 150, 64, 64, true, true, false, 0, 0, false, false,
           kLowest}, threads);
  check({1, 2, 2, 70, 70, 40, 24, true, false, false, 0, 0, false, false,
         kLowest}, 2);
}

// One decode row against a long cache, and a few rows (speculative decode).
TEST_P(AttentionKernelTest, DecodeRows) {
  check({2, 4, 4, 1, 1025, 64, 64, true, true, false, 0, 0, false, false,
         kLowest}, 2);
  check({1, 2, 2, 3, 77, 33, 65, true, false, false, 0, 0, false, false,
         kLowest}, 1);
}

TEST_P(AttentionKernelTest, GroupedQueryHeadsAndTransposedOperands) {
  check({1, 8, 2, 40, 40, 32, 32, true, false, false, 0, 0, true, true,
         kLowest}, 2);
  check({1, 4, 1, 1, 90, 32, 48, false, false, false, 0, 0, true, true,
         kLowest}, 2);
}

// The query heads of a K/V head run in one task, split into parts when
// there are fewer than two tasks a thread: whole groups, equal parts, a
// shorter last part, one head a part; decode rows and prefill blocks.
TEST_P(AttentionKernelTest, GroupsSplitAcrossThreads) {
  const struct {
    int64_t batch, heads, kvHeads, sq;
    uint32_t threads;
  } shapes[] = {{1, 12, 4, 1, 2}, {1, 12, 1, 1, 2}, {2, 6, 2, 1, 3},
                {1, 5, 1, 1, 3},  {1, 6, 2, 70, 4}, {3, 4, 2, 1, 2}};
  for (const auto& x : shapes)
    check({x.batch, x.heads, x.kvHeads, x.sq, 96, 32, 32, true, false, false,
           0, 0, false, false, kLowest},
          x.threads);
}

TEST_P(AttentionKernelTest, NonCausalAndWindowWithSinks) {
  check({2, 2, 2, 33, 50, 16, 16, false, true, false, 0, 0, false, false,
         -1e4f}, 2);
  check({1, 2, 2, 100, 100, 32, 32, true, false, true, 16, 4, false, false,
         kLowest}, 2);
  check({1, 2, 2, 1, 300, 32, 32, true, false, true, 64, 2, false, false,
         kLowest}, 1);
  // Windows far shorter than the context (the kernel skips the key panels
  // between the sinks and the window): a whole prompt, a chunk at the end
  // of a longer context, decode rows, sinks inside a panel and none.
  check({1, 2, 2, 300, 300, 32, 40, true, false, true, 40, 3, false, false,
         kLowest}, 2);
  check({1, 2, 1, 70, 500, 64, 64, true, false, true, 64, 4, false, false,
         kLowest}, 2);
  check({2, 2, 2, 3, 700, 16, 16, true, true, true, 100, 0, false, false,
         kLowest}, 2);
}

// Rows that see no key (more queries than keys, causal) or only masked
// keys fall back to the definition: a uniform average over every key.
TEST_P(AttentionKernelTest, RowsWithNothingVisible) {
  check({2, 2, 2, 80, 70, 16, 16, true, true, false, 0, 0, false, false,
         kLowest}, 2);
  for (int64_t sq : {2, 9})
    check({2, 1, 1, sq, sq + 1, 8, 8, true, true, false, 0, 0, false, false,
           kLowest, true}, 1);
}

// A fully padded row of a graph that hides keys first and adds the mask
// after: hidden keys at lowest + lowest = -inf drop out, so the row is the
// average over its visible keys only (without the flag: over every key).
TEST_P(AttentionKernelTest, MaskAddedToHiddenKeys) {
  for (bool maskHidden : {true, false})
    for (int64_t sq : {1, 3, 80}) {
      Case c{2, 2, 2, sq, 90, 16, 16, true, true, false, 0, 0, false, false,
             kLowest};
      c.maskHidden = maskHidden;
      c.maskEverything = true;
      check(c, 2);
    }
}

// Fills the params of causal GQA attention over [batch, heads, seq, dim]
// contiguous operands (K/V with |kvBatch| batch entries).
void causalParams(int64_t* p, int64_t batch, int64_t heads, int64_t kvHeads,
                  int64_t sq, int64_t sk, int64_t d, const float* q,
                  const float* k, const float* v, float* o) {
  p[STRATA_ATTN_FLAGS] = STRATA_ATTN_FLAG_CAUSAL;
  p[STRATA_ATTN_BATCH] = batch;
  p[STRATA_ATTN_HEADS] = heads;
  p[STRATA_ATTN_KV_HEADS] = kvHeads;
  p[STRATA_ATTN_SQ] = sq;
  p[STRATA_ATTN_SK] = sk;
  p[STRATA_ATTN_HEAD_DIM] = d;
  p[STRATA_ATTN_VALUE_DIM] = d;
  const float scale = 0.25f;
  uint32_t bits;
  std::memcpy(&bits, &scale, sizeof(bits));
  p[STRATA_ATTN_SCALE] = bits;
  setOperand(p, STRATA_ATTN_Q, q, heads * sq * d, sq * d, d, 1);
  setOperand(p, STRATA_ATTN_K, k, kvHeads * sk * d, sk * d, d, 1);
  setOperand(p, STRATA_ATTN_V, v, kvHeads * sk * d, sk * d, d, 1);
  setOperand(p, STRATA_ATTN_O, o, heads * sq * d, sq * d, d, 1);
}

// Decode over a cache of sequences: row b reads the K/V of cache slot
// slots[b] and sees only its first lengths[b] keys. Each row must equal
// attention run alone on a K/V of exactly those keys (which the other
// tests check against the definition).
TEST_P(AttentionKernelTest, RowsReadTheirOwnCacheSlotAndLength) {
  constexpr int64_t kSlots = 5, kCapacity = 40, kHeads = 4, kKvHeads = 2;
  constexpr int64_t kD = 16;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> cacheK(kSlots * kKvHeads * kCapacity * kD);
  std::vector<float> cacheV(cacheK.size());
  for (float& x : cacheK) x = dist(rng);
  for (float& x : cacheV) x = dist(rng);
  for (int64_t sq : {1, 3, 9}) {
    const std::vector<int64_t> slots = {3, 0, 4, 1};
    const std::vector<int64_t> lengths = {17, 40, 9, 33};
    const int64_t batch = static_cast<int64_t>(slots.size());
    std::vector<float> q(batch * kHeads * sq * kD), o(q.size(), -7.0f);
    for (float& x : q) x = dist(rng);
    int64_t p[STRATA_ATTN_PARAM_COUNT] = {};
    causalParams(p, batch, kHeads, kKvHeads, sq, kCapacity, kD, q.data(),
                 cacheK.data(), cacheV.data(), o.data());
    p[STRATA_ATTN_KV_SLOTS] = reinterpret_cast<intptr_t>(slots.data());
    p[STRATA_ATTN_KV_SLOT_COUNT] = kSlots;
    p[STRATA_ATTN_KV_LENGTHS] = reinterpret_cast<intptr_t>(lengths.data());
    ThreadPool pool(2);
    KernelContext context(&pool);
    strataAttentionF32(context.get(), p);

    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = lengths[b];
      // The row's keys copied out of its slot.
      std::vector<float> k(kKvHeads * len * kD), v(k.size());
      for (int64_t h = 0; h < kKvHeads; ++h)
        for (int64_t j = 0; j < len; ++j)
          for (int64_t e = 0; e < kD; ++e) {
            const int64_t from = ((slots[b] * kKvHeads + h) * kCapacity + j) * kD + e;
            k[(h * len + j) * kD + e] = cacheK[from];
            v[(h * len + j) * kD + e] = cacheV[from];
          }
      std::vector<float> alone(kHeads * sq * kD, -7.0f);
      int64_t r[STRATA_ATTN_PARAM_COUNT] = {};
      causalParams(r, 1, kHeads, kKvHeads, sq, len, kD,
                   q.data() + b * kHeads * sq * kD, k.data(), v.data(),
                   alone.data());
      KernelContext single;
      strataAttentionF32(single.get(), r);
      for (size_t i = 0; i < alone.size(); ++i)
        ASSERT_NEAR(o[b * kHeads * sq * kD + i], alone[i], 1e-5f)
            << "row " << b << " element " << i << " sq " << sq;
    }
  }
}

// strata_rt_attention_append: K and V each a past part and a new part laid
// out as an export spells them ([B, T, H, D] transposed to [B, H, T, D]),
// against strata_rt_attention_f32 on the concatenation, which the append
// must also write out exactly. Decode rows read both parts where they lie
// (a different summation order over the parts: 1e-5), prefill blocks the
// written present (the same sums); an empty past, an empty new part, no
// query rows (the present is still written), a window over both parts, a
// padding mask, and grouped heads split across threads.
TEST_P(AttentionKernelTest, AppendAttendsOverPastAndNewAndWritesThePresent) {
  struct AppendCase {
    int64_t batch, heads, kvHeads, sq, past, added, d;
    bool window, mask = false;
  };
  const AppendCase cases[] = {
      {2, 4, 4, 1, 300, 1, 64, false}, {1, 4, 2, 3, 41, 3, 32, false},
      {1, 2, 1, 1, 0, 1, 64, false},   {2, 3, 3, 20, 17, 20, 16, false},
      {1, 2, 2, 1, 90, 1, 64, true},   {1, 2, 2, 2, 5, 0, 8, false},
      {1, 8, 1, 1, 64, 1, 20, false},  {2, 4, 1, 1, 33, 1, 16, false, true},
      {2, 2, 2, 9, 12, 9, 32, false, true}, {2, 2, 2, 0, 7, 3, 16, false},
  };
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const AppendCase& c : cases) {
    const int64_t sk = c.past + c.added, kv = c.kvHeads, d = c.d;
    std::vector<float> q(c.batch * c.heads * c.sq * d);
    std::vector<float> pastK(c.batch * kv * c.past * d), pastV(pastK.size());
    // New rows sequence-major over heads: row t of head h at (t * kv + h) * d.
    std::vector<float> newK(c.batch * c.added * kv * d), newV(newK.size());
    for (auto* t : {&q, &pastK, &pastV, &newK, &newV})
      for (float& x : *t) x = dist(rng);
    std::vector<float> k(c.batch * kv * sk * d), v(k.size());
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t h = 0; h < kv; ++h)
        for (int64_t j = 0; j < sk; ++j)
          for (int64_t e = 0; e < d; ++e) {
            const int64_t to = ((b * kv + h) * sk + j) * d + e;
            const int64_t old = ((b * kv + h) * c.past + j) * d + e;
            const int64_t added =
                ((b * c.added + (j - c.past)) * kv + h) * d + e;
            k[to] = j < c.past ? pastK[old] : newK[added];
            v[to] = j < c.past ? pastV[old] : newV[added];
          }
    std::vector<float> expected(c.batch * c.heads * c.sq * d, -7.0f);
    int64_t r[STRATA_ATTN_PARAM_COUNT] = {};
    causalParams(r, c.batch, c.heads, kv, c.sq, sk, d, q.data(), k.data(),
                 v.data(), expected.data());
    if (c.window) {
      r[STRATA_ATTN_FLAGS] |= STRATA_ATTN_FLAG_WINDOW;
      r[STRATA_ATTN_WINDOW] = 32;
      r[STRATA_ATTN_SINKS] = 2;
    }
    // [B, 1, 1, SK]: batch 1 pads its first three keys.
    std::vector<float> mask(c.batch * sk, 0.0f);
    for (int64_t j = 0; j < std::min<int64_t>(3, sk) && c.batch > 1; ++j)
      mask[sk + j] = kLowest;
    if (c.mask) setOperand(r, STRATA_ATTN_MASK, mask.data(), sk, 0, 0, 1);
    KernelContext single;
    strataAttentionF32(single.get(), r);

    std::vector<float> o(expected.size(), -7.0f);
    std::vector<float> presentK(k.size(), -9.0f), presentV(v.size(), -9.0f);
    int64_t p[STRATA_ATTN_APPEND_PARAM_COUNT] = {};
    std::memcpy(p, r, sizeof(r));
    setOperand(p, STRATA_ATTN_O, o.data(), c.heads * c.sq * d, c.sq * d, d, 1);
    setOperand(p, STRATA_ATTN_K, pastK.data(), kv * c.past * d, c.past * d, d,
               1);
    setOperand(p, STRATA_ATTN_V, pastV.data(), kv * c.past * d, c.past * d, d,
               1);
    setOperand(p, STRATA_ATTN_K_NEW, newK.data(), c.added * kv * d, d, kv * d,
               1);
    setOperand(p, STRATA_ATTN_V_NEW, newV.data(), c.added * kv * d, d, kv * d,
               1);
    setOperand(p, STRATA_ATTN_K_PRESENT, presentK.data(), kv * sk * d, sk * d,
               d, 1);
    setOperand(p, STRATA_ATTN_V_PRESENT, presentV.data(), kv * sk * d, sk * d,
               d, 1);
    p[STRATA_ATTN_PAST] = c.past;
    ThreadPool pool(2);
    KernelContext context(&pool);
    strataAttentionAppend(context.get(), p);
    EXPECT_EQ(presentK, k) << "past " << c.past << " new " << c.added;
    EXPECT_EQ(presentV, v) << "past " << c.past << " new " << c.added;
    for (size_t i = 0; i < o.size(); ++i)
      ASSERT_NEAR(o[i], expected[i], 1e-5f)
          << "element " << i << " past " << c.past << " new " << c.added
          << " sq " << c.sq;
  }
}

// A past beyond the keys, or slots with an append, end the run.
TEST_P(AttentionKernelTest, AppendRefusesAPastBeyondItsKeys) {
  std::vector<float> q(16), k(64), v(64), o(16), pk(64), pv(64);
  int64_t p[STRATA_ATTN_APPEND_PARAM_COUNT] = {};
  causalParams(p, 1, 1, 1, 1, 4, 16, q.data(), k.data(), v.data(), o.data());
  setOperand(p, STRATA_ATTN_K_NEW, k.data(), 64, 64, 16, 1);
  setOperand(p, STRATA_ATTN_V_NEW, v.data(), 64, 64, 16, 1);
  setOperand(p, STRATA_ATTN_K_PRESENT, pk.data(), 64, 64, 16, 1);
  setOperand(p, STRATA_ATTN_V_PRESENT, pv.data(), 64, 64, 16, 1);
  for (int64_t past : {int64_t{5}, int64_t{-1}}) {
    p[STRATA_ATTN_PAST] = past;
    KernelContext context;
    RunTrap trap;
    context.get()->trap = &trap;
    if (setjmp(trap.jump) == 0) {
      strataAttentionAppend(context.get(), p);
      ADD_FAILURE() << "past " << past << " did not end the run";
    } else {
      EXPECT_EQ(trap.failure.kind, kInternalFailure) << past;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, AttentionKernelTest, kAllIsas, isaName);

}  // namespace
}  // namespace strata::runtime::kernels
