//===- amx_tiles.cc - The tile configuration of the AMX kernels -----------===//
// SPDX-License-Identifier: Apache-2.0
// Built with AMX flags; called only where amxPermitted().

#include <immintrin.h>

#include <cstdint>

#include "amx.h"

namespace strata::runtime::kernels {
namespace {

// The 64-byte operand of ldtilecfg (Intel SDM, LDTILECFG).
struct alignas(64) TileConfig {
  uint8_t palette;
  uint8_t startRow;
  uint8_t reserved[14];
  uint16_t bytesPerRow[16];
  uint8_t rows[16];
};
static_assert(sizeof(TileConfig) == 64);

constexpr TileConfig makeConfig() {
  TileConfig config{};
  config.palette = 1;
  for (int t = 0; t < 8; ++t) {
    config.bytesPerRow[t] = 64;
    config.rows[t] = 16;
  }
  return config;
}

// A constant in memory: GCC 12 does not see ldtilecfg's builtin read its
// operand and drops the stores that would build a local one.
constexpr TileConfig kConfig = makeConfig();

}  // namespace

void configureAmxTiles() { _tile_loadconfig(&kConfig); }

void releaseAmxTiles() { _tile_release(); }

}  // namespace strata::runtime::kernels
