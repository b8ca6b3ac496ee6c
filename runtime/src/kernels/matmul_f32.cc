//===- matmul_f32.cc - Blocking, packing and threading of the fp32 matmul -===//
// SPDX-License-Identifier: Apache-2.0
// Work is cut into (batch, row block, panel block) tasks run on the run
// context's thread pool. Within a task, k is blocked so that one packed B panel slice
// (kKc x 32 floats) stays in L1 while every register tile of the row block
// streams past it. B is either pre-packed at compile time (weights) or
// packed here, one panel slice at a time, into per-thread scratch that the
// run context provides from the session's allocator.

#include "matmul_f32.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "../run_context.h"
#include "amx.h"
#include "conv_columns.h"
#include "matmul_bias.h"
#include "matmul_f32_tiles.h"
#include "packed_gemm.h"
#include "panel_schedule.h"
#include "param_address.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {
namespace {

constexpr int64_t kW = STRATA_PACK_PANEL_WIDTH;
constexpr int64_t kKc = 256;       // k block
// A convolution reading its columns in place: k blocks of up to 512, the B
// slice (64 KB) streamed from L2. Its tiles reload C once per k block, and
// ResNet's 3x3 tap rows of 192-768 columns in blocks of 256 cost 4-9% of
// the layer against blocks of 384-768 (3x3 over 64 and 128 channels, 28-56
// positions a row, AMD Zen 5).
constexpr int64_t kConvKc = 512;
constexpr int64_t kMc = 128;       // rows per task
constexpr int64_t kNcPanels = 4;   // panels per task
constexpr int64_t kSkinnyRows = 16;  // at most: runSkinny (decode batches)
// runSkinny's blocks: kSkinnyGroup panels x kSkinnyKb of k. The weights
// stream from memory once, and a row tile kernel left to the hardware
// prefetcher read them at half the bandwidth a one-row product reaches
// (the LM head of a decode batch took 1.6-2.7x the one-row time at 4-16
// rows on an Intel Xeon): each call pulls its share of the next block
// toward L2, spread over its k steps (a burst per block was slower).
constexpr int64_t kSkinnyGroup = 4;
constexpr int64_t kSkinnyKb = 128;
constexpr int64_t kMaxMr = 8;
// A B that is packed per call (attention's K^T) is packed once per row
// block: with a gathered B, rows per task grow to hold about this many
// bytes of A's k block (in L2 on every host measured), so fewer row blocks
// pack it again (512 x 64 x 512 scores on AMD Zen 4: 60-78% of peak with
// 128-row blocks).
constexpr int64_t kGatheredABytes = 256 * 1024;
// How many register tiles ahead a convolution's tile asks for the residual
// and C lines it will need.
constexpr int64_t kAheadTiles = 2;

static_assert(kW == 32, "the tiles are written for 32-column panels");

struct Problem {
  int64_t m, n, k;
  bool accumulate, packed;
  // Weight-only int8 B (PANEL_I8): |b| points at bytes, dequantized with
  // |scales| (rows of |scaleStride| floats, one per |group| k rows).
  bool int8 = false;
  // ... in PANEL_I8_QUADS (|w8|): decode rows take integer products
  // against A quantized per w8.actGroup k (quantizeActivations).
  bool int8Quads = false;
  Int8Quads w8{};
  // int4 B (|w4|, k padded to |kp|); A quantized once per call
  // (quantizeActivations) for the tasks to share.
  bool int4 = false;
  Int4Panels w4{};
  int64_t kp = 0;
  const int8_t* aq = nullptr;
  const float* aScale = nullptr;
  const int32_t* aSum = nullptr;
  const float* scales = nullptr;
  int64_t scaleStride = 0, group = 0;
  int64_t batchRank;
  int64_t batch[STRATA_MM_MAX_BATCH];
  const float* a;
  int64_t aBatch[STRATA_MM_MAX_BATCH], am, ak;
  const float* b;
  int64_t bBatch[STRATA_MM_MAX_BATCH], bk, bn;
  float* c;
  int64_t cBatch[STRATA_MM_MAX_BATCH], cm, cn;
  // A as the columns of a channels-last convolution over p.a (gathered per
  // row block and k block), and a convolution's epilogue: C starts from
  // the bias of its column (if any), adds |residual| (rows p.cm apart, as
  // C) after its last k block and ends max(0, C) with |relu|. Only
  // runBlock reads these (run() sends such a product there).
  const ConvColumns* conv = nullptr;
  const float* bias = nullptr;
  const float* residual = nullptr;
  bool relu = false;
  // A convolution's product (pointwise ones too): its row blocks are
  // shared out evenly over the threads (run()).
  bool convolution = false;
  // The import's bias (STRATA_MM_BIAS): C starts from it (never with
  // |accumulate|). run() writes it into C where the products go.
  const float* startBias = nullptr;
  bool epilogue() const { return conv || bias || residual || relu; }
};

// Scalar fallback tiles, for CPUs without AVX2.
void scalarTile(int64_t rows, int64_t kc, const float* a, int64_t lda,
                const float* b, float* c, int64_t ldc, bool loadC) {
  for (int64_t i = 0; i < rows; ++i) {
    float acc[kW];
    for (int64_t j = 0; j < kW; ++j) acc[j] = loadC ? c[i * ldc + j] : 0.0f;
    for (int64_t k = 0; k < kc; ++k) {
      float x = a[i * lda + k];
      for (int64_t j = 0; j < kW; ++j) acc[j] += x * b[k * kW + j];
    }
    for (int64_t j = 0; j < kW; ++j) c[i * ldc + j] = acc[j];
  }
}

void scalarTileStream(int64_t rows, int64_t kc, const float* a, int64_t lda,
                      const float* b, float* c, int64_t ldc, bool loadC,
                      const char* /*prefetch*/, int64_t /*lines*/) {
  scalarTile(rows, kc, a, lda, b, c, ldc, loadC);
}

void scalarTileFinish(int64_t rows, int64_t kc, const float* a, int64_t lda,
                      const float* b, float* c, int64_t ldc, bool loadC,
                      const char* /*prefetch*/, int64_t /*lines*/,
                      const TileEpilogue* e) {
  if (e && e->bias) {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < kW; ++j)
        c[i * ldc + j] = loadC ? c[i * ldc + j] + e->bias[j] : e->bias[j];
    loadC = true;
  }
  const int64_t segments = e ? e->segments : 1, length = kc / segments;
  for (int64_t seg = 0; seg < segments; ++seg)
    scalarTile(rows, length, a + seg * (segments > 1 ? e->segmentStride : 0),
               lda, b + seg * length * kW, c, ldc, loadC || seg > 0);
  for (int64_t i = 0; e && i < rows; ++i)
    for (int64_t j = 0; j < kW; ++j) {
      float x = c[i * ldc + j];
      if (e->residual) x += e->residual[i * e->ldr + j];
      if (e->relu) x = x < 0.0f ? 0.0f : x;
      c[i * ldc + j] = x;
    }
}

void scalarGemv(int64_t panels, int64_t k, const float* a, const float* b,
                float* c, bool loadC) {
  for (int64_t p = 0; p < panels; ++p)
    scalarTile(1, k, a, k, b + p * k * kW, c + p * kW, kW, loadC);
}

void scalarGemvRows(int64_t rows, int64_t panels, int64_t k, const float* a,
                    int64_t lda, const float* b, float* c, int64_t ldc,
                    bool loadC) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t p = 0; p < panels; ++p)
      scalarTile(1, k, a + i * lda, lda, b + p * k * kW, c + i * ldc + p * kW,
                 ldc, loadC);
}

void scalarRowTimesRows(int64_t k, int64_t n, const float* a, int64_t ak,
                        const float* b, int64_t bk, float* c, bool loadC) {
  for (int64_t j = 0; j < n; ++j) {
    float acc = loadC ? c[j] : 0.0f;
    for (int64_t kk = 0; kk < k; ++kk) acc += a[kk * ak] * b[kk * bk + j];
    c[j] = acc;
  }
}

