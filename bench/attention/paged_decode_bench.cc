//===- paged_decode_bench.cc - decode attention, paged vs contiguous -----===//
// SPDX-License-Identifier: Apache-2.0
// Usage: strata-paged-attention-bench [--threads N] [--batch B]
//                                     [--context T] [--heads H]
//                                     [--kv-heads G] [--head-dim D]
//                                     [--block-size S] [--repeat N]
//                                     [--layers L] [--types LIST]
//                                     [--kernel-isa amx|avx512|avx2|scalar]
// One decode step's attention (one query row per sequence) for B
// sequences whose lengths spread evenly over [T/2, T] (Llama-124m's 12
// heads over 4 kv heads of 64 by default), over the same K/V stored two
// ways: a contiguous cache of B slots of T positions
// (strata_rt_attention_kv with slots) and a pool of blocks of S positions
// dealt out in a shuffled order, as a block allocator leaves them after
// sequences came and went (strata_rt_attention_paged). For each element
// type (fp32, bf16, int8 per-token) prints the median of N (default 51)
// calls of each, timed alternately after warm-up, and their ratio. As in a
// decode step, where each layer's cache is read once and the other
// layers' weights and caches pass through the caches in between, the calls
// cycle over L layers' caches (default 4: more than the last-level cache
// holds at the default sizes), so that each reads its K/V from memory.
// --types picks the element types (fp32,bf16,int8 by default),
// --kernel-isa caps the kernels' instruction set (default: the host's).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attention_params.h"
#include "kernels/attention_f32.h"
#include "kernels/attention_kv_kernels.h"
#include "kernels/matmul_f32.h"
#include "run_context.h"
#include "state_memory.h"
#include "strata_kernel_abi.h"
#include "thread_pool.h"

using namespace strata::runtime;

namespace {

// A state tensor's memory as a session allocates it (StateMemory), with
// typed access.
struct StateBuffer {
  StateMemory memory;
  explicit StateBuffer(size_t bytes) {
    if (strata_status_t status =
            StateMemory::allocate(strata_allocator_system(), bytes, &memory)) {
      std::fprintf(stderr, "cannot allocate %zu bytes\n", bytes);
      strata_status_free(status);
      std::exit(1);
    }
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(memory.data());
  }
};

// One of K or V in both layouts: elements of |bytes| each, with one fp32
// scale per (slot or block, head, position) for int8.
struct Cache {
  StateBuffer contiguous, paged, contiguousScales, pagedScales;
};

}  // namespace

