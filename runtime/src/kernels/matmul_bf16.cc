//===- matmul_bf16.cc - Blocking and threading of the bf16 matmul ---------===//
// SPDX-License-Identifier: Apache-2.0
// strata_rt_matmul_f32_bf16: A rounded to bf16 once per call, in parallel,
// into scratch the tasks share, then (batch, row block, panel block) tasks
// of register tiles, k blocked so that one panel slice stays in L1 while
// the row tiles of the block stream past it. The fp32 sums live in C
// between k blocks. The per-ISA pieces are in matmul_bf16_*.cc; the scalar
// ones, which define the results, are here.

#include <cstdint>
#include <cstring>

#include "../run_context.h"
#include "matmul_bf16_kernels.h"
#include "matmul_f32.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

namespace {

// Index of element (i, k) in an A tile of |mr| rows.
int64_t tileIndex(int64_t mr, int64_t i, int64_t k) {
  return (k / kBf16Kc) * mr * kBf16Kc + i * kBf16Kc + k % kBf16Kc;
}

}  // namespace

void convertBf16Pairs(int64_t mr, int64_t rows, int64_t k, int64_t kp,
                      const float* a, int64_t am, int64_t ak, uint16_t* tile) {
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t kk = 0; kk < kp; ++kk)
      tile[tileIndex(mr, i, kk)] =
          i < rows && kk < k ? strata_f32_to_bf16(a[i * am + kk * ak]) : 0;
}

void convertBf16Widened(int64_t mr, int64_t rows, int64_t k, int64_t kp,
                        const float* a, int64_t am, int64_t ak, float* tile) {
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t kk = 0; kk < kp; ++kk) {
      const uint32_t bits =
          i < rows && kk < k
              ? uint32_t{strata_f32_to_bf16(a[i * am + kk * ak])} << 16
              : 0u;
      std::memcpy(&tile[tileIndex(mr, i, kk)], &bits, 4);
    }
}

namespace {

constexpr int64_t kW = STRATA_PACK_PANEL_WIDTH;
constexpr int64_t kKc = kBf16Kc;
// k per pass over all tasks: a task's A rows and B panels of one pass (150
// + 196 KB) stay in L2 for the next task, which shares one of them; with
// all of a long K in one task they would not (K = 3072: 12% slower).
constexpr int64_t kKPass = 2 * kKc;
constexpr int64_t kMcRows = 96;   // rows per task, rounded to whole tiles
constexpr int64_t kNcPanels = 4;  // panels per task
constexpr int64_t kScalarMr = 4;

static_assert(kW == 32, "the tiles are written for 32-column panels");
static_assert(kKc % 32 == 0, "k blocks are whole vectors of pairs");

float widen(uint16_t bits) {
  const uint32_t u = uint32_t{bits} << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

// The reference tile: the exact products (two bf16 values multiply exactly
// in fp32) added in the ABI's order, odd k of each pair first.
void scalarTile(int64_t rows, int64_t pairs, const void* aTile,
                const uint16_t* b, float* c, int64_t ldc, bool loadC) {
  const float* a = static_cast<const float*>(aTile);
  float sum[kScalarMr][kW];
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < kW; ++j) sum[i][j] = loadC ? c[i * ldc + j] : 0.0f;
  for (int64_t t = 0; t < pairs; ++t)
    for (int64_t i = 0; i < rows; ++i) {
      const float even = a[i * kKc + 2 * t];
      const float odd = a[i * kKc + 2 * t + 1];
      const uint16_t* w = b + t * 2 * kW;
      for (int64_t j = 0; j < kW; ++j) {
        sum[i][j] += odd * widen(w[j * 2 + 1]);
        sum[i][j] += even * widen(w[j * 2]);
      }
    }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < kW; ++j) c[i * ldc + j] = sum[i][j];
}