void scalarRowDotColumns(int64_t k, int64_t n, const float* a,
                         const float* b, int64_t bn, float* c, int64_t cn,
                         bool loadC) {
  for (int64_t j = 0; j < n; ++j) {
    float acc = 0.0f;
    for (int64_t kk = 0; kk < k; ++kk) acc += a[kk] * b[j * bn + kk];
    c[j * cn] = loadC ? c[j * cn] + acc : acc;
  }
}

float scalarExpShifted(float* x, int64_t n, float shift) {
  float sum = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - shift);
    sum += x[j];
  }
  return sum;
}

float scalarScaleMax(float* x, int64_t n, float scale, const float* mask) {
  float top = -INFINITY;
  for (int64_t j = 0; j < n; ++j) {
    float v = x[j] * scale;
    if (mask) v += mask[j];
    x[j] = v;
    top = v > top ? v : top;
  }
  return top;
}

// The reference of the int8 kernels: the same order of sums (per group,
// then scaled into the total), so the ISAs agree to rounding.
void scalarGemvI8(int64_t rows, int64_t panels, int64_t k, const float* a,
                  int64_t lda, const int8_t* b, const float* scales,
                  int64_t scaleStride, int64_t group, float* c, int64_t ldc,
                  bool loadC) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t p = 0; p < panels; ++p)
      for (int64_t j = 0; j < kW; ++j) {
        float* out = c + i * ldc + p * kW + j;
        float total = loadC ? *out : 0.0f;
        for (int64_t g0 = 0; g0 < k; g0 += group) {
          float part = 0.0f;
          for (int64_t kk = g0; kk < k && kk < g0 + group; ++kk)
            part += a[i * lda + kk] * float(b[(p * k + kk) * kW + j]);
          total += part * scales[(g0 / group) * scaleStride + p * kW + j];
        }
        *out = total;
      }
}

const MatmulTiles kScalarTiles = {
    "scalar",           4,
    scalarTile,         scalarGemv,
    scalarRowTimesRows, scalarRowDotColumns,
    scalarExpShifted,   scalarGemvI8,
    scalarScaleMax,     scalarTileStream,
    scalarTileFinish,   scalarGemvRows,
    1};

// The reference of the int4 kernels: exact int32 sums per group, then the
// same float steps.
void scalarGemvI4(int64_t rows, int64_t panels, const int8_t* aq,
                  int64_t ldaq, const float* aScale, const int32_t* aSum,
                  const Int4Panels& w, float* c, int64_t ldc, bool loadC) {
  const int64_t groups = w.kp / w.group;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t p = 0; p < panels; ++p)
      for (int64_t j = 0; j < kW; ++j) {
        float* out = c + i * ldc + p * kW + j;
        float total = loadC ? *out : 0.0f;
        for (int64_t g = 0; g < groups; ++g) {
          const uint8_t* quads = w.quads(p, g);
          int32_t dot = 0;
          for (int64_t k = 0; k < w.group; ++k) {
            const uint8_t byte = quads[(k / 4) * 64 + (j % 16) * 4 + k % 4];
            const int nibble = j < 16 ? byte & 15 : byte >> 4;
            dot += nibble * aq[i * ldaq + g * w.group + k];
          }
          const float value = float(dot) - 8.0f * float(aSum[i * groups + g]);
          total = std::fma(value, w.scale(p, g, j) * aScale[i * groups + g],
                           total);
        }
        *out = total;
      }
}

// The reference of the int8 x int8 kernels: exact int32 sums per
// activation group, then the same float steps.
void scalarGemvI8Quads(int64_t rows, int64_t panels, const int8_t* aq,
                       int64_t ldaq, const float* aScale,
                       const int32_t* /*aSum*/, const Int8Quads& w, float* c,
                       int64_t ldc, bool loadC) {
  const int64_t groups = (w.kq + w.actGroup - 1) / w.actGroup;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t p = 0; p < panels; ++p)
      for (int64_t j = 0; j < kW; ++j) {
        float* out = c + i * ldc + p * kW + j;
        float total = loadC ? *out : 0.0f;
        for (int64_t g = 0; g < groups; ++g) {
          const int8_t* quads = w.panel(p) + g * w.actGroup * kW;
          int32_t dot = 0;
          for (int64_t k = 0; k < w.quadsIn(g) * 4; ++k)
            dot += int32_t(quads[(k / 4) * 128 + j * 4 + k % 4]) *
                   aq[i * ldaq + g * w.actGroup + k];
          total = std::fma(float(dot),
                           w.scalesOf(p, g)[j] * aScale[i * groups + g], total);
        }
        *out = total;
      }
}

const MatmulTiles* detectTiles() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return &kMatmulTilesAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return &kMatmulTilesAvx2;
#endif
  return &kScalarTiles;
}

std::atomic<const MatmulTiles*> gTiles{nullptr};

const MatmulTiles& tiles() {
  const MatmulTiles* t = gTiles.load(std::memory_order_acquire);
  if (!t) {
    t = detectTiles();
    gTiles.store(t, std::memory_order_release);
  }
  return *t;
}

// One pool thread's scratch (each at a 64-byte aligned address).
struct Scratch {
  alignas(64) float bPanel[kKc * kW];
  alignas(64) float aBlock[kMc * kConvKc];
  alignas(64) float cTile[kMaxMr * kW];
};

// The scratch of every thread of the run's loops, |stride| bytes apart.
struct ScratchBlocks {
  uint8_t* base;
  size_t stride;
  Scratch& of(uint32_t thread) const {
    return *reinterpret_cast<Scratch*>(base + thread * stride);
  }
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t minOf(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t maxOf(int64_t a, int64_t b) { return a > b ? a : b; }

// Element offsets of batch index |index| in A, B and C.
void batchOffsets(const Problem& p, int64_t index, int64_t* a, int64_t* b,
                  int64_t* c) {
  *a = *b = *c = 0;
  for (int64_t d = p.batchRank; d-- > 0;) {
    int64_t i = index % p.batch[d];
    index /= p.batch[d];
    *a += i * p.aBatch[d];
    *b += i * p.bBatch[d];
    *c += i * p.cBatch[d];
  }
}

// |kc| x |cols| of a B whose k stride is 1 (column j at src + j * bn)
// into a panel slice of 32 columns (those past |cols| zero): 4 x 4
// transposes where whole, so the gather reads B in lines, not floats.
void packTransposedSlice(const float* src, int64_t bn, int64_t kc,
                         int64_t cols, float* out) {
  int64_t j = 0;
#if defined(__x86_64__)
  for (; j + 4 <= cols; j += 4) {
    const float* col = src + j * bn;
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4) {
      __m128 r0 = _mm_loadu_ps(col + k), r1 = _mm_loadu_ps(col + bn + k);
      __m128 r2 = _mm_loadu_ps(col + 2 * bn + k);
      __m128 r3 = _mm_loadu_ps(col + 3 * bn + k);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_store_ps(out + k * kW + j, r0);
      _mm_store_ps(out + (k + 1) * kW + j, r1);
      _mm_store_ps(out + (k + 2) * kW + j, r2);
      _mm_store_ps(out + (k + 3) * kW + j, r3);
    }
    for (; k < kc; ++k)
      for (int64_t q = 0; q < 4; ++q) out[k * kW + j + q] = col[q * bn + k];
  }
#endif
  for (; j < cols; ++j)
    for (int64_t k = 0; k < kc; ++k) out[k * kW + j] = src[j * bn + k];
  for (int64_t k = 0; k < kc; ++k)
    for (int64_t jj = cols; jj < kW; ++jj) out[k * kW + jj] = 0.0f;
}

// The convolution epilogue on |rows| x |cols| of a finished C tile (rows
// |ldc| apart): + |residual| (rows p.cm apart; null: none), then max(0, x)
// with p.relu (a NaN stays).
void finishTile(const Problem& p, int64_t rows, int64_t cols, float* c,
                int64_t ldc, const float* residual) {
  if (!residual && !p.relu) return;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = c + r * ldc;
    if (residual)
      for (int64_t j = 0; j < cols; ++j) row[j] += residual[r * p.cm + j];
    if (p.relu)
      for (int64_t j = 0; j < cols; ++j) row[j] = row[j] < 0.0f ? 0.0f : row[j];
  }
}

