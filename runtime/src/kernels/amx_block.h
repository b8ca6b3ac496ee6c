//===- amx_block.h - The 32 x 32 tile block of the AMX kernels -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// What the AMX units share (matmul_bf16_amx.cc, matmul_w8a8_amx.cc,
// attention_amx.cc; include it only there, each built with AMX-TILE,
// AMX-BF16 and AMX-INT8): a 32 x 32 block of C in four 16 x 16 accumulator
// tiles (tmm0-3: rows 0-15 then 16-31, columns 0-15 then 16-31), per step
// two A tiles (tmm4-5: 16 rows x 64 bytes of k) and two B tiles (tmm6-7:
// 16 pair or quad rows of 16 columns, 128 bytes a row as a 32-column panel
// lays them out, columns 16-31 at +64 bytes). With one row tile (rows
// <= 16) only tmm0, tmm1 and tmm4 are used. Static functions: each unit
// keeps its own copy, compiled with its own flags.

#ifndef STRATA_RUNTIME_SRC_KERNELS_AMX_BLOCK_H_
#define STRATA_RUNTIME_SRC_KERNELS_AMX_BLOCK_H_

#include <immintrin.h>

#include <cstdint>

namespace strata::runtime::kernels {

/// Bytes of one pair (bf16) or quad (int8) row of a 32-column panel.
constexpr int64_t kAmxPanelRowBytes = 128;

/// The product of one step: bf16 pairs into fp32 (tdpbf16ps) or u8 x s8
/// quads into int32 (tdpbusd).
enum class AmxProduct { kBf16, kInt8 };

/// Zeroes the accumulators.
template <bool kTwoRowTiles>
static inline void amxZeroBlock() {
  _tile_zero(0);
  _tile_zero(1);
  if (kTwoRowTiles) {
    _tile_zero(2);
    _tile_zero(3);
  }
}

/// Loads the accumulators from |c|, |stride| bytes a row (4-byte elements).
template <bool kTwoRowTiles>
static inline void amxLoadBlock(const void* c, int64_t stride) {
  const uint8_t* p = static_cast<const uint8_t*>(c);
  _tile_loadd(0, p, stride);
  _tile_loadd(1, p + 64, stride);
  if (kTwoRowTiles) {
    _tile_loadd(2, p + 16 * stride, stride);
    _tile_loadd(3, p + 16 * stride + 64, stride);
  }
}

/// Stores the accumulators to |c|, |stride| bytes a row.
template <bool kTwoRowTiles>
static inline void amxStoreBlock(void* c, int64_t stride) {
  uint8_t* p = static_cast<uint8_t*>(c);
  _tile_stored(0, p, stride);
  _tile_stored(1, p + 64, stride);
  if (kTwoRowTiles) {
    _tile_stored(2, p + 16 * stride, stride);
    _tile_stored(3, p + 16 * stride + 64, stride);
  }
}

/// One step: A rows at |a| (|aStride| bytes apart; the second row tile 16
/// rows on), B pair or quad rows at |b| (kAmxPanelRowBytes apart).
template <AmxProduct kProduct, bool kTwoRowTiles>
static inline void amxStep(const void* a, int64_t aStride, const void* b) {
  const uint8_t* pa = static_cast<const uint8_t*>(a);
  const uint8_t* pb = static_cast<const uint8_t*>(b);
  _tile_loadd(4, pa, aStride);
  _tile_loadd(6, pb, kAmxPanelRowBytes);
  _tile_loadd(7, pb + 64, kAmxPanelRowBytes);
  if constexpr (kProduct == AmxProduct::kBf16) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
  } else {
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
  }
  if (kTwoRowTiles) {
    _tile_loadd(5, pa + 16 * aStride, aStride);
    if constexpr (kProduct == AmxProduct::kBf16) {
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    } else {
      _tile_dpbusd(2, 5, 6);
      _tile_dpbusd(3, 5, 7);
    }
  }
}

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_AMX_BLOCK_H_
