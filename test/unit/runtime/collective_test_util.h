//===- collective_test_util.h - Inputs and calls of the rank imports ------===//
// SPDX-License-Identifier: Apache-2.0
// What the tests of the collectives and of the pipeline hand-overs share:
// a strided rank-4 input no stride of which is the contiguous one, the
// collectives' parameter block, and a call of an import as a checked run
// makes it (a trap set), returning what ended the run.

#ifndef STRATA_TEST_UNIT_RUNTIME_COLLECTIVE_TEST_UTIL_H_
#define STRATA_TEST_UNIT_RUNTIME_COLLECTIVE_TEST_UTIL_H_

#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "run_context.h"
#include "strata_kernel_abi.h"

namespace strata::runtime {

/// IN of one rank: a rank-4 view with |sizes| into a buffer padded along
/// every dim, so that no stride is the contiguous one.
struct StridedInput {
  int64_t sizes[4];
  int64_t strides[4];
  std::vector<float> storage;

  StridedInput(const int64_t (&dims)[4], uint32_t rank,
               float (*value)(uint32_t rank, int64_t index)) {
    int64_t stride = 1;
    for (int d = 3; d >= 0; --d) {
      sizes[d] = dims[d];
      strides[d] = stride;
      stride *= dims[d] + 1;
    }
    storage.assign(static_cast<size_t>(stride), -7.0f);
    int64_t index = 0;
    for (int64_t a = 0; a < sizes[0]; ++a)
      for (int64_t b = 0; b < sizes[1]; ++b)
        for (int64_t c = 0; c < sizes[2]; ++c)
          for (int64_t e = 0; e < sizes[3]; ++e)
            storage[at(a, b, c, e)] = value(rank, index++);
  }
  size_t at(int64_t a, int64_t b, int64_t c, int64_t e) const {
    return static_cast<size_t>(a * strides[0] + b * strides[1] +
                               c * strides[2] + e * strides[3]);
  }
  int64_t count() const { return sizes[0] * sizes[1] * sizes[2] * sizes[3]; }
};

/// A STRATA_COLL_* parameter block.
inline std::vector<int64_t> collectiveParams(const float* in,
                                             const int64_t* sizes,
                                             const int64_t* strides, float* out,
                                             int64_t axis, int64_t ranks) {
  std::vector<int64_t> p(STRATA_COLL_PARAM_COUNT, 0);
  p[STRATA_COLL_IN] = reinterpret_cast<int64_t>(in);
  for (int d = 0; d < 4; ++d) {
    p[STRATA_COLL_SIZES + d] = sizes[d];
    p[STRATA_COLL_STRIDES + d] = strides[d];
  }
  p[STRATA_COLL_OUT] = reinterpret_cast<int64_t>(out);
  p[STRATA_COLL_AXIS] = axis;
  p[STRATA_COLL_RANKS] = ranks;
  return p;
}

/// Calls |import| as a checked run would (a trap set); returns the
/// failure (kind 0 if the call returned).
inline CheckFailure callChecked(void (*import)(strata_rt_context_t*,
                                               const int64_t*),
                                strata_rt_context_t* context,
                                const int64_t* p) {
  RunTrap trap;
  context->trap = &trap;
  if (setjmp(trap.jump) != 0) {
    context->trap = nullptr;
    return trap.failure;
  }
  import(context, p);
  context->trap = nullptr;
  return CheckFailure();
}

/// The bits of |x|, to compare sums exactly.
inline uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

}  // namespace strata::runtime

#endif  // STRATA_TEST_UNIT_RUNTIME_COLLECTIVE_TEST_UTIL_H_
