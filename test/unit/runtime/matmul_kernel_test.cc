//===- matmul_kernel_test.cc - strata_rt_matmul_f32 against a reference ---===//
// SPDX-License-Identifier: Apache-2.0
// Every ISA the CPU has, packed and strided B, transposed operands,
// broadcast batches, accumulation, ragged edges and 1-4 threads, compared
// with a double-precision reference (tolerance: K * 2^-22 relative to the
// sum of |a*b|, i.e. fp32 rounding of each partial sum).

#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <system_error>

#include "isa_test.h"
#include "kernel_context.h"
#include "kernels/matmul_f32.h"
#include "strata_kernel_abi.h"
#include "thread_pool.h"

namespace strata::runtime::kernels {
namespace {

struct Case {
  int64_t batch, m, n, k;
  bool packed, transA, transB, accumulate, broadcastB;
  // STRATA_MM_BIAS: C starts from bias[n] (never with |accumulate|).
  const std::vector<float>* bias = nullptr;
};

// Fills params for row-major (or transposed) operands of one batch dim.
void run(const Case& c, const std::vector<float>& a,
         const std::vector<float>& b, std::vector<float>* out,
         ThreadPool* pool = nullptr) {
  int64_t p[STRATA_MM_PARAM_COUNT] = {};
  p[STRATA_MM_FLAGS] = c.accumulate ? STRATA_MM_FLAG_ACCUMULATE : 0;
  p[STRATA_MM_B_LAYOUT] =
      c.packed ? STRATA_MM_LAYOUT_PANEL_F32 : STRATA_MM_LAYOUT_STRIDED;
  p[STRATA_MM_M] = c.m;
  p[STRATA_MM_N] = c.n;
  p[STRATA_MM_K] = c.k;
  p[STRATA_MM_BATCH_RANK] = 1;
  p[STRATA_MM_BATCH_SIZES] = c.batch;
  p[STRATA_MM_A_ADDR] = reinterpret_cast<intptr_t>(a.data());
  p[STRATA_MM_A_BATCH_STRIDES] = c.m * c.k;
  p[STRATA_MM_A_STRIDE_M] = c.transA ? 1 : c.k;
  p[STRATA_MM_A_STRIDE_K] = c.transA ? c.m : 1;
  p[STRATA_MM_B_ADDR] = reinterpret_cast<intptr_t>(b.data());
  p[STRATA_MM_B_BATCH_STRIDES] = c.broadcastB ? 0 : c.k * c.n;
  p[STRATA_MM_B_STRIDE_K] = c.transB ? 1 : c.n;
  p[STRATA_MM_B_STRIDE_N] = c.transB ? c.k : 1;
  p[STRATA_MM_C_ADDR] = reinterpret_cast<intptr_t>(out->data());
  p[STRATA_MM_C_BATCH_STRIDES] = c.m * c.n;
  p[STRATA_MM_C_STRIDE_M] = c.n;
  p[STRATA_MM_C_STRIDE_N] = 1;
  p[STRATA_MM_BIAS] = c.bias ? reinterpret_cast<intptr_t>(c.bias->data()) : 0;
  KernelContext context(pool);
  strataMatmulF32(context.get(), p);
}

void check(const Case& c, uint32_t threads) {
  std::mt19937 rng(static_cast<uint32_t>(c.m * 131 + c.n * 7 + c.k));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int64_t bBatches = c.broadcastB ? 1 : c.batch;
  std::vector<float> a(c.batch * c.m * c.k), b(bBatches * c.k * c.n);
  std::vector<float> out(c.batch * c.m * c.n);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  for (float& x : out) x = dist(rng);
  const std::vector<float> initial = out;
  auto at = [&](int64_t bi, int64_t i, int64_t k) {
    return a[bi * c.m * c.k + (c.transA ? k * c.m + i : i * c.k + k)];
  };
  auto bt = [&](int64_t bi, int64_t k, int64_t j) {
    int64_t base = c.broadcastB ? 0 : bi * c.k * c.n;
    return b[base + (c.transB ? j * c.k + k : k * c.n + j)];
  };
  std::vector<float> packed;
  if (c.packed) {
    packed.resize(strata_packed_b_f32_elements(c.k, c.n));
    strata_pack_b_f32(b.data(), c.k, c.n, c.transB ? 1 : c.n,
                      c.transB ? c.k : 1, packed.data());
  }
  ThreadPool pool(threads);
  run(c, a, c.packed ? packed : b, &out, &pool);
  for (int64_t bi = 0; bi < c.batch; ++bi) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t k = 0; k < c.k; ++k) {
          double prod = double(at(bi, i, k)) * double(bt(bi, k, j));
          sum += prod;
          magnitude += std::fabs(prod);
        }
        const int64_t o = (bi * c.m + i) * c.n + j;
        if (c.accumulate) {
          sum += initial[o];
          magnitude += std::fabs(initial[o]);
        }
        if (c.bias) {
          sum += (*c.bias)[j];
          magnitude += std::fabs((*c.bias)[j]);
        }
        const double tolerance =
            double(c.k + 1) * std::ldexp(1.0, -22) * (magnitude + 1e-30);
        ASSERT_NEAR(out[o], sum, tolerance)
            << "batch " << bi << " row " << i << " col " << j << " of "
            << c.batch << "x" << c.m << "x" << c.n << "x" << c.k
            << " packed=" << c.packed << " threads=" << threads;
      }
    }
  }
}

