//===- matmul_i8_kernel_test.cc - strata_rt_matmul_f32_i8 vs a reference --===//
// SPDX-License-Identifier: Apache-2.0
// The weight-only int8 matmul on every ISA the CPU has (AVX2 included on an
// AVX-512 host): one row and decode batches (the in-register path), prefill
// row counts (the widened-panel path), ragged columns, per-column and
// grouped scales, accumulation, threads; in both layouts: PANEL_I8 (fp32
// products) and PANEL_I8_QUADS (int8 products, A quantized per 32 or 16 k
// on decode rows). The reference dequantizes in double precision;
// tolerance: K * 2^-22 relative to the sum of |a*b|, plus for the quads at
// most half an activation step times the weights' magnitudes: the sum over
// activation groups of (absmax / 127 / 2) * sum |w|. A wrong byte, column
// or group is far outside that. Every ISA's quads products equal the
// scalar kernel's bitwise (exact int32 sums, the same fp32 steps).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "isa_test.h"
#include "kernel_context.h"
#include "kernels/matmul_f32.h"
#include "kernels/weight_prefetch.h"
#include "quantized_matmul_params.h"
#include "strata_kernel_abi.h"
#include "thread_pool.h"

namespace strata::runtime::kernels {
namespace {

struct Case {
  int64_t batch, m, n, k, group;
  bool accumulate;
  bool bias = false;  // STRATA_MM_BIAS: C starts from a bias
};

constexpr int64_t kLayouts[] = {STRATA_MM_LAYOUT_PANEL_I8,
                                STRATA_MM_LAYOUT_PANEL_I8_QUADS};

std::vector<int8_t> packInt8(int64_t layout, const std::vector<int8_t>& q,
                             int64_t k, int64_t n) {
  if (layout == STRATA_MM_LAYOUT_PANEL_I8_QUADS) {
    std::vector<int8_t> packed(strata_packed_b_i8_quads_bytes(k, n));
    strata_pack_b_i8_quads(q.data(), k, n, n, 1, packed.data());
    return packed;
  }
  std::vector<int8_t> packed((n + 31) / 32 * k * 32);
  strata_pack_b_i8(q.data(), k, n, n, 1, packed.data());
  return packed;
}

void check(const Case& c, uint32_t threads, int64_t layout) {
  const bool quads = layout == STRATA_MM_LAYOUT_PANEL_I8_QUADS;
  if (quads && c.group % 16 != 0) return;  // refused: see below
  const int64_t actGroup =
      quads && c.batch * c.m <= 16 ? strata_i8_activation_group(c.group) : 0;
  std::mt19937 rng(static_cast<uint32_t>(c.m * 131 + c.n * 7 + c.k + c.group));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::uniform_int_distribution<int> qdist(-127, 127);
  const int64_t panels = (c.n + 31) / 32, ldS = panels * 32;
  const int64_t groups = (c.k + c.group - 1) / c.group;
  std::vector<float> a(c.batch * c.m * c.k), out(c.batch * c.m * c.n);
  std::vector<int8_t> q(c.k * c.n);
  std::vector<float> scales(groups * ldS, 0.0f);
  for (float& x : a) x = dist(rng);
  for (int8_t& x : q) x = static_cast<int8_t>(qdist(rng));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t j = 0; j < c.n; ++j) scales[g * ldS + j] = 0.001f + 0.01f * std::fabs(dist(rng));
  for (float& x : out) x = dist(rng);
  const std::vector<float> initial = out;
  const std::vector<int8_t> packed = packInt8(layout, q, c.k, c.n);
  std::vector<float> bias(c.n);
  for (float& x : bias) x = 4.0f * dist(rng);

  const QuantizedMatmulParams p = quantizedMatmulParams(
      layout, c.batch, c.m, c.n, c.k, c.group, c.accumulate,
      a.data(), packed.data(), scales.data(), out.data(),
      c.bias ? bias.data() : nullptr);
  ThreadPool pool(threads);
  KernelContext context(&pool);
  strataMatmulF32I8(context.get(), p.get());

  for (int64_t bi = 0; bi < c.batch; ++bi)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0, magnitude = 0, quantization = 0, amax = 0, wsum = 0;
        for (int64_t k = 0; k < c.k; ++k) {
          double w = double(q[k * c.n + j]) * scales[(k / c.group) * ldS + j];
          double x = a[(bi * c.m + i) * c.k + k];
          sum += x * w;
          magnitude += std::fabs(x * w);
          amax = std::max(amax, std::fabs(x));
          wsum += std::fabs(w);
          if (actGroup && ((k + 1) % actGroup == 0 || k + 1 == c.k)) {
            quantization += amax / 127 / 2 * wsum;
            amax = wsum = 0;
          }
        }
        const int64_t o = (bi * c.m + i) * c.n + j;
        if (c.accumulate) {
          sum += initial[o];
          magnitude += std::fabs(initial[o]);
        }
        if (c.bias) {
          sum += bias[j];
          magnitude += std::fabs(bias[j]);
        }
        const double tolerance =
            quantization * 1.001 +
            double(c.k + 1) * std::ldexp(1.0, -22) * (magnitude + 1e-30);
        ASSERT_NEAR(out[o], sum, tolerance)
            << "batch " << bi << " row " << i << " col " << j << " of "
            << c.batch << "x" << c.m << "x" << c.n << "x" << c.k << " group "
            << c.group << " threads=" << threads << " layout " << layout;
      }
}

void check(const Case& c, uint32_t threads) {
  for (int64_t layout : kLayouts) check(c, threads, layout);
}

class MatmulI8KernelTest : public IsaTest {};

