//===- matmul_w8a8.cc - Blocking and threading of the W8A8 matmul ---------===//
// SPDX-License-Identifier: Apache-2.0
// strata_rt_matmul_f32_w8a8: A quantized to int8 per row once per call, in
// parallel, into scratch the tasks share (with the weight's column sums),
// then (batch, row block, panel block) tasks of int8 register tiles, k
// blocked so that one panel slice stays in L1 while the row tiles of the
// block stream past it. The per-ISA pieces are in matmul_w8a8_*.cc; the
// scalar ones, which define the results, are here; the task grid and the
// params decoding shared with the bf16 matmul are in packed_gemm.h.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "../run_context.h"
#include "matmul_f32.h"
#include "matmul_w8a8_kernels.h"
#include "packed_gemm.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

void quantizeW8A8Rows(W8A8ALayout layout, int64_t mr, int64_t rows, int64_t k,
                      int64_t kp, const float* a, int64_t am, int64_t ak,
                      uint8_t* tile, float* scale, int32_t levels) {
  const float l = static_cast<float>(levels);
  for (int64_t i = 0; i < mr; ++i) {
    float amax = 0.0f;
    int nonFinite = 0;
    const float* src = a + i * am;
    if (i < rows) {
      for (int64_t kk = 0; kk < k; ++kk) {
        const float x = std::fabs(src[kk * ak]);
        nonFinite |= !(x <= 3.4e38f);
        amax = x > amax ? x : amax;
      }
    }
    const float inv = amax > 0.0f ? l / amax : 0.0f;
    for (int64_t kk = 0; kk < kp; ++kk) {
      int v = 0;
      if (i < rows && kk < k) {
        // As quantizeActivations (matmul_f32.cc): clamped, a NaN to 0 (its
        // row's scale is infinite below), rounded half away from zero.
        float y = src[kk * ak] * inv;
        y = y > l ? l : y;
        y = y < -l ? -l : y;
        y = y == y ? y : 0.0f;
        v = static_cast<int>(y + (y >= 0.0f ? 0.5f : -0.5f));
      }
      tile[w8a8QuadOffset(layout, mr, kp, i, kk / 4) + kk % 4] =
          static_cast<uint8_t>(v + levels + 1);
    }
    scale[i] = i >= rows ? 0.0f : nonFinite ? INFINITY : amax / l;
  }
}

void w8a8Corrections(int64_t panels, int64_t kp, const int8_t* b,
                     int32_t* corrections, int32_t levels) {
  constexpr int64_t kW = STRATA_PACK_PANEL_WIDTH;
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t j = 0; j < kW; ++j) {
      uint32_t sum = 0;
      for (int64_t kk = 0; kk < kp; ++kk)
        sum += static_cast<uint32_t>(
            int32_t{b[(p * kp + (kk / 4) * 4) * kW + j * 4 + kk % 4]});
      corrections[p * kW + j] =
          static_cast<int32_t>(sum * static_cast<uint32_t>(levels + 1));
    }
}

namespace {

constexpr int64_t kW = STRATA_PACK_PANEL_WIDTH;
// k per block (a multiple of 4): a 24 KB panel slice stays in L1.
constexpr int64_t kKc = kW8A8Kc;
constexpr int64_t kMcRows = 96;   // rows per task, rounded to whole tiles
constexpr int64_t kNcPanels = 4;  // panels per task
constexpr int64_t kCorrectionPanels = 16;  // panels per column-sum task
constexpr int64_t kScalarMr = 4;

static_assert(kW == 32, "the tiles are written for 32-column panels");
static_assert(kKc % 4 == 0, "k blocks are whole quads");

// The reference tile: the same int32 sums (modulo 2^32, as the vector
// instructions wrap) and the same fp32 steps as the vector sets.
void scalarTile(int64_t rows, int64_t quads, const uint8_t* a, const int8_t* b,
                int32_t* acc, bool loadAcc, const W8A8Epilogue* e) {
  uint32_t sum[kScalarMr][kW];
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < kW; ++j)
      sum[i][j] = loadAcc ? static_cast<uint32_t>(acc[i * kW + j]) : 0u;
  for (int64_t t = 0; t < quads; ++t)
    for (int64_t i = 0; i < rows; ++i) {
      const uint8_t* x = a + (t * kScalarMr + i) * 4;
      const int8_t* w = b + t * 4 * kW;
      for (int64_t j = 0; j < kW; ++j)
        for (int64_t l = 0; l < 4; ++l)
          sum[i][j] +=
              uint32_t{x[l]} * static_cast<uint32_t>(int32_t{w[j * 4 + l]});
    }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < kW; ++j) {
      if (!e) {
        acc[i * kW + j] = static_cast<int32_t>(sum[i][j]);
        continue;
      }
      const float dot = float(static_cast<int32_t>(
          sum[i][j] - static_cast<uint32_t>(e->corrections[j])));
      const float s = e->aScale[i] * e->bScale[j];
      float* out = e->c + i * e->ldc + j;
      *out = e->loadC ? std::fma(dot, s, *out) : dot * s;
    }
}

