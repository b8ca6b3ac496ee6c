//===- kv_quantize_kernel_test.cc - strata_rt_kv_quantize bit for bit -----===//
// SPDX-License-Identifier: Apache-2.0
// The cache writes of every ISA the CPU has against the scalar reference,
// byte for byte and scale for scale: int8 rows with ties, zeros, NaNs,
// infinities, denormals and values near the fp32 maximum, bf16 rows with
// ties and the special values, rows placed by slots and start positions,
// strided sources, and the parameters that end the run.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "isa_test.h"
#include "kernel_context.h"
#include "kernels/attention_kv.h"
#include "kernels/attention_kv_kernels.h"
#include "strata_kernel_abi.h"
#include "thread_pool.h"

namespace strata::runtime::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

uint32_t bitsOf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  return u;
}

// The ABI's definition worked by hand: amax 127 makes inv 1, so the values
// themselves are rounded, halves away from zero. The rounding is the
// truncation of the fp32 sum y + 0.5, which rounds 0.5 - 2^-25 + 0.5 up to
// 1 (as the int8 activations of strata_rt_matmul_f32_w8a8 do).
TEST(KvQuantizeReferenceTest, RoundsHalvesAwayFromZero) {
  const float x[] = {127.0f, 0.5f,   -0.5f,       1.5f,        -2.5f,      0.0f,
                     -0.0f,  126.5f, 0.49999997f, -126.49999f, 0.49999994f};
  const int8_t want[] = {127, 1, -1, 2, -3, 0, 0, 127, 1, -126, 0};
  int8_t q[11];
  float scale = -1.0f;
  kvQuantizeI8Reference(11, x, 1, q, 1, &scale);
  EXPECT_EQ(scale, 1.0f);
  for (int e = 0; e < 11; ++e) EXPECT_EQ(q[e], want[e]) << "element " << e;
}

TEST(KvQuantizeReferenceTest, ZeroAndNonFiniteRows) {
  int8_t q[4];
  float scale = -1.0f;
  const float zeros[] = {0.0f, -0.0f, 0.0f, 0.0f};
  kvQuantizeI8Reference(4, zeros, 1, q, 1, &scale);
  EXPECT_EQ(bitsOf(scale), 0u);
  for (int8_t v : q) EXPECT_EQ(v, 0);
  // A NaN: scale +inf, the NaN at 0, the rest by the finite amax.
  const float nan[] = {2.0f, kNaN, -1.0f, 0.5f};
  kvQuantizeI8Reference(4, nan, 1, q, 1, &scale);
  EXPECT_EQ(scale, kInf);
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], 0);
  EXPECT_EQ(q[2], -64);  // -63.5 away from zero
  // An infinity: amax is infinite, inv 0, every value 0 (inf * 0 is a NaN,
  // which the clamps leave for 0); q * scale is NaN for all of them.
  const float inf[] = {2.0f, -kInf, -1.0f, kInf};
  kvQuantizeI8Reference(4, inf, 1, q, 1, &scale);
  EXPECT_EQ(scale, kInf);
  for (int8_t v : q) EXPECT_EQ(v, 0);
}

// Rows of every special kind the vector sets must reproduce: lengths that
// are and are not whole vectors put them in the vector body and the tail.
std::vector<std::vector<float>> specialRows(int64_t d, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<std::vector<float>> rows;
  auto random = [&] {
    std::vector<float> r(d);
    for (float& x : r) x = dist(rng);
    return r;
  };
  for (int n = 0; n < 3; ++n) rows.push_back(random());
  std::vector<float> halves(d);  // amax 127: ties after the multiply
  for (int64_t e = 0; e < d; ++e)
    halves[e] = e == 0 ? 127.0f : float(int(e % 254) - 127) + 0.5f;
  rows.push_back(halves);
  rows.push_back(std::vector<float>(d, 0.0f));
  for (float special : {kNaN, kInf, -kInf}) {
    std::vector<float> r = random();
    r[(d - 1) / 2] = special;
    rows.push_back(r);
    r = random();
    r[d - 1] = special;  // in the tail where there is one
    rows.push_back(r);
  }
  std::vector<float> tiny = random();  // denormals: 127 / amax overflows
  for (float& x : tiny) x *= 1e-39f;
  rows.push_back(tiny);
  std::vector<float> huge = random();
  for (float& x : huge) x *= 1.1e38f;
  rows.push_back(huge);
  std::vector<float> ties = random();  // bf16 ties and near-ties
  for (int64_t e = 0; e < d; ++e) {
    const uint32_t u = (0x3f800000u + uint32_t(e) * 0x10000u) | 0x8000u;
    std::memcpy(&ties[e], &u, sizeof(float));
  }
  rows.push_back(ties);
  return rows;
}

