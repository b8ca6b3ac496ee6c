//===- matmul_i4_kernel_test.cc - strata_rt_matmul_f32_i4 vs a reference --===//
// SPDX-License-Identifier: Apache-2.0
// The int4-weight matmul on every ISA the CPU has (AVX-512 VNNI, AVX2 on
// AVX-512 hosts too, scalar), in both weight layouts (fp16 scales inside
// the panels, fp32 scales apart): one row, decode batches, rows past the
// decode batch (the widened-panel path), ragged K and N, group sizes,
// accumulation, threads. The reference is the exact product with the dequantized weights
// in double precision; the kernel quantizes A to int8 per group (absmax /
// 127), so it may differ by at most half an activation step times the
// weights' magnitudes: sum over groups of (a_scale / 2) * sum |w|, plus fp32
// rounding (K * 2^-22 of the sum of |a * w|). A wrong nibble, column or
// group is far outside that.

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "isa_test.h"
#include "kernel_context.h"
#include "kernels/matmul_f32.h"
#include "kernels/matmul_f32_tiles.h"
#include "kernels/weight_prefetch.h"
#include "quantized_matmul_params.h"
#include "strata_kernel_abi.h"
#include "thread_pool.h"

namespace strata::runtime::kernels {
namespace {

struct Case {
  int64_t m, n, k, group;
  bool accumulate;
  bool bias = false;  // STRATA_MM_BIAS: C starts from a bias
};

// |q| (K x N, row-major) and its scales ([groups][ldS] floats, each exact
// in fp16) packed in |layout|; the params point at them.
struct PackedInt4 {
  std::vector<uint8_t> bytes;
  const float* scales = nullptr;  // B_SCALES: null for the fp16 blocks
};

PackedInt4 packInt4(int64_t layout, const std::vector<int8_t>& q,
                    const std::vector<float>& scales, int64_t k, int64_t n,
                    int64_t group) {
  PackedInt4 packed;
  if (layout == STRATA_MM_LAYOUT_PANEL_I4_GROUPS) {
    packed.bytes.resize(strata_packed_b_i4_bytes(k, n, group));
    strata_pack_b_i4(q.data(), k, n, n, 1, group, packed.bytes.data());
    packed.scales = scales.data();
    return packed;
  }
  const int64_t groups = (k + group - 1) / group, ldS = (n + 31) / 32 * 32;
  std::vector<float> dense(groups * n);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t j = 0; j < n; ++j) dense[g * n + j] = scales[g * ldS + j];
  packed.bytes.resize(strata_packed_b_i4_f16_blocks_bytes(k, n, group));
  strata_pack_b_i4_f16_blocks(q.data(), k, n, n, 1, group, dense.data(),
                              packed.bytes.data());
  return packed;
}

float roundedToF16(float x) { return strata_f16_to_f32(strata_f32_to_f16(x)); }

constexpr int64_t kLayouts[] = {STRATA_MM_LAYOUT_PANEL_I4_F16_BLOCKS,
                                STRATA_MM_LAYOUT_PANEL_I4_GROUPS};

void check(const Case& c, uint32_t threads, int64_t layout) {
  std::mt19937 rng(static_cast<uint32_t>(c.m * 131 + c.n * 7 + c.k * 3 + c.group));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::uniform_int_distribution<int> qdist(-8, 7);
  const int64_t panels = (c.n + 31) / 32, ldS = panels * 32;
  const int64_t groups = (c.k + c.group - 1) / c.group;
  std::vector<float> a(c.m * c.k), out(c.m * c.n);
  std::vector<int8_t> q(c.k * c.n);
  std::vector<float> scales(groups * ldS, 0.0f);
  for (float& x : a) x = dist(rng);
  for (int8_t& x : q) x = static_cast<int8_t>(qdist(rng));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t j = 0; j < c.n; ++j)
      scales[g * ldS + j] = roundedToF16(0.01f + 0.1f * std::fabs(dist(rng)));
  for (float& x : out) x = dist(rng);
  const std::vector<float> initial = out;
  const PackedInt4 packed = packInt4(layout, q, scales, c.k, c.n, c.group);
  std::vector<float> bias(c.n);
  for (float& x : bias) x = 4.0f * dist(rng);

