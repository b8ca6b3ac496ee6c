//===- matmul_bf16_amx.cc - bf16 register tiles on AMX (tdpbf16ps) --------===//
// SPDX-License-Identifier: Apache-2.0
// Built with AMX and AVX-512 flags and called only where amxPermitted()
// (matmul_bf16.cc). A 32 x 32 tile of C is four 16 x 16 fp32 tiles (tmm0-3);
// per 32 k, two A tiles (tmm4-5: 16 rows x 16 pairs, rows kBf16Kc apart)
// and two B tiles (tmm6-7: 16 pairs x 16 columns) feed four tdpbf16ps,
// 32768 multiply-adds in 8 instructions. The compile-time panel layout is
// already the tile layout: pair t of a 32-column panel is 128 bytes, its
// first 64 the 16 pairs of columns 0-15, so a B tile is one strided load.
// One call takes all of K (wholeK), the sums staying in the tiles across
// A's k blocks: a tile store and reload between blocks costs as much as
// the block's products. K's pairs past a multiple of 16 take one step from
// zero-padded copies (past Kp, A and B hold anything, even NaN bits).

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
constexpr int64_t kPanel = 32;                     // columns of a panel
constexpr int64_t kARowBytes = kBf16Kc * 2;        // between rows of A
constexpr int64_t kBPairBytes = kAmxPanelRowBytes;  // one pair of a panel
constexpr int64_t kStepPairs = 16;                 // k pairs per tile step

template <bool kTwoRowTiles>
void tileRows(int64_t rows, int64_t pairs, const uint16_t* a,
              const uint16_t* b, float* c, int64_t ldc, bool loadCValues) {
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
  // Whole steps, block by block (A's next k block is kMr rows of kBf16Kc
  // further on; B's pairs run on).
  constexpr int64_t kBlockPairs = kBf16Kc / 2;
  const int64_t whole = pairs / kStepPairs;
  for (int64_t s = 0; s < whole; ++s) {
    const int64_t t = s * kStepPairs;
    amxStep<AmxProduct::kBf16, kTwoRowTiles>(
        a + (t / kBlockPairs) * kMr * kBf16Kc + (t % kBlockPairs) * 2,
        kARowBytes, b + t * kPanel * 2);
  }
  if (const int64_t tail = pairs % kStepPairs) {
    alignas(64) uint16_t aTail[kRows * 2 * kStepPairs] = {};
    alignas(64) uint16_t bTail[kStepPairs * kPanel * 2] = {};
    const int64_t t = whole * kStepPairs;
    const uint16_t* a0 =
        a + (t / kBlockPairs) * kMr * kBf16Kc + (t % kBlockPairs) * 2;
    for (int64_t i = 0; i < kRows; ++i)
      std::memcpy(aTail + i * 2 * kStepPairs, a0 + i * kBf16Kc, tail * 4);
    std::memcpy(bTail, b + whole * kStepPairs * kPanel * 2,
                tail * kBPairBytes);
    amxMemoryFence(aTail);
    amxMemoryFence(bTail);
    amxStep<AmxProduct::kBf16, kTwoRowTiles>(aTail, 2 * kStepPairs * 2,
                                             bTail);
  }
  amxStoreBlock<kTwoRowTiles>(cp, ld * 4);
  amxMemoryFence(cp);
  if (!direct)
    for (int64_t i = 0; i < rows; ++i)
      std::memcpy(c + i * ldc, local + i * kPanel, kPanel * 4);
}

void tile(int64_t rows, int64_t pairs, const void* aTile, const uint16_t* b,
          float* c, int64_t ldc, bool loadC) {
  const uint16_t* a = static_cast<const uint16_t*>(aTile);
  if (rows > 16)
    tileRows<true>(rows, pairs, a, b, c, ldc, loadC);
  else
    tileRows<false>(rows, pairs, a, b, c, ldc, loadC);
}

void convert(int64_t rows, int64_t k, int64_t kp, const float* a, int64_t am,
             int64_t ak, void* tileOut) {
  convertBf16PairsAvx512(kMr, rows, k, kp, a, am, ak,
                         static_cast<uint16_t*>(tileOut));
}

}  // namespace

const Bf16Kernels kBf16Amx = {"amx-bf16", kMr,     Bf16AFormat::kPairs,
                              tile,       convert, true,
                              configureAmxTiles,
                              releaseAmxTiles};

}  // namespace strata::runtime::kernels