// Rows [m0, m0 + mc) x panels [p0, p1) of one batch.
void runBlock(const Problem& p, const MatmulTiles& t, Scratch& s,
              const float* a, const float* b, float* c, int64_t m0,
              int64_t mc, int64_t p0, int64_t p1) {
  // A convolution that reads its columns in place where they lie whole
  // in the input (ConvColumns::rowsInPlace) gathers only the tiles at the
  // padding: its k blocks stay within a tap row and its tiles within an
  // output row.
  const bool inPlace = p.conv && p.conv->readsInPlace();
  // The block's rows as register tiles of as even a height as their
  // count allows (49 rows: 7 tiles of 7, not 6 of 8 and 1 of 1); reading
  // in place, each output row's share of the block so.
  int64_t tiles = ceilDiv(mc, t.mr);
  int64_t starts[kMc + 1];
  if (inPlace) {
    const int64_t width = p.conv->out[p.conv->spatial - 1];
    tiles = 0;
    for (int64_t r = 0; r < mc;) {
      const int64_t end = minOf(mc, r + width - (m0 + r) % width);
      const int64_t count = ceilDiv(end - r, t.mr);
      for (int64_t q = 0; q < count; ++q)
        starts[tiles++] = r + q * (end - r) / count;
      r = end;
    }
    starts[tiles] = mc;
  }
  auto tileRow = [&](int64_t ti) {
    return inPlace ? starts[ti] : ti * mc / tiles;
  };
  auto blockEnd = [&](int64_t k0) {
    return inPlace ? p.conv->blockEnd(k0, kConvKc) : minOf(p.k, k0 + kKc);
  };
  // Reading in place: each tile's A rows.
  ConvColumns::RowsInPlace tileA[kMc];
  for (int64_t k0 = 0; k0 < p.k; k0 = blockEnd(k0)) {
    const int64_t kc = blockEnd(k0) - k0;
    // A bias joins the accumulators' start in the first k block (C, when
    // accumulating: a residual the result is written over); a residual
    // and ReLU end the last (tileFinish, or finishTile on a partial tile).
    const bool biasStart = p.bias && k0 == 0;
    const bool lastK = k0 + kc >= p.k;
    const bool fromC = p.accumulate || k0 > 0;
    const bool loadC = fromC || biasStart;
    // A rows with unit k stride, in place when possible.
    const float* aBase = a + m0 * p.am + k0 * p.ak;
    int64_t lda = p.am;
    if (inPlace) {
      for (int64_t ti = 0; ti < tiles; ++ti) {
        const int64_t i = tileRow(ti), rows = tileRow(ti + 1) - i;
        tileA[ti] = p.conv->rowsInPlace(m0 + i, rows, k0, kc);
        if (!tileA[ti].first) {
          p.conv->gather(m0 + i, rows, k0, kc, s.aBlock + i * kc);
          tileA[ti] = {s.aBlock + i * kc, kc, 1, 0};
        }
      }
    } else if (p.conv) {
      p.conv->gather(m0, mc, k0, kc, s.aBlock);
      aBase = s.aBlock;
      lda = kc;
    } else if (p.ak != 1) {
      for (int64_t i = 0; i < mc; ++i)
        for (int64_t k = 0; k < kc; ++k)
          s.aBlock[i * kc + k] = aBase[i * p.am + k * p.ak];
      aBase = s.aBlock;
      lda = kc;
    }
    for (int64_t panel = p0; panel < p1; ++panel) {
      const int64_t n0 = panel * kW;
      const int64_t cols = minOf(kW, p.n - n0);
      const float* bPanel;
      if (p.int4) {
        // Widened once per row block, as int8 below, the group's scales
        // decoded once per group.
        const Int4Panels& w = p.w4;
        float scale[kW];
        int64_t scaleGroup = -1;
        for (int64_t k = 0; k < kc; ++k) {
          const int64_t row = k0 + k, g = row / w.group;
          if (g != scaleGroup) {
            for (int64_t j = 0; j < kW; ++j) scale[j] = w.scale(panel, g, j);
            scaleGroup = g;
          }
          const uint8_t* quad = w.quads(panel, g) + (row % w.group) / 4 * 64;
          float* out = s.bPanel + k * kW;
          for (int64_t j = 0; j < 16; ++j) {
            const uint8_t byte = quad[j * 4 + row % 4];
            out[j] = float((byte & 15) - 8) * scale[j];
            out[j + 16] = float((byte >> 4) - 8) * scale[j + 16];
          }
        }
        bPanel = s.bPanel;
      } else if (p.int8Quads) {
        // As PANEL_I8 below, from the quad rows.
        const int8_t* q = p.w8.panel(panel);
        for (int64_t k = 0; k < kc; ++k) {
          const int64_t row = k0 + k;
          const float* scale = p.scales + (row / p.group) * p.scaleStride + n0;
          const int8_t* line = q + (row / 4) * 128 + row % 4;
          for (int64_t j = 0; j < kW; ++j)
            s.bPanel[k * kW + j] = float(line[j * 4]) * scale[j];
        }
        bPanel = s.bPanel;
      } else if (p.int8) {
        // Widened once per row block: the tiles then run as for fp32.
        const int8_t* q = reinterpret_cast<const int8_t*>(b) +
                          (panel * p.k + k0) * kW;
        for (int64_t k = 0; k < kc; ++k) {
          const float* scale =
              p.scales + ((k0 + k) / p.group) * p.scaleStride + n0;
          for (int64_t j = 0; j < kW; ++j)
            s.bPanel[k * kW + j] = float(q[k * kW + j]) * scale[j];
        }
        bPanel = s.bPanel;
      } else if (p.packed) {
        bPanel = b + panel * p.k * kW + k0 * kW;
      } else if (p.bk == 1 && p.bn != 1) {
        packTransposedSlice(b + k0 + n0 * p.bn, p.bn, kc, cols, s.bPanel);
        bPanel = s.bPanel;
      } else {
        const float* src = b + k0 * p.bk + n0 * p.bn;
        for (int64_t k = 0; k < kc; ++k) {
          float* row = s.bPanel + k * kW;
          if (p.bn == 1) {
            std::memcpy(row, src + k * p.bk, cols * sizeof(float));
          } else {
            for (int64_t j = 0; j < cols; ++j) row[j] = src[k * p.bk + j * p.bn];
          }
          for (int64_t j = cols; j < kW; ++j) row[j] = 0.0f;
        }
        bPanel = s.bPanel;
      }
      // Packed fp32 weights: the row tiles share pulling the next panel's
      // slice (or the first panel's next k block) toward L2, so that the
      // first tile of each slice does not wait on memory (GPT-2's prefill
      // of 128 tokens with every position's logits: 13% faster on the
      // Intel Xeon host, docs/design/cpu-matmul.md).
      const char* next = nullptr;
      int64_t nextLines = 0, share = 0;
      if (p.packed && !p.int8 && !p.int4) {
        int64_t np = panel + 1, nk = k0;
        if (np == p1) {
          np = p0;
          nk = k0 + kc;
        }
        if (nk < p.k) {
          next = reinterpret_cast<const char*>(b + np * p.k * kW + nk * kW);
          nextLines = (blockEnd(nk) - nk) * kW * 4 / 64;
          share = ceilDiv(nextLines, tiles);
        }
      }
      for (int64_t ti = 0; ti < tiles; ++ti) {
        const int64_t i = tileRow(ti), rows = tileRow(ti + 1) - i;
        float* cPtr = c + (m0 + i) * p.cm + n0 * p.cn;
        const float* aTile = inPlace ? tileA[ti].first : aBase + i * lda;
        int64_t ldaTile = inPlace ? tileA[ti].lda : lda;
        if (cols == kW && p.cn == 1) {
          const int64_t lines =
              next ? minOf(share, nextLines - ti * share) : 0;
          if (p.epilogue()) {
            // A convolution's bias, residual and ReLU in the registers;
            // the lines of the tile kAheadTiles on (in this panel, else
            // the next) asked for now.
            TileEpilogue e{
                biasStart ? p.bias + n0 : nullptr,
                lastK && p.residual ? p.residual + (m0 + i) * p.cm + n0
                                    : nullptr,
                p.cm, lastK && p.relu};
            if (inPlace) {
              e.segments = tileA[ti].segments;
              e.segmentStride = tileA[ti].segmentStride;
            }
            int64_t ahead = ti + kAheadTiles, aheadPanel = panel;
            if (ahead >= tiles) {
              ahead -= tiles;
              ++aheadPanel;
            }
            if (aheadPanel < p1 && ahead < tiles) {
              const int64_t offset =
                  (m0 + tileRow(ahead)) * p.cm + aheadPanel * kW;
              e.aheadRows = tileRow(ahead + 1) - tileRow(ahead);
              e.aheadResidual =
                  lastK && p.residual ? p.residual + offset : nullptr;
              e.aheadC = c + offset;
            }
            t.tileFinish(rows, kc, aTile, ldaTile, bPanel, cPtr, p.cm,
                         fromC,
                         lines > 0 ? next + ti * share * 64 : nullptr,
                         maxOf(lines, 0), &e);
            continue;
          }
          if (lines > 0)
            t.tileStream(rows, kc, aTile, ldaTile, bPanel, cPtr, p.cm, loadC,
                         next + ti * share * 64, lines);
          else
            t.tile(rows, kc, aTile, ldaTile, bPanel, cPtr, p.cm, loadC);
          continue;
        }
        // Partial or strided columns go through a contiguous tile (of
        // gathered columns where A spans tap rows: the plain tile reads
        // one run).
        if (inPlace && tileA[ti].segments > 1) {
          p.conv->gather(m0 + i, rows, k0, kc, s.aBlock + i * kc);
          aTile = s.aBlock + i * kc;
          ldaTile = kc;
        }
        if (loadC) {
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < kW; ++j)
              s.cTile[r * kW + j] =
                  j >= cols ? 0.0f
                  : !fromC  ? p.bias[n0 + j]
                  : biasStart
                      ? cPtr[r * p.cm + j * p.cn] + p.bias[n0 + j]
                      : cPtr[r * p.cm + j * p.cn];
        }
        t.tile(rows, kc, aTile, ldaTile, bPanel, s.cTile, kW, loadC);
        if (lastK)
          finishTile(p, rows, cols, s.cTile, kW,
                     p.residual ? p.residual + (m0 + i) * p.cm + n0 : nullptr);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = 0; j < cols; ++j)
            cPtr[r * p.cm + j * p.cn] = s.cTile[r * kW + j];
      }
    }
  }
}

