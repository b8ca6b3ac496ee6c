/*===- parallel_kernels.c - Entry points of a tensor-parallel rank --------===//
 * SPDX-License-Identifier: Apache-2.0
 * Built as a shared library whose bytes the runtime tests embed as the code
 * of a rank: each entry calls one collective import on its input, as
 * generated code does (kernel ABI v3). The group size the code was
 * "compiled for" is the weights' first int64.
 *===----------------------------------------------------------------------===*/

#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} desc1;

typedef struct {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
} desc2;

typedef struct strata_rt_context_t ctx_t;

/* The collectives' parameter block (STRATA_COLL_* of strata_kernel_abi.h). */
enum { IN = 0, SIZES = 1, STRIDES = 5, OUT = 9, AXIS = 10, RANKS = 11 };

EXPORT void *(*__strata_import_strata_rt_alloc)(ctx_t *, uint64_t) = 0;
EXPORT void (*__strata_import_strata_rt_all_reduce_f32)(ctx_t *,
                                                         const int64_t *) = 0;
EXPORT void (*__strata_import_strata_rt_all_gather_f32)(ctx_t *,
                                                         const int64_t *) = 0;
EXPORT const uint32_t __strata_import_count = 3;

/* x: f32[rows, 4] as rank 4 [1, 1, rows, 4]; OUT allocated with |columns|
 * per row. */
static float *collective(ctx_t *ctx, const desc2 *x, const desc1 *weights,
                         int64_t columns, int64_t axis, int gather) {
  const int64_t rows = x->sizes[0];
  float *out = (float *)__strata_import_strata_rt_alloc(
      ctx, (uint64_t)(rows * columns) * sizeof(float) + 1);
  int64_t p[12] = {0};
  p[IN] = (int64_t)(intptr_t)((const float *)x->aligned + x->offset);
  p[SIZES + 0] = 1;
  p[SIZES + 1] = 1;
  p[SIZES + 2] = rows;
  p[SIZES + 3] = 4;
  p[STRIDES + 0] = rows * 4;
  p[STRIDES + 1] = rows * 4;
  p[STRIDES + 2] = x->strides[0];
  p[STRIDES + 3] = x->strides[1];
  p[OUT] = (int64_t)(intptr_t)out;
  p[AXIS] = axis;
  p[RANKS] = *(const int64_t *)weights->aligned;
  if (gather)
    __strata_import_strata_rt_all_gather_f32(ctx, p);
  else
    __strata_import_strata_rt_all_reduce_f32(ctx, p);
  return out;
}

static void set2(desc2 *d, float *data, int64_t rows, int64_t cols) {
  d->allocated = d->aligned = data;
  d->offset = 0;
  d->sizes[0] = rows;
  d->sizes[1] = cols;
  d->strides[0] = cols;
  d->strides[1] = 1;
}

/* all_reduce(x: f32[rows, 4]) -> y: f32[rows, 4], the sum over the ranks. */
EXPORT void strata_test_all_reduce(ctx_t *ctx, desc2 *y, desc2 *x,
                                   desc1 *weights) {
  set2(y, collective(ctx, x, weights, 4, 0, 0), x->sizes[0], 4);
}

/* all_gather(x: f32[rows, 4]) -> y: f32[rows, 4 * ranks], the ranks' x
 * side by side. */
EXPORT void strata_test_all_gather(ctx_t *ctx, desc2 *y, desc2 *x,
                                   desc1 *weights) {
  const int64_t columns = 4 * *(const int64_t *)weights->aligned;
  set2(y, collective(ctx, x, weights, columns, 3, 1), x->sizes[0], columns);
}
