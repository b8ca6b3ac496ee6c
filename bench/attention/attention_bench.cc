//===- attention_bench.cc - strata_rt_attention_f32, dense vs windowed ---===//
// SPDX-License-Identifier: Apache-2.0
// Usage: strata-attention-bench [--threads N] [--seq T] [--window W]
//                               [--sinks S] [--heads H] [--head-dim D]
//                               [--rows R] [--repeat N]
//                               [--global-topk K] [--block B]
//                               [--query-correlation R]
// Times the runtime's attention kernel on one sequence of T tokens (GPT-2
// small's 12 heads of 64 by default): causal over the whole context (dense)
// and with a window of W keys plus S sinks, R query rows at the end of the
// context (default T: a whole prompt; 1: a decode step). Prints the median
// of N (default 7) timed calls after 2 warm-up calls of each, and the
// ratio; then dense with STRATA_ATTN_FLAG_BF16_PRODUCTS (the bf16 prefill
// policy: AMX tiles where the kernels are `amx`, else the same fp32 code).
// With --global-topk K, also the window with K top-k global blocks of B
// keys (default 64) each (strata_rt_attention_global). Queries are
// independent uniform draws, the worst case for global blocks (neighbouring
// rows choose apart); with --query-correlation R in [0, 1) each row is R
// times the previous one plus sqrt(1 - R^2) times a fresh draw, as
// neighbouring positions of a real model are alike.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "attention_params.h"
#include "kernels/attention_f32.h"
#include "kernels/matmul_f32.h"
#include "run_context.h"
#include "strata_kernel_abi.h"
#include "thread_pool.h"

using namespace strata::runtime;

int main(int argc, char** argv) {
  long threads = 1, seq = 4096, window = 256, sinks = 4, heads = 12, dim = 64,
       rows = -1, repeat = 7, globalTopk = 0, block = 64;
  double correlation = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const long v = std::atol(argv[i + 1]);
    if (!std::strcmp(argv[i], "--query-correlation")) {
      correlation = std::atof(argv[i + 1]);
      continue;
    }
    if (!std::strcmp(argv[i], "--threads")) threads = v;
    else if (!std::strcmp(argv[i], "--seq")) seq = v;
    else if (!std::strcmp(argv[i], "--window")) window = v;
    else if (!std::strcmp(argv[i], "--sinks")) sinks = v;
    else if (!std::strcmp(argv[i], "--heads")) heads = v;
    else if (!std::strcmp(argv[i], "--head-dim")) dim = v;
    else if (!std::strcmp(argv[i], "--rows")) rows = v;
    else if (!std::strcmp(argv[i], "--repeat")) repeat = v;
    else if (!std::strcmp(argv[i], "--global-topk")) globalTopk = v;
    else if (!std::strcmp(argv[i], "--block")) block = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 1;
    }
  }
  if (rows < 0 || rows > seq) rows = seq;
  if (repeat < 1 || threads < 1 || seq < 1 || window < 1 || sinks < 0 || heads < 1 ||
      dim < 1 || globalTopk < 0 || block < 1 || !(correlation >= 0) ||
      !(correlation < 1)) {
    std::fprintf(stderr, "sizes must be positive\n");
    return 1;
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> q(heads * rows * dim), k(heads * seq * dim),
      v(heads * seq * dim), o(heads * rows * dim);
  for (auto* t : {&q, &k, &v})
    for (float& x : *t) x = dist(rng);
  const float fresh = static_cast<float>(std::sqrt(1 - correlation * correlation));
  for (long h = 0; h < heads; ++h)
    for (long r = 1; r < rows; ++r)
      for (long e = 0; e < dim; ++e) {
        float* x = &q[(h * rows + r) * dim + e];
        *x = static_cast<float>(correlation) * x[-dim] + fresh * *x;
      }
  ThreadPool pool(static_cast<uint32_t>(threads));
  KernelScratch scratch(strata_allocator_system());
  strata_rt_context_t context;
  context.pool = &pool;
  context.scratch = &scratch;

  auto time = [&](bool windowed, bool bf16Products, bool global = false) {
    int64_t p[STRATA_ATTN_GLOBAL_PARAM_COUNT] = {};
    p[STRATA_ATTN_FLAGS] =
        STRATA_ATTN_FLAG_CAUSAL | (windowed ? STRATA_ATTN_FLAG_WINDOW : 0) |
        (bf16Products ? STRATA_ATTN_FLAG_BF16_PRODUCTS : 0);
    p[STRATA_ATTN_BATCH] = 1;
    p[STRATA_ATTN_HEADS] = heads;
    p[STRATA_ATTN_KV_HEADS] = heads;
    p[STRATA_ATTN_SQ] = rows;
    p[STRATA_ATTN_SK] = seq;
    p[STRATA_ATTN_HEAD_DIM] = dim;
    p[STRATA_ATTN_VALUE_DIM] = dim;
    const float scale = 0.125f;
    uint32_t bits;
    std::memcpy(&bits, &scale, sizeof(bits));
    p[STRATA_ATTN_SCALE] = bits;
    p[STRATA_ATTN_WINDOW] = window;
    p[STRATA_ATTN_SINKS] = sinks;
    setOperand(p, STRATA_ATTN_Q, q.data(), heads * rows * dim, rows * dim,
               dim, 1);
    setOperand(p, STRATA_ATTN_K, k.data(), heads * seq * dim, seq * dim, dim,
               1);
    setOperand(p, STRATA_ATTN_V, v.data(), heads * seq * dim, seq * dim, dim,
               1);
    setOperand(p, STRATA_ATTN_O, o.data(), heads * rows * dim, rows * dim,
               dim, 1);
    p[STRATA_ATTN_GLOBAL_TOPK] = globalTopk;
    p[STRATA_ATTN_GLOBAL_BLOCK] = block;
    std::vector<double> ms;
    for (long r = 0; r < repeat + 2; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      if (global)
        kernels::strataAttentionGlobal(&context, p);
      else
        kernels::strataAttentionF32(&context, p);
      auto t1 = std::chrono::steady_clock::now();
      if (r >= 2)
        ms.push_back(
            std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  const double dense = time(false, false), windowed = time(true, false);
  const double bf16 = time(false, true);
  std::printf("attention T=%ld rows=%ld heads=%ld d=%ld threads=%ld: dense "
              "causal %.3f ms, window %ld + %ld sinks %.3f ms, %.2fx; dense "
              "with bf16 products (kernels %s) %.3f ms, %.2fx\n",
              seq, rows, heads, dim, threads, dense, window, sinks, windowed,
              dense / windowed, kernels::attentionF32KernelSet(), bf16,
              dense / bf16);
  if (globalTopk > 0) {
    const double global = time(true, false, true);
    std::printf("  window %ld + %ld sinks + %ld global blocks of %ld (query "
                "correlation %.2f): %.3f ms, %.2fx faster than dense\n",
                window, sinks, globalTopk, block, correlation, global,
                dense / global);
  }
  return 0;
}
