/*===- test_kernels.c - Hand-written entry points per kernel ABI v3 -------===//
 * SPDX-License-Identifier: Apache-2.0
 * Built as a shared library whose bytes the runtime tests embed in artifacts
 * as the CPU code section. Each function follows the calling convention of
 * codegen/abi/strata_kernel_abi.h exactly as generated code does.
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  void *allocated;
  void *aligned;
  int64_t offset;
} desc0;

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

/* The run context, opaque: only passed on. */
typedef struct strata_rt_context_t ctx_t;

/* Kernel ABI v3 imports: results come from the runtime's allocator, as in
 * generated code; the runtime binds the pointer after loading. */
EXPORT void *(*__strata_import_strata_rt_alloc)(ctx_t *, uint64_t) = 0;
EXPORT void (*__strata_import_strata_rt_parallel_for)(
    ctx_t *, void (*)(ctx_t *, void *, int64_t, int64_t), void *, int64_t,
    int64_t, int64_t) = 0;
EXPORT const uint32_t __strata_import_count = 2;

static void *alloc_result(ctx_t *ctx, size_t bytes) {
  return __strata_import_strata_rt_alloc(ctx, bytes ? bytes : 1);
}

static void set1(desc1 *d, void *data, int64_t n) {
  d->allocated = d->aligned = data;
  d->offset = 0;
  d->sizes[0] = n;
  d->strides[0] = 1;
}

/* add_bias(x: f32[batch, 4]) -> y: f32[batch, 4] = x + weights[0..4) as f32 */
EXPORT void strata_test_add_bias(ctx_t *ctx, desc2 *y, desc2 *x,
                                 desc1 *weights) {
  const float *bias = (const float *)weights->aligned;
  int64_t rows = x->sizes[0];
  float *out = (float *)alloc_result(ctx, (size_t)(rows * 4) * sizeof(float));
  const float *in = (const float *)x->aligned + x->offset;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      out[i * 4 + j] = in[i * x->strides[0] + j * x->strides[1]] + bias[j];
    }
  }
  y->allocated = y->aligned = out;
  y->offset = 0;
  y->sizes[0] = rows;
  y->sizes[1] = 4;
  y->strides[0] = 4;
  y->strides[1] = 1;
}

/* Two outputs: row_sum: f32[seq] = sum_j a[i, j] + b[i];
 * doubled: i64[seq] = 2 * b[i]. Inputs a: f32[seq, 3], b: i32[seq]. */
typedef struct {
  desc1 row_sum;
  desc1 doubled;
} two_results;

EXPORT void strata_test_two_outputs(ctx_t *ctx, two_results *results, desc2 *a,
                                    desc1 *b, desc1 *weights) {
  (void)weights;
  int64_t n = a->sizes[0];
  float *sums = (float *)alloc_result(ctx, (size_t)n * sizeof(float));
  int64_t *doubled = (int64_t *)alloc_result(ctx, (size_t)n * sizeof(int64_t));
  const float *av = (const float *)a->aligned;
  const int32_t *bv = (const int32_t *)b->aligned;
  for (int64_t i = 0; i < n; ++i) {
    sums[i] = av[i * 3] + av[i * 3 + 1] + av[i * 3 + 2] + (float)bv[i];
    doubled[i] = 2 * (int64_t)bv[i];
  }
  set1(&results->row_sum, sums, n);
  set1(&results->doubled, doubled, n);
}

/* scale(x: f32[]) -> y: f32[] = 3 * x (rank 0 in and out). */
EXPORT void strata_test_scale(ctx_t *ctx, desc0 *y, desc0 *x, desc1 *weights) {
  (void)weights;
  float *out = (float *)alloc_result(ctx, sizeof(float));
  *out = 3.0f * *(const float *)x->aligned;
  y->allocated = y->aligned = out;
  y->offset = 0;
}

/* sum8(x0..x7: f32[4]) -> y: f32[4]: eleven pointer arguments, so some travel
 * on the stack. */
EXPORT void strata_test_sum8(ctx_t *ctx, desc1 *y, desc1 *x0, desc1 *x1,
                             desc1 *x2, desc1 *x3, desc1 *x4, desc1 *x5,
                             desc1 *x6, desc1 *x7, desc1 *weights) {
  (void)weights;
  desc1 *xs[8] = {x0, x1, x2, x3, x4, x5, x6, x7};
  float *out = (float *)alloc_result(ctx, 4 * sizeof(float));
  for (int j = 0; j < 4; ++j) {
    out[j] = 0;
    for (int i = 0; i < 8; ++i)
      out[j] += ((const float *)xs[i]->aligned)[j];
  }
  set1(y, out, 4);
}

