//===- matmul_bf16_kernel_test.cc - The bf16 matmul vs a reference -------===//
// SPDX-License-Identifier: Apache-2.0
// The bf16 matmul on every ISA the CPU has (AVX512-BF16, AVX2 on AVX-512
// hosts too, scalar): ragged M, K and N, several k blocks, accumulation,
// strides, batches, non-finite values, threads, the packer and A's
// rounding, and the params it must refuse. Each output is checked against
// the exact sum (double) over the bf16-rounded operands, and bit for bit
// against the fp32 sums in the order the ABI header defines.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "isa_test.h"
#include "kernel_context.h"
#include "kernels/amx.h"
#include "kernels/matmul_bf16_kernels.h"
#include "kernels/matmul_f32.h"
#include "packed_gemm_test_util.h"
#include "quantized_matmul_params.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {
namespace {

float bitsToFloat(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

uint32_t floatToBits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

float bf16(float x) {
  return bitsToFloat(uint32_t{strata_f32_to_bf16(x)} << 16);
}

using Case = PackedGemmCase;

// The product's A and C, and its fp32 weight.
struct Operands : PackedGemmOperands {
  std::vector<float> w;  // row-major K x N
  std::vector<uint16_t> packed;

  explicit Operands(Case shape) : PackedGemmOperands(shape) {
    w.resize(c.k * c.n);
    for (float& x : w) x = dist(rng);
    fillC();
  }
  void pack() {
    packed.assign(strata_packed_b_bf16_pairs_elements(c.k, c.n), 0xFFFF);
    strata_pack_b_bf16_pairs(w.data(), c.k, c.n, c.n, 1, packed.data());
  }
  QuantizedMatmulParams params() const {
    return PackedGemmOperands::params(STRATA_MM_LAYOUT_PANEL_BF16_PAIRS, 0,
                                      packed.data(), nullptr);
  }
  void run(uint32_t threads) {
    if (packed.empty()) pack();
    PackedGemmOperands::run(strataMatmulF32Bf16, params(), threads);
  }
};

// Checks every output against the exact sum of the bf16 products and,
// with |bitExact|, against the ABI's fp32 sums bit for bit (not on AMX,
// whose tile unit adds the products in its own order).
//
// Tolerance: each output is 2 * ceil(K / 2) fp32 additions of exact
// products to a start value (0 or C), so, whatever the order, its error is
// at most n * 2^-24 * (|C| + sum |a_k b_k|) (n additions, unit roundoff
// 2^-24; Higham, Accuracy and Stability, 4.2); AVX512-BF16 may also flush
// each addition's result below 2^-126 to zero, at most 2^-126 per
// addition.
void expectMatches(Operands& o, bool bitExact = true) {
  const Case& c = o.c;
  bitExact = bitExact && matmulIsa() != MatmulIsa::kAmx;
  const int64_t additions = (c.k + 1) / 2 * 2;
  std::vector<float> ra(c.k);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t k = 0; k < c.k; ++k) ra[k] = bf16(o.A(b, i, k));
      for (int64_t j = 0; j < c.n; ++j) {
        const float got = o.out[o.C(b, i, j)];
        const float start = c.accumulate ? o.initial[o.C(b, i, j)] : 0.0f;
        double exact = start, magnitude = std::fabs(start);
        float ordered = start;
        for (int64_t t = 0; t < additions / 2; ++t) {
          for (int64_t k : {2 * t + 1, 2 * t}) {
            if (k >= c.k) continue;
            const float product = ra[k] * bf16(o.w[k * c.n + j]);
            exact += double(ra[k]) * bf16(o.w[k * c.n + j]);
            magnitude += std::fabs(double(product));
            ordered += product;
          }
        }
        const double tolerance =
            additions * (0x1p-24 * magnitude + 0x1p-126);
        ASSERT_NEAR(got, exact, tolerance)
            << "batch " << b << " row " << i << " col " << j << " of " << c.m
            << "x" << c.k << "x" << c.n << " accumulate " << c.accumulate;
        if (bitExact) {
          ASSERT_EQ(floatToBits(got), floatToBits(ordered))
              << "batch " << b << " row " << i << " col " << j << ": " << got
              << " vs " << ordered;
        }
      }
    }
  o.expectOutsideUntouched();
}

