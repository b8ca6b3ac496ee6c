//===- amx.h - Whether this process may use AMX tiles ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// AMX (tdpbf16ps, tdpbusd) needs the CPU's AMX-TILE, AMX-BF16 and AMX-INT8,
// the operating system's tile state enabled (XCR0), and on Linux a grant of
// tile data to the process (arch_prctl ARCH_REQ_XCOMP_PERM): without the
// grant the first tile instruction raises SIGILL. The grant is requested
// once, the first time the question is asked (session creation asks it),
// and the answer kept; when it is no, the bf16 and W8A8 matmuls use the
// AVX-512 or AVX2 sets and strata_cpu_amx_status says why.

#ifndef STRATA_RUNTIME_SRC_KERNELS_AMX_H_
#define STRATA_RUNTIME_SRC_KERNELS_AMX_H_

namespace strata::runtime::kernels {

/// True when AMX tiles may be used in this process (asks Linux once).
bool amxPermitted();

/// Why AMX may not be used ("" when it may): no AMX on this CPU, tile state
/// disabled by the OS, or the grant refused (with the error).
const char* amxUnavailableReason();

/// For tests: from now on answer as if Linux had refused the grant (|refuse|
/// true), or answer as the host does (false).
void simulateAmxRefusalForTesting(bool refuse);

/// Loads the one tile configuration every AMX kernel uses (palette 1, the
/// eight tiles of 16 rows x 64 bytes) on the calling thread; release() puts
/// the tiles back in their initial state, so that a context switch does not
/// save 8 KB of tile data. Each matmul task brackets its tile work with the
/// two: another library on the same thread may configure tiles its way.
/// Defined in amx_tiles.cc, built with AMX flags; call only when
/// amxPermitted().
void configureAmxTiles();
void releaseAmxTiles();

/// GCC's tile load and store intrinsics are asm statements that do not say
/// they touch memory: around them, the compiler may drop or move plain
/// stores to a buffer a tile then loads, or plain reads of one a tile
/// stored. Call this with the buffer between the two kinds of access.
static inline void amxMemoryFence(const void* buffer) {
  asm volatile("" : : "r"(buffer) : "memory");
}

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_AMX_H_
