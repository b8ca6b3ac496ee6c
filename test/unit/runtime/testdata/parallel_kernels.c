/*===- parallel_kernels.c - Entry points of a tensor-parallel rank --------===//
 * SPDX-License-Identifier: Apache-2.0
 * Built as a shared library whose bytes the runtime tests embed as the code
 * of a rank: each entry calls collective or send/recv imports on its input,
 * as generated code does (kernel ABI v3). What the code was "compiled for"
 * is in the weights' int64s: the group size (tensor ranks), then the
 * pipeline stage and the stages.
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
EXPORT void (*__strata_import_strata_rt_send_f32)(ctx_t *, const int64_t *) = 0;
EXPORT void (*__strata_import_strata_rt_recv_extents_f32)(ctx_t *,
                                                          const int64_t *) = 0;
EXPORT void (*__strata_import_strata_rt_recv_f32)(ctx_t *, const int64_t *) = 0;
EXPORT void (*__strata_import_strata_rt_free)(ctx_t *, void *) = 0;
EXPORT const uint32_t __strata_import_count = 7;

/* The send/recv parameter block (STRATA_P2P_* of strata_kernel_abi.h). */
enum { BUF = 0, P2P_SIZES = 1, P2P_STRIDES = 5, STAGE = 9, EXTENTS = 10 };

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

/* |rows| x 4 floats at |buf| to stage |stage| (contiguous). */
static void send_to(ctx_t *ctx, const float *buf, int64_t rows, int64_t stage) {
  int64_t p[11] = {0};
  p[BUF] = (int64_t)(intptr_t)buf;
  p[P2P_SIZES + 0] = 1;
  p[P2P_SIZES + 1] = 1;
  p[P2P_SIZES + 2] = rows;
  p[P2P_SIZES + 3] = 4;
  p[P2P_STRIDES + 0] = rows * 4;
  p[P2P_STRIDES + 1] = rows * 4;
  p[P2P_STRIDES + 2] = 4;
  p[P2P_STRIDES + 3] = 1;
  p[STAGE] = stage;
  __strata_import_strata_rt_send_f32(ctx, p);
}

/* A tensor from stage |stage|, allocated from the extents it sends first;
 * its rows (the product of all but the last extent) in |*rows|. */
static float *recv_from(ctx_t *ctx, int64_t stage, int64_t *rows) {
  int64_t extents[4] = {-1, -1, -1, -1};
  int64_t p[11] = {0};
  p[STAGE] = stage;
  p[EXTENTS] = (int64_t)(intptr_t)extents;
  __strata_import_strata_rt_recv_extents_f32(ctx, p);
  const int64_t n = extents[0] * extents[1] * extents[2] * extents[3];
  float *buf = (float *)__strata_import_strata_rt_alloc(
      ctx, (uint64_t)n * sizeof(float) + 1);
  for (int d = 0; d < 4; ++d)
    p[P2P_SIZES + d] = extents[d];
  p[BUF] = (int64_t)(intptr_t)buf;
  __strata_import_strata_rt_recv_f32(ctx, p);
  *rows = extents[0] * extents[1] * extents[2];
  return buf;
}

/* pipeline(x: f32[rows, 4]) -> y: f32[rows, 4], as a split model's stage
 * runs: h = x, plus the previous stage's h after stage 0; h summed over
 * the stage's tensor ranks; handed to the next stage. The last stage's h
 * is y, which it sends to every other stage. */
EXPORT void strata_test_pipeline(ctx_t *ctx, desc2 *y, desc2 *x,
                                 desc1 *weights) {
  const int64_t *compiled = (const int64_t *)weights->aligned;
  const int64_t stage = compiled[1], stages = compiled[2];
  const int64_t rows = x->sizes[0];
  int64_t received = rows;
  float *h = stage > 0 ? recv_from(ctx, stage - 1, &received)
                       : (float *)__strata_import_strata_rt_alloc(
                             ctx, (uint64_t)(rows * 4) * sizeof(float));
  const float *xs = (const float *)x->aligned + x->offset;
  for (int64_t r = 0; r < rows && r < received; ++r)
    for (int64_t c = 0; c < 4; ++c) {
      const float v = xs[r * x->strides[0] + c * x->strides[1]];
      h[r * 4 + c] = stage > 0 ? h[r * 4 + c] + v : v;
    }
  desc2 hd;
  set2(&hd, h, rows, 4);
  float *sum = collective(ctx, &hd, weights, 4, 0, 0);
  __strata_import_strata_rt_free(ctx, h);
  if (stage + 1 < stages) {
    send_to(ctx, sum, rows, stage + 1);
    __strata_import_strata_rt_free(ctx, sum);
    sum = recv_from(ctx, stages - 1, &received);
  } else {
    for (int64_t s = 0; s + 1 < stages; ++s)
      send_to(ctx, sum, rows, s);
  }
  set2(y, sum, rows, 4);
}
