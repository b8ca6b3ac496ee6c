//===- packed_gemm.h - Driver of the packed-weight matmuls ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// What strata_rt_matmul_f32_w8a8 and strata_rt_matmul_f32_bf16 share: the
// kernel-set choice, the params block's common fields, the batch folding
// and offsets, the scratch layout, and the (batch, row block, panel block)
// task grid. Include it only
// from baseline-ISA units: its inline functions must not be compiled with
// AVX-512 flags (the linker may keep any unit's copy).

#ifndef STRATA_RUNTIME_SRC_KERNELS_PACKED_GEMM_H_
#define STRATA_RUNTIME_SRC_KERNELS_PACKED_GEMM_H_

#include <cstddef>
#include <cstdint>

#include "../run_context.h"
#include "matmul_bias.h"
#include "matmul_f32.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

/// The kernel set for the ISA the fp32 kernels use (which tests may force
/// lower): |avx512| where the CPU has its extension too (|avx512Usable|),
/// else |avx2| on any AVX-512 or AVX2 CPU, else |scalar|.
template <typename Set>
const Set& pickKernelSet(bool avx512Usable, const Set& avx512, const Set& avx2,
                         const Set& scalar) {
  switch (matmulIsa()) {
    case MatmulIsa::kAmx:
    case MatmulIsa::kAvx512:
      return avx512Usable ? avx512 : avx2;  // every AVX-512 CPU has AVX2
    case MatmulIsa::kAvx2:
      return avx2;
    case MatmulIsa::kScalar:
      break;
  }
  return scalar;
}

/// The same with a set on AMX tiles, |amx| where they may be used.
template <typename Set>
const Set& pickKernelSet(const Set& amx, bool avx512Usable, const Set& avx512,
                         const Set& avx2, const Set& scalar) {
  if (matmulIsa() == MatmulIsa::kAmx) return amx;
  return pickKernelSet(avx512Usable, avx512, avx2, scalar);
}

/// One call's operands: A [batch..., m, k] and C [batch..., m, n] strided
/// (elements), one packed weight |b| of |kp| (K rounded up to the layout's
/// k group) rows shared by every batch.
struct PackedGemmProblem {
  int64_t m, n, k, kp;
  bool accumulate;
  int64_t batchRank;
  int64_t batch[STRATA_MM_MAX_BATCH];
  const float* a;
  int64_t aBatch[STRATA_MM_MAX_BATCH], am, ak;
  const void* b;
  const float* bScales;
  float* c;
  int64_t cBatch[STRATA_MM_MAX_BATCH], cm, cn;
  const float* bias;  // STRATA_MM_BIAS: C starts from it (null: none)
};

/// Reads the fields every packed-weight params block has; the caller has
/// checked the layout and K. |kGroup| is the layout's k group (4 or 2).
inline PackedGemmProblem decodePackedGemm(const int64_t* params,
                                          int64_t kGroup) {
  const auto address = [](int64_t value) {
    return reinterpret_cast<void*>(static_cast<intptr_t>(value));
  };
  PackedGemmProblem p;
  p.m = params[STRATA_MM_M];
  p.n = params[STRATA_MM_N];
  p.k = params[STRATA_MM_K];
  p.kp = (p.k + kGroup - 1) / kGroup * kGroup;
  p.accumulate = (params[STRATA_MM_FLAGS] & STRATA_MM_FLAG_ACCUMULATE) != 0;
  p.batchRank = params[STRATA_MM_BATCH_RANK];
  if (p.batchRank < 0 || p.batchRank > STRATA_MM_MAX_BATCH) p.batchRank = 0;
  for (int64_t d = 0; d < STRATA_MM_MAX_BATCH; ++d) {
    p.batch[d] = params[STRATA_MM_BATCH_SIZES + d];
    p.aBatch[d] = params[STRATA_MM_A_BATCH_STRIDES + d];
    p.cBatch[d] = params[STRATA_MM_C_BATCH_STRIDES + d];
  }
  p.a = static_cast<const float*>(address(params[STRATA_MM_A_ADDR]));
  p.am = params[STRATA_MM_A_STRIDE_M];
  p.ak = params[STRATA_MM_A_STRIDE_K];
  p.b = address(params[STRATA_MM_B_ADDR]);
  p.bScales = static_cast<const float*>(address(params[STRATA_MM_B_SCALES]));
  p.c = static_cast<float*>(address(params[STRATA_MM_C_ADDR]));
  p.cm = params[STRATA_MM_C_STRIDE_M];
  p.cn = params[STRATA_MM_C_STRIDE_N];
  p.bias = static_cast<const float*>(address(params[STRATA_MM_BIAS]));
  return p;
}

/// Writes a bias into C before the products are added to it (then
/// |accumulate|); false if the params asked for both (the run ended).
inline bool startFromBias(strata_rt_context_t* context, const int64_t* params,
                          const char* import, PackedGemmProblem* p) {
  if (!checkMatmulBias(context, params, import)) return false;
  if (!p->bias) return true;
  writeBiasRows(context, p->c, p->m, p->n, p->cm, p->cn, p->batchRank,
                p->batch, p->cBatch, p->bias);
  p->bias = nullptr;
  p->accumulate = true;
  return true;
}