void scalarQuantize(int64_t rows, int64_t k, int64_t kp, const float* a,
                    int64_t am, int64_t ak, uint8_t* tile, float* scale) {
  quantizeW8A8Rows(W8A8ALayout::kQuads, kScalarMr, rows, k, kp, a, am, ak,
                   tile, scale);
}

void scalarCorrections(int64_t panels, int64_t kp, const int8_t* b,
                       int32_t* corrections) {
  w8a8Corrections(panels, kp, b, corrections, 127);
}

const W8A8Kernels kW8A8Scalar = {"scalar",       kScalarMr,        127,
                                 scalarTile,     scalarQuantize,   scalarCorrections,
                                 nullptr,        nullptr};

// The set for this CPU (pickKernelSet).
const W8A8Kernels& w8a8Kernels() {
#if defined(__x86_64__)
  return pickKernelSet(kW8A8Amx,
                       __builtin_cpu_supports("avx512vnni") &&
                           __builtin_cpu_supports("avx512bw"),
                       kW8A8Avx512Vnni, kW8A8Avx2, kW8A8Scalar);
#else
  return kW8A8Scalar;
#endif
}

using Problem = PackedGemmProblem;

// What run() computed once per call, shared by the tasks.
struct Prepared {
  const W8A8Kernels* kernels;
  const int8_t* b;
  int64_t tilesPerBatch;       // quantized A tiles of one batch
  int64_t mcTiles;             // A tiles per task (at most)
  const uint8_t* aq;           // every batch's A tiles, mr * kp bytes each
  const float* aScale;         // mr per tile
  const int32_t* corrections;  // (L + 1) * column sums, 32 per panel
  uint8_t* threadScratch;      // per thread: k-block sums, then a C tile
  size_t threadStride;
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t minOf(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t roundUp64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Per-thread bytes: int32 sums of a task's tiles between k blocks (only
// when there is more than one), then one C tile.
int64_t threadBytes(const Problem& p, int64_t mr, int64_t mcTiles) {
  const int64_t sums = p.kp > kKc ? mcTiles * mr * kNcPanels * kW * 4 : 0;
  return roundUp64(sums) + roundUp64(mr * kW * 4);
}

// Tiles [t0, t1) of batch |bi| against panels [p0, p1).
void runBlock(const Problem& p, const Prepared& s, uint8_t* scratch, int64_t bi,
              int64_t t0, int64_t t1, int64_t p0, int64_t p1) {
  const W8A8Kernels& kern = *s.kernels;
  const int64_t mr = kern.mr;
  int64_t ao, co;
  packedGemmBatchOffsets(p, bi, &ao, &co);
  int32_t* sums = reinterpret_cast<int32_t*>(scratch);
  float* cTile = reinterpret_cast<float*>(
      scratch + threadBytes(p, mr, s.mcTiles) - roundUp64(mr * kW * 4));
  if (kern.beginTask) kern.beginTask();
  for (int64_t k0 = 0; k0 < p.kp; k0 += kKc) {
    const int64_t kc = minOf(kKc, p.kp - k0);
    const bool first = k0 == 0, last = k0 + kc == p.kp;
    for (int64_t panel = p0; panel < p1; ++panel) {
      const int64_t n0 = panel * kW;
      const int64_t cols = minOf(kW, p.n - n0);
      const int8_t* bSlice = s.b + panel * p.kp * kW + k0 * kW;
      for (int64_t tt = t0; tt < t1; ++tt) {
        const int64_t tile = bi * s.tilesPerBatch + tt;
        const int64_t rows = minOf(mr, p.m - tt * mr);
        const uint8_t* aSlice = s.aq + tile * mr * p.kp + k0 * mr;
        int32_t* acc = sums + ((panel - p0) * s.mcTiles + (tt - t0)) * mr * kW;
        if (!last) {
          kern.tile(rows, kc / 4, aSlice, bSlice, acc, !first, nullptr);
          continue;
        }
        float* cPtr = p.c + co + tt * mr * p.cm + n0 * p.cn;
        writeThroughCTile(p, cPtr, rows, cols, cTile, p.accumulate,
                          [&](float* c, int64_t ldc) {
                            W8A8Epilogue e{s.aScale + tile * mr,
                                           p.bScales + n0,
                                           s.corrections + n0,
                                           c,
                                           ldc,
                                           p.accumulate};
                            kern.tile(rows, kc / 4, aSlice, bSlice, acc, !first,
                                      &e);
                          });
      }
    }
  }
  if (kern.endTask) kern.endTask();
}

void run(strata_rt_context_t* context, Problem p) {
  const int64_t batches = foldPackedGemmBatches(&p);
  if (batches == 0) return;

  Prepared s;
  s.kernels = &w8a8Kernels();
  s.b = static_cast<const int8_t*>(p.b);
  const W8A8Kernels& kern = *s.kernels;
  const int64_t mr = kern.mr;
  const int64_t panels = ceilDiv(p.n, kW);
  s.tilesPerBatch = ceilDiv(p.m, mr);
  s.mcTiles = ceilDiv(kMcRows, mr);
  // Shared scratch: A tiles, their row scales, the column corrections.
  int64_t tiles, aBytes;
  if (__builtin_mul_overflow(batches, s.tilesPerBatch, &tiles) ||
      __builtin_mul_overflow(tiles, mr * p.kp, &aBytes) ||
      aBytes > (int64_t{1} << 46)) {
    failRunOutOfMemory(context, UINT64_MAX);
    return;
  }
  const int64_t scaleOffset = roundUp64(aBytes);
  const int64_t correctionOffset = scaleOffset + roundUp64(tiles * mr * 4);
  const int64_t shared = correctionOffset + roundUp64(panels * kW * 4);
  const int64_t perThread = threadBytes(p, mr, s.mcTiles);
  uint8_t* base = packedGemmScratch(context, shared, perThread);
  if (!base) return;
  auto* aq = base;
  auto* aScale = reinterpret_cast<float*>(base + scaleOffset);
  auto* corrections = reinterpret_cast<int32_t*>(base + correctionOffset);
  s.aq = aq;
  s.aScale = aScale;
  s.corrections = corrections;
  s.threadScratch = base + shared;
  s.threadStride = static_cast<size_t>(perThread);

  // A's tiles and the column sums: O(M*K + K*N), in parallel too.
  const int64_t correctionTasks = ceilDiv(panels, kCorrectionPanels);
  parallelFor(context, static_cast<size_t>(tiles + correctionTasks),
              [&](size_t task, uint32_t /*thread*/) {
                const int64_t t = static_cast<int64_t>(task);
                if (t >= tiles) {
                  const int64_t q0 = (t - tiles) * kCorrectionPanels;
                  kern.corrections(minOf(kCorrectionPanels, panels - q0), p.kp,
                                   s.b + q0 * p.kp * kW, corrections + q0 * kW);
                  return;
                }
                const int64_t bi = t / s.tilesPerBatch,
                              tt = t % s.tilesPerBatch;
                int64_t ao, co;
                packedGemmBatchOffsets(p, bi, &ao, &co);
                kern.quantize(minOf(mr, p.m - tt * mr), p.k, p.kp,
                              p.a + ao + tt * mr * p.am, p.am, p.ak,
                              aq + t * mr * p.kp, aScale + t * mr);
              });

  const PackedGemmGrid grid = packedGemmGrid(context, batches, s.tilesPerBatch,
                                             panels, s.mcTiles, kNcPanels);
  runPackedGemmGrid(context, grid,
                    [&](uint32_t thread, int64_t bi, int64_t t0, int64_t t1,
                        int64_t p0, int64_t p1) {
                      runBlock(p, s, s.threadScratch + thread * s.threadStride,
                               bi, t0, t1, p0, p1);
                    });
}

}  // namespace

const char* matmulW8A8KernelSet() { return w8a8Kernels().name; }

int32_t matmulW8A8ActivationLevels() { return w8a8Kernels().levels; }

extern "C" void strataMatmulF32W8A8(strata_rt_context_t* context,
                                    const int64_t* params) {
  pollCancel(context);  // before any object: a cancel skips this frame
  const char* what = "strata_rt_matmul_f32_w8a8: B layout or quantization";
  const int64_t layout = params[STRATA_MM_B_LAYOUT];
  if (layout != STRATA_MM_LAYOUT_PANEL_I8_QUADS) {
    failRunInternal(context, what, layout);
    return;
  }
  const int64_t k = params[STRATA_MM_K];
  const int64_t group = params[STRATA_MM_GROUP_SIZE];
  if (group != k || k < 1 || k > STRATA_MM_W8A8_MAX_K ||
      params[STRATA_MM_B_SCALES] == 0 || params[STRATA_MM_B_ZERO_POINTS] != 0) {
    failRunInternal(context, what, group);
    return;
  }
  PackedGemmProblem p = decodePackedGemm(params, 4);
  if (!startFromBias(context, params, what, &p)) return;
  run(context, p);
}

}  // namespace strata::runtime::kernels