/* bad_size(x: f32[4]) -> y: f32[4] that claims a negative size. */
EXPORT void strata_test_bad_size(ctx_t *ctx, desc1 *y, desc1 *x,
                                 desc1 *weights) {
  (void)x;
  (void)weights;
  set1(y, alloc_result(ctx, 16), -5);
}

/* bad_stride(x: f32[2, 4]) -> y: f32[2, 4] with column-major strides. */
EXPORT void strata_test_bad_stride(ctx_t *ctx, desc2 *y, desc2 *x,
                                   desc1 *weights) {
  (void)weights;
  float *out = (float *)alloc_result(ctx, 8 * sizeof(float));
  memcpy(out, x->aligned, 8 * sizeof(float));
  y->allocated = y->aligned = out;
  y->offset = 0;
  y->sizes[0] = 2;
  y->sizes[1] = 4;
  y->strides[0] = 1;
  y->strides[1] = 2;
}

/* echo(x: f32[4]) -> y: f32[4] returning the input's own buffer, an ABI
 * violation the runtime must survive without freeing the caller's data. */
EXPORT void strata_test_echo(ctx_t *ctx, desc1 *y, desc1 *x, desc1 *weights) {
  (void)ctx;
  (void)weights;
  *y = *x;
}

/* loops(x: f32[1024], n: i64[], hook: i64[2]) -> y: f32[1024] = x + n:
 * n parallel loops that each add 1 to every element, as generated code
 * issues one loop per op. hook = {function, context}, when function is
 * nonzero, is called as function(context, i) on the calling thread before
 * loop i, so a test can act at a known point of the run. */
static void add_one(ctx_t *ctx, void *args, int64_t begin, int64_t end) {
  (void)ctx;
  float *y = (float *)args;
  for (int64_t i = begin; i < end; ++i)
    y[i] += 1.0f;
}

EXPORT void strata_test_loops(ctx_t *ctx, desc1 *y, desc1 *x, desc0 *n,
                              desc1 *hook, desc1 *weights) {
  (void)weights;
  const int64_t count = x->sizes[0];
  float *out = (float *)alloc_result(ctx, (size_t)count * sizeof(float));
  memcpy(out, x->aligned, (size_t)count * sizeof(float));
  const int64_t loops = *(const int64_t *)n->aligned;
  const int64_t *h = (const int64_t *)hook->aligned;
  void (*function)(void *, int64_t) = (void (*)(void *, int64_t))(intptr_t)h[0];
  void *context = (void *)(intptr_t)h[1];
  for (int64_t i = 0; i < loops; ++i) {
    if (function)
      function(context, i);
    /* work above the runtime's threshold, so the pool runs the loop */
    __strata_import_strata_rt_parallel_for(ctx, add_one, out, 0, count,
                                           1 << 20);
  }
  set1(y, out, count);
}

/* input_address(x: f32[4]) -> address: i64[2] = {x.allocated, x.aligned}:
 * where the runtime passed the input's data, so a test can check that
 * caller memory reaches the entry without a copy. */
EXPORT void strata_test_input_address(ctx_t *ctx, desc1 *y, desc1 *x,
                                      desc1 *weights) {
  (void)weights;
  int64_t *out = (int64_t *)alloc_result(ctx, 2 * sizeof(int64_t));
  out[0] = (int64_t)(intptr_t)x->allocated;
  out[1] = (int64_t)(intptr_t)x->aligned;
  set1(y, out, 2);
}

/* bump(slot: i64[]) -> count: i64[] with state counter: i64[slots]
 * (per sequence): counter[slot] += 1 in place, returns the new value. The
 * state arrives after the inputs, before the weights. */
EXPORT void strata_test_bump(ctx_t *ctx, desc0 *count, desc0 *slot,
                             desc1 *counter, desc1 *weights) {
  (void)weights;
  int64_t *state = (int64_t *)counter->aligned;
  const int64_t s = *(const int64_t *)slot->aligned;
  int64_t *out = (int64_t *)alloc_result(ctx, sizeof(int64_t));
  *out = (s >= 0 && s < counter->sizes[0]) ? ++state[s] : -1;
  count->allocated = count->aligned = out;
  count->offset = 0;
}

/* A toy language model over a vocabulary of LM_VOCAB tokens for the
 * generator tests, following the prefill/decode entry contract
 * (docs/design/prefill-decode.md). State history: i64[slots, context] (per
 * sequence) holds token + 1 at each cached position, 0 where nothing is.
 * The next token after a sequence's cached tokens is
 *   (sum over the whole row of history[i] * (i + 1) + 3 * length) mod V,
 * so it depends on every token of that slot and its position, and on the
 * slot having been reset (a stale entry past the length changes it).
 * logits[v] = -(circular distance from v to next). Weights: int64
 * {fail_slot, fail_position}: writing a position >= fail_position at
 * fail_slot ends the run with RESOURCE_EXHAUSTED (an allocation the runtime
 * cannot make) before anything is written; -1 never fails. Out-of-range
 * slots and positions are never written or read. */