void scalarConvert(int64_t rows, int64_t k, int64_t kp, const float* a,
                   int64_t am, int64_t ak, void* tile) {
  convertBf16Widened(kScalarMr, rows, k, kp, a, am, ak,
                     static_cast<float*>(tile));
}

const Bf16Kernels kBf16Scalar = {"scalar", kScalarMr, Bf16AFormat::kWidened,
                                 scalarTile, scalarConvert};

// The set for the ISA the fp32 kernels use (which tests may force lower).
const Bf16Kernels& bf16Kernels() {
#if defined(__x86_64__)
  switch (matmulIsa()) {
    case MatmulIsa::kAvx512:
      if (__builtin_cpu_supports("avx512bf16") &&
          __builtin_cpu_supports("avx512bw"))
        return kBf16Avx512Bf16;
      return kBf16Avx2;  // every AVX-512 CPU has AVX2
    case MatmulIsa::kAvx2:
      return kBf16Avx2;
    case MatmulIsa::kScalar:
      break;
  }
#endif
  return kBf16Scalar;
}

struct Problem {
  int64_t m, n, k, kp;
  bool accumulate;
  int64_t batchRank;
  int64_t batch[STRATA_MM_MAX_BATCH];
  const float* a;
  int64_t aBatch[STRATA_MM_MAX_BATCH], am, ak;
  const uint16_t* b;
  float* c;
  int64_t cBatch[STRATA_MM_MAX_BATCH], cm, cn;
};

// What run() computed once per call, shared by the tasks.
struct Prepared {
  const Bf16Kernels* kernels;
  int64_t tilesPerBatch;   // A tiles of one batch
  int64_t tileBytes;       // of one A tile: its k blocks
  int64_t blockBytes;      // of one k block of an A tile: mr * kKc elements
  const uint8_t* aTiles;   // every batch's A tiles
  uint8_t* threadScratch;  // per thread: one C tile
  size_t threadStride;
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t minOf(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t roundUp64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Element offsets of batch index |index| in A and C.
void batchOffsets(const Problem& p, int64_t index, int64_t* a, int64_t* c) {
  *a = *c = 0;
  for (int64_t d = p.batchRank; d-- > 0;) {
    const int64_t i = index % p.batch[d];
    index /= p.batch[d];
    *a += i * p.aBatch[d];
    *c += i * p.cBatch[d];
  }
}

// As the fp32 path: batch dims that only A and C have, right outside M in
// both, are more rows against the one weight.
void foldSharedBatchesIntoM(Problem* p) {
  while (p->batchRank > 0) {
    const int64_t d = p->batchRank - 1;
    if (p->aBatch[d] != p->m * p->am || p->cBatch[d] != p->m * p->cm) break;
    p->m *= p->batch[d];
    --p->batchRank;
  }
}

// Tiles [t0, t1) of batch |bi| against panels [p0, p1), k in [kBegin,
// kEnd).
void runBlock(const Problem& p, const Prepared& s, float* cTile, int64_t bi,
              int64_t t0, int64_t t1, int64_t p0, int64_t p1, int64_t kBegin,
              int64_t kEnd) {
  const Bf16Kernels& kern = *s.kernels;
  const int64_t mr = kern.mr;
  int64_t ao, co;
  batchOffsets(p, bi, &ao, &co);
  for (int64_t k0 = kBegin; k0 < kEnd; k0 += kKc) {
    const int64_t kc = minOf(kKc, kEnd - k0);
    // After the first k block the sums so far are in C.
    const bool loadC = k0 > 0 || p.accumulate;
    for (int64_t panel = p0; panel < p1; ++panel) {
      const int64_t n0 = panel * kW;
      const int64_t cols = minOf(kW, p.n - n0);
      const uint16_t* bSlice = p.b + panel * p.kp * kW + k0 * kW;
      for (int64_t tt = t0; tt < t1; ++tt) {
        const int64_t tile = bi * s.tilesPerBatch + tt;
        const int64_t rows = minOf(mr, p.m - tt * mr);
        const uint8_t* aSlice =
            s.aTiles + tile * s.tileBytes + (k0 / kKc) * s.blockBytes;
        float* cPtr = p.c + co + tt * mr * p.cm + n0 * p.cn;
        if (cols == kW && p.cn == 1) {
          kern.tile(rows, kc / 2, aSlice, bSlice, cPtr, p.cm, loadC);
          continue;
        }
        // Partial or strided columns go through a contiguous C tile.
        if (loadC) {
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < kW; ++j)
              cTile[r * kW + j] = j < cols ? cPtr[r * p.cm + j * p.cn] : 0.0f;
        }
        kern.tile(rows, kc / 2, aSlice, bSlice, cTile, kW, loadC);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = 0; j < cols; ++j)
            cPtr[r * p.cm + j * p.cn] = cTile[r * kW + j];
      }
    }
  }
}