// M = 1 against packed panels [p0, p1): whole k in registers.
void runGemv(const Problem& p, const MatmulTiles& t, Scratch& s,
             const float* a, const float* b, float* c, int64_t p0,
             int64_t p1) {
  const float* aRow = a;
  if (p.ak != 1) {
    // Rare (a transposed row); run() sends M = 1 here only when K fits
    // the A scratch (K <= kMc * kKc).
    for (int64_t k = 0; k < p.k; ++k) s.aBlock[k] = a[k * p.ak];
    aRow = s.aBlock;
  }
  const int64_t full = minOf(p1, p.n / kW);
  if (p.cn == 1 && full > p0) {
    t.gemv(full - p0, p.k, aRow, b + p0 * p.k * kW, c + p0 * kW, p.accumulate);
    p0 = full;
  }
  for (int64_t panel = p0; panel < p1; ++panel) {
    const int64_t n0 = panel * kW;
    const int64_t cols = minOf(kW, p.n - n0);
    if (p.accumulate) {
      for (int64_t j = 0; j < kW; ++j)
        s.cTile[j] = j < cols ? c[(n0 + j) * p.cn] : 0.0f;
    }
    t.gemv(1, p.k, aRow, b + panel * p.k * kW, s.cTile, p.accumulate);
    for (int64_t j = 0; j < cols; ++j) c[(n0 + j) * p.cn] = s.cTile[j];
  }
}

// A few rows (a decode batch) against packed panels [p0, p1): each panel
// over the whole k, all row tiles, before the next, so the weight streams
// once and linearly, as in runGemv (k blocks jumping between the panels of
// a block left the prefetchers behind: 8 rows took twice the time of 1).
// The row tiles are of even heights (9 rows: 5 and 4, not 8 and 1): a
// one-row tile runs at the latency of its two FMA chains, and a 9-token
// verify call took 1.65-1.80x a decode step with 8 + 1, 1.54-1.56x with
// 5 + 4 (AMD Zen 5, interleaved runs).
void runSkinny(const Problem& p, const MatmulTiles& t, Scratch& s,
               const float* a, const float* b, float* c, int64_t p0,
               int64_t p1) {
  const int64_t tilesPerPanel = ceilDiv(p.m, t.mr);
  for (int64_t q = p0; q < p1; q += kSkinnyGroup) {
    const int64_t qEnd = minOf(q + kSkinnyGroup, p1);
    for (int64_t k0 = 0; k0 < p.k; k0 += kSkinnyKb) {
      const int64_t kc = minOf(kSkinnyKb, p.k - k0);
      const bool loadC = p.accumulate || k0 > 0;
      // The block after this one: the group's next k block, else the next
      // group's first. Each row tile call prefetches its share of the
      // matching panel's part of it.
      int64_t nk = k0 + kSkinnyKb, nq = q;
      if (nk >= p.k) {
        nk = 0;
        nq = q + kSkinnyGroup;
      }
      const int64_t nEnd = minOf(nq + kSkinnyGroup, p1);
      const int64_t regionLines = minOf(kSkinnyKb, p.k - nk) * kW * 4 / 64;
      const int64_t share = ceilDiv(regionLines, tilesPerPanel);
      for (int64_t panel = q; panel < qEnd; ++panel) {
        const int64_t n0 = panel * kW;
        const int64_t cols = minOf(kW, p.n - n0);
        const float* bBlock = b + panel * p.k * kW + k0 * kW;
        const int64_t np = nq + (panel - q);
        const char* region =
            np < nEnd
                ? reinterpret_cast<const char*>(b + np * p.k * kW + nk * kW)
                : nullptr;
        for (int64_t ti = 0; ti < tilesPerPanel; ++ti) {
          const int64_t i = ti * p.m / tilesPerPanel;
          const int64_t rows = (ti + 1) * p.m / tilesPerPanel - i;
          const float* aRows = a + i * p.am + k0;
          const char* prefetch = region ? region + ti * share * 64 : nullptr;
          const int64_t lines =
              prefetch ? maxOf(0, minOf(share, regionLines - ti * share)) : 0;
          float* cPtr = c + i * p.cm + n0;
          if (cols == kW) {
            t.tileStream(rows, kc, aRows, p.am, bBlock, cPtr, p.cm, loadC,
                         prefetch, lines);
            continue;
          }
          if (loadC) {
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t j = 0; j < kW; ++j)
                s.cTile[r * kW + j] = j < cols ? cPtr[r * p.cm + j] : 0.0f;
          }
          t.tileStream(rows, kc, aRows, p.am, bBlock, s.cTile, kW, loadC,
                       prefetch, lines);
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < cols; ++j)
              cPtr[r * p.cm + j] = s.cTile[r * kW + j];
        }
      }
    }
  }
}