/// Folds into M the batch dims that only A and C have, right outside M in
/// both (more rows against the one weight, as the fp32 path does), and
/// returns the number of batches left: 0 when there is nothing to compute.
inline int64_t foldPackedGemmBatches(PackedGemmProblem* p) {
  if (p->m <= 0 || p->n <= 0) return 0;
  for (int64_t d = 0; d < p->batchRank; ++d)
    if (p->batch[d] <= 0) return 0;
  while (p->batchRank > 0) {
    const int64_t d = p->batchRank - 1;
    if (p->aBatch[d] != p->m * p->am || p->cBatch[d] != p->m * p->cm) break;
    p->m *= p->batch[d];
    --p->batchRank;
  }
  int64_t batches = 1;
  for (int64_t d = 0; d < p->batchRank; ++d) batches *= p->batch[d];
  return batches;
}

/// Element offsets of batch index |index| in A and C.
inline void packedGemmBatchOffsets(const PackedGemmProblem& p, int64_t index,
                                   int64_t* a, int64_t* c) {
  *a = *c = 0;
  for (int64_t d = p.batchRank; d-- > 0;) {
    const int64_t i = index % p.batch[d];
    index /= p.batch[d];
    *a += i * p.aBatch[d];
    *c += i * p.cBatch[d];
  }
}

/// One block of |sharedBytes| (a multiple of 64: what every task reads) and
/// then |perThreadBytes| per thread, laid out here rather than in
/// kernelScratch's per-thread blocks. Null when the run has ended
/// (RESOURCE_EXHAUSTED).
inline uint8_t* packedGemmScratch(strata_rt_context_t* context,
                                  int64_t sharedBytes, int64_t perThreadBytes) {
  const int64_t threads = loopThreads(context);
  size_t stride = 0;
  return kernelScratch(
      context,
      static_cast<size_t>(perThreadBytes +
                          (sharedBytes + threads - 1) / threads),
      &stride);
}

/// One task of a (batch, row block, panel block) grid.
struct BlockTask {
  int64_t batch, rowBlock, panelBlock;
};

/// Task |task| of a grid of |rowBlocks| x |panelBlocks| per batch. Row
/// blocks vary fastest: consecutive tasks share a panel block of B while it
/// is in cache.
inline BlockTask blockTask(size_t task, int64_t rowBlocks,
                           int64_t panelBlocks) {
  int64_t rest = static_cast<int64_t>(task);
  BlockTask t;
  t.rowBlock = rest % rowBlocks;
  rest /= rowBlocks;
  t.panelBlock = rest % panelBlocks;
  t.batch = rest / panelBlocks;
  return t;
}

/// Row blocks of whole A tiles and panel blocks of 32-column panels.
struct PackedGemmGrid {
  int64_t batches, tiles, panels;  // per batch: A tiles, B panels
  int64_t mc, nc;                  // tiles, panels per block
  int64_t rowBlocks, panelBlocks;
};

/// Blocks of at most |mcTiles| x |ncPanels|; with few tasks per thread,
/// shrinks them (panels first) so that every thread gets work.
inline PackedGemmGrid packedGemmGrid(strata_rt_context_t* context,
                                     int64_t batches, int64_t tiles,
                                     int64_t panels, int64_t mcTiles,
                                     int64_t ncPanels) {
  const auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  const int64_t threads = loopThreads(context);
  PackedGemmGrid g;
  g.batches = batches;
  g.tiles = tiles;
  g.panels = panels;
  g.mc = mcTiles < tiles ? mcTiles : tiles;
  g.nc = ncPanels;
  while (batches * ceilDiv(tiles, g.mc) * ceilDiv(panels, g.nc) < threads * 2) {
    if (g.nc > 1) {
      g.nc /= 2;
    } else if (g.mc > 1) {
      g.mc = ceilDiv(g.mc, 2);
    } else {
      break;
    }
  }
  g.rowBlocks = ceilDiv(tiles, g.mc);
  g.panelBlocks = ceilDiv(panels, g.nc);
  return g;
}

/// Runs |block|(thread, batch, t0, t1, p0, p1) on every block of |g| (tiles
/// [t0, t1) of the batch against panels [p0, p1)), in parallel.
template <typename F>
void runPackedGemmGrid(strata_rt_context_t* context, const PackedGemmGrid& g,
                       const F& block) {
  parallelFor(
      context, static_cast<size_t>(g.batches * g.rowBlocks * g.panelBlocks),
      [&](size_t task, uint32_t thread) {
        const BlockTask t = blockTask(task, g.rowBlocks, g.panelBlocks);
        const int64_t t0 = t.rowBlock * g.mc, p0 = t.panelBlock * g.nc;
        block(thread, t.batch, t0, t0 + g.mc < g.tiles ? t0 + g.mc : g.tiles,
              p0, p0 + g.nc < g.panels ? p0 + g.nc : g.panels);
      });
}

/// Has |write|(c, ldc) write |rows| rows of 32 columns at |cPtr|: C itself
/// when its 32 columns are there and contiguous, else a contiguous
/// |cTile|, read from C first if |load|, whose |cols| columns are copied
/// back.
template <typename F>
void writeThroughCTile(const PackedGemmProblem& p, float* cPtr, int64_t rows,
                       int64_t cols, float* cTile, bool load, const F& write) {
  constexpr int64_t kW = STRATA_PACK_PANEL_WIDTH;
  if (cols == kW && p.cn == 1) {
    write(cPtr, p.cm);
    return;
  }
  if (load) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < kW; ++j)
        cTile[r * kW + j] = j < cols ? cPtr[r * p.cm + j * p.cn] : 0.0f;
  }
  write(cTile, kW);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j)
      cPtr[r * p.cm + j * p.cn] = cTile[r * kW + j];
}

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_PACKED_GEMM_H_