void check(const Case& shape, uint32_t threads = 2) {
  Operands o(shape);
  o.run(threads);
  expectMatches(o);
}

class MatmulBf16KernelTest : public IsaTest {};

TEST_P(MatmulBf16KernelTest, RaggedShapes) {
  for (const Case& c :
       raggedCases({1, 3, 13, 14, 64, 200}, {1, 2, 3, 64, 768, 771}))
    check(c);
}

// Several k blocks (the sums live in C between them) and a wide N.
TEST_P(MatmulBf16KernelTest, LongKAndWideN) {
  check({25, 70, 2000, true});
  check({15, 2304, 768, false});
}

// Tasks of 256 rows or more: the AMX set takes K in several calls there
// (the sums go through C between them), K's tail in the last one.
TEST_P(MatmulBf16KernelTest, ManyRowsInCallsOfK) {
  check({300, 771, 100, true});
  check({512, 768, 96, false});
}

TEST_P(MatmulBf16KernelTest, StridedOperands) {
  for (const Case& c : stridedCases(71)) check(c);
}

TEST_P(MatmulBf16KernelTest, BatchesShareTheWeight) {
  for (const Case& c : batchCases(21)) check(c);
}

// A is rounded by strata_f32_to_bf16 at run time (ties to even, denormals
// to zero): against an identity weight each output is its rounded A.
TEST_P(MatmulBf16KernelTest, RoundsAAsThePacker) {
  const int64_t k = 37;
  Operands o({3, k, k});
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < k; ++j) o.w[kk * k + j] = kk == j ? 1.0f : 0.0f;
  const uint32_t special[] = {
      0x3F808000u,  // tie, even below: 1.0
      0x3F818000u,  // tie, odd below: up
      0x3F808001u,  // just above a tie: up
      0xBF80FFFFu,  // rounds up in magnitude
      0x007FFFFFu,  // denormal: +0 (not 2^-126)
      0x807FFFFFu,  // denormal: -0
      0x00800000u,  // smallest normal
      0x7F7F7FFFu,  // largest below the rounding to infinity
  };
  for (int64_t x = 0; x < 3 * k; ++x)
    o.A(0, x / k, x % k) = bitsToFloat(special[x % 8]);
  o.run(2);
  // By value: the sums start from +0, so a -0 comes out as +0.
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < k; ++j)
      ASSERT_EQ(o.out[o.C(0, i, j)], bf16(o.A(0, i, j))) << i << " " << j;
}

TEST_P(MatmulBf16KernelTest, NonFiniteValuesPropagate) {
  Operands o({5, 70, 100, true});
  o.A(0, 1, 17) = NAN;
  o.A(0, 3, 99) = -INFINITY;
  o.w[40 * 70 + 66] = INFINITY;  // column 66
  o.run(2);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 70; ++j) {
      const float got = o.out[o.C(0, i, j)];
      if (i == 1) {
        ASSERT_TRUE(std::isnan(got)) << j;
      } else if (i == 3 || j == 66) {
        ASSERT_FALSE(std::isfinite(got)) << i << " " << j;
      }
    }
  // The other outputs are as without the non-finite values.
  o.A(0, 1, 17) = o.A(0, 3, 99) = 0.0f;
  o.w[40 * 70 + 66] = 0.0f;
  std::vector<float> got = o.out;
  o.out = o.initial;
  o.pack();
  o.run(2);
  for (int64_t i : {0, 2, 4})
    for (int64_t j = 0; j < 70; ++j)
      if (j != 66) {
        ASSERT_EQ(got[o.C(0, i, j)], o.out[o.C(0, i, j)]);
      }
}

// Products and sums below 2^-126: AVX512-BF16 flushes them to zero, the
// other sets keep them; both stay within the tolerance's flush term.
TEST_P(MatmulBf16KernelTest, TinyValuesWithinTheFlushBound) {
  Operands o({4, 33, 50, true});
  for (float& x : o.a) x *= 1e-19f;
  for (float& x : o.w) x *= 1e-19f;
  for (float& x : o.out) x *= 1e-37f;
  o.initial = o.out;
  o.run(2);
  expectMatches(o, /*bitExact=*/false);
}