class MatmulKernelTest : public IsaTest {};

TEST_P(MatmulKernelTest, PackedWeightsRaggedShapes) {
  for (int64_t m : {1, 3, 8, 9, 17, 130})
    for (int64_t n : {1, 31, 32, 33, 100})
      for (int64_t k : {1, 7, 64, 300})
        check({1, m, n, k, true, false, false, false, true}, 2);
}

// A zero-size batch dim writes nothing and never divides by zero (batch
// dims that share B are folded into M, which would make M zero).
TEST_P(MatmulKernelTest, EmptyBatch) {
  for (bool broadcastB : {false, true}) {
    Case c{0, 8, 40, 16, false, false, false, false, broadcastB};
    std::vector<float> a(8 * 16, 1.0f), b(16 * 40, 1.0f), out(8, -1.0f);
    ThreadPool pool(2);
    run(c, a, b, &out, &pool);
    for (float x : out) EXPECT_EQ(x, -1.0f);
  }
}

TEST_P(MatmulKernelTest, StridedOperands) {
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      check({1, 37, 45, 70, false, transA, transB, false, false}, 2);
}

// A transposed B (attention's K^T) is packed once per row block, in 4 x 4
// transposes; row blocks grow with small k: ragged columns and k, several
// k blocks, rows past one block.
TEST_P(MatmulKernelTest, TransposedBInLargeRowBlocks) {
  for (uint32_t threads : {1u, 2u, 3u}) {
    check({2, 530, 70, 64, false, false, true, false, false}, threads);
    check({1, 300, 33, 263, false, false, true, true, false}, threads);
    check({3, 129, 5, 3, false, false, true, false, true}, threads);
  }
}

TEST_P(MatmulKernelTest, BatchesAccumulateAndThreads) {
  for (uint32_t threads : {1u, 2u, 3u, 4u}) {
    check({5, 19, 40, 33, false, false, true, true, false}, threads);
    check({3, 1, 200, 129, true, false, false, true, true}, threads);
    check({2, 1, 70, 20, false, false, false, false, false}, threads);
  }
}

// One row against an unpacked B, rows contiguous (P x V) or columns
// contiguous (Q x K^T): the decode-attention path, heads as batches.
TEST_P(MatmulKernelTest, SingleRowUnpacked) {
  for (bool transB : {false, true})
    for (int64_t n : {1, 15, 16, 63, 64, 65, 200, 1025})
      for (int64_t k : {1, 7, 64, 100})
        check({3, 1, n, k, false, false, transB, false, false}, 2);
  for (uint32_t threads : {1u, 2u, 3u})
    for (bool transB : {false, true}) {
      check({12, 1, 1025, 64, false, false, transB, true, false}, threads);
      check({1, 1, 1000, 64, false, false, transB, false, false}, threads);
      check({2, 1, 64, 1025, false, true, transB, true, true}, threads);
    }
}

// A decode batch (up to 16 rows) runs groups of panels k block by k
// block: row counts around the register tile (9 and 10 as two tiles of
// even height) and the gemvRows tiles (2-3 rows, a verify step), ragged
// columns, accumulation, a k longer than a k block with a ragged last one,
// several groups and a partial last group on 1-3 threads, batches sharing
// B.
TEST_P(MatmulKernelTest, DecodeBatchRows) {
  for (int64_t m : {2, 3, 4, 7, 8, 9, 10, 15, 16})
    for (bool accumulate : {false, true}) {
      check({1, m, 100, 700, true, false, false, accumulate, true}, 2);
      check({3, m, 33, 40, true, false, false, accumulate, true}, 2);
      for (uint32_t threads : {1u, 3u})
        check({1, m, 330, 300, true, false, false, accumulate, true},
              threads);
    }
}