// The cache: [slots, heads, capacity, d] of the element type, each byte
// set to 0x5a first so that writes outside the rows show.
struct Target {
  int64_t dtype, slots, heads, cap, d;
  std::vector<uint8_t> data;
  std::vector<float> scales;
  Target(int64_t type, int64_t s, int64_t h, int64_t c, int64_t dim)
      : dtype(type),
        slots(s),
        heads(h),
        cap(c),
        d(dim),
        data(s * h * c * dim * strata_dtype_size(uint32_t(type)), 0x5a),
        scales(s * h * c, -3.0f) {}
};

// Writes src [batch, heads, rows, d] (src dim stride |sd|) through the
// import, placing batch b at slots[b] from position firsts[b].
void quantize(Target& t, const std::vector<float>& src, int64_t batch,
              int64_t rows, int64_t sd, const std::vector<int64_t>& slots,
              const std::vector<int64_t>& firsts, uint32_t threads) {
  int64_t p[STRATA_KVQ_PARAM_COUNT] = {};
  p[STRATA_KVQ_DTYPE] = t.dtype;
  p[STRATA_KVQ_BATCH] = batch;
  p[STRATA_KVQ_KV_HEADS] = t.heads;
  p[STRATA_KVQ_ROWS] = rows;
  p[STRATA_KVQ_HEAD_DIM] = t.d;
  p[STRATA_KVQ_SRC] = reinterpret_cast<intptr_t>(src.data());
  p[STRATA_KVQ_SRC + 1] = t.heads * rows * t.d * sd;
  p[STRATA_KVQ_SRC + 2] = rows * t.d * sd;
  p[STRATA_KVQ_SRC + 3] = t.d * sd;
  p[STRATA_KVQ_SRC + 4] = sd;
  p[STRATA_KVQ_DST] = reinterpret_cast<intptr_t>(t.data.data());
  p[STRATA_KVQ_DST + 1] = t.heads * t.cap * t.d;
  p[STRATA_KVQ_DST + 2] = t.cap * t.d;
  p[STRATA_KVQ_DST + 3] = t.d;
  p[STRATA_KVQ_DST + 4] = 1;
  p[STRATA_KVQ_SCALES] = reinterpret_cast<intptr_t>(t.scales.data());
  p[STRATA_KVQ_SCALES + 1] = t.heads * t.cap;
  p[STRATA_KVQ_SCALES + 2] = t.cap;
  p[STRATA_KVQ_SCALES + 3] = 1;
  p[STRATA_KVQ_SLOTS] = reinterpret_cast<intptr_t>(slots.data());
  p[STRATA_KVQ_SLOT_COUNT] = t.slots;
  p[STRATA_KVQ_POSITIONS] = reinterpret_cast<intptr_t>(firsts.data());
  p[STRATA_KVQ_CAPACITY] = t.cap;
  ThreadPool pool(threads);
  KernelContext context(&pool);
  strataKvQuantize(context.get(), p);
}

// What the import must have written: the reference per row at its place,
// the rest untouched.
Target expected(const Target& t, const std::vector<float>& src, int64_t batch,
                int64_t rows, int64_t sd, const std::vector<int64_t>& slots,
                const std::vector<int64_t>& firsts) {
  Target want(t.dtype, t.slots, t.heads, t.cap, t.d);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < t.heads; ++h)
      for (int64_t r = 0; r < rows; ++r) {
        const float* x = &src[((b * t.heads + h) * rows + r) * t.d * sd];
        const int64_t row = (slots[b] * t.heads + h) * t.cap + firsts[b] + r;
        if (t.dtype == STRATA_DTYPE_I8) {
          kvQuantizeI8Reference(
              t.d, x, sd, reinterpret_cast<int8_t*>(&want.data[row * t.d]), 1,
              &want.scales[row]);
        } else {
          uint16_t* y =
              reinterpret_cast<uint16_t*>(want.data.data()) + row * t.d;
          for (int64_t e = 0; e < t.d; ++e)
            y[e] = strata_f32_to_bf16(x[e * sd]);
        }
      }
  return want;
}

