//===- matmul_bf16.cc - Blocking and threading of the bf16 matmul ---------===//
// SPDX-License-Identifier: Apache-2.0
// strata_rt_matmul_f32_bf16: A rounded to bf16 once per call, in parallel,
// into scratch the tasks share, then (batch, row block, panel block) tasks
// of register tiles, k blocked so that one panel slice stays in L1 while
// the row tiles of the block stream past it (the AMX set orders its tasks
// its own way: Bf16Kernels::tileMajor). The fp32 sums live in C between k
// blocks. The per-ISA pieces are in matmul_bf16_*.cc; the scalar
// ones, which define the results, are here; the task grid and the params
// decoding shared with the W8A8 matmul are in packed_gemm.h.

#include <cstdint>
#include <cstring>

#include "../run_context.h"
#include "matmul_bf16_kernels.h"
#include "matmul_f32.h"
#include "packed_gemm.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

namespace {

// Index of element (i, k) in an A tile of |mr| rows in k blocks of |kb|.
int64_t tileIndex(int64_t mr, int64_t kb, int64_t i, int64_t k) {
  return (k / kb) * mr * kb + i * kb + k % kb;
}

}  // namespace

void convertBf16Pairs(int64_t mr, int64_t kBlock, int64_t rows, int64_t k,
                      int64_t kp, const float* a, int64_t am, int64_t ak,
                      uint16_t* tile) {
  // Zeros to the end of the last k block: the AMX tail step reads a whole
  // tile step of A whatever Kp is, and scratch may hold NaN bits there.
  const int64_t blocksEnd = (kp + kBlock - 1) / kBlock * kBlock;
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t kk = 0; kk < blocksEnd; ++kk)
      tile[tileIndex(mr, kBlock, i, kk)] =
          i < rows && kk < k ? strata_f32_to_bf16(a[i * am + kk * ak]) : 0;
}

void convertBf16Widened(int64_t mr, int64_t kBlock, int64_t rows, int64_t k,
                        int64_t kp, const float* a, int64_t am, int64_t ak,
                        float* tile) {
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t kk = 0; kk < kp; ++kk) {
      const uint32_t bits =
          i < rows && kk < k
              ? uint32_t{strata_f32_to_bf16(a[i * am + kk * ak])} << 16
              : 0u;
      std::memcpy(&tile[tileIndex(mr, kBlock, i, kk)], &bits, 4);
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
// With tileMajor (AMX): a task's panel block (4 x 32 columns of all of K)
// is read from the last-level cache once per task, so more rows a task (a
// prompt of 512 in one): 96 rows made B's reads from L3 a third of a
// 512 x 768 x 3072 product on 2 threads and halved one shape's speed.
constexpr int64_t kTileMajorMcRows = 512;
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
                const uint16_t* b, float* c, int64_t ldc, bool loadC,
                const uint8_t* /*prefetch*/, int64_t /*prefetchBytes*/) {
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
  convertBf16Widened(kScalarMr, kKc, rows, k, kp, a, am, ak,
                     static_cast<float*>(tile));
}

const Bf16Kernels kBf16Scalar = {
    "scalar", kScalarMr, Bf16AFormat::kWidened, scalarTile, scalarConvert,
    kKc,      kKc,       false,                 nullptr,    nullptr};

// The set for this CPU (pickKernelSet).
const Bf16Kernels& bf16Kernels() {
#if defined(__x86_64__)
  return pickKernelSet(kBf16Amx,
                       __builtin_cpu_supports("avx512bf16") &&
                           __builtin_cpu_supports("avx512bw"),
                       kBf16Avx512Bf16, kBf16Avx2, kBf16Scalar);
#else
  return kBf16Scalar;
#endif
}

using Problem = PackedGemmProblem;