TEST_P(MatmulI8KernelTest, OneRowPerColumnScales) {
  for (int64_t n : {1, 31, 32, 33, 100, 257})
    for (int64_t k : {1, 7, 64, 300})
      for (bool accumulate : {false, true})
        check({1, 1, n, k, k, accumulate}, 2);
}

// A bias is where C starts: one row (each thread's columns), decode rows
// and prefill rows, batches, on 1-3 threads.
TEST_P(MatmulI8KernelTest, Bias) {
  for (uint32_t threads : {1u, 2u, 3u}) {
    check({1, 1, 1000, 256, 256, false, true}, threads);
    check({2, 5, 70, 96, 32, false, true}, threads);
    check({1, 40, 65, 128, 64, false, true}, threads);
  }
}

TEST_P(MatmulI8KernelTest, GroupedScales) {
  for (int64_t group : {1, 16, 32, 48, 64, 100})
    for (int64_t m : {1, 3, 8})
      check({1, m, 70, 256, group, false}, 2);
  // Ragged K: the last weight and activation groups end inside a quad row
  // or past the last one.
  for (int64_t k : {250, 253, 80})
    for (int64_t group : {16, 32})
      check({1, 2, 40, k, group, true}, 2);
}

TEST_P(MatmulI8KernelTest, DecodeBatchRows) {
  for (int64_t m : {2, 4, 5, 8, 16})
    for (bool accumulate : {false, true})
      check({1, m, 100, 700, 700, accumulate}, 2);
}

// Above the decode batch: the panel is widened to fp32 per k block.
TEST_P(MatmulI8KernelTest, PrefillRows) {
  for (int64_t m : {17, 40, 130})
    for (int64_t group : {32, 300})
      check({1, m, 65, 300, group, false}, 2);
  check({1, 33, 64, 600, 600, true}, 2);
}

TEST_P(MatmulI8KernelTest, BatchesAndThreads) {
  for (uint32_t threads : {1u, 2u, 3u, 4u}) {
    check({3, 1, 200, 129, 129, true}, threads);
    check({2, 5, 96, 64, 32, false}, threads);
  }
}

// The largest products the kernels meet: weights -128 and 127 against
// activations that quantize to +-127, in long rows. Every ISA's integer
// sums are exact and its fp32 steps (one fma per activation group, in
// group order) are the scalar kernel's, so the outputs agree bitwise, with
// the weight stream prefetched and without.
TEST_P(MatmulI8KernelTest, QuadsExtremeValuesMatchScalarBitwise) {
  for (int64_t group : {16, 32, 4096, 8192}) {
    const int64_t m = 5, n = 64, k = 8192, groups = k / group;
    std::vector<float> a(m * k), scales(groups * n);
    std::vector<int8_t> q(k * n);
    for (int64_t i = 0; i < m * k; ++i) a[i] = (i * 7 % 3 == 0) ? -2.5f : 2.5f;
    for (int64_t i = 0; i < k * n; ++i) q[i] = (i * 5 % 7 < 4) ? 127 : -128;
    for (int64_t i = 0; i < groups * n; ++i) scales[i] = 0.03125f * (1 + i % 5);
    const std::vector<int8_t> packed =
        packInt8(STRATA_MM_LAYOUT_PANEL_I8_QUADS, q, k, n);
    const auto product = [&](MatmulIsa isa, int64_t rows) {
      const MatmulIsa saved = matmulIsa();
      capMatmulIsa(isa);
      std::vector<float> out(rows * n, 0.0f);
      const QuantizedMatmulParams p = quantizedMatmulParams(
          STRATA_MM_LAYOUT_PANEL_I8_QUADS, 1, rows, n, k, group, false,
          a.data(), packed.data(), scales.data(), out.data());
      ThreadPool pool(2);
      KernelContext context(&pool);
      strataMatmulF32I8(context.get(), p.get());
      capMatmulIsa(saved);
      return out;
    };
    for (int64_t rows : {int64_t(1), m}) {
      const std::vector<float> scalar = product(MatmulIsa::kScalar, rows);
      for (int prefetch : {0, 1}) {
        forceWeightPrefetchForTesting(prefetch);
        const std::vector<float> mine = product(GetParam(), rows);
        forceWeightPrefetchForTesting(-1);
        for (int64_t i = 0; i < rows * n; ++i)
          ASSERT_EQ(mine[i], scalar[i])
              << "element " << i << " of " << rows << " row(s), group "
              << group << " prefetch " << prefetch;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, MatmulI8KernelTest, kAllIsas, isaName);

// Fields the kernel cannot honour end the run (here, with no run to end,
// return) before anything is read or written.
TEST(MatmulI8KernelTest, RejectsBadQuantizationFields) {
  std::vector<float> a(4, 1.0f), out(32, -1.0f), scales(32, 1.0f);
  std::vector<int8_t> b(4 * 32, 1);
  // 0: another layout; 1: group 0; 2: zero points; 3, 4: quads in groups
  // of 4 and 24 (not multiples of 16).
  for (int variant = 0; variant < 5; ++variant) {
    QuantizedMatmulParams q = quantizedMatmulParams(
        variant == 0   ? STRATA_MM_LAYOUT_PANEL_F32
        : variant >= 3 ? STRATA_MM_LAYOUT_PANEL_I8_QUADS
                       : STRATA_MM_LAYOUT_PANEL_I8,
        1, 1, 32, 4, variant == 1 ? 0 : variant == 4 ? 24 : 4, false,
        a.data(), b.data(), scales.data(), out.data());
    if (variant == 2) q.values[STRATA_MM_B_ZERO_POINTS] = 8;
    KernelContext context;
    strataMatmulF32I8(context.get(), q.get());
    for (float x : out) ASSERT_EQ(x, -1.0f) << variant;
  }
}

}  // namespace
}  // namespace strata::runtime::kernels