void run(strata_rt_context_t* context, Problem p) {
  if (p.m <= 0 || p.n <= 0) return;
  for (int64_t d = 0; d < p.batchRank; ++d)
    if (p.batch[d] <= 0) return;
  foldSharedBatchesIntoM(&p);
  int64_t batches = 1;
  for (int64_t d = 0; d < p.batchRank; ++d) batches *= p.batch[d];

  Prepared s;
  s.kernels = &bf16Kernels();
  const Bf16Kernels& kern = *s.kernels;
  const int64_t mr = kern.mr;
  const int64_t elementBytes = kern.aFormat == Bf16AFormat::kPairs ? 2 : 4;
  const int64_t panels = ceilDiv(p.n, kW);
  s.tilesPerBatch = ceilDiv(p.m, mr);
  // Shared scratch: every batch's A tiles.
  s.blockBytes = mr * kKc * elementBytes;
  int64_t tiles, aBytes;
  if (__builtin_mul_overflow(batches, s.tilesPerBatch, &tiles) ||
      __builtin_mul_overflow(s.blockBytes, ceilDiv(p.kp, kKc), &s.tileBytes) ||
      __builtin_mul_overflow(tiles, s.tileBytes, &aBytes) ||
      aBytes > (int64_t{1} << 46)) {
    failRunOutOfMemory(context, UINT64_MAX);
    return;
  }
  const int64_t shared = roundUp64(aBytes);
  const int64_t threads = loopThreads(context);
  const int64_t perThread = roundUp64(mr * kW * 4);
  // One block big enough for the shared part plus |perThread| per thread,
  // laid out here rather than in kernelScratch's per-thread blocks.
  size_t stride = 0;
  uint8_t* base = kernelScratch(
      context, static_cast<size_t>(perThread + ceilDiv(shared, threads)),
      &stride);
  if (!base) return;  // the run has ended (RESOURCE_EXHAUSTED)
  s.aTiles = base;
  s.threadScratch = base + shared;
  s.threadStride = static_cast<size_t>(perThread);

  // A's tiles: O(M*K), in parallel too.
  parallelFor(context, static_cast<size_t>(tiles),
              [&](size_t task, uint32_t /*thread*/) {
                const int64_t t = static_cast<int64_t>(task);
                const int64_t bi = t / s.tilesPerBatch,
                              tt = t % s.tilesPerBatch;
                int64_t ao, co;
                batchOffsets(p, bi, &ao, &co);
                kern.convert(minOf(mr, p.m - tt * mr), p.k, p.kp,
                             p.a + ao + tt * mr * p.am, p.am, p.ak,
                             base + t * s.tileBytes);
              });

  // Row blocks of whole tiles, panel blocks of kNcPanels; with few tasks
  // per thread, shrink the blocks so every thread gets work.
  int64_t mc = minOf(ceilDiv(kMcRows, mr), s.tilesPerBatch);
  int64_t nc = kNcPanels;
  while (batches * ceilDiv(s.tilesPerBatch, mc) * ceilDiv(panels, nc) <
         threads * 2) {
    if (nc > 1) {
      nc /= 2;
    } else if (mc > 1) {
      mc = ceilDiv(mc, 2);
    } else {
      break;
    }
  }
  const int64_t mBlocks = ceilDiv(s.tilesPerBatch, mc);
  const int64_t nBlocks = ceilDiv(panels, nc);
  for (int64_t kBegin = 0; kBegin < p.kp; kBegin += kKPass) {
    const int64_t kEnd = minOf(p.kp, kBegin + kKPass);
    parallelFor(context, static_cast<size_t>(batches * mBlocks * nBlocks),
                [&](size_t task, uint32_t thread) {
                  // Row blocks vary fastest: consecutive tasks share a
                  // panel block of B while it is in cache.
                  int64_t rest = static_cast<int64_t>(task);
                  const int64_t mb = rest % mBlocks;
                  rest /= mBlocks;
                  const int64_t nb = rest % nBlocks;
                  const int64_t bi = rest / nBlocks;
                  float* cTile = reinterpret_cast<float*>(
                      s.threadScratch + thread * s.threadStride);
                  runBlock(p, s, cTile, bi, mb * mc,
                           minOf(s.tilesPerBatch, (mb + 1) * mc), nb * nc,
                           minOf(panels, (nb + 1) * nc), kBegin, kEnd);
                });
  }
}