// Panels [p0, p1) of a weight for up to kSkinnyRows rows: whole panels in
// one |product|(first row, rows, first panel, panels, c, ldc) call, a
// partial last panel row by row through a C tile (|product| with one row).
template <typename Product>
void panelsThroughProduct(const Problem& p, Scratch& s, float* c, int64_t p0,
                          int64_t p1, Product product) {
  const int64_t full = minOf(p1, p.n / kW);
  if (full > p0) {
    product(int64_t(0), p.m, p0, full - p0, c + p0 * kW, p.cm);
    p0 = full;
  }
  for (int64_t panel = p0; panel < p1; ++panel) {
    const int64_t n0 = panel * kW;
    const int64_t cols = minOf(kW, p.n - n0);
    for (int64_t i = 0; i < p.m; ++i) {
      float* cRow = c + i * p.cm + n0;
      for (int64_t j = 0; j < kW; ++j)
        s.cTile[j] = p.accumulate && j < cols ? cRow[j] : 0.0f;
      product(i, int64_t(1), panel, int64_t(1), s.cTile, kW);
      for (int64_t j = 0; j < cols; ++j) cRow[j] = s.cTile[j];
    }
  }
}

// Up to the set's gemvRowsMax rows (2-3: a speculative verify step, a
// small decode batch) against packed fp32 panels [p0, p1) through the set's
// gemvRows, which streams them as the gemv does. (At 2 rows runSkinny's
// tiles took 1.1-1.5x the one-row time, this path 1.0-1.35x, AMD Zen 5.)
void runGemvRows(const Problem& p, const MatmulTiles& t, Scratch& s,
                 const float* a, const float* b, float* c, int64_t p0,
                 int64_t p1) {
  panelsThroughProduct(p, s, c, p0, p1,
                       [&](int64_t row, int64_t rows, int64_t panel,
                           int64_t panels, float* out, int64_t ldc) {
                         t.gemvRows(rows, panels, p.k, a + row * p.am, p.am,
                                    b + panel * p.k * kW, out, ldc,
                                    p.accumulate);
                       });
}

// Weight-only int8, up to kSkinnyRows rows, against panels [p0, p1).
void runSkinnyI8(const Problem& p, const MatmulTiles& t, Scratch& s,
                 const float* a, const float* b, float* c, int64_t p0,
                 int64_t p1) {
  const int8_t* q = reinterpret_cast<const int8_t*>(b);
  panelsThroughProduct(p, s, c, p0, p1,
                       [&](int64_t row, int64_t rows, int64_t panel,
                           int64_t panels, float* out, int64_t ldc) {
                         t.gemvI8(rows, panels, p.k, a + row * p.am, p.am,
                                  q + panel * p.k * kW, p.scales + panel * kW,
                                  p.scaleStride, p.group, out, ldc,
                                  p.accumulate);
                       });
}

// Bytes of kernel scratch the int4 and int8-quads paths need for |rows|
// quantized rows.
int64_t quantizedActivationBytes(int64_t rows, int64_t kp, int64_t group) {
  return rows * kp + 64 + rows * (kp / group) * 8;
}

}  // namespace

void quantizeGroupsReference(int64_t k, int64_t kp, int64_t group,
                             const float* a, int64_t ak, int8_t* aq,
                             float* aScale, int32_t* aSum) {
  for (int64_t g = 0; g < kp / group; ++g) {
    const int64_t k0 = g * group, n = minOf(k, k0 + group) - k0;
    const float* src = a + k0 * ak;
    int8_t* out = aq + k0;
    float amax = 0.0f;
    int nonFinite = 0;
    for (int64_t kk = 0; kk < n; ++kk) {
      const float x = std::fabs(src[kk * ak]);
      nonFinite |= !(x <= 3.4e38f);
      amax = x > amax ? x : amax;
    }
    const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    int32_t sum = 0;
    for (int64_t kk = 0; kk < n; ++kk) {
      // Clamped (a NaN becomes 0; its group's scale is infinite below),
      // then rounded half away from zero, in plain comparisons: libm's
      // fmin and nearbyint are calls here.
      float y = src[kk * ak] * inv;
      y = y > 127.0f ? 127.0f : y;
      y = y < -127.0f ? -127.0f : y;
      y = y == y ? y : 0.0f;
      const int v = static_cast<int>(y + (y >= 0.0f ? 0.5f : -0.5f));
      out[kk] = static_cast<int8_t>(v);
      sum += v;
    }
    for (int64_t kk = n < 0 ? 0 : n; kk < group; ++kk) out[kk] = 0;
    aScale[g] = nonFinite ? INFINITY : amax / 127.0f;
    aSum[g] = sum;
  }
}

