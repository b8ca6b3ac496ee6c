//===- packed_gemm_test_util.h - Operands of packed-weight matmul tests ---===//
// SPDX-License-Identifier: Apache-2.0
// What the W8A8 and bf16 kernel tests share: a product's shape and strides,
// its random A and C, the params block for them, the check that C outside
// the product is untouched, and the shapes both sweep.

#ifndef STRATA_TEST_UNIT_RUNTIME_PACKED_GEMM_TEST_UTIL_H_
#define STRATA_TEST_UNIT_RUNTIME_PACKED_GEMM_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernel_context.h"
#include "quantized_matmul_params.h"
#include "strata_kernel_abi.h"
#include "thread_pool.h"

namespace strata::runtime::kernels {

/// One product's operands: A [batch, m, k] and C [batch, m, n] with the
/// given strides (elements), one packed weight shared by the batches.
struct PackedGemmCase {
  int64_t m, n, k;
  bool accumulate = false;
  int64_t batch = 1;
  int64_t am = 0, ak = 1, aBatch = 0;  // 0: contiguous
  int64_t cm = 0, cn = 1, cBatch = 0;
};

/// A case's A and C, random in [-1, 1). The seed depends on the shape only;
/// a test draws its weight from |rng| and then calls fillC(), so that each
/// draw keeps its place in the sequence.
struct PackedGemmOperands {
  PackedGemmCase c;
  std::vector<float> a, out, initial;
  std::mt19937 rng;
  std::uniform_real_distribution<float> dist{-1.0f, 1.0f};

