//===- matmul_w8a8_kernel_test.cc - The W8A8 matmul vs a reference ------===//
// SPDX-License-Identifier: Apache-2.0
// The W8A8 matmul on every ISA the CPU has (AVX-512 VNNI, AVX2 on AVX-512
// hosts too, scalar; the AVX2 set quantizes A to 7 bits, the others to
// 8): ragged M, K and N, several k blocks, accumulation,
// strides, batches, zero and extreme rows, non-finite values, threads, and
// the params it must refuse. The reference quantizes A by the rules of the
// ABI header and sums the products exactly in int64; the kernel may differ
// from it only by the fp32 rounding of its epilogue (int32 -> fp32, the two
// scales' product, the final product or fma: a few ulps).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "isa_test.h"
#include "kernel_context.h"
#include "kernels/amx.h"
#include "kernels/matmul_f32.h"
#include "packed_gemm_test_util.h"
#include "quantized_matmul_params.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {
namespace {

using Case = PackedGemmCase;

// The product's A and C, and its int8 weight with the column scales.
struct Operands : PackedGemmOperands {
  std::vector<float> scales;
  std::vector<int8_t> q;  // row-major K x N
  std::vector<int8_t> packed;

  explicit Operands(Case shape) : PackedGemmOperands(shape) {
    std::uniform_int_distribution<int> qdist(-127, 127);
    q.resize(c.k * c.n);
    for (int8_t& x : q) x = static_cast<int8_t>(qdist(rng));
    const int64_t ldS = (c.n + 31) / 32 * 32;
    scales.assign(ldS, 0.0f);
    for (int64_t j = 0; j < c.n; ++j)
      scales[j] = 0.001f + 0.01f * std::fabs(dist(rng));
    fillC();
  }
  void pack() {
    packed.assign(strata_packed_b_i8_quads_bytes(c.k, c.n), 0);
    strata_pack_b_i8_quads(q.data(), c.k, c.n, c.n, 1, packed.data());
  }
  QuantizedMatmulParams params() const {
    return PackedGemmOperands::params(STRATA_MM_LAYOUT_PANEL_I8_QUADS, c.k,
                                      packed.data(), scales.data());
  }
  void run(uint32_t threads) {
    if (packed.empty()) pack();
    PackedGemmOperands::run(strataMatmulF32W8A8, params(), threads);
  }
};

// The ABI's quantization of one row, in the fp32 steps it names, to the
// levels of the kernel set in use (127; 63 on the AVX2 set).
float quantizeRow(Operands& o, int64_t b, int64_t i, std::vector<int>* q) {
  const float levels = static_cast<float>(matmulW8A8ActivationLevels());
  float amax = 0.0f;
  bool nonFinite = false;
  for (int64_t k = 0; k < o.c.k; ++k) {
    const float x = std::fabs(o.A(b, i, k));
    nonFinite |= !(x <= 3.4e38f);
    if (x > amax) amax = x;
  }
  const float inv = amax > 0.0f ? levels / amax : 0.0f;
  q->assign(o.c.k, 0);
  for (int64_t k = 0; k < o.c.k; ++k) {
    float y = o.A(b, i, k) * inv;
    if (std::isnan(y)) continue;
    y = std::fmin(std::fmax(y, -levels), levels);
    (*q)[k] = static_cast<int>(y + (y >= 0.0f ? 0.5f : -0.5f));
  }
  return nonFinite ? INFINITY : amax / levels;
}

// Checks every output against the reference; rows listed in |nonFinite|
// must be non-finite in every column instead.
void expectMatches(Operands& o, const std::vector<int64_t>& nonFinite = {}) {
  const Case& c = o.c;
  std::vector<int> q;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.m; ++i) {
      const float aScale = quantizeRow(o, b, i, &q);
      bool expectNonFinite = false;
      for (int64_t r : nonFinite) expectNonFinite |= r == i;
      for (int64_t j = 0; j < c.n; ++j) {
        const float got = o.out[o.C(b, i, j)];
        if (expectNonFinite) {
          ASSERT_FALSE(std::isfinite(got)) << "row " << i << " col " << j;
          continue;
        }
        int64_t dot = 0;
        for (int64_t k = 0; k < c.k; ++k)
          dot += int64_t{q[k]} * o.q[k * c.n + j];
        const double product = double(aScale) * o.scales[j] * double(dot);
        const double initial = c.accumulate ? o.initial[o.C(b, i, j)] : 0.0;
        const double want = initial + product;
        const double tolerance =
            4e-7 * std::fabs(product) + 1.2e-7 * std::fabs(want) + 1e-30;
        ASSERT_NEAR(got, want, tolerance)
            << "batch " << b << " row " << i << " col " << j << " of " << c.m
            << "x" << c.k << "x" << c.n << " accumulate " << c.accumulate;
      }
    }
  o.expectOutsideUntouched();
}