namespace {

QuantizeGroupsFn quantizeGroupsForTiles(const MatmulTiles& t) {
#if defined(__x86_64__)
  if (&t == &kMatmulTilesAvx512 && __builtin_cpu_supports("avx512bw"))
    return kQuantizeGroupsAvx512;
  if (&t == &kMatmulTilesAvx512 || &t == &kMatmulTilesAvx2)
    return kQuantizeGroupsAvx2;
#endif
  return nullptr;
}

// A's rows [0, p.m) quantized per |group| k, zero-padded to |kp|, for the
// integer-product kernels (QuantizeGroupsFn).
void quantizeActivations(const Problem& p, const MatmulTiles& t,
                         const float* a, int64_t group, int64_t kp,
                         int8_t* aq, float* aScale, int32_t* aSum) {
  const int64_t groups = kp / group;
  const QuantizeGroupsFn vector = p.ak == 1 ? quantizeGroupsForTiles(t)
                                            : nullptr;
  for (int64_t i = 0; i < p.m; ++i) {
    const float* row = a + i * p.am;
    if (vector)
      vector(p.k, kp, group, row, aq + i * kp, aScale + i * groups,
             aSum + i * groups);
    else
      quantizeGroupsReference(p.k, kp, group, row, p.ak, aq + i * kp,
                              aScale + i * groups, aSum + i * groups);
  }
}

// |m| rows quantized per |group| k into thread 0's A block, which the tasks
// only read (the skinny integer paths use no other thread's A block, nor
// their own); false if they do not fit.
bool quantizeIntoScratch(Problem* p, const MatmulTiles& t, Scratch& s,
                         int64_t group, int64_t kp) {
  if (quantizedActivationBytes(p->m, kp, group) > int64_t(sizeof(Scratch::aBlock)))
    return false;
  auto* base = reinterpret_cast<uint8_t*>(s.aBlock);
  auto* aq = reinterpret_cast<int8_t*>(base);
  auto* aScale = reinterpret_cast<float*>(base + (p->m * kp + 63) / 64 * 64);
  auto* aSum = reinterpret_cast<int32_t*>(aScale + p->m * (kp / group));
  quantizeActivations(*p, t, p->a, group, kp, aq, aScale, aSum);
  p->aq = aq;
  p->aScale = aScale;
  p->aSum = aSum;
  return true;
}

MatmulGemvI8QuadsFn gemvI8QuadsForTiles(const MatmulTiles& t) {
#if defined(__x86_64__)
  if (&t == &kMatmulTilesAvx512 && __builtin_cpu_supports("avx512vnni") &&
      __builtin_cpu_supports("avx512bw"))
    return kGemvI8QuadsAvx512Vnni;
  if (&t == &kMatmulTilesAvx512 || &t == &kMatmulTilesAvx2)
    return kGemvI8QuadsAvx2;
#endif
  return scalarGemvI8Quads;
}

// int8 quads, up to kSkinnyRows rows, against panels [p0, p1), with A
// already quantized per p.w8.actGroup (p.aq, p.aScale, p.aSum).
void runSkinnyI8Quads(const Problem& p, const MatmulTiles& t, Scratch& s,
                      const float* /*a*/, const float* /*b*/, float* c,
                      int64_t p0, int64_t p1) {
  const int64_t kp = p.kp, groups = kp / p.w8.actGroup;
  const MatmulGemvI8QuadsFn gemv = gemvI8QuadsForTiles(t);
  panelsThroughProduct(p, s, c, p0, p1,
                       [&](int64_t row, int64_t rows, int64_t panel,
                           int64_t panels, float* out, int64_t ldc) {
                         gemv(rows, panels, p.aq + row * kp, kp,
                              p.aScale + row * groups, p.aSum + row * groups,
                              p.w8.fromPanel(panel), out, ldc, p.accumulate);
                       });
}

MatmulGemvI4Fn gemvI4ForTiles(const MatmulTiles& t, bool f16Scales) {
#if defined(__x86_64__)
  if (&t == &kMatmulTilesAvx512 && __builtin_cpu_supports("avx512vnni") &&
      __builtin_cpu_supports("avx512bw"))
    return kGemvI4Avx512Vnni;
  if ((&t == &kMatmulTilesAvx512 || &t == &kMatmulTilesAvx2) &&
      (!f16Scales || __builtin_cpu_supports("f16c")))
    return kGemvI4Avx2;
#else
  (void)f16Scales;
#endif
  return scalarGemvI4;
}

// int4 weights, up to kSkinnyRows rows, against panels [p0, p1), with A
// already quantized (p.aq, p.aScale, p.aSum): integer dot products.
void runSkinnyI4(const Problem& p, const MatmulTiles& t, Scratch& s,
                 const float* /*a*/, const float* /*b*/, float* c, int64_t p0,
                 int64_t p1) {
  const int64_t groups = p.kp / p.group;
  const MatmulGemvI4Fn gemvI4 = gemvI4ForTiles(t, p.w4.f16Scales);
  panelsThroughProduct(p, s, c, p0, p1,
                       [&](int64_t row, int64_t rows, int64_t panel,
                           int64_t panels, float* out, int64_t ldc) {
                         gemvI4(rows, panels, p.aq + row * p.kp, p.kp,
                                p.aScale + row * groups, p.aSum + row * groups,
                                p.w4.fromPanel(panel), out, ldc, p.accumulate);
                       });
}

// M = 1 against an unpacked B, columns [n0, n1) of one batch: B is read
// once, in place (decode attention against the KV cache; packing it would
// triple the memory traffic of a product that is all memory traffic).
// |rowsContiguous|: B's rows and C are contiguous (else B's columns are).
void runRow(const Problem& p, const MatmulTiles& t, Scratch& s,
            bool rowsContiguous, const float* a, const float* b, float* c,
            int64_t n0, int64_t n1) {
  if (rowsContiguous) {
    t.rowTimesRows(p.k, n1 - n0, a, p.ak, b + n0, p.bk, c + n0, p.accumulate);
    return;
  }
  const float* aRow = a;
  if (p.ak != 1) {
    for (int64_t k = 0; k < p.k; ++k) s.aBlock[k] = a[k * p.ak];
    aRow = s.aBlock;
  }
  t.rowDotColumns(p.k, n1 - n0, aRow, b + n0 * p.bn, p.bn, c + n0 * p.cn,
                  p.cn, p.accumulate);
}

// Batch dims that only A and C have (B is shared, as a weight is) and that
// sit right outside M in both fold into M: [b, t, k] x [k, n] is one
// (b*t) x n product, not b products that each stream the whole weight.
void foldSharedBatchesIntoM(Problem* p) {
  while (p->batchRank > 0) {
    const int64_t d = p->batchRank - 1;
    if (p->bBatch[d] != 0 || p->aBatch[d] != p->m * p->am ||
        p->cBatch[d] != p->m * p->cm)
      break;
    p->m *= p->batch[d];
    --p->batchRank;
  }
}

void run(strata_rt_context_t* context, Problem p) {
  if (p.m <= 0 || p.n <= 0) return;
  // An empty batch writes nothing (and folding it would make M zero).
  for (int64_t d = 0; d < p.batchRank; ++d)
    if (p.batch[d] <= 0) return;
  foldSharedBatchesIntoM(&p);
  int64_t batches = 1;
  for (int64_t d = 0; d < p.batchRank; ++d) batches *= p.batch[d];
  if (p.k <= 0) {
    if (p.startBias) {
      writeBiasRows(context, p.c, p.m, p.n, p.cm, p.cn, p.batchRank, p.batch,
                    p.cBatch, p.startBias);
      return;
    }
    if (p.accumulate) return;
    for (int64_t bi = 0; bi < batches; ++bi) {
      int64_t ao, bo, co;
      batchOffsets(p, bi, &ao, &bo, &co);
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) p.c[co + i * p.cm + j * p.cn] = 0.0f;
    }
    return;
  }
  // With a bias the products are added to it, written into C below where
  // they go.
  if (p.startBias) p.accumulate = true;
  const MatmulTiles& t = tiles();
  const int64_t panels = ceilDiv(p.n, kW);
  const int64_t threads = loopThreads(context);
  ScratchBlocks scratch{nullptr, 0};
  scratch.base = kernelScratch(context, sizeof(Scratch), &scratch.stride);
  if (!scratch.base) return;

  // A convolution runs on runBlock alone: its columns exist only as the
  // blocks runBlock gathers, and only runBlock applies its epilogue.
  const bool conv = p.epilogue() || p.convolution;
  // Decode (one row, or a batch of up to kSkinnyRows): split the panels
  // (the weight stream) over the threads in chunks that shrink towards the
  // end (panel_schedule.h), at most a quarter of a thread's share, sized
  // for the four-panel tiles while they can be.
  // A bias goes into each chunk's columns right before its products are
  // added to them, on the thread that computes them.
  auto panelChunks = [&](auto run) {
    int64_t bounds[kMaxPanelChunks + 1];
    const int64_t chunks =
        guidedPanelChunks(panels, threads, ceilDiv(panels, threads * 4),
                          /*unit=*/4, bounds);
    parallelFor(context, static_cast<size_t>(batches * chunks),
                [&](size_t task, uint32_t thread) {
      const int64_t bi = static_cast<int64_t>(task) / chunks;
      const int64_t ci = static_cast<int64_t>(task) % chunks;
      int64_t ao, bo, co;
      batchOffsets(p, bi, &ao, &bo, &co);
      if (p.startBias)
        writeBiasColumns(p.c + co, p.m, p.cm, p.cn, p.startBias,
                         bounds[ci] * kW, minOf(p.n, bounds[ci + 1] * kW));
      run(p, t, scratch.of(thread), p.a + ao, p.b + bo, p.c + co, bounds[ci],
          bounds[ci + 1]);
    });
  };
  if (p.int8 && !p.int8Quads && p.m <= kSkinnyRows && p.ak == 1 &&
      p.cn == 1) {
    panelChunks(runSkinnyI8);
    return;
  }
  // A quantized once, for every task; with too many rows for the scratch,
  // the widened panels below.
  if (p.int8Quads && batches == 1 && p.m <= kSkinnyRows && p.cn == 1 &&
      quantizeIntoScratch(&p, t, scratch.of(0), p.w8.actGroup, p.kp)) {
    panelChunks(runSkinnyI8Quads);
    return;
  }
  if (p.int4 && batches == 1 && p.m <= kSkinnyRows && p.cn == 1 &&
      p.group <= kMaxInt4GemvGroup &&
      quantizeIntoScratch(&p, t, scratch.of(0), p.group, p.kp)) {
    panelChunks(runSkinnyI4);
    return;
  }
  if (p.m == 1 && p.packed && !p.int8 && !p.int4 && p.k <= kMc * kKc &&
      !conv) {
    panelChunks(runGemv);
    return;
  }
  if (p.m <= t.gemvRowsMax && p.packed && !p.int8 && !p.int4 && p.ak == 1 &&
      p.cn == 1 && !conv) {
    panelChunks(runGemvRows);
    return;
  }
  if (p.m <= kSkinnyRows && p.packed && !p.int8 && !p.int4 && p.ak == 1 &&
      p.cn == 1 && !conv) {
    panelChunks(runSkinny);
    return;
  }

