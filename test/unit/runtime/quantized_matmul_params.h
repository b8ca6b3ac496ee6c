//===- quantized_matmul_params.h - Params of a quantized-weight matmul ----===//
// SPDX-License-Identifier: Apache-2.0
// The params block the compiler passes strata_rt_matmul_f32_i8 / _i4 for a
// row-major A [batch, m, k] and C [batch, m, n] against one packed weight
// shared by the batches (C starting from |bias| where given), for the
// kernel tests.

#ifndef STRATA_TEST_UNIT_RUNTIME_QUANTIZED_MATMUL_PARAMS_H_
#define STRATA_TEST_UNIT_RUNTIME_QUANTIZED_MATMUL_PARAMS_H_

#include <cstdint>
#include <vector>

#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

struct QuantizedMatmulParams {
  int64_t values[STRATA_MM_PARAM_COUNT] = {};
  const int64_t* get() const { return values; }
};

inline QuantizedMatmulParams quantizedMatmulParams(
    int64_t layout, int64_t batch, int64_t m, int64_t n, int64_t k,
    int64_t group, bool accumulate, const float* a, const void* b,
    const float* scales, float* c, const float* bias = nullptr) {
  QuantizedMatmulParams q;
  int64_t* p = q.values;
  p[STRATA_MM_FLAGS] = accumulate ? STRATA_MM_FLAG_ACCUMULATE : 0;
  p[STRATA_MM_B_LAYOUT] = layout;
  p[STRATA_MM_M] = m;
  p[STRATA_MM_N] = n;
  p[STRATA_MM_K] = k;
  p[STRATA_MM_BATCH_RANK] = 1;
  p[STRATA_MM_BATCH_SIZES] = batch;
  p[STRATA_MM_A_ADDR] = reinterpret_cast<intptr_t>(a);
  p[STRATA_MM_A_BATCH_STRIDES] = m * k;
  p[STRATA_MM_A_STRIDE_M] = k;
  p[STRATA_MM_A_STRIDE_K] = 1;
  p[STRATA_MM_B_ADDR] = reinterpret_cast<intptr_t>(b);
  p[STRATA_MM_C_ADDR] = reinterpret_cast<intptr_t>(c);
  p[STRATA_MM_C_BATCH_STRIDES] = m * n;
  p[STRATA_MM_C_STRIDE_M] = n;
  p[STRATA_MM_C_STRIDE_N] = 1;
  p[STRATA_MM_B_SCALES] = reinterpret_cast<intptr_t>(scales);
  p[STRATA_MM_GROUP_SIZE] = group;
  p[STRATA_MM_BIAS] = reinterpret_cast<intptr_t>(bias);
  return q;
}

}  // namespace strata::runtime::kernels

#endif  // STRATA_TEST_UNIT_RUNTIME_QUANTIZED_MATMUL_PARAMS_H_