int main(int argc, char** argv) {
  long threads = 2, batch = 8, context = 1024, heads = 12, kvHeads = 4,
       dim = 64, blockSize = 16, repeat = 51, layers = 4;
  std::string types = "fp32,bf16,int8";
  for (int i = 1; i + 1 < argc; i += 2) {
    const long v = std::atol(argv[i + 1]);
    kernels::MatmulIsa isa;
    if (!std::strcmp(argv[i], "--threads")) threads = v;
    else if (!std::strcmp(argv[i], "--layers")) layers = v;
    else if (!std::strcmp(argv[i], "--batch")) batch = v;
    else if (!std::strcmp(argv[i], "--context")) context = v;
    else if (!std::strcmp(argv[i], "--heads")) heads = v;
    else if (!std::strcmp(argv[i], "--kv-heads")) kvHeads = v;
    else if (!std::strcmp(argv[i], "--head-dim")) dim = v;
    else if (!std::strcmp(argv[i], "--block-size")) blockSize = v;
    else if (!std::strcmp(argv[i], "--repeat")) repeat = v;
    else if (!std::strcmp(argv[i], "--types")) types = argv[i + 1];
    else if (!std::strcmp(argv[i], "--kernel-isa") &&
             kernels::matmulIsaNamed(argv[i + 1], &isa))
      kernels::capMatmulIsa(isa);
    else {
      std::fprintf(stderr, "unknown option %s %s\n", argv[i], argv[i + 1]);
      return 1;
    }
  }
  if (threads < 1 || batch < 1 || context < 2 || heads < 1 || kvHeads < 1 ||
      heads % kvHeads != 0 || dim < 1 || blockSize < 1 || repeat < 1 ||
      layers < 1) {
    std::fprintf(stderr, "sizes must be positive, heads a multiple of kv "
                         "heads\n");
    return 1;
  }
  const long perRow = (context + blockSize - 1) / blockSize;
  const long pool = batch * perRow;
  std::vector<int64_t> lengths(batch), slots(batch), table(batch * perRow);
  for (long b = 0; b < batch; ++b) {
    lengths[b] = context / 2 + (context / 2) * b / std::max(1L, batch - 1);
    slots[b] = b;
  }
  std::mt19937 rng(1);
  std::vector<int64_t> order(pool);
  for (long n = 0; n < pool; ++n) order[n] = n;
  std::shuffle(order.begin(), order.end(), rng);
  for (long n = 0; n < pool; ++n) table[n] = order[n];

  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> q(batch * heads * dim), o(batch * heads * dim);
  for (float& x : q) x = dist(rng);

  ThreadPool threadPool(static_cast<uint32_t>(threads));
  KernelScratch scratch(strata_allocator_system());
  strata_rt_context_t ctx;
  ctx.pool = &threadPool;
  ctx.scratch = &scratch;

  const int64_t dtypes[] = {STRATA_DTYPE_F32, STRATA_DTYPE_BF16,
                            STRATA_DTYPE_I8};
  std::printf("decode attention, B=%ld sequences of %ld..%ld tokens, "
              "heads %ld/%ld x %ld, blocks of %ld, %ld layers, threads %ld, "
              "kernels %s\n",
              batch, lengths.front(), lengths.back(), heads, kvHeads, dim,
              blockSize, layers, threads, kernels::attentionF32KernelSet());
  for (int64_t dtype : dtypes) {
    const char* name = dtype == STRATA_DTYPE_F32    ? "fp32"
                       : dtype == STRATA_DTYPE_BF16 ? "bf16"
                                                    : "int8";
    if (("," + types + ",").find(std::string(",") + name + ",") ==
        std::string::npos)
      continue;
    const int64_t bytes = dtype == STRATA_DTYPE_F32    ? 4
                          : dtype == STRATA_DTYPE_BF16 ? 2
                                                       : 1;
    // Contiguous: [batch, kvHeads, context, dim]; paged: [pool, kvHeads,
    // blockSize, dim]; position j of row b at the same values in both.
    auto makeCache = [&]() {
      auto c = std::make_unique<Cache>(Cache{
          StateBuffer(batch * kvHeads * context * dim * bytes),
          StateBuffer(pool * kvHeads * blockSize * dim * bytes),
          StateBuffer(batch * kvHeads * context * sizeof(float)),
          StateBuffer(pool * kvHeads * blockSize * sizeof(float))});
      std::vector<float> row(dim);
      for (long b = 0; b < batch; ++b)
        for (long h = 0; h < kvHeads; ++h)
          for (long j = 0; j < context; ++j) {
            for (float& x : row) x = dist(rng);
            uint8_t* at =
                &c->contiguous.as<uint8_t>()[((b * kvHeads + h) * context + j) *
                                          dim * bytes];
            float& scale =
                c->contiguousScales.as<float>()[(b * kvHeads + h) * context + j];
            if (dtype == STRATA_DTYPE_I8) {
              kernels::kvQuantizeI8Reference(
                  dim, row.data(), 1, reinterpret_cast<int8_t*>(at), 1,
                  &scale);
            } else if (dtype == STRATA_DTYPE_BF16) {
              for (long e = 0; e < dim; ++e) {
                const uint16_t y = strata_f32_to_bf16(row[e]);
                std::memcpy(at + e * 2, &y, 2);
              }
            } else {
              std::memcpy(at, row.data(), dim * 4);
            }
            const long block = table[b * perRow + j / blockSize];
            const long in = j % blockSize;
            std::memcpy(
                &c->paged.as<uint8_t>()[((block * kvHeads + h) * blockSize + in) *
                                     dim *
                         bytes],
                at, dim * bytes);
            c->pagedScales.as<float>()[(block * kvHeads + h) * blockSize + in] =
                scale;
          }
      return c;
    };
    std::vector<std::unique_ptr<Cache>> ks, vs;
    for (long l = 0; l < layers; ++l) {
      ks.push_back(makeCache());
      vs.push_back(makeCache());
    }
    auto params = [&](bool paged, long layer) {
      const Cache& k = *ks[layer];
      const Cache& v = *vs[layer];
      std::vector<int64_t> p(STRATA_ATTN_PAGED_PARAM_COUNT, 0);
      p[STRATA_ATTN_FLAGS] = STRATA_ATTN_FLAG_CAUSAL;
      p[STRATA_ATTN_BATCH] = batch;
      p[STRATA_ATTN_HEADS] = heads;
      p[STRATA_ATTN_KV_HEADS] = kvHeads;
      p[STRATA_ATTN_SQ] = 1;
      p[STRATA_ATTN_SK] = paged ? perRow * blockSize : context;
      p[STRATA_ATTN_HEAD_DIM] = dim;
      p[STRATA_ATTN_VALUE_DIM] = dim;
      const float scale = 1.0f / std::sqrt(float(dim));
      uint32_t bits;
      std::memcpy(&bits, &scale, sizeof(bits));
      p[STRATA_ATTN_SCALE] = bits;
      setOperand(p.data(), STRATA_ATTN_Q, q.data(), heads * dim, dim, dim, 1);
      setOperand(p.data(), STRATA_ATTN_O, o.data(), heads * dim, dim, dim, 1);
      const long rows = paged ? blockSize : context;
      for (auto [slot, scaleSlot, cache] :
           {std::tuple{STRATA_ATTN_K, STRATA_ATTN_K_SCALES, &k},
            std::tuple{STRATA_ATTN_V, STRATA_ATTN_V_SCALES, &v}}) {
        setOperand(p.data(), slot,
                   paged ? cache->paged.as<uint8_t>()
                         : cache->contiguous.as<uint8_t>(),
                   kvHeads * rows * dim, rows * dim, dim, 1);
        if (dtype == STRATA_DTYPE_I8) {
          p[scaleSlot] = reinterpret_cast<intptr_t>(
              paged ? cache->pagedScales.as<float>()
                    : cache->contiguousScales.as<float>());
          p[scaleSlot + 1] = kvHeads * rows;
          p[scaleSlot + 2] = rows;
          p[scaleSlot + 3] = 1;
        }
      }
      p[STRATA_ATTN_KV_LENGTHS] = reinterpret_cast<intptr_t>(lengths.data());
      p[STRATA_ATTN_KV_DTYPE] = dtype;
      if (paged) {
        p[STRATA_ATTN_BLOCK_TABLE] = reinterpret_cast<intptr_t>(table.data());
        p[STRATA_ATTN_BLOCKS_PER_ROW] = perRow;
        p[STRATA_ATTN_BLOCK_SIZE] = blockSize;
        p[STRATA_ATTN_BLOCK_COUNT] = pool;
      } else {
        p[STRATA_ATTN_KV_SLOTS] = reinterpret_cast<intptr_t>(slots.data());
        p[STRATA_ATTN_KV_SLOT_COUNT] = batch;
      }
      return p;
    };
    std::vector<std::vector<int64_t>> contiguous, paged;
    for (long l = 0; l < layers; ++l) {
      contiguous.push_back(params(false, l));
      paged.push_back(params(true, l));
    }
    long calls = 0;
    auto once = [&](bool isPaged) {
      const long layer = calls++ / 2 % layers;
      const auto t0 = std::chrono::steady_clock::now();
      if (isPaged)
        kernels::strataAttentionPaged(&ctx, paged[layer].data());
      else
        kernels::strataAttentionKv(&ctx, contiguous[layer].data());
      return std::chrono::duration<double, std::micro>(
                 std::chrono::steady_clock::now() - t0)
          .count();
    };
    // The two layouts must agree up to fp32 rounding: the same rows, the
    // value sums split at block ends.
    once(false);
    const std::vector<float> want = o;
    once(true);
    for (size_t n = 0; n < o.size(); ++n)
      if (!(std::fabs(o[n] - want[n]) <=
            1e-5f * std::max(1.0f, std::fabs(want[n])))) {
        std::fprintf(stderr, "paged and contiguous outputs differ: %g, %g\n",
                     double(o[n]), double(want[n]));
        return 1;
      }
    for (int w = 0; w < 5; ++w) {
      once(false);
      once(true);
    }
    std::vector<double> a, b;
    for (long r = 0; r < repeat; ++r) {
      a.push_back(once(false));
      b.push_back(once(true));
    }
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    const double mc = a[a.size() / 2], mp = b[b.size() / 2];
    std::printf("  %s cache: contiguous %.1f us, paged %.1f us, paged / "
                "contiguous %.3f\n",
                name, mc, mp, mp / mc);
  }
  return 0;
}