  // Every other product: the bias in one pass before its products.
  if (p.startBias) {
    writeBiasRows(context, p.c, p.m, p.n, p.cm, p.cn, p.batchRank, p.batch,
                  p.cBatch, p.startBias);
    p.startBias = nullptr;
  }

  const bool rowsContiguous = p.bn == 1 && p.cn == 1;
  const bool columnsContiguous = p.bk == 1 && (p.ak == 1 || p.k <= kMc * kKc);
  if (p.m == 1 && !p.packed && (rowsContiguous || columnsContiguous) &&
      !conv) {
    // Decode attention: each batch (head) is a few hundred KB of K or V
    // read once; columns are split only when there are fewer than two
    // batches per thread.
    int64_t chunks = 1;
    while (batches * chunks < threads * 2 && p.n / (chunks * 2) >= 64)
      chunks *= 2;
    const int64_t width = ceilDiv(ceilDiv(p.n, chunks), 16) * 16;
    chunks = ceilDiv(p.n, width);
    parallelFor(context, static_cast<size_t>(batches * chunks),
                [&](size_t task, uint32_t thread) {
      const int64_t bi = static_cast<int64_t>(task) / chunks;
      const int64_t ci = static_cast<int64_t>(task) % chunks;
      int64_t ao, bo, co;
      batchOffsets(p, bi, &ao, &bo, &co);
      runRow(p, t, scratch.of(thread), rowsContiguous, p.a + ao, p.b + bo, p.c + co, ci * width,
             minOf(p.n, (ci + 1) * width));
    });
    return;
  }

  // Row blocks of whole register tiles, panel blocks of kNcPanels; with few
  // tasks per thread, shrink the blocks so every thread gets work.
  int64_t mc = minOf(kMc, p.m);
  if (!p.packed && p.bn != 1 && p.ak == 1 && !p.int8 && !p.int4)
    mc = minOf(p.m, maxOf(kMc, kGatheredABytes / (minOf(p.k, kKc) * 4) /
                                   t.mr * t.mr));
  // Gathered convolution columns: every panel of a row block in one task,
  // so each block of columns is gathered once while tasks suffice.
  int64_t nc = p.conv ? panels : kNcPanels;
  while (batches * ceilDiv(p.m, mc) * ceilDiv(panels, nc) < threads * 2) {
    if (nc > 1) {
      nc /= 2;
    } else if (mc > t.mr) {
      mc = ceilDiv(mc / 2, t.mr) * t.mr;
    } else {
      break;
    }
  }
  int64_t mBlocks = ceilDiv(p.m, mc);
  const int64_t nBlocks = ceilDiv(panels, nc);
  // A convolution's tasks (a row block each, all panels) as a multiple of
  // the threads, its rows shared out evenly in units of whole register
  // tiles: ResNet-50's 3136-row products at batch 1 made 24 blocks of 128
  // rows and one of 64, which one thread ran while the other waited. One
  // that reads its columns in place (tiles within an output row, runBlock)
  // shares out whole output rows, so that no tile is cut short at a
  // block's edge.
  const int64_t width =
      p.conv && p.conv->readsInPlace() ? p.conv->out[p.conv->spatial - 1] : 0;
  const bool byOutputRows = width > 0 && width <= mc;
  // Row units shared out: output rows, or register tiles.
  const int64_t units = byOutputRows ? p.m / width : ceilDiv(p.m, t.mr);
  const int64_t unitRows = byOutputRows ? width : t.mr;
  if (byOutputRows) mBlocks = ceilDiv(units, mc / width);
  if (p.convolution && mBlocks > 1 && (mBlocks * nBlocks) % threads != 0) {
    const int64_t rounded = ceilDiv(mBlocks * nBlocks, threads) * threads;
    mBlocks = minOf(units, ceilDiv(rounded, nBlocks));
  }
  // A convolution's row blocks: units / mBlocks units each, one more for
  // the first units % mBlocks, at most mc rows (the A scratch) as mBlocks
  // only grew. The larger blocks first: the threads claim tasks in turn,
  // and 28 rows in 8 blocks of 3 and 4 alternating had one thread take
  // every 4 (16 rows against 12). Other products' blocks of mc rows.
  const int64_t unitsEach = units / mBlocks, extraUnits = units % mBlocks;
  auto rowOfBlock = [&](int64_t r) {
    return minOf(p.m, p.convolution
                          ? (r * unitsEach + minOf(r, extraUnits)) * unitRows
                          : r * mc);
  };
  parallelFor(context, static_cast<size_t>(batches * mBlocks * nBlocks),
              [&](size_t task, uint32_t thread) {
                // In blockTask's order, row blocks fastest: +3% on the LM
                // head, whose 154 MB of B would otherwise be streamed from
                // DRAM once per row block.
                const BlockTask bt = blockTask(task, mBlocks, nBlocks);
                int64_t ao, bo, co;
                batchOffsets(p, bt.batch, &ao, &bo, &co);
                const int64_t m0 = rowOfBlock(bt.rowBlock);
                runBlock(p, t, scratch.of(thread), p.a + ao, p.b + bo, p.c + co,
                         m0, rowOfBlock(bt.rowBlock + 1) - m0,
                         bt.panelBlock * nc,
                         minOf(panels, (bt.panelBlock + 1) * nc));
              });
}

}  // namespace

const MatmulTiles& matmulTiles() { return tiles(); }

float Int4Panels::scale(int64_t p, int64_t g, int64_t j) const {
  const uint8_t* at = scales(p, g);
  if (f16Scales) {
    uint16_t h;
    std::memcpy(&h, at + j * 2, 2);
    return strata_f16_to_f32(h);
  }
  float f;
  std::memcpy(&f, at + j * 4, 4);
  return f;
}

namespace {

// The params block's common fields (B as packed fp32 or strided).
Problem decodeProblem(const int64_t* params) {
  const int64_t layout = params[STRATA_MM_B_LAYOUT];
  Problem p;
  p.m = params[STRATA_MM_M];
  p.n = params[STRATA_MM_N];
  p.k = params[STRATA_MM_K];
  p.accumulate = (params[STRATA_MM_FLAGS] & STRATA_MM_FLAG_ACCUMULATE) != 0;
  p.packed = layout == STRATA_MM_LAYOUT_PANEL_F32;
  p.batchRank = params[STRATA_MM_BATCH_RANK];
  if (p.batchRank < 0 || p.batchRank > STRATA_MM_MAX_BATCH) p.batchRank = 0;
  for (int64_t d = 0; d < STRATA_MM_MAX_BATCH; ++d) {
    p.batch[d] = params[STRATA_MM_BATCH_SIZES + d];
    p.aBatch[d] = params[STRATA_MM_A_BATCH_STRIDES + d];
    p.bBatch[d] = p.packed ? 0 : params[STRATA_MM_B_BATCH_STRIDES + d];
    p.cBatch[d] = params[STRATA_MM_C_BATCH_STRIDES + d];
  }
  p.a = paramAddress<const float>(params[STRATA_MM_A_ADDR]);
  p.am = params[STRATA_MM_A_STRIDE_M];
  p.ak = params[STRATA_MM_A_STRIDE_K];
  p.b = paramAddress<const float>(params[STRATA_MM_B_ADDR]);
  p.bk = params[STRATA_MM_B_STRIDE_K];
  p.bn = params[STRATA_MM_B_STRIDE_N];
  p.c = paramAddress<float>(params[STRATA_MM_C_ADDR]);
  p.cm = params[STRATA_MM_C_STRIDE_M];
  p.cn = params[STRATA_MM_C_STRIDE_N];
  p.startBias = paramAddress<const float>(params[STRATA_MM_BIAS]);
  return p;
}

}  // namespace