// What run() computed once per call, shared by the tasks.
struct Prepared {
  const Bf16Kernels* kernels;
  const uint16_t* b;
  int64_t tilesPerBatch;   // A tiles of one batch
  int64_t tileBytes;       // of one A tile: its k blocks
  int64_t blockBytes;      // of one k block of an A tile: mr * kBlock elements
  const uint8_t* aTiles;   // every batch's A tiles
  uint8_t* threadScratch;  // per thread: one C tile
  size_t threadStride;
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t minOf(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t roundUp64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Tiles [t0, t1) of batch |bi| against panels [p0, p1), k in [kBegin,
// kEnd).
void runBlock(const Problem& p, const Prepared& s, float* cTile, int64_t bi,
              int64_t t0, int64_t t1, int64_t p0, int64_t p1, int64_t kBegin,
              int64_t kEnd) {
  const Bf16Kernels& kern = *s.kernels;
  const int64_t mr = kern.mr;
  int64_t ao, co;
  packedGemmBatchOffsets(p, bi, &ao, &co);
  if (kern.beginTask) kern.beginTask();
  auto call = [&](int64_t panel, int64_t tt, int64_t k0, int64_t kc,
                  const uint8_t* prefetch, int64_t prefetchBytes) {
    // After the first k call the sums so far are in C.
    const bool loadC = k0 > 0 || p.accumulate;
    const int64_t n0 = panel * kW;
    const int64_t cols = minOf(kW, p.n - n0);
    const uint16_t* bSlice = s.b + panel * p.kp * kW + k0 * kW;
    const int64_t tile = bi * s.tilesPerBatch + tt;
    const int64_t rows = minOf(mr, p.m - tt * mr);
    const uint8_t* aSlice =
        s.aTiles + tile * s.tileBytes + (k0 / kern.kBlock) * s.blockBytes;
    float* cPtr = p.c + co + tt * mr * p.cm + n0 * p.cn;
    writeThroughCTile(p, cPtr, rows, cols, cTile, loadC,
                      [&](float* c, int64_t ldc) {
                        kern.tile(rows, kc / 2, aSlice, bSlice, c, ldc, loadC,
                                  prefetch, prefetchBytes);
                      });
  };
  if (!kern.tileMajor) {
    // Each panel slice against all the A tiles (the slice stays in L1).
    for (int64_t k0 = kBegin; k0 < kEnd; k0 += kern.kCall)
      for (int64_t panel = p0; panel < p1; ++panel)
        for (int64_t tt = t0; tt < t1; ++tt)
          call(panel, tt, k0, minOf(kern.kCall, kEnd - k0), nullptr, 0);
  } else if ((t1 - t0) * mr < kKCallsFromRows) {
    // Few rows: each panel (all of K) against the task's A tiles, which
    // stay in L2, while the tiles pull the next panel's slice toward L2 a
    // share each: the weights come from memory once per prefill, and
    // fetched this way that overlaps the products rather than stalling
    // the first tile's loads.
    const int64_t sliceBytes = p.kp * kW * 2;
    const int64_t share = ceilDiv(sliceBytes, t1 - t0);
    for (int64_t panel = p0; panel < p1; ++panel)
      for (int64_t tt = t0; tt < t1; ++tt) {
        const uint8_t* next =
            panel + 1 < p1 ? reinterpret_cast<const uint8_t*>(
                                 s.b + (panel + 1) * p.kp * kW) +
                                 (tt - t0) * share
                           : nullptr;
        const int64_t bytes = sliceBytes - (tt - t0) * share;
        call(panel, tt, kBegin, kEnd - kBegin, next,
             next && bytes > 0 ? minOf(share, bytes) : 0);
      }
  } else {
    // Each A tile against all the task's panels, k call by k call: the
    // tile's k slice stays in L1 while the panels' slices stream past
    // (all of K in a call for deep products).
    const int64_t kCall = p.kp > kWholeKAbove ? p.kp : kern.kCall;
    for (int64_t tt = t0; tt < t1; ++tt)
      for (int64_t k0 = kBegin; k0 < kEnd; k0 += kCall)
        for (int64_t panel = p0; panel < p1; ++panel)
          call(panel, tt, k0, minOf(kCall, kEnd - k0), nullptr, 0);
  }
  if (kern.endTask) kern.endTask();
}

void run(strata_rt_context_t* context, Problem p) {
  const int64_t batches = foldPackedGemmBatches(&p);
  if (batches == 0) return;

  Prepared s;
  s.kernels = &bf16Kernels();
  s.b = static_cast<const uint16_t*>(p.b);
  const Bf16Kernels& kern = *s.kernels;
  const int64_t mr = kern.mr;
  const int64_t elementBytes = kern.aFormat == Bf16AFormat::kPairs ? 2 : 4;
  const int64_t panels = ceilDiv(p.n, kW);
  s.tilesPerBatch = ceilDiv(p.m, mr);
  // Shared scratch: every batch's A tiles.
  s.blockBytes = mr * kern.kBlock * elementBytes;
  int64_t tiles, aBytes;
  if (__builtin_mul_overflow(batches, s.tilesPerBatch, &tiles) ||
      __builtin_mul_overflow(s.blockBytes, ceilDiv(p.kp, kern.kBlock),
                             &s.tileBytes) ||
      __builtin_mul_overflow(tiles, s.tileBytes, &aBytes) ||
      aBytes > (int64_t{1} << 46)) {
    failRunOutOfMemory(context, UINT64_MAX);
    return;
  }
  const int64_t shared = roundUp64(aBytes);
  const int64_t perThread = roundUp64(mr * kW * 4);
  uint8_t* base = packedGemmScratch(context, shared, perThread);
  if (!base) return;
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
                packedGemmBatchOffsets(p, bi, &ao, &co);
                kern.convert(minOf(mr, p.m - tt * mr), p.k, p.kp,
                             p.a + ao + tt * mr * p.am, p.am, p.ak,
                             base + t * s.tileBytes);
              });

  const PackedGemmGrid grid =
      packedGemmGrid(context, batches, s.tilesPerBatch, panels,
                     ceilDiv(kern.tileMajor ? kTileMajorMcRows : kMcRows, mr),
                     kNcPanels);
  const int64_t kPass = kern.tileMajor ? p.kp : kKPass;
  for (int64_t kBegin = 0; kBegin < p.kp; kBegin += kPass) {
    const int64_t kEnd = minOf(p.kp, kBegin + kPass);
    runPackedGemmGrid(context, grid,
                      [&](uint32_t thread, int64_t bi, int64_t t0, int64_t t1,
                          int64_t p0, int64_t p1) {
                        float* cTile = reinterpret_cast<float*>(
                            s.threadScratch + thread * s.threadStride);
                        runBlock(p, s, cTile, bi, t0, t1, p0, p1, kBegin, kEnd);
                      });
  }
}

}  // namespace

const char* matmulBf16KernelSet() { return bf16Kernels().name; }

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
  PackedGemmProblem p = decodePackedGemm(params, 2);
  if (!startFromBias(context, params, what, &p)) return;
  run(context, p);
}

}  // namespace strata::runtime::kernels