// A bias is where C starts (packed_gemm_test_util.h).
TEST_P(MatmulBf16KernelTest, Bias) {
  expectBiasIsWhereCStartsEverywhere<Operands>(strataMatmulF32Bf16, /*sumsFromC=*/true);
}

TEST_P(MatmulBf16KernelTest, Threads) {
  for (uint32_t threads : {1u, 3u, 4u}) {
    Operands o({37, 200, 129, true});
    o.run(threads);
    expectMatches(o);
  }
}

// A ragged tail of k pairs (not a multiple of AMX's 16) in every k block,
// and rows of a 32-row AMX tile on both sides of 16.
TEST_P(MatmulBf16KernelTest, TileTails) {
  for (const Case& c : {Case{17, 33, 390, true}, Case{31, 64, 34, false},
                        Case{32, 40, 768 + 2, true}, Case{48, 96, 4, false}})
    check(c);
}

INSTANTIATE_TEST_SUITE_P(Isa, MatmulBf16KernelTest, kPackedGemmIsas, isaName);

// Where Linux refuses AMX tile data the matmul runs on the next set down,
// with its results (on any host: without AMX nothing changes).
TEST(MatmulBf16KernelTest, AmxRefusedFallsBack) {
  simulateAmxRefusalForTesting(true);
  EXPECT_NE(matmulIsa(), MatmulIsa::kAmx);
  EXPECT_NE(std::string(amxUnavailableReason()), "");
  check({45, 70, 800, true});
  simulateAmxRefusalForTesting(false);
}

TEST(MatmulBf16KernelTest, PackedLayout) {
  const int64_t k = 5, n = 35;
  std::vector<float> src(k * n);
  for (int64_t i = 0; i < k * n; ++i) src[i] = float(i % 97) - 48.0f;
  // Two panels of Kp = 6 rows.
  ASSERT_EQ(strata_packed_b_bf16_pairs_elements(k, n), uint64_t{2 * 6 * 32});
  std::vector<uint16_t> dst(strata_packed_b_bf16_pairs_elements(k, n), 99);
  strata_pack_b_bf16_pairs(src.data(), k, n, n, 1, dst.data());
  for (int64_t kk = 0; kk < 6; ++kk)
    for (int64_t j = 0; j < 64; ++j) {
      const int64_t at = (j / 32) * 6 * 32 + (kk / 2) * 64 + (j % 32) * 2 +
                         kk % 2;
      const uint16_t want =
          kk < k && j < n ? uint16_t(floatToBits(src[kk * n + j]) >> 16) : 0;
      EXPECT_EQ(dst[at], want) << kk << " " << j;  // small integers: exact
    }
  // Strided source: B stored N x K.
  std::vector<float> transposed(k * n);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < n; ++j) transposed[j * k + kk] = src[kk * n + j];
  std::vector<uint16_t> dst2(dst.size(), 99);
  strata_pack_b_bf16_pairs(transposed.data(), k, n, 1, k, dst2.data());
  EXPECT_EQ(dst, dst2);
}

// A's pair tiles hold 0 from K to the end of the last k block, whatever
// was in the scratch (here NaN bits), for contiguous and transposed A: the
// AMX tail step multiplies a whole 32 k of A by a zero-padded B.
TEST(MatmulBf16KernelTest, PairTilesAreZeroPastK) {
  const int64_t mr = 32, kBlock = 32, rows = 7, k = 71, kp = 72;
  const int64_t blocks = (kp + kBlock - 1) / kBlock;
  std::vector<float> a(rows * k);
  for (size_t x = 0; x < a.size(); ++x) a[x] = 1.0f + float(x % 13);
  using Convert = void (*)(int64_t, int64_t, int64_t, int64_t, int64_t,
                           const float*, int64_t, int64_t, uint16_t*);
  std::vector<std::pair<std::string, Convert>> converts = {
      {"reference", convertBf16Pairs}};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512bf16") &&
      __builtin_cpu_supports("avx512bw"))
    converts.push_back({"avx512bf16", convertBf16PairsAvx512});