void runConvF32(strata_rt_context_t* context, const ConvColumns& columns,
                const float* packedWeight, int64_t outChannels,
                const float* bias, const float* residual, bool relu,
                float* out) {
  Problem p{};
  p.m = columns.rows();
  p.n = outChannels;
  p.k = columns.depth();
  p.accumulate = false;
  p.packed = true;
  p.batchRank = 0;
  p.a = columns.input;
  p.am = p.k;
  p.ak = 1;
  p.b = packedWeight;
  p.c = out;
  p.cm = outChannels;
  p.cn = 1;
  // A 1x1 convolution with unit strides and no padding reads its input as
  // the columns it is, in place.
  bool pointwise = true;
  for (int64_t d = 0; d < columns.spatial; ++d)
    pointwise &= columns.kernel[d] == 1 && columns.stride[d] == 1 &&
                 columns.padBegin[d] == 0 && columns.in[d] == columns.out[d];
  p.conv = pointwise ? nullptr : &columns;
  p.convolution = true;
  p.bias = bias;
  p.residual = residual;
  p.relu = relu;
  if (residual == out) {
    // Written over its residual: the product accumulates into it.
    p.residual = nullptr;
    p.accumulate = true;
  }
  run(context, p);
}

extern "C" void strataMatmulF32(strata_rt_context_t* context,
                                const int64_t* params) {
  pollCancel(context);  // before any object: a cancel skips this frame
  const int64_t layout = params[STRATA_MM_B_LAYOUT];
  if (layout != STRATA_MM_LAYOUT_STRIDED &&
      layout != STRATA_MM_LAYOUT_PANEL_F32) {
    failRunInternal(context, "strata_rt_matmul_f32: B layout", layout);
    return;
  }
  if (!checkMatmulBias(context, params,
                       "strata_rt_matmul_f32: bias with accumulate"))
    return;
  run(context, decodeProblem(params));
}

namespace {

// The params of a quantized-weight import, checked (|layout|, a group size
// >= |minGroup| and a multiple of |groupMultiple|, scales at B_SCALES, or
// none there when |scalesInB|, no zero points): false after ending the run
// when they do not hold.
bool quantizedProblem(strata_rt_context_t* context, const int64_t* params,
                      const char* import, int64_t layout, int64_t minGroup,
                      int64_t groupMultiple, Problem* p,
                      bool scalesInB = false) {
  if (params[STRATA_MM_B_LAYOUT] != layout) {
    failRunInternal(context, import, params[STRATA_MM_B_LAYOUT]);
    return false;
  }
  const int64_t group = params[STRATA_MM_GROUP_SIZE];
  if (group < minGroup || group % groupMultiple != 0 ||
      (params[STRATA_MM_B_SCALES] == 0) != scalesInB ||
      params[STRATA_MM_B_ZERO_POINTS] != 0) {
    failRunInternal(context, import, group);
    return false;
  }
  if (!checkMatmulBias(context, params, import)) return false;
  *p = decodeProblem(params);
  p->packed = true;
  for (int64_t d = 0; d < STRATA_MM_MAX_BATCH; ++d) p->bBatch[d] = 0;
  p->scales = paramAddress<const float>(params[STRATA_MM_B_SCALES]);
  p->scaleStride = ceilDiv(p->n, kW) * kW;
  p->group = group;
  return true;
}

}  // namespace

extern "C" void strataMatmulF32I8(strata_rt_context_t* context,
                                  const int64_t* params) {
  pollCancel(context);
  const bool quads =
      params[STRATA_MM_B_LAYOUT] == STRATA_MM_LAYOUT_PANEL_I8_QUADS;
  Problem p;
  if (!quantizedProblem(context, params,
                        "strata_rt_matmul_f32_i8: B layout or quantization",
                        quads ? STRATA_MM_LAYOUT_PANEL_I8_QUADS
                              : STRATA_MM_LAYOUT_PANEL_I8,
                        quads ? 16 : 1, quads ? 16 : 1, &p))
    return;
  p.int8 = true;
  if (quads) {
    const int64_t actGroup = strata_i8_activation_group(p.group);
    p.int8Quads = true;
    p.kp = ceilDiv(p.k, actGroup) * actGroup;
    p.w8 = {reinterpret_cast<const int8_t*>(p.b), p.scales,
            ceilDiv(p.k, 4) * 4, p.scaleStride, p.group, actGroup};
  }
  run(context, p);
}

extern "C" void strataMatmulF32I4(strata_rt_context_t* context,
                                  const int64_t* params) {
  pollCancel(context);
  const char* import = "strata_rt_matmul_f32_i4: B layout or quantization";
  const bool blocks =
      params[STRATA_MM_B_LAYOUT] == STRATA_MM_LAYOUT_PANEL_I4_F16_BLOCKS;
  Problem p;
  if (!quantizedProblem(context, params, import,
                        blocks ? STRATA_MM_LAYOUT_PANEL_I4_F16_BLOCKS
                               : STRATA_MM_LAYOUT_PANEL_I4_GROUPS,
                        4, 4, &p, /*scalesInB=*/blocks))
    return;
  p.kp = ceilDiv(p.k, p.group) * p.group;
  const auto* base = reinterpret_cast<const uint8_t*>(p.b);
  if (blocks) {
    const int64_t blockBytes = p.group * 16 + 64;
    const int64_t panelBytes = (p.kp / p.group) * blockBytes;
    p.w4 = {base,       base + p.group * 16, panelBytes, blockBytes,
            panelBytes, blockBytes,          p.kp,       p.group,
            true};
  } else {
    p.w4 = {base,
            reinterpret_cast<const uint8_t*>(p.scales),
            p.kp * 16,
            p.group * 16,
            kW * int64_t(sizeof(float)),
            p.scaleStride * int64_t(sizeof(float)),
            p.kp,
            p.group,
            false};
  }
  p.int4 = true;
  run(context, p);
}

// Whether the AVX-512 level includes AMX (capMatmulIsa below kAmx clears it).
std::atomic<bool> gAmxAllowed{true};

const char* matmulF32KernelSet() { return tiles().name; }

const char* matmulI4KernelSet() {
  const MatmulGemvI4Fn gemv = gemvI4ForTiles(tiles(), true);
  return gemv == kGemvI4Avx512Vnni ? "avx512vnni"
         : gemv == kGemvI4Avx2     ? "avx2"
                                   : "scalar";
}

const char* matmulI8KernelSet() {
  const MatmulGemvI8QuadsFn gemv = gemvI8QuadsForTiles(tiles());
  return gemv == kGemvI8QuadsAvx512Vnni ? "avx512vnni"
         : gemv == kGemvI8QuadsAvx2     ? "avx2"
                                        : "scalar";
}

MatmulIsa matmulIsa() {
  const MatmulTiles* t = &tiles();
  if (t == &kMatmulTilesAvx512)
    return gAmxAllowed.load(std::memory_order_relaxed) && amxPermitted()
               ? MatmulIsa::kAmx
               : MatmulIsa::kAvx512;
  if (t == &kMatmulTilesAvx2) return MatmulIsa::kAvx2;
  return MatmulIsa::kScalar;
}

bool matmulIsaNamed(const char* name, MatmulIsa* isa) {
  static constexpr struct {
    const char* name;
    MatmulIsa isa;
  } kNames[] = {{"amx", MatmulIsa::kAmx},
                {"avx512", MatmulIsa::kAvx512},
                {"avx2", MatmulIsa::kAvx2},
                {"scalar", MatmulIsa::kScalar}};
  for (const auto& known : kNames) {
    if (name && !std::strcmp(name, known.name)) {
      *isa = known.isa;
      return true;
    }
  }
  return false;
}

void capMatmulIsa(MatmulIsa isa) {
  const MatmulTiles* t = detectTiles();
  if (isa == MatmulIsa::kScalar) t = &kScalarTiles;
  if (isa == MatmulIsa::kAvx2 && t == &kMatmulTilesAvx512)
    t = &kMatmulTilesAvx2;
  gAmxAllowed.store(isa == MatmulIsa::kAmx, std::memory_order_relaxed);
  gTiles.store(t, std::memory_order_release);
}

}  // namespace strata::runtime::kernels