  const QuantizedMatmulParams p = quantizedMatmulParams(
      layout, 1, c.m, c.n, c.k, c.group, c.accumulate, a.data(),
      packed.bytes.data(), packed.scales, out.data(),
      c.bias ? bias.data() : nullptr);
  ThreadPool pool(threads);
  KernelContext context(&pool);
  strataMatmulF32I4(context.get(), p.get());

  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0, magnitude = 0, quantization = 0;
      for (int64_t g = 0; g < groups; ++g) {
        double amax = 0, wsum = 0;
        for (int64_t k = g * c.group; k < std::min(c.k, (g + 1) * c.group); ++k) {
          const double w = double(q[k * c.n + j]) * scales[g * ldS + j];
          const double x = a[i * c.k + k];
          sum += x * w;
          magnitude += std::fabs(x * w);
          amax = std::max(amax, std::fabs(x));
          wsum += std::fabs(w);
        }
        quantization += amax / 127 / 2 * wsum;
      }
      const int64_t o = i * c.n + j;
      if (c.accumulate) {
        sum += initial[o];
        magnitude += std::fabs(initial[o]);
      }
      if (c.bias) {
        sum += bias[j];
        magnitude += std::fabs(bias[j]);
      }
      const double tolerance = quantization * 1.001 +
          double(c.k + 1) * std::ldexp(1.0, -22) * (magnitude + 1e-30);
      ASSERT_NEAR(out[o], sum, tolerance)
          << "row " << i << " col " << j << " of " << c.m << "x" << c.n << "x"
          << c.k << " group " << c.group << " threads=" << threads
          << " layout " << layout;
    }
}

void check(const Case& c, uint32_t threads) {
  for (int64_t layout : kLayouts) check(c, threads, layout);
}

class MatmulI4KernelTest : public IsaTest {};

TEST_P(MatmulI4KernelTest, OneRow) {
  for (int64_t n : {1, 31, 32, 33, 100, 257})
    for (int64_t k : {4, 7, 64, 300})
      for (bool accumulate : {false, true})
        check({1, n, k, 32, accumulate}, 2);
}

// A bias is where C starts: one row (each thread's columns), decode rows
// and prefill rows, on 1-3 threads.
TEST_P(MatmulI4KernelTest, Bias) {
  for (uint32_t threads : {1u, 2u, 3u}) {
    check({1, 1000, 256, 32, false, true}, threads);
    check({5, 70, 96, 32, false, true}, threads);
    check({40, 65, 128, 64, false, true}, threads);
  }
}

TEST_P(MatmulI4KernelTest, GroupSizes) {
  for (int64_t group : {4, 32, 64, 128})
    for (int64_t m : {1, 3})
      check({m, 70, 256, group, false}, 2);
  check({1, 64, 100, 128, false}, 2);  // one group, k padded past K
}

TEST_P(MatmulI4KernelTest, DecodeBatchRows) {
  for (int64_t m : {2, 5, 8, 16})
    for (bool accumulate : {false, true})
      check({m, 100, 700, 32, accumulate}, 2);
}

// Above the decode batch: the panel is widened to fp32 (A stays fp32, so
// the bound holds with room).
TEST_P(MatmulI4KernelTest, PrefillRows) {
  for (int64_t m : {17, 40})
    check({m, 65, 300, 64, false}, 2);
}

TEST_P(MatmulI4KernelTest, Threads) {
  for (uint32_t threads : {1u, 2u, 3u, 4u})
    check({3, 200, 129, 32, true}, threads);
}