#endif
  for (const auto& [name, convert] : converts)
    for (const bool transposed : {false, true}) {
      std::vector<uint16_t> tile(blocks * mr * kBlock, 0xFFFF);
      const int64_t am = transposed ? 1 : k, ak = transposed ? rows : 1;
      convert(mr, kBlock, rows, k, kp, a.data(), am, ak, tile.data());
      for (int64_t i = 0; i < mr; ++i)
        for (int64_t kk = 0; kk < blocks * kBlock; ++kk) {
          const uint16_t got =
              tile[(kk / kBlock) * mr * kBlock + i * kBlock + kk % kBlock];
          const uint16_t want =
              i < rows && kk < k
                  ? strata_f32_to_bf16(a[i * am + kk * ak])
                  : 0;
          ASSERT_EQ(got, want) << name << " transposed " << transposed
                               << " row " << i << " k " << kk;
        }
    }
}

TEST(MatmulBf16KernelTest, F32ToBf16Rounding) {
  const struct {
    uint32_t in;
    uint16_t out;
  } cases[] = {
      {0x3F800000u, 0x3F80},  // 1.0
      {0x3F808000u, 0x3F80},  // tie, even below: down
      {0x3F818000u, 0x3F82},  // tie, odd below: up
      {0x3F808001u, 0x3F81},  // above the tie
      {0x3F807FFFu, 0x3F80},  // below the tie
      {0xBF818000u, 0xBF82},  // negative tie: to even
      {0x7F7FFFFFu, 0x7F80},  // FLT_MAX rounds to infinity
      {0x7F7F7FFFu, 0x7F7F},  // the largest that stays finite
      {0x7F800000u, 0x7F80},  // +inf
      {0xFF800000u, 0xFF80},  // -inf
      {0x7F800001u, 0x7FC0},  // signalling NaN: quiet
      {0xFF812345u, 0xFFC1},  // sign and top payload kept
      {0x7FC00000u, 0x7FC0},  // quiet NaN
      {0x007FFFFFu, 0x0000},  // denormal: +0
      {0x80000001u, 0x8000},  // denormal: -0
      {0x80000000u, 0x8000},  // -0
      {0x00800000u, 0x0080},  // smallest normal
  };
  for (const auto& c : cases)
    EXPECT_EQ(strata_f32_to_bf16(bitsToFloat(c.in)), c.out)
        << std::hex << c.in;
}

// Fields the kernel cannot honour end the run before anything is written.
TEST(MatmulBf16KernelTest, RejectsBadParams) {
  const float scale = 1.0f;
  for (int variant = 0; variant < 6; ++variant) {
    Operands o({3, 32, 8});
    o.pack();
    QuantizedMatmulParams p = o.params();
    if (variant == 0) p.values[STRATA_MM_B_LAYOUT] = STRATA_MM_LAYOUT_PANEL_F32;
    if (variant == 1)
      p.values[STRATA_MM_B_SCALES] = reinterpret_cast<intptr_t>(&scale);
    if (variant == 2)
      p.values[STRATA_MM_B_ZERO_POINTS] = reinterpret_cast<intptr_t>(&scale);
    if (variant == 3) p.values[STRATA_MM_GROUP_SIZE] = 8;
    if (variant == 4) p.values[STRATA_MM_K] = 0;
    if (variant == 5) p.values[STRATA_MM_K] = -2;
    KernelContext context;
    strataMatmulF32Bf16(context.get(), p.get());
    EXPECT_EQ(o.out, o.initial) << variant;
  }
}

// Without scratch memory (an allocation that failed) the kernel writes
// nothing and returns: inside a run, kernelScratch ends it instead.
TEST(MatmulBf16KernelTest, NoScratchWritesNothing) {
  Operands o({20, 64, 100});
  o.pack();
  strata_rt_context_t context;
  strataMatmulF32Bf16(&context, o.params().get());
  EXPECT_EQ(o.out, o.initial);
}

}  // namespace
}  // namespace strata::runtime::kernels