class KvQuantizeKernelTest : public IsaTest {};

// Every special row, every head dim shape, contiguous and strided sources,
// int8 and bf16, one and two threads (the pool takes big writes).
TEST_P(KvQuantizeKernelTest, MatchesTheReferenceBitForBit) {
  for (int64_t dtype : {int64_t{STRATA_DTYPE_I8}, int64_t{STRATA_DTYPE_BF16}})
    for (int64_t d : {1, 7, 16, 17, 64, 100, 128})
      for (int64_t sd : {1, 2}) {
        std::mt19937 rng(static_cast<uint32_t>(d * 7 + sd));
        const std::vector<std::vector<float>> special = specialRows(d, rng);
        const int64_t heads = 2, batch = 3;
        const int64_t rows = int64_t(special.size());
        std::vector<float> src(batch * heads * rows * d * sd, kNaN);
        for (int64_t n = 0; n < batch * heads * rows; ++n)
          for (int64_t e = 0; e < d; ++e)
            src[(n * d + e) * sd] = special[(n + n / rows) % rows][e];
        const std::vector<int64_t> slots = {2, 0, 3}, firsts = {5, 0, 1};
        Target t(dtype, 4, heads, rows + 6, d);
        quantize(t, src, batch, rows, sd, slots, firsts, sd == 1 ? 2 : 1);
        const Target want = expected(t, src, batch, rows, sd, slots, firsts);
        ASSERT_EQ(t.data, want.data) << "dtype " << dtype << " d " << d;
        ASSERT_EQ(0, std::memcmp(t.scales.data(), want.scales.data(),
                                 t.scales.size() * sizeof(float)))
            << "d " << d;
      }
}

// The vector sets' row functions directly (the import takes them only for
// unit strides): each special row, compared with the reference.
TEST_P(KvQuantizeKernelTest, RowFunctionsMatchTheReference) {
  const AttentionKvKernels& kv = attentionKvKernels();
  for (int64_t d : {3, 16, 31, 32, 33, 80, 256}) {
    std::mt19937 rng(static_cast<uint32_t>(d));
    for (const std::vector<float>& row : specialRows(d, rng)) {
      std::vector<int8_t> q(d), wantQ(d);
      float scale = 0, wantScale = 0;
      kv.quantizeI8(d, row.data(), q.data(), &scale);
      kvQuantizeI8Reference(d, row.data(), 1, wantQ.data(), 1, &wantScale);
      ASSERT_EQ(q, wantQ) << kv.name << " d " << d;
      ASSERT_EQ(bitsOf(scale), bitsOf(wantScale)) << kv.name << " d " << d;
      std::vector<uint16_t> y(d);
      kv.toBf16(d, row.data(), y.data());
      for (int64_t e = 0; e < d; ++e)
        ASSERT_EQ(y[e], strata_f32_to_bf16(row[e])) << kv.name << " " << e;
    }
  }
}