template <typename T>
T* address(int64_t value) {
  return reinterpret_cast<T*>(static_cast<intptr_t>(value));
}

}  // namespace

extern "C" void strataMatmulF32Bf16(strata_rt_context_t* context,
                                    const int64_t* params) {
  pollCancel(context);  // before any object: a cancel skips this frame
  const char* what = "strata_rt_matmul_f32_bf16: B layout or quantization";
  const int64_t layout = params[STRATA_MM_B_LAYOUT];
  if (layout != STRATA_MM_LAYOUT_PANEL_BF16_PAIRS) {
    failRunInternal(context, what, layout);
    return;
  }
  const int64_t k = params[STRATA_MM_K];
  if (k < 1) {
    failRunInternal(context, "strata_rt_matmul_f32_bf16: K", k);
    return;
  }
  const int64_t fields[] = {STRATA_MM_B_SCALES, STRATA_MM_B_ZERO_POINTS,
                            STRATA_MM_GROUP_SIZE};
  for (int64_t field : fields) {
    if (params[field] != 0) {
      failRunInternal(context, what, params[field]);
      return;
    }
  }
  Problem p;
  p.m = params[STRATA_MM_M];
  p.n = params[STRATA_MM_N];
  p.k = k;
  p.kp = ceilDiv(k, 2) * 2;
  p.accumulate = (params[STRATA_MM_FLAGS] & STRATA_MM_FLAG_ACCUMULATE) != 0;
  p.batchRank = params[STRATA_MM_BATCH_RANK];
  if (p.batchRank < 0 || p.batchRank > STRATA_MM_MAX_BATCH) p.batchRank = 0;
  for (int64_t d = 0; d < STRATA_MM_MAX_BATCH; ++d) {
    p.batch[d] = params[STRATA_MM_BATCH_SIZES + d];
    p.aBatch[d] = params[STRATA_MM_A_BATCH_STRIDES + d];
    p.cBatch[d] = params[STRATA_MM_C_BATCH_STRIDES + d];
  }
  p.a = address<const float>(params[STRATA_MM_A_ADDR]);
  p.am = params[STRATA_MM_A_STRIDE_M];
  p.ak = params[STRATA_MM_A_STRIDE_K];
  p.b = address<const uint16_t>(params[STRATA_MM_B_ADDR]);
  p.c = address<float>(params[STRATA_MM_C_ADDR]);
  p.cm = params[STRATA_MM_C_STRIDE_M];
  p.cn = params[STRATA_MM_C_STRIDE_N];
  run(context, p);
}

}  // namespace strata::runtime::kernels
