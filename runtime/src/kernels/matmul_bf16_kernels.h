//===- matmul_bf16_kernels.h - Per-ISA kernels of the bf16 matmul ---------===//
// SPDX-License-Identifier: Apache-2.0
// The inner pieces of strata_rt_matmul_f32_bf16, one set per ISA, each in
// its own translation unit built with that ISA's flags
// (matmul_bf16_avx512bf16.cc, matmul_bf16_avx2.cc; the scalar set is in the
// driver, matmul_bf16.cc, which picks a set from the CPU's features).
// Declarations only: an inline function defined here and compiled into an
// AVX-512 unit could be the copy the linker keeps for every caller.
//
// A, rounded to bf16, is kept in row tiles of |mr| rows (the set's register
// tile), each cut into k blocks of the set's |kBlock| with the rows of a
// block at a fixed distance, so that a tile's broadcasts (or tile loads)
// sit at fixed offsets and a row converts with whole-vector stores. Element
// (i, k) of a tile is, by the set's |aFormat|, at index
//   (k / kBlock) * mr * kBlock + i * kBlock + k % kBlock
// of uint16 (kPairs: bf16 bits, a pair of k in one 32-bit lane, the
// operand of vdpbf16ps) or of float (kWidened: the bf16 value widened, so
// that FMA kernels broadcast it directly). Rows past M and k in [K, Kp)
// hold 0; in the kPairs format so does the rest of the last 32 k at least
// (AMX's tail step reads a whole 32 k of A); the rest of the last block is
// never read. Every set adds the same
// exact products in the same order (the ABI header's), so the outputs agree bit
// for bit (up to AVX512-BF16's flushing of values below 2^-126); the AMX
// set adds them in the tile unit's order.

#ifndef STRATA_RUNTIME_SRC_KERNELS_MATMUL_BF16_KERNELS_H_
#define STRATA_RUNTIME_SRC_KERNELS_MATMUL_BF16_KERNELS_H_

#include <cstdint>

namespace strata::runtime::kernels {

/// k per block (even, a multiple of 32): a 24 KB panel slice stays in L1
/// while the row tiles stream past it.
constexpr int64_t kBf16Kc = 384;

/// With tileMajor, a task of fewer than kKCallsFromRows rows runs each
/// panel (all of K in a call) against its A tiles, prefetching the next
/// panel; a larger one each A tile against its panels in calls of the
/// set's kCall, or all of K when K is above kWholeKAbove
/// (matmul_bf16_amx.cc has the measurements).
constexpr int64_t kWholeKAbove = 1024;
constexpr int64_t kKCallsFromRows = 256;

enum class Bf16AFormat { kPairs, kWidened };

/// One register tile: C(i, j) for |rows| (1..mr) rows of an A tile from
/// the start of its k block |a| (its first |pairs| pairs of k, the set's
/// |kCall| or fewer, which may go on into the next blocks) times one
/// PANEL_BF16_PAIRS panel
/// slice |b| (64 uint16 per pair), 32 contiguous columns of row i at c + i *
/// ldc. Starts from those C values if |loadC|, else from 0, adds the products
/// of each pair (odd k first) and stores the sums back to C.
/// |prefetchBytes| at |prefetch| (the next panel's weights, or null) are
/// to be pulled toward L2 a share per step; sets without such prefetching
/// ignore them.
using Bf16TileFn = void (*)(int64_t rows, int64_t pairs, const void* a,
                            const uint16_t* b, float* c, int64_t ldc,
                            bool loadC, const uint8_t* prefetch,
                            int64_t prefetchBytes);

/// Rounds |rows| (1..mr) rows of fp32 A (row i, element k at
/// a[i * am + k * ak]) of |k| elements to bf16 (strata_f32_to_bf16) into
/// one A tile of |kp| (k rounded up to 2) columns in the set's format
/// (rows past |rows| hold 0).
using Bf16ConvertFn = void (*)(int64_t rows, int64_t k, int64_t kp,
                               const float* a, int64_t am, int64_t ak,
                               void* tile);

/// The reference Bf16ConvertFn of each format for tiles of |mr| rows in k
/// blocks of |kBlock| (any strides), which the vector sets match bit for
/// bit.
void convertBf16Pairs(int64_t mr, int64_t kBlock, int64_t rows, int64_t k,
                      int64_t kp, const float* a, int64_t am, int64_t ak,
                      uint16_t* tile);
void convertBf16Widened(int64_t mr, int64_t kBlock, int64_t rows, int64_t k,
                        int64_t kp, const float* a, int64_t am, int64_t ak,
                        float* tile);

/// convertBf16Pairs with AVX-512 F/BW/BF16 (matmul_bf16_avx512bf16.cc): for
/// the AVX512-BF16 and AMX sets (|kBlock| a multiple of 32). k past K is 0
/// up to the next multiple of 32 (whole vectors; AMX reads k 32 at a time).
void convertBf16PairsAvx512(int64_t mr, int64_t kBlock, int64_t rows,
                            int64_t k, int64_t kp, const float* a, int64_t am,
                            int64_t ak, uint16_t* tile);

/// Brackets a task's tile calls (configures AMX tiles, then releases
/// them); null for the sets that need nothing.
using Bf16TaskFn = void (*)();

struct Bf16Kernels {
  const char* name;
  int64_t mr;  // rows per register tile (and per A tile)
  Bf16AFormat aFormat;
  Bf16TileFn tile;
  Bf16ConvertFn convert;
  int64_t kBlock;  // k per block of an A tile (its layout)
  // k per |tile| call: a multiple of kBlock; with tileMajor, sometimes all
  // of K (kWholeKAbove).
  int64_t kCall;
  // Whether a task takes all of K and (with kKCallsFromRows rows or more)
  // runs each A tile against all its panels, k call by k call (the tile's
  // k slice of A stays in L1 while the panels' slices stream past), rather
  // than k block by k block each panel slice against all its A tiles (the
  // slice stays in L1 while the A tiles stream past).
  bool tileMajor;
  Bf16TaskFn beginTask, endTask;
};

/// With AMX-BF16 tiles (tdpbf16ps; the products' sums in the hardware's
/// order, so within the rounding bound of the others rather than bit for
/// bit), with AVX-512 F/BW and AVX512-BF16 (vdpbf16ps), and with AVX2 + FMA
/// (bf16 widened to fp32 in registers).
extern const Bf16Kernels kBf16Amx;
extern const Bf16Kernels kBf16Avx512Bf16;
extern const Bf16Kernels kBf16Avx2;

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_MATMUL_BF16_KERNELS_H_
