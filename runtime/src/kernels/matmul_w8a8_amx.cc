//===- matmul_w8a8_amx.cc - int8 x int8 register tiles on AMX (tdpbusd) ---===//
// SPDX-License-Identifier: Apache-2.0
// Built with AMX and AVX-512 flags and called only where amxPermitted()
// (matmul_w8a8.cc). A 32 x 32 tile of int32 sums is four 16 x 16 tiles
// (tmm0-3); per 64 k, two A tiles (tmm4-5: 16 rows x 64 bytes of a k block
// kept in rows, W8A8ALayout::kRowBlocks) and two B tiles (tmm6-7: 16 quads
// x 16 columns) feed four tdpbusd, 65536 multiply-adds in 8 instructions.
// As in the bf16 set, a PANEL_I8_QUADS panel is already the tile layout
// (quad t: 128 bytes, columns 0-15 first). tdpbusd computes vpdpbusd's
// int32 sums (u8 x s8, wrapping), so the outputs are the other sets' bit
// for bit. A block whose quads are not a multiple of 16 ends with one step
// from zero-padded copies.

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#pragma GCC diagnostic ignored "-Wuninitialized"

#include "amx.h"
#include "amx_block.h"
#include "matmul_w8a8_kernels.h"

namespace strata::runtime::kernels {
namespace {

constexpr int64_t kMr = 32;
constexpr int64_t kPanel = 32;     // columns of a panel
constexpr int64_t kQuadBytes = kAmxPanelRowBytes;  // one quad of a panel
constexpr int64_t kStepQuads = 16;   // k quads per tile step
constexpr int64_t kAccRowBytes = kPanel * 4;

// |a|: the tile's k block, rows 4 * |quads| bytes apart; |acc|: mr x 32
// int32 between k blocks (the driver's per-thread scratch holds all mr
// rows, so whole tiles load and store there).
template <bool kTwoRowTiles>
void tileRows(int64_t rows, int64_t quads, const uint8_t* a, const int8_t* b,
              int32_t* acc, bool loadAcc, const W8A8Epilogue* e) {
  constexpr int64_t kRows = kTwoRowTiles ? 32 : 16;
  const int64_t aStride = quads * 4;
  amxMemoryFence(acc);
  if (loadAcc) {
    amxLoadBlock<kTwoRowTiles>(acc, kAccRowBytes);
  } else {
    amxZeroBlock<kTwoRowTiles>();
  }
  const int64_t whole = quads / kStepQuads;
  for (int64_t s = 0; s < whole; ++s)
    amxStep<AmxProduct::kInt8, kTwoRowTiles>(
        a + s * 4 * kStepQuads, aStride, b + s * kStepQuads * kQuadBytes);
  if (const int64_t tail = quads % kStepQuads) {
    alignas(64) uint8_t aTail[kRows * 4 * kStepQuads] = {};
    alignas(64) int8_t bTail[kStepQuads * kQuadBytes] = {};
    const uint8_t* a0 = a + whole * 4 * kStepQuads;
    for (int64_t i = 0; i < kRows; ++i)
      std::memcpy(aTail + i * 4 * kStepQuads, a0 + i * aStride, tail * 4);
    std::memcpy(bTail, b + whole * kStepQuads * kQuadBytes,
                tail * kQuadBytes);
    amxMemoryFence(aTail);
    amxMemoryFence(bTail);
    amxStep<AmxProduct::kInt8, kTwoRowTiles>(aTail, 4 * kStepQuads, bTail);
  }
  if (!e) {
    amxStoreBlock<kTwoRowTiles>(acc, kAccRowBytes);
    amxMemoryFence(acc);
    return;
  }
  alignas(64) int32_t sums[kRows * kPanel];
  amxStoreBlock<kTwoRowTiles>(sums, kAccRowBytes);
  amxMemoryFence(sums);
  applyW8A8EpilogueAvx512(rows, sums, *e);
}

void tile(int64_t rows, int64_t quads, const uint8_t* a, const int8_t* b,
          int32_t* acc, bool loadAcc, const W8A8Epilogue* e) {
  if (rows > 16)
    tileRows<true>(rows, quads, a, b, acc, loadAcc, e);
  else
    tileRows<false>(rows, quads, a, b, acc, loadAcc, e);
}

void quantize(int64_t rows, int64_t k, int64_t kp, const float* a, int64_t am,
              int64_t ak, uint8_t* tile, float* scale) {
  quantizeW8A8RowsAvx512(W8A8ALayout::kRowBlocks, kMr, rows, k, kp, a, am, ak,
                         tile, scale);
}

}  // namespace

const W8A8Kernels kW8A8Amx = {"amx-int8",        kMr,  127, tile, quantize,
                              w8a8CorrectionsAvx512Vnni, configureAmxTiles,
                              releaseAmxTiles};

}  // namespace strata::runtime::kernels