#define LM_VOCAB 16

/* Ends the run (RESOURCE_EXHAUSTED) when the weights ask for a failure at
 * (slot, position). */
static void lm_maybe_fail(ctx_t *ctx, const desc1 *weights, int64_t slot,
                          int64_t position) {
  const int64_t *config = (const int64_t *)weights->aligned;
  if (weights->sizes[0] >= 16 && slot == config[0] && config[1] >= 0 &&
      position >= config[1])
    __strata_import_strata_rt_alloc(ctx, UINT64_MAX / 2);
}

/* Writes the logits after |length| cached tokens of history row |slot|. */
static void lm_logits(const desc2 *history, int64_t slot, int64_t length,
                      float *logits) {
  int64_t sum = 3 * length;
  if (slot >= 0 && slot < history->sizes[0]) {
    const int64_t *row = (const int64_t *)history->aligned +
                         slot * history->sizes[1];
    /* Only the cached positions, as the contract says an entry reads:
     * the rows past |length| hold whatever earlier sequences left. */
    for (int64_t i = 0; i < length && i < history->sizes[1]; ++i)
      sum += row[i] * (i + 1);
  }
  int64_t next = ((sum % LM_VOCAB) + LM_VOCAB) % LM_VOCAB;
  for (int64_t v = 0; v < LM_VOCAB; ++v) {
    int64_t d = v > next ? v - next : next - v;
    logits[v] = -(float)(d < LM_VOCAB - d ? d : LM_VOCAB - d);
  }
}

static void lm_write(desc2 *history, int64_t slot, int64_t position,
                     int64_t token) {
  if (slot >= 0 && slot < history->sizes[0] && position >= 0 &&
      position < history->sizes[1])
    ((int64_t *)history->aligned)[slot * history->sizes[1] + position] =
        token + 1;
}

static void set2(desc2 *d, void *data, int64_t rows, int64_t cols) {
  d->allocated = d->aligned = data;
  d->offset = 0;
  d->sizes[0] = rows;
  d->sizes[1] = cols;
  d->strides[0] = cols;
  d->strides[1] = 1;
}

/* prefill(input_ids: i64[1, prefill_length], slot: i64[], start: i64[])
 *   -> logits: f32[1, V] after the chunk's last token. */
EXPORT void strata_test_lm_prefill(ctx_t *ctx, desc2 *logits,
                                   desc2 *input_ids, desc0 *slot_in,
                                   desc0 *start_in, desc2 *history,
                                   desc1 *weights) {
  const int64_t *ids = (const int64_t *)input_ids->aligned;
  const int64_t n = input_ids->sizes[1];
  const int64_t slot = *(const int64_t *)slot_in->aligned;
  const int64_t start = *(const int64_t *)start_in->aligned;
  if (n > 0) lm_maybe_fail(ctx, weights, slot, start + n - 1);
  float *out = (float *)alloc_result(ctx, LM_VOCAB * sizeof(float));
  for (int64_t j = 0; j < n; ++j) lm_write(history, slot, start + j, ids[j]);
  lm_logits(history, slot, start + n, out);
  set2(logits, out, 1, LM_VOCAB);
}

/* decode(input_ids: i64[batch, 1], slots: i64[batch], positions: i64[batch])
 *   -> logits: f32[batch, V], row b after token input_ids[b] at
 *   positions[b] of slot slots[b]. */
EXPORT void strata_test_lm_decode(ctx_t *ctx, desc2 *logits,
                                  desc2 *input_ids, desc1 *slots_in,
                                  desc1 *positions_in, desc2 *history,
                                  desc1 *weights) {
  const int64_t *ids = (const int64_t *)input_ids->aligned;
  const int64_t *slots = (const int64_t *)slots_in->aligned;
  const int64_t *positions = (const int64_t *)positions_in->aligned;
  const int64_t batch = input_ids->sizes[0];
  for (int64_t b = 0; b < batch; ++b)
    lm_maybe_fail(ctx, weights, slots[b], positions[b]);
  float *out = (float *)alloc_result(ctx, (size_t)batch * LM_VOCAB * 4);
  for (int64_t b = 0; b < batch; ++b)
    lm_write(history, slots[b], positions[b], ids[b]);
  for (int64_t b = 0; b < batch; ++b)
    lm_logits(history, slots[b], positions[b] + 1, out + b * LM_VOCAB);
  set2(logits, out, batch, LM_VOCAB);
}