// fp32 caches are copied; POSITIONS 0 puts every batch at START; the
// scales are left alone.
TEST_P(KvQuantizeKernelTest, Fp32CopyFromStart) {
  Target t(STRATA_DTYPE_F32, 2, 1, 8, 5);
  std::vector<float> src(2 * 3 * 5);
  for (size_t n = 0; n < src.size(); ++n) src[n] = float(n) - 7.25f;
  int64_t p[STRATA_KVQ_PARAM_COUNT] = {};
  p[STRATA_KVQ_BATCH] = 2;  // DTYPE 0: fp32
  p[STRATA_KVQ_KV_HEADS] = 1;
  p[STRATA_KVQ_ROWS] = 3;
  p[STRATA_KVQ_HEAD_DIM] = 5;
  p[STRATA_KVQ_SRC] = reinterpret_cast<intptr_t>(src.data());
  p[STRATA_KVQ_SRC + 1] = 15;
  p[STRATA_KVQ_SRC + 2] = 15;
  p[STRATA_KVQ_SRC + 3] = 5;
  p[STRATA_KVQ_SRC + 4] = 1;
  p[STRATA_KVQ_DST] = reinterpret_cast<intptr_t>(t.data.data());
  p[STRATA_KVQ_DST + 1] = 40;
  p[STRATA_KVQ_DST + 2] = 40;
  p[STRATA_KVQ_DST + 3] = 5;
  p[STRATA_KVQ_DST + 4] = 1;
  p[STRATA_KVQ_SLOT_COUNT] = 2;
  p[STRATA_KVQ_START] = 4;
  p[STRATA_KVQ_CAPACITY] = 8;
  KernelContext context;
  strataKvQuantize(context.get(), p);
  const float* cache = reinterpret_cast<const float*>(t.data.data());
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t pos = 0; pos < 8; ++pos)
      for (int64_t e = 0; e < 5; ++e) {
        const float got = cache[(b * 8 + pos) * 5 + e];
        if (pos >= 4 && pos < 7)
          EXPECT_EQ(got, src[(b * 3 + pos - 4) * 5 + e]);
        else
          EXPECT_EQ(bitsOf(got), 0x5a5a5a5au);
      }
  for (float s : t.scales) EXPECT_EQ(s, -3.0f);
}

// A paged cache gets the bytes and scales the contiguous one gets, each
// position in the block its row's table names (rows that cross a block's
// end included), and nothing else written: fp32, int8 and bf16.
TEST_P(KvQuantizeKernelTest, PagedWriteMatchesContiguous) {
  constexpr int64_t kBatch = 2, kHeads = 2, kRows = 4, kD = 16;
  constexpr int64_t kBlock = 4, kPerRow = 3, kPool = 7;
  const std::vector<int64_t> table = {5, 1, 3, 0, 6, 2};
  const std::vector<int64_t> firsts = {2, 7}, slots = {0, 1};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> src(kBatch * kHeads * kRows * kD);
  for (float& x : src) x = dist(rng);
  for (int64_t dtype : {int64_t{STRATA_DTYPE_F32}, int64_t{STRATA_DTYPE_I8},
                        int64_t{STRATA_DTYPE_BF16}}) {
    Target linear(dtype, kBatch, kHeads, kPerRow * kBlock, kD);
    quantize(linear, src, kBatch, kRows, 1, slots, firsts, 1);
    // The pool as [blocks, heads, kBlock, kD].
    Target paged(dtype, kPool, kHeads, kBlock, kD);
    int64_t p[STRATA_KVQ_PAGED_PARAM_COUNT] = {};
    p[STRATA_KVQ_DTYPE] = dtype;
    p[STRATA_KVQ_BATCH] = kBatch;
    p[STRATA_KVQ_KV_HEADS] = kHeads;
    p[STRATA_KVQ_ROWS] = kRows;
    p[STRATA_KVQ_HEAD_DIM] = kD;
    p[STRATA_KVQ_SRC] = reinterpret_cast<intptr_t>(src.data());
    p[STRATA_KVQ_SRC + 1] = kHeads * kRows * kD;
    p[STRATA_KVQ_SRC + 2] = kRows * kD;
    p[STRATA_KVQ_SRC + 3] = kD;
    p[STRATA_KVQ_SRC + 4] = 1;
    p[STRATA_KVQ_DST] = reinterpret_cast<intptr_t>(paged.data.data());
    p[STRATA_KVQ_DST + 1] = kHeads * kBlock * kD;
    p[STRATA_KVQ_DST + 2] = kBlock * kD;
    p[STRATA_KVQ_DST + 3] = kD;
    p[STRATA_KVQ_DST + 4] = 1;
    p[STRATA_KVQ_SCALES] = reinterpret_cast<intptr_t>(paged.scales.data());
    p[STRATA_KVQ_SCALES + 1] = kHeads * kBlock;
    p[STRATA_KVQ_SCALES + 2] = kBlock;
    p[STRATA_KVQ_SCALES + 3] = 1;
    p[STRATA_KVQ_POSITIONS] = reinterpret_cast<intptr_t>(firsts.data());
    p[STRATA_KVQ_CAPACITY] = kPerRow * kBlock;
    p[STRATA_KVQ_BLOCK_TABLE] = reinterpret_cast<intptr_t>(table.data());
    p[STRATA_KVQ_BLOCKS_PER_ROW] = kPerRow;
    p[STRATA_KVQ_BLOCK_SIZE] = kBlock;
    p[STRATA_KVQ_BLOCK_COUNT] = kPool;
    KernelContext context;
    strataKvQuantizePaged(context.get(), p);
    const int64_t bytes = kD * strata_dtype_size(uint32_t(dtype));
    std::vector<bool> written(kPool * kHeads * kBlock, false);
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t h = 0; h < kHeads; ++h)
        for (int64_t t = firsts[b]; t < firsts[b] + kRows; ++t) {
          const int64_t from = (b * kHeads + h) * kPerRow * kBlock + t;
          const int64_t to =
              (table[b * kPerRow + t / kBlock] * kHeads + h) * kBlock +
              t % kBlock;
          written[to] = true;
          ASSERT_EQ(0, std::memcmp(&paged.data[to * bytes],
                                   &linear.data[from * bytes], bytes))
              << "dtype " << dtype << " row " << b << " position " << t;
          ASSERT_EQ(bitsOf(paged.scales[to]), bitsOf(linear.scales[from]));
        }
    for (int64_t row = 0; row < kPool * kHeads * kBlock; ++row) {
      if (written[row]) continue;
      for (int64_t n = 0; n < bytes; ++n)
        ASSERT_EQ(paged.data[row * bytes + n], 0x5a) << "row " << row;
      ASSERT_EQ(paged.scales[row], -3.0f);
    }
  }
}

