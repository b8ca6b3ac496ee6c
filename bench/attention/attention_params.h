//===- attention_params.h - Filling the attention kernels' params ---------===//
// SPDX-License-Identifier: Apache-2.0
// Shared by the attention benchmarks.

#ifndef STRATA_BENCH_ATTENTION_ATTENTION_PARAMS_H_
#define STRATA_BENCH_ATTENTION_ATTENTION_PARAMS_H_

#include <cstdint>

// An operand's address and four strides (batch, head, sequence, dim) at
// |slot| of strata_rt_attention_*'s params.
inline void setOperand(int64_t* params, int64_t slot, const void* p,
                       int64_t sb, int64_t sh, int64_t ss, int64_t sd) {
  params[slot] = reinterpret_cast<intptr_t>(p);
  params[slot + 1] = sb;
  params[slot + 2] = sh;
  params[slot + 3] = ss;
  params[slot + 4] = sd;
}

#endif  // STRATA_BENCH_ATTENTION_ATTENTION_PARAMS_H_
