//===- matmul_w8a8_kernels.h - Per-ISA kernels of the W8A8 matmul ---------===//
// SPDX-License-Identifier: Apache-2.0
// The inner pieces of strata_rt_matmul_f32_w8a8, one set per ISA, each in
// its own translation unit built with that ISA's flags
// (matmul_w8a8_avx512vnni.cc, matmul_w8a8_avx2.cc; the scalar set is in the
// driver, matmul_w8a8.cc, which picks a set from the CPU's features).
// Declarations only: an inline function defined here and compiled into an
// AVX-512 unit could be the copy the linker keeps for every caller.
//
// Quantized A is kept in row tiles of |mr| rows (the set's register tile)
// of qa(i, k) + L + 1 (the unsigned operand of vpdpbusd, tdpbusd and
// vpmaddubsw), L the set's |levels|, rows past M and k past K holding
// L + 1 (qa = 0), in the set's layout (w8a8QuadOffset): interleaved by
// quads of k for the vector sets (a row's quad is one broadcast), in rows
// per k block for AMX (a tile row is 64 contiguous bytes of k). The VNNI
// and AMX sets quantize to L = 127, as the ABI header defines, and arrive
// at the same int32 dot products, so their outputs agree bit for bit. The
// AVX2 set quantizes to L = 63: vpmaddubsw adds each pair of u8 x s8
// products in saturating int16, and only with A below 128 (2 * 127 * 127)
// is that sum exact.

#ifndef STRATA_RUNTIME_SRC_KERNELS_MATMUL_W8A8_KERNELS_H_
#define STRATA_RUNTIME_SRC_KERNELS_MATMUL_W8A8_KERNELS_H_

#include <cstdint>

namespace strata::runtime::kernels {

/// k per block of the driver (a multiple of 64, whole AMX steps): a 24 KB
/// panel slice stays in L1 while the row tiles stream past it.
constexpr int64_t kW8A8Kc = 768;

enum class W8A8ALayout {
  kQuads,      // byte (t * mr + i) * 4 + j holds k = 4t + j of row i
  kRowBlocks,  // k block b at b * kW8A8Kc * mr, its rows kc_b bytes apart
};

/// Byte offset in an A tile of |mr| rows (|kp| k) of quad |t| of row |i|.
/// Static: each unit keeps its own copy, compiled with its own flags.
static inline int64_t w8a8QuadOffset(W8A8ALayout layout, int64_t mr,
                                     int64_t kp, int64_t i, int64_t t) {
  if (layout == W8A8ALayout::kQuads) return (t * mr + i) * 4;
  const int64_t k = t * 4, k0 = k / kW8A8Kc * kW8A8Kc;
  const int64_t kc = kp - k0 < kW8A8Kc ? kp - k0 : kW8A8Kc;
  return k0 * mr + i * kc + (k - k0);
}

/// Where and how a register tile's final sums become C:
///   C(i, j) = dot(i, j) * (aScale[i] * bScale[j])  (+ C(i, j) if loadC)
/// in fp32 (one fused multiply-add when accumulating), with
/// dot = int32 sum - corrections[j], corrections the panel's (L + 1) *
/// column sums of B (the offset of A taken back out).
struct W8A8Epilogue {
  const float* aScale;  // the tile's rows
  const float* bScale;  // the panel's 32 columns
  const int32_t* corrections;
  float* c;  // row i at c + i * ldc, 32 contiguous columns
  int64_t ldc;
  bool loadC;
};

/// One register tile: int32 sums of |rows| (1..mr) rows of a quantized A
/// tile slice |a| (|quads| quads of k) times one PANEL_I8_QUADS panel slice
/// |b| (128 bytes per quad). Starts from |acc| (rows x 32 int32) if
/// |loadAcc|, else from 0; ends in |acc| when |epilogue| is null (a k block
/// that is not the last), else writes C through |epilogue|.
using W8A8TileFn = void (*)(int64_t rows, int64_t quads, const uint8_t* a,
                            const int8_t* b, int32_t* acc, bool loadAcc,
                            const W8A8Epilogue* epilogue);

/// Quantizes |rows| (1..mr) rows of fp32 A (row i, element k at
/// a[i * am + k * ak]) of |k| elements into one A tile of |kp| (k rounded
/// up to 4) quantized columns, as strata_rt_matmul_f32_w8a8 defines, and
/// writes each row's scale to scale[i]; rows past |rows| get qa = 0 and
/// scale 0.
using W8A8QuantizeFn = void (*)(int64_t rows, int64_t k, int64_t kp,
                                const float* a, int64_t am, int64_t ak,
                                uint8_t* tile, float* scale);

/// corrections[p * 32 + j] = (L + 1) * sum_k q(k, 32p + j) (modulo 2^32)
/// over |panels| whole PANEL_I8_QUADS panels of |kp| rows starting at |b|.
using W8A8CorrectionsFn = void (*)(int64_t panels, int64_t kp, const int8_t* b,
                                   int32_t* corrections);

/// The reference W8A8QuantizeFn for tiles of |mr| rows (any strides) in
/// |layout| to |levels| (127 or 63), which the vector sets match bit for
/// bit: a_scale = absmax / L, qa = clamp(A * (L / absmax), -L, L) rounded
/// half away from zero, stored as qa + L + 1.
void quantizeW8A8Rows(W8A8ALayout layout, int64_t mr, int64_t rows, int64_t k,
                      int64_t kp, const float* a, int64_t am, int64_t ak,
                      uint8_t* tile, float* scale, int32_t levels = 127);

/// The reference W8A8CorrectionsFn for an offset of |levels| + 1.
void w8a8Corrections(int64_t panels, int64_t kp, const int8_t* b,
                     int32_t* corrections, int32_t levels);

/// The same with AVX-512 F/BW (matmul_w8a8_avx512vnni.cc), for the
/// AVX-512 VNNI and AMX sets.
void quantizeW8A8RowsAvx512(W8A8ALayout layout, int64_t mr, int64_t rows,
                            int64_t k, int64_t kp, const float* a, int64_t am,
                            int64_t ak, uint8_t* tile, float* scale);

/// The W8A8CorrectionsFn with AVX-512 VNNI (the VNNI and AMX sets').
void w8a8CorrectionsAvx512Vnni(int64_t panels, int64_t kp, const int8_t* b,
                               int32_t* corrections);

/// Writes C from int32 sums (|rows| rows of 32, 32 apart) through
/// |epilogue| as the W8A8TileFn does, with AVX-512 F (the AMX set's).
void applyW8A8EpilogueAvx512(int64_t rows, const int32_t* sums,
                             const W8A8Epilogue& epilogue);

/// Brackets a task's tile calls (configures AMX tiles, then releases
/// them); null for the sets that need nothing.
using W8A8TaskFn = void (*)();

struct W8A8Kernels {
  const char* name;
  int64_t mr;  // rows per register tile (and per quantized A tile)
  int32_t levels;  // L: A quantized to [-L, L]
  W8A8TileFn tile;
  W8A8QuantizeFn quantize;
  W8A8CorrectionsFn corrections;
  W8A8TaskFn beginTask, endTask;
};

/// With AMX-INT8 tiles (tdpbusd), with AVX-512 F/BW/VNNI (vpdpbusd) and
/// with AVX2 (vpmaddubsw, A to 7 bits).
extern const W8A8Kernels kW8A8Amx;
extern const W8A8Kernels kW8A8Avx512Vnni;
extern const W8A8Kernels kW8A8Avx2;

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_MATMUL_W8A8_KERNELS_H_