// Calls the import as a checked run would (a trap set); returns the
// failure kind if it ended the run, 0 if it returned.
int64_t endedRunKind(strata_rt_context_t* context, const int64_t* params,
                     void (*import)(strata_rt_context_t*, const int64_t*) =
                         strataKvQuantize) {
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

// Parameters no compiler emits end the run (INTERNAL) before any write:
// an unknown dtype, int8 without scales, a slot or positions out of range.
TEST(KvQuantizeErrorsTest, EndTheRunBeforeWriting) {
  std::vector<float> src(2 * 4, 1.0f);
  const std::vector<int64_t> goodSlots = {1}, badSlots = {2};
  const std::vector<int64_t> goodFirst = {4}, badFirst = {5}, negative = {-1};
  struct Bad {
    int64_t dtype;
    bool scales;
    const std::vector<int64_t>* slots;
    const std::vector<int64_t>* first;
  };
  const Bad cases[] = {{STRATA_DTYPE_F16, true, &goodSlots, &goodFirst},
                       {STRATA_DTYPE_I8, false, &goodSlots, &goodFirst},
                       {STRATA_DTYPE_I8, true, &badSlots, &goodFirst},
                       {STRATA_DTYPE_BF16, true, &goodSlots, &badFirst},
                       {STRATA_DTYPE_I8, true, &goodSlots, &negative}};
  for (const Bad& bad : cases) {
    Target t(STRATA_DTYPE_I8, 2, 1, 6, 4);
    int64_t p[STRATA_KVQ_PARAM_COUNT] = {};
    p[STRATA_KVQ_DTYPE] = bad.dtype;
    p[STRATA_KVQ_BATCH] = 1;
    p[STRATA_KVQ_KV_HEADS] = 1;
    p[STRATA_KVQ_ROWS] = 2;
    p[STRATA_KVQ_HEAD_DIM] = 4;
    p[STRATA_KVQ_SRC] = reinterpret_cast<intptr_t>(src.data());
    p[STRATA_KVQ_SRC + 3] = 4;
    p[STRATA_KVQ_SRC + 4] = 1;
    p[STRATA_KVQ_DST] = reinterpret_cast<intptr_t>(t.data.data());
    p[STRATA_KVQ_DST + 1] = 24;
    p[STRATA_KVQ_DST + 3] = 4;
    p[STRATA_KVQ_DST + 4] = 1;
    if (bad.scales) {
      p[STRATA_KVQ_SCALES] = reinterpret_cast<intptr_t>(t.scales.data());
      p[STRATA_KVQ_SCALES + 1] = 6;
      p[STRATA_KVQ_SCALES + 3] = 1;
    }
    p[STRATA_KVQ_SLOTS] = reinterpret_cast<intptr_t>(bad.slots->data());
    p[STRATA_KVQ_SLOT_COUNT] = 2;
    p[STRATA_KVQ_POSITIONS] = reinterpret_cast<intptr_t>(bad.first->data());
    p[STRATA_KVQ_CAPACITY] = 6;
    KernelContext context;
    EXPECT_EQ(endedRunKind(context.get(), p), kInternalFailure) << bad.dtype;
    EXPECT_EQ(t.data, std::vector<uint8_t>(t.data.size(), 0x5a));
    for (float s : t.scales) EXPECT_EQ(s, -3.0f);
  }
}

// A paged write whose table names a block outside the pool (where its
// rows reach), or that has no table, slots beside it, or a capacity other
// than its table's, ends the run before any write.
TEST(KvQuantizeErrorsTest, PagedTablesOutOfRange) {
  std::vector<float> src(2 * 4, 1.0f);
  const std::vector<int64_t> first = {3}, slots = {0};
  enum Fault { kNone, kBlockOutside, kNoTable, kSlotsToo, kCapacity };
  for (Fault fault : {kNone, kBlockOutside, kNoTable, kSlotsToo, kCapacity}) {
    // Positions 3 and 4 cross from the row's first block into its second.
    std::vector<int64_t> table = {1, fault == kBlockOutside ? 2 : 0, 9};
    Target t(STRATA_DTYPE_I8, 2, 1, 4, 4);
    int64_t p[STRATA_KVQ_PAGED_PARAM_COUNT] = {};
    p[STRATA_KVQ_DTYPE] = STRATA_DTYPE_I8;
    p[STRATA_KVQ_BATCH] = 1;
    p[STRATA_KVQ_KV_HEADS] = 1;
    p[STRATA_KVQ_ROWS] = 2;
    p[STRATA_KVQ_HEAD_DIM] = 4;
    p[STRATA_KVQ_SRC] = reinterpret_cast<intptr_t>(src.data());
    p[STRATA_KVQ_SRC + 3] = 4;
    p[STRATA_KVQ_SRC + 4] = 1;
    p[STRATA_KVQ_DST] = reinterpret_cast<intptr_t>(t.data.data());
    p[STRATA_KVQ_DST + 1] = 16;
    p[STRATA_KVQ_DST + 3] = 4;
    p[STRATA_KVQ_DST + 4] = 1;
    p[STRATA_KVQ_SCALES] = reinterpret_cast<intptr_t>(t.scales.data());
    p[STRATA_KVQ_SCALES + 1] = 4;
    p[STRATA_KVQ_SCALES + 3] = 1;
    if (fault == kSlotsToo)
      p[STRATA_KVQ_SLOTS] = reinterpret_cast<intptr_t>(slots.data());
    p[STRATA_KVQ_POSITIONS] = reinterpret_cast<intptr_t>(first.data());
    p[STRATA_KVQ_CAPACITY] = fault == kCapacity ? 16 : 12;
    if (fault != kNoTable)
      p[STRATA_KVQ_BLOCK_TABLE] = reinterpret_cast<intptr_t>(table.data());
    p[STRATA_KVQ_BLOCKS_PER_ROW] = 3;
    p[STRATA_KVQ_BLOCK_SIZE] = 4;
    p[STRATA_KVQ_BLOCK_COUNT] = 2;
    KernelContext context;
    EXPECT_EQ(endedRunKind(context.get(), p, strataKvQuantizePaged),
              fault == kNone ? 0 : kInternalFailure)
        << fault;
    if (fault == kNone) continue;
    EXPECT_EQ(t.data, std::vector<uint8_t>(t.data.size(), 0x5a));
    for (float s : t.scales) EXPECT_EQ(s, -3.0f);
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, KvQuantizeKernelTest, kAllIsas, isaName);

}  // namespace
}  // namespace strata::runtime::kernels