// The largest products the kernels meet: nibbles 0 and 15 (weights -8 and
// 7) against activations that quantize to +-127, in groups up to 4096 rows.
// Every ISA's integer sums are exact and its fp32 steps (one fma per group,
// in group order) are the scalar kernel's, so the outputs agree bitwise,
// with the weight stream prefetched and without.
TEST_P(MatmulI4KernelTest, ExtremeValuesMatchScalarBitwise) {
  for (int64_t group : {32, 128, 4096}) {
    const int64_t m = 3, n = 64, k = 8192, groups = k / group;
    std::vector<float> a(m * k), scales(groups * n);
    std::vector<int8_t> q(k * n);
    for (int64_t i = 0; i < m * k; ++i) a[i] = (i * 7 % 3 == 0) ? -2.5f : 2.5f;
    for (int64_t i = 0; i < k * n; ++i) q[i] = (i * 5 % 7 < 4) ? 7 : -8;
    for (int64_t i = 0; i < groups * n; ++i) scales[i] = 0.03125f * (1 + i % 5);
    const auto product = [&](MatmulIsa isa, int64_t rows, int64_t layout) {
      const PackedInt4 packed = packInt4(layout, q, scales, k, n, group);
      const MatmulIsa saved = matmulIsa();
      capMatmulIsa(isa);
      std::vector<float> out(rows * n, 0.0f);
      const QuantizedMatmulParams p = quantizedMatmulParams(
          layout, 1, rows, n, k, group, false, a.data(), packed.bytes.data(),
          packed.scales, out.data());
      ThreadPool pool(2);
      KernelContext context(&pool);
      strataMatmulF32I4(context.get(), p.get());
      capMatmulIsa(saved);
      return out;
    };
    for (int64_t rows : {int64_t(1), m}) {
      const std::vector<float> scalar = product(
          MatmulIsa::kScalar, rows, STRATA_MM_LAYOUT_PANEL_I4_GROUPS);
      for (int64_t layout : kLayouts)
        for (int prefetch : {0, 1}) {
          forceWeightPrefetchForTesting(prefetch);
          const std::vector<float> mine = product(GetParam(), rows, layout);
          forceWeightPrefetchForTesting(-1);
          for (int64_t i = 0; i < rows * n; ++i)
            ASSERT_EQ(mine[i], scalar[i])
                << "element " << i << " of " << rows << " row(s), group "
                << group << " layout " << layout << " prefetch " << prefetch;
        }
    }
  }
}

// A group too large for the int32 sums of the integer kernels takes the
// fp32 path, still within the reference's bound.
TEST_P(MatmulI4KernelTest, GroupBeyondIntegerSums) {
  check({1, 32, kMaxInt4GemvGroup + 4, kMaxInt4GemvGroup + 4, false}, 2);
}

INSTANTIATE_TEST_SUITE_P(Isa, MatmulI4KernelTest, kAllIsas, isaName);

// Fields the kernel cannot honour end the run before anything is written.
TEST(MatmulI4KernelTest, RejectsBadQuantizationFields) {
  std::vector<float> a(8, 1.0f), out(32, -1.0f), scales(64, 1.0f);
  std::vector<uint8_t> b(8 * 16 + 64, 0x99);
  for (int variant = 0; variant < 7; ++variant) {
    // 0: another layout; 1, 2: group 6 and 0; 3: zero points; then the
    // fp16 blocks with 4: B_SCALES set, 5: group 6, 6: zero points.
    const bool blocks = variant >= 4;
    QuantizedMatmulParams q = quantizedMatmulParams(
        variant == 0 ? STRATA_MM_LAYOUT_PANEL_I8
        : blocks     ? STRATA_MM_LAYOUT_PANEL_I4_F16_BLOCKS
                     : STRATA_MM_LAYOUT_PANEL_I4_GROUPS,
        1, 1, 32, 8,
        variant == 1 || variant == 5 ? 6 : variant == 2 ? 0 : 4, false,
        a.data(), b.data(), blocks && variant != 4 ? nullptr : scales.data(),
        out.data());
    if (variant == 3 || variant == 6) q.values[STRATA_MM_B_ZERO_POINTS] = 8;
    KernelContext context;
    strataMatmulF32I4(context.get(), q.get());
    for (float x : out) ASSERT_EQ(x, -1.0f) << variant;
  }
}

}  // namespace
}  // namespace strata::runtime::kernels