void check(const Case& shape, uint32_t threads = 2) {
  Operands o(shape);
  o.run(threads);
  expectMatches(o);
}

class MatmulW8A8KernelTest : public IsaTest {};

TEST_P(MatmulW8A8KernelTest, RaggedShapes) {
  for (const Case& c :
       raggedCases({1, 3, 12, 13, 64, 200}, {1, 3, 4, 5, 64, 768, 771}))
    check(c);
}

// Several k blocks (the int32 sums are carried between them) and a wide N.
TEST_P(MatmulW8A8KernelTest, LongKAndWideN) {
  check({25, 70, 2000, true});
  check({64, 2304, 768, false});
}

TEST_P(MatmulW8A8KernelTest, StridedOperands) {
  for (const Case& c : stridedCases(70)) check(c);
}

TEST_P(MatmulW8A8KernelTest, BatchesShareTheWeight) {
  for (const Case& c : batchCases(20)) check(c);
}

TEST_P(MatmulW8A8KernelTest, ZeroAndExtremeRows) {
  Operands o({4, 40, 300, true});
  for (int64_t k = 0; k < 300; ++k) {
    o.A(0, 1, k) = 0.0f;                       // all zero: q = 0
    o.A(0, 2, k) = k % 2 ? 3.0f : -3.0f;       // every q = +-127
    o.A(0, 3, k) = 1e-30f * float(k % 7 - 3);  // tiny but not zero
  }
  for (int8_t& x : o.q) x = static_cast<int8_t>(x >= 0 ? 127 : -127);
  o.run(2);
  expectMatches(o);
}

// 127 * 127 * K at the largest K is just below 2^31: no int32 or
// intermediate overflow on the way (A's +128 offset makes the raw sums
// larger than that).
TEST_P(MatmulW8A8KernelTest, LargestK) {
  const int64_t k = STRATA_MM_W8A8_MAX_K;
  Operands o({2, 33, k});
  for (int64_t kk = 0; kk < k; ++kk) {
    o.A(0, 0, kk) = 1.0f;
    o.A(0, 1, kk) = -1.0f;
  }
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < 33; ++j)
      o.q[kk * 33 + j] = static_cast<int8_t>(j % 2 ? 127 : -127);
  o.run(2);
  expectMatches(o);
}

TEST_P(MatmulW8A8KernelTest, NonFiniteRows) {
  Operands o({5, 70, 100, true});
  o.A(0, 1, 17) = NAN;
  o.A(0, 3, 99) = -INFINITY;
  o.run(2);
  expectMatches(o, {1, 3});
}

// A bias is where C starts (packed_gemm_test_util.h).
TEST_P(MatmulW8A8KernelTest, Bias) {
  expectBiasIsWhereCStartsEverywhere<Operands>(strataMatmulF32W8A8, /*sumsFromC=*/false);
}

TEST_P(MatmulW8A8KernelTest, Threads) {
  for (uint32_t threads : {1u, 3u, 4u}) {
    Operands o({37, 200, 129, true});
    o.run(threads);
    expectMatches(o);
  }
}

// A ragged tail of k quads (not a multiple of AMX's 16) in the last k
// block, and rows of a 32-row AMX tile on both sides of 16.
TEST_P(MatmulW8A8KernelTest, TileTails) {
  for (const Case& c : {Case{17, 33, 772, true}, Case{31, 64, 36, false},
                        Case{32, 40, 1540, true}, Case{48, 96, 4, false}}) {
    Operands o(c);
    o.run(2);
    expectMatches(o);
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, MatmulW8A8KernelTest, kPackedGemmIsas, isaName);

// Where Linux refuses AMX tile data the matmul runs on the next set down
// (the same bits: every set computes the same sums).
TEST(MatmulW8A8KernelTest, AmxRefusedFallsBack) {
  simulateAmxRefusalForTesting(true);
  EXPECT_NE(matmulIsa(), MatmulIsa::kAmx);
  EXPECT_NE(std::string(amxUnavailableReason()), "");
  Operands o({45, 70, 1600, true});
  o.run(2);
  expectMatches(o);
  simulateAmxRefusalForTesting(false);
}

// Every ISA whose activations have 8 bits computes the same int32 sums
// and the same fp32 steps after them: bit-identical outputs. (The AVX2
// set's 7-bit activations are checked against the reference above.)
TEST(MatmulW8A8KernelTest, IsasAgreeBitForBit) {
  const MatmulIsa saved = matmulIsa();
  for (const Case& c : {Case{13, 100, 771, true}, Case{30, 64, 1600, false},
                        Case{1, 33, 5, true}}) {
    std::vector<std::vector<float>> results;
    for (MatmulIsa isa :
         {MatmulIsa::kScalar, MatmulIsa::kAvx512, MatmulIsa::kAmx}) {
      capMatmulIsa(isa);  // never above what the CPU has
      Operands o(c);
      o.A(0, 0, 0) = NAN;
      o.run(2);
      results.push_back(o.out);
    }
    for (size_t r = 1; r < results.size(); ++r)
      for (size_t x = 0; x < results[0].size(); ++x) {
        const float a = results[0][x], b = results[r][x];
        if (std::isnan(a) && std::isnan(b)) continue;
        ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0)
            << "element " << x << ": " << a << " vs " << b << " (set " << r
            << ")";
      }
  }
  capMatmulIsa(saved);
}