// A bias (STRATA_MM_BIAS) is where C starts, whatever C held: one row
// (each thread's columns get it before their products), decode rows,
// batches, the blocked product, strided and transposed operands, K = 0.
TEST_P(MatmulKernelTest, BiasIsWhereCStarts) {
  std::vector<float> bias(1100);
  for (size_t j = 0; j < bias.size(); ++j) bias[j] = 0.25f * float(j % 17) - 2;
  for (uint32_t threads : {1u, 2u, 3u}) {
    check({1, 1, 1025, 64, true, false, false, false, true, &bias}, threads);
    check({2, 1, 200, 100, false, false, true, false, false, &bias}, threads);
    check({1, 7, 330, 300, true, false, false, false, true, &bias}, threads);
    check({1, 2, 330, 600, true, false, false, false, true, &bias}, threads);
    check({1, 3, 100, 300, true, false, false, false, true, &bias}, threads);
    check({3, 40, 65, 70, true, true, false, false, true, &bias}, threads);
    check({2, 33, 100, 50, false, false, false, false, false, &bias},
          threads);
  }
  Case c{2, 3, 4, 0, false, false, false, false, false, &bias};
  std::vector<float> a(1), b(1), out(2 * 3 * 4, 7.0f);
  run(c, a, b, &out);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], bias[i % 4]);
}

// A bias with FLAG_ACCUMULATE is no compiler's call: the run ends
// (INTERNAL) and C is left as it was.
TEST(MatmulKernelErrorsTest, BiasWithAccumulateEndsTheRun) {
  std::vector<float> a(8, 1.0f), b(8, 1.0f), bias(4, 1.0f), out(4, -2.0f);
  int64_t p[STRATA_MM_PARAM_COUNT] = {};
  p[STRATA_MM_FLAGS] = STRATA_MM_FLAG_ACCUMULATE;
  p[STRATA_MM_M] = 1;
  p[STRATA_MM_N] = 4;
  p[STRATA_MM_K] = 2;
  p[STRATA_MM_A_ADDR] = reinterpret_cast<intptr_t>(a.data());
  p[STRATA_MM_A_STRIDE_M] = 2;
  p[STRATA_MM_A_STRIDE_K] = 1;
  p[STRATA_MM_B_ADDR] = reinterpret_cast<intptr_t>(b.data());
  p[STRATA_MM_B_STRIDE_K] = 4;
  p[STRATA_MM_B_STRIDE_N] = 1;
  p[STRATA_MM_C_ADDR] = reinterpret_cast<intptr_t>(out.data());
  p[STRATA_MM_C_STRIDE_M] = 4;
  p[STRATA_MM_C_STRIDE_N] = 1;
  p[STRATA_MM_BIAS] = reinterpret_cast<intptr_t>(bias.data());
  KernelContext context;
  RunTrap trap;
  context.get()->trap = &trap;
  int64_t kind = 0;
  if (setjmp(trap.jump) != 0)
    kind = trap.failure.kind;
  else
    strataMatmulF32(context.get(), p);
  context.get()->trap = nullptr;
  EXPECT_EQ(kind, kInternalFailure);
  for (float x : out) EXPECT_EQ(x, -2.0f);
}

TEST_P(MatmulKernelTest, LongK) {
  check({1, 12, 64, 1000, true, false, false, false, true}, 2);
  check({1, 1, 96, 3000, true, false, false, false, true}, 2);
}

TEST_P(MatmulKernelTest, EmptyK) {
  Case c{2, 3, 4, 0, false, false, false, false, false};
  std::vector<float> a(1), b(1), out(2 * 3 * 4, 7.0f);
  run(c, a, b, &out);
  for (float x : out) EXPECT_EQ(x, 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Isa, MatmulKernelTest, kAllIsas, isaName);

TEST(ThreadPoolTest, RunsEveryIndexOnceAndNestsSerially) {
  ThreadPool pool(3);
  std::vector<int> hits(1000, 0);
  pool.parallelFor(hits.size(), [&](size_t i, uint32_t thread) {
    ++hits[i];
    // A nested loop runs on the calling worker, as that pool thread.
    int inner = 0;
    pool.parallelFor(4, [&](size_t, uint32_t innerThread) {
      ++inner;
      EXPECT_EQ(innerThread, thread);
    });
    EXPECT_EQ(inner, 4);
  });
  for (int h : hits) EXPECT_EQ(h, 1);
  for (int round = 0; round < 200; ++round) {
    std::atomic<int> sum{0};
    pool.parallelFor(7, [&](size_t i, uint32_t) { sum += static_cast<int>(i); });
    ASSERT_EQ(sum.load(), 21);
  }
}

// A worker that cannot start (the second of three here) is an exception the
// session turns into RESOURCE_EXHAUSTED, with the worker that did start
// joined; it used to end in std::terminate.
TEST(ThreadPoolTest, WorkerStartFailureThrowsAndJoins) {
  for (uint32_t failing : {1u, 2u, 3u})
    EXPECT_THROW(ThreadPool(4, failing), std::system_error) << failing;
  ThreadPool pool(4);
  std::atomic<int> runs{0};
  pool.parallelFor(8, [&](size_t, uint32_t) { ++runs; });
  EXPECT_EQ(runs.load(), 8);
}

}  // namespace
}  // namespace strata::runtime::kernels
