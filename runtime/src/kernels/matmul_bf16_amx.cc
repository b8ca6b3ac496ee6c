//===- matmul_bf16_amx.cc - bf16 register tiles on AMX (tdpbf16ps) --------===//
// SPDX-License-Identifier: Apache-2.0
// Built with AMX and AVX-512 flags and called only where amxPermitted()
// (matmul_bf16.cc). A 32 x 32 tile of C is four 16 x 16 fp32 tiles (tmm0-3);
// per 32 k, two A tiles (tmm4-5: 16 rows x 16 pairs) and two B tiles
// (tmm6-7: 16 pairs x 16 columns) feed four tdpbf16ps, 32768 multiply-adds
// in 8 instructions. The compile-time panel layout is already the tile
// layout: pair t of a 32-column panel is 128 bytes, its first 64 the 16
// pairs of columns 0-15, so a B tile is one strided load. A is converted
// into k blocks of 32 (kBlock): the 32 rows of one step are 2 KB in a row,
// each A tile 1 KB with 64-byte rows. In a task of many rows a call takes
// kAmxKc of k (each A tile's k slices against all the task's panels, so
// the 16 KB slice stays in L1 while the panels' slices come from L2), the
// sums kept in C between calls; in one of few rows a call takes all of K
// and pulls a share of the next panel toward L2 as it goes (the driver,
// matmul_bf16.cc, picks the order). K's pairs past a multiple of 16 take one step from a zero-padded
// copy of B (past Kp, B holds anything, even NaN bits; A is 0 there).
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#pragma GCC diagnostic ignored "-Wuninitialized"

#include "amx.h"
#include "amx_block.h"
#include "matmul_bf16_kernels.h"

namespace strata::runtime::kernels {
namespace {

constexpr int64_t kMr = 32;
constexpr int64_t kPanel = 32;                      // columns of a panel
constexpr int64_t kBPairBytes = kAmxPanelRowBytes;  // one pair of a panel
constexpr int64_t kStepPairs = 16;                  // k pairs per tile step
constexpr int64_t kStepK = 2 * kStepPairs;          // k per step: A's kBlock
constexpr int64_t kARowBytes = kStepK * 2;          // between rows of A
// k per call where the driver does not give a call all of K (deeper than
// kWholeKAbove, or a task of fewer than kKCallsFromRows rows). Measured
// (strata-gemm-bench, GPT-2 shapes): with K = 768 and 512 rows, slices of
// 256 (16 KB of A in L1 against 4 panels) were 10-20% faster than all of
// K in a call (A's and B's slices both streaming from L2) on 1 thread and
// level to 5% faster on 2; with 256 rows 3% faster on 2 threads; with 128
// rows 5-15% slower on 2 threads (the B stream from L3 dominates, the
// stores and reloads of the sums between calls only add); with K = 3072,
// all of K was 10% faster (12 stores and reloads per tile against 96
// steps).
constexpr int64_t kAmxKc = 256;

template <bool kTwoRowTiles>
void tileRows(int64_t rows, int64_t pairs, const uint16_t* a,
              const uint16_t* b, float* c, int64_t ldc, bool loadCValues,
              const uint8_t* prefetch, int64_t prefetchBytes) {
  constexpr int64_t kRows = kTwoRowTiles ? 32 : 16;
  // C goes through a local copy unless all of the tile's rows are real.
  alignas(64) float local[kRows * kPanel];
  const bool direct = rows == kRows;
  float* cp = direct ? c : local;
  const int64_t ld = direct ? ldc : kPanel;
  if (loadCValues) {
    if (!direct) {
      std::memset(local, 0, sizeof local);
      for (int64_t i = 0; i < rows; ++i)
        std::memcpy(local + i * kPanel, c + i * ldc, kPanel * 4);
      amxMemoryFence(local);
    }
    amxLoadBlock<kTwoRowTiles>(cp, ld * 4);
  } else {
    amxZeroBlock<kTwoRowTiles>();
  }
  // Steps: A's next 2 KB, B's next 16 pairs; the lines to prefetch spread
  // evenly over them (a burst before the steps measured slower than none).
  const int64_t whole = pairs / kStepPairs;
  const int64_t lines = (prefetchBytes + 63) / 64;
  const int64_t linesPerStep = whole > 0 ? (lines + whole - 1) / whole : 0;
  int64_t line = 0;
  for (int64_t s = 0; s < whole; ++s) {
    for (int64_t end = line + linesPerStep; line < end && line < lines; ++line)
      _mm_prefetch(reinterpret_cast<const char*>(prefetch) + line * 64,
                   _MM_HINT_T1);
    amxStep<AmxProduct::kBf16, kTwoRowTiles>(a + s * kMr * kStepK, kARowBytes,
                                             b + s * kStepPairs * kPanel * 2);
  }
  if (const int64_t tail = pairs % kStepPairs) {
    alignas(64) uint16_t bTail[kStepPairs * kPanel * 2] = {};
    std::memcpy(bTail, b + whole * kStepPairs * kPanel * 2,
                tail * kBPairBytes);
    amxMemoryFence(bTail);
    amxStep<AmxProduct::kBf16, kTwoRowTiles>(a + whole * kMr * kStepK,
                                             kARowBytes, bTail);
  }
  amxStoreBlock<kTwoRowTiles>(cp, ld * 4);
  amxMemoryFence(cp);
  if (!direct)
    for (int64_t i = 0; i < rows; ++i)
      std::memcpy(c + i * ldc, local + i * kPanel, kPanel * 4);
}

void tile(int64_t rows, int64_t pairs, const void* aTile, const uint16_t* b,
          float* c, int64_t ldc, bool loadC, const uint8_t* prefetch,
          int64_t prefetchBytes) {
  const uint16_t* a = static_cast<const uint16_t*>(aTile);
  if (rows > 16)
    tileRows<true>(rows, pairs, a, b, c, ldc, loadC, prefetch, prefetchBytes);
  else
    tileRows<false>(rows, pairs, a, b, c, ldc, loadC, prefetch,
                    prefetchBytes);
}

void convert(int64_t rows, int64_t k, int64_t kp, const float* a, int64_t am,
             int64_t ak, void* tileOut) {
  convertBf16PairsAvx512(kMr, kStepK, rows, k, kp, a, am, ak,
                         static_cast<uint16_t*>(tileOut));
}

}  // namespace

const Bf16Kernels kBf16Amx = {
    "amx-bf16", kMr,    Bf16AFormat::kPairs, tile,
    convert,    kStepK, kAmxKc,              true,
    configureAmxTiles, releaseAmxTiles};

}  // namespace strata::runtime::kernels
