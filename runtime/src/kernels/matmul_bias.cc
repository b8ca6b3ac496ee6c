//===- matmul_bias.cc - The matmul imports' bias --------------------------===//
// SPDX-License-Identifier: Apache-2.0

#include "matmul_bias.h"

#include <algorithm>
#include <cstring>

namespace strata::runtime::kernels {

bool checkMatmulBias(strata_rt_context_t* context, const int64_t* params,
                     const char* import) {
  if (params[STRATA_MM_BIAS] != 0 &&
      (params[STRATA_MM_FLAGS] & STRATA_MM_FLAG_ACCUMULATE) != 0) {
    failRunInternal(context, import, params[STRATA_MM_FLAGS]);
    return false;
  }
  return true;
}

void writeBiasColumns(float* c, int64_t m, int64_t cm, int64_t cn,
                      const float* bias, int64_t n0, int64_t n1) {
  if (n1 <= n0) return;
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * cm;
    if (cn == 1) {
      std::memcpy(row + n0, bias + n0, sizeof(float) * (n1 - n0));
    } else {
      for (int64_t j = n0; j < n1; ++j) row[j * cn] = bias[j];
    }
  }
}

void writeBiasRows(strata_rt_context_t* context, float* c, int64_t m,
                   int64_t n, int64_t cm, int64_t cn, int64_t batchRank,
                   const int64_t* batch, const int64_t* cBatch,
                   const float* bias) {
  if (m <= 0 || n <= 0) return;
  int64_t batches = 1;
  for (int64_t d = 0; d < batchRank; ++d) {
    if (batch[d] <= 0) return;
    batches *= batch[d];
  }
  // Tasks of whole rows, a few per thread.
  const int64_t rows = batches * m;
  const int64_t tasks = std::min(rows, int64_t(loopThreads(context)) * 4);
  parallelFor(context, static_cast<size_t>(tasks),
              [&](size_t task, uint32_t) {
                const int64_t r0 = rows * int64_t(task) / tasks;
                const int64_t r1 = rows * int64_t(task + 1) / tasks;
                for (int64_t r = r0; r < r1; ++r) {
                  // Row r: batch index r / m (row-major over the batch
                  // dims), row r % m.
                  int64_t rest = r / m, offset = (r % m) * cm;
                  for (int64_t d = batchRank - 1; d >= 0; --d) {
                    offset += (rest % batch[d]) * cBatch[d];
                    rest /= batch[d];
                  }
                  writeBiasColumns(c + offset, 1, cm, cn, bias, 0, n);
                }
              });
}

}  // namespace strata::runtime::kernels