// The AVX2 set, and only it, quantizes A to 63 levels.
TEST(MatmulW8A8KernelTest, ActivationLevelsPerSet) {
  const MatmulIsa saved = matmulIsa();
  for (MatmulIsa isa : {MatmulIsa::kScalar, MatmulIsa::kAvx2,
                        MatmulIsa::kAvx512, MatmulIsa::kAmx}) {
    capMatmulIsa(isa);  // never above what the CPU has
    EXPECT_EQ(matmulW8A8ActivationLevels(),
              std::string(matmulW8A8KernelSet()) == "avx2" ? 63 : 127)
        << matmulW8A8KernelSet();
  }
  capMatmulIsa(saved);
}

TEST(MatmulW8A8KernelTest, PackedLayout) {
  const int64_t k = 6, n = 35;
  std::vector<int8_t> src(k * n);
  for (int64_t i = 0; i < k * n; ++i)
    src[i] = static_cast<int8_t>(i % 251 - 125);
  // Two panels of Kp = 8 rows.
  ASSERT_EQ(strata_packed_b_i8_quads_bytes(k, n), uint64_t{2 * 8 * 32});
  std::vector<int8_t> dst(strata_packed_b_i8_quads_bytes(k, n), 99);
  strata_pack_b_i8_quads(src.data(), k, n, n, 1, dst.data());
  for (int64_t kk = 0; kk < 8; ++kk)
    for (int64_t j = 0; j < 64; ++j) {
      const int64_t at =
          (j / 32) * 8 * 32 + (kk / 4) * 128 + (j % 32) * 4 + kk % 4;
      EXPECT_EQ(dst[at], kk < k && j < n ? src[kk * n + j] : 0)
          << kk << " " << j;
    }
}

// Fields the kernel cannot honour end the run before anything is written.
TEST(MatmulW8A8KernelTest, RejectsBadParams) {
  for (int variant = 0; variant < 6; ++variant) {
    Operands o({3, 32, 8});
    o.pack();
    QuantizedMatmulParams p = o.params();
    if (variant == 0) p.values[STRATA_MM_B_LAYOUT] = STRATA_MM_LAYOUT_PANEL_I8;
    if (variant == 1) p.values[STRATA_MM_GROUP_SIZE] = 4;
    if (variant == 2) p.values[STRATA_MM_B_SCALES] = 0;
    if (variant == 3) p.values[STRATA_MM_B_ZERO_POINTS] = 8;
    if (variant == 4) {
      p.values[STRATA_MM_K] = p.values[STRATA_MM_GROUP_SIZE] =
          STRATA_MM_W8A8_MAX_K + 1;
    }
    if (variant == 5)
      p.values[STRATA_MM_K] = p.values[STRATA_MM_GROUP_SIZE] = 0;
    KernelContext context;
    strataMatmulF32W8A8(context.get(), p.get());
    EXPECT_EQ(o.out, o.initial) << variant;
  }
}

// Without scratch memory (an allocation that failed) the kernel writes
// nothing and returns: inside a run, kernelScratch ends it instead.
TEST(MatmulW8A8KernelTest, NoScratchWritesNothing) {
  Operands o({20, 64, 100});
  o.pack();
  strata_rt_context_t context;
  strataMatmulF32W8A8(&context, o.params().get());
  EXPECT_EQ(o.out, o.initial);
}

}  // namespace
}  // namespace strata::runtime::kernels