  explicit PackedGemmOperands(PackedGemmCase shape) : c(shape) {
    if (c.am == 0) c.am = c.ak == 1 ? c.k : 1;
    if (c.ak != 1 && c.am == 1) c.ak = c.m;  // A stored transposed
    if (c.aBatch == 0) c.aBatch = (c.m - 1) * c.am + (c.k - 1) * c.ak + 1;
    if (c.cm == 0) c.cm = c.n * c.cn;
    if (c.cBatch == 0) c.cBatch = c.m * c.cm;
    rng.seed(static_cast<uint32_t>(c.m * 131 + c.n * 7 + c.k * 3));
    a.assign(c.batch * c.aBatch, 0.0f);
    for (float &x : a) x = dist(rng);
  }
  /// Draws C, and keeps a copy as the accumulation's start.
  void fillC() {
    out.assign(c.batch * c.cBatch, 0.0f);
    for (float &x : out) x = dist(rng);
    initial = out;
  }
  float &A(int64_t b, int64_t i, int64_t k) {
    return a[b * c.aBatch + i * c.am + k * c.ak];
  }
  int64_t C(int64_t b, int64_t i, int64_t j) const {
    return b * c.cBatch + i * c.cm + j * c.cn;
  }
  /// The params block of this product against the packed weight |b|.
  QuantizedMatmulParams params(int64_t layout, int64_t group, const void *b,
                               const float *scales) const {
    QuantizedMatmulParams p = quantizedMatmulParams(
        layout, c.batch, c.m, c.n, c.k, group, c.accumulate, a.data(), b,
        scales, const_cast<float *>(out.data()));
    p.values[STRATA_MM_A_BATCH_STRIDES] = c.aBatch;
    p.values[STRATA_MM_A_STRIDE_M] = c.am;
    p.values[STRATA_MM_A_STRIDE_K] = c.ak;
    p.values[STRATA_MM_C_BATCH_STRIDES] = c.cBatch;
    p.values[STRATA_MM_C_STRIDE_M] = c.cm;
    p.values[STRATA_MM_C_STRIDE_N] = c.cn;
    return p;
  }
  /// Runs |kernel| on |params| in a pool of |threads|.
  static void run(void (*kernel)(strata_rt_context_t *, const int64_t *),
                  const QuantizedMatmulParams &params, uint32_t threads) {
    ThreadPool pool(threads);
    KernelContext context(&pool);
    kernel(context.get(), params.get());
  }
  /// Outside the rows and columns written, C is untouched.
  void expectOutsideUntouched() const {
    for (size_t x = 0; x < out.size(); ++x) {
      const int64_t b = x / c.cBatch, r = x % c.cBatch;
      const int64_t i = r / c.cm, j = (r % c.cm) / c.cn;
      if (i < c.m && j < c.n && (r % c.cm) % c.cn == 0) continue;
      ASSERT_EQ(out[x], initial[x]) << "element " << x << " batch " << b;
    }
  }
};

/// Ragged M and K (each K with the next N of a ragged cycle, accumulating
/// every other case), then each N at a K of several blocks.
inline std::vector<PackedGemmCase> raggedCases(std::vector<int64_t> ms,
                                               std::vector<int64_t> ks) {
  const int64_t ns[] = {1, 31, 32, 33, 100};
  std::vector<PackedGemmCase> cases;
  int64_t next = 0;
  for (int64_t m : ms)
    for (int64_t k : ks) {
      const int64_t n = ns[next++ % 5];
      cases.push_back({m, n, k, next % 2 == 0});
    }
  for (int64_t n : ns)
    for (bool accumulate : {false, true})
      cases.push_back({13, n, 771, accumulate});
  return cases;
}

/// Padded rows, A stored transposed (with K |transposedK|), strided C
/// columns.
inline std::vector<PackedGemmCase> stridedCases(int64_t transposedK) {
  PackedGemmCase padded{13, 45, 100};
  padded.am = 130;  // A rows apart by more than K
  padded.cm = 50;   // C rows apart by more than N
  PackedGemmCase transposed{7, 33, transposedK, true};
  transposed.ak = 0;  // A stored K x M (its k stride is M)
  PackedGemmCase columns{5, 40, 9, true};
  columns.cn = 2;  // strided C columns
  return {padded, transposed, columns};
}

/// Contiguous batches (folded into M) and padded ones (with K |separateK|,
/// not folded).
inline std::vector<PackedGemmCase> batchCases(int64_t separateK) {
  PackedGemmCase folded{5, 40, 36, true};
  folded.batch = 3;  // contiguous: folds into 15 rows
  PackedGemmCase separate{13, 33, separateK};
  separate.batch = 2;
  separate.aBatch = 13 * separateK + 7;  // padding between batches
  separate.cBatch = 13 * 33 + 5;
  return {folded, separate};
}

/// A bias (STRATA_MM_BIAS) is where C starts: |o| (not accumulating) run
/// by its own run(), then again from C as it was with a bias through
/// |kernel|; every output must be the first run's plus its column's bias,
/// and C outside the product untouched. The product added to C at once
/// (|sumsFromC| false): one more fp32 rounding. Summed into C term by term
/// (bf16's order): each of the K + 1 sums of both runs rounded, none
/// larger than |bias| + K (A and B within [-1, 1]).
template <typename Operands>
void expectBiasIsWhereCStarts(Operands &o,
                              void (*kernel)(strata_rt_context_t *,
                                             const int64_t *),
                              uint32_t threads, bool sumsFromC) {
  std::vector<float> bias(o.c.n);
  for (float &x : bias) x = 4.0f * o.dist(o.rng);
  o.run(threads);
  const std::vector<float> plain = o.out;
  o.out = o.initial;
  QuantizedMatmulParams p = o.params();
  p.values[STRATA_MM_BIAS] = reinterpret_cast<intptr_t>(bias.data());
  PackedGemmOperands::run(kernel, p, threads);
  for (int64_t b = 0; b < o.c.batch; ++b)
    for (int64_t i = 0; i < o.c.m; ++i)
      for (int64_t j = 0; j < o.c.n; ++j) {
        const float was = plain[o.C(b, i, j)];
        const double k = double(o.c.k);
        const double tolerance =
            sumsFromC ? 2 * (k + 2) * std::ldexp(1.0, -24) *
                            (std::fabs(bias[j]) + k)
                      : std::ldexp(1.0, -22) *
                                (std::fabs(was) + std::fabs(bias[j])) +
                            1e-30;
        ASSERT_NEAR(o.out[o.C(b, i, j)], double(was) + bias[j], tolerance)
            << "batch " << b << " row " << i << " col " << j;
      }
  o.expectOutsideUntouched();
}

/// expectBiasIsWhereCStarts over one row, decode rows, prefill rows with
/// ragged edges and batches, on 1-3 threads.
template <typename Operands>
void expectBiasIsWhereCStartsEverywhere(
    void (*kernel)(strata_rt_context_t *, const int64_t *), bool sumsFromC) {
  for (uint32_t threads : {1u, 2u, 3u})
    for (PackedGemmCase shape :
         {PackedGemmCase{1, 100, 64}, PackedGemmCase{5, 33, 40},
          PackedGemmCase{70, 65, 130}, PackedGemmCase{3, 31, 20, false, 2}}) {
      Operands o(shape);
      expectBiasIsWhereCStarts(o, kernel, threads, sumsFromC);
    }
}

}  // namespace strata::runtime::kernels

#endif  // STRATA_TEST_UNIT_RUNTIME_PACKED_GEMM_TEST_UTIL_H_
