//===- matmul_bias.h - The matmul imports' bias (STRATA_MM_BIAS) -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// A linear layer's output starts from its bias. Generated code used to
// write the bias into C in a pass of its own (a loop over every output,
// one more kernel call between two matmuls) and then have the matmul add
// to it; the import now takes the bias and the kernels put it where they
// write C: a decode matmul in each thread's own columns just before it
// computes them (the lines are in that core's cache when the products are
// added), the others in one parallel pass before their products.

#ifndef STRATA_RUNTIME_SRC_KERNELS_MATMUL_BIAS_H_
#define STRATA_RUNTIME_SRC_KERNELS_MATMUL_BIAS_H_

#include <cstdint>

#include "../run_context.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

/// Whether a matmul params block's bias is one a compiler passes: none, or
/// one without FLAG_ACCUMULATE. Else ends the run (INTERNAL, |import|
/// naming the call) and returns false.
bool checkMatmulBias(strata_rt_context_t* context, const int64_t* params,
                     const char* import);

/// C[i, j] = bias[j] for rows i < m (|cm| apart) and columns j in [n0, n1)
/// (|cn| apart), on the calling thread: a decode matmul's own columns.
void writeBiasColumns(float* c, int64_t m, int64_t cm, int64_t cn,
                      const float* bias, int64_t n0, int64_t n1);

/// C[b..., i, j] = bias[j] over all of C (batch dims |batch| with C's
/// strides |cBatch|), rows shared out over |context|'s threads.
void writeBiasRows(strata_rt_context_t* context, float* c, int64_t m,
                   int64_t n, int64_t cm, int64_t cn, int64_t batchRank,
                   const int64_t* batch, const int64_t* cBatch,
                   const float* bias);

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_MATMUL_BIAS_H_
