//===- matmul_f32_tile_impl.h - Register-tile kernels, one ISA per TU -----===//
// SPDX-License-Identifier: Apache-2.0
// Included by exactly one translation unit per ISA, inside an anonymous
// namespace, after defining the vector traits `Vec` (load, store, set1,
// zero, fma, lanes). Nothing here may use std:: templates: an inline
// function instantiated in an AVX-512 unit could be picked by the linker for
// callers on CPUs without AVX-512.

// C tile in MR x (32 / lanes) registers, B row loaded once per k and A
// broadcast in place (unpacked A, shared/docs/CPU-GEMM.md: the fastest
// variant on these machines).
// With kPrefetch, the k steps also pull |prefetchLines| cache lines from
// |prefetch| on toward L2 (prefetcht1), spread evenly over them, for the
// products that stream their weights from memory (matmul_f32.cc).
// With |epilogue| (a convolution's), the accumulators start from its bias
// and end with its residual and ReLU, outside the k loop.
template <int MR, bool kPrefetch = false>
inline void tileRows(int64_t kc, const float* a, int64_t lda, const float* b,
                     float* c, int64_t ldc, bool loadC,
                     const char* prefetch = nullptr,
                     int64_t prefetchLines = 0,
                     const TileEpilogue* epilogue = nullptr) {
  constexpr int L = Vec::kLanes;
  constexpr int NV = 32 / L;
  typename Vec::V acc[MR][NV];
  const float* bias = epilogue ? epilogue->bias : nullptr;
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j)
      acc[i][j] = loadC && bias ? Vec::add(Vec::load(c + i * ldc + j * L),
                                           Vec::load(bias + j * L))
                  : loadC       ? Vec::load(c + i * ldc + j * L)
                  : bias        ? Vec::load(bias + j * L)
                                : Vec::zero();
  if (epilogue) {
    for (int64_t i = 0; i < epilogue->aheadRows; ++i) {
      if (epilogue->aheadResidual) {
        const float* r = epilogue->aheadResidual + i * epilogue->ldr;
        __builtin_prefetch(r, 0, 3);
        __builtin_prefetch(r + 16, 0, 3);
      }
      if (epilogue->aheadC) {
        float* line = epilogue->aheadC + i * ldc;
        __builtin_prefetch(line, 1, 3);
        __builtin_prefetch(line + 16, 1, 3);
      }
    }
  }
  // A's k steps in |segments| runs of kc / segments, each |segmentStride|
  // floats after the one before (a convolution's tap rows read in place).
  const int64_t segments = epilogue ? epilogue->segments : 1;
  const int64_t segmentLength = kc / segments;
  int64_t owed = 0;  // prefetchLines per step, in units of 1 / kc
  for (int64_t seg = 0; seg < segments; ++seg) {
    const float* as = a + seg * (segments > 1 ? epilogue->segmentStride : 0);
    const float* bs = b + seg * segmentLength * 32;
    for (int64_t k = 0; k < segmentLength; ++k) {
      if (kPrefetch)
        for (owed += prefetchLines; owed >= kc; owed -= kc, prefetch += 64)
          __builtin_prefetch(prefetch, 0, 2);
      typename Vec::V bv[NV];
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) bv[j] = Vec::load(bs + k * 32 + j * L);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        typename Vec::V av = Vec::set1(as[i * lda + k]);
#pragma GCC unroll 8
        for (int j = 0; j < NV; ++j)
          acc[i][j] = Vec::fma(av, bv[j], acc[i][j]);
      }
    }
  }
  if (epilogue && epilogue->residual) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j)
        acc[i][j] = Vec::add(
            acc[i][j], Vec::load(epilogue->residual + i * epilogue->ldr + j * L));
  }
  if (epilogue && epilogue->relu) {
    // max(0, x) with x second keeps a NaN (maxps returns its second
    // operand when either is a NaN).
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = Vec::max(Vec::zero(), acc[i][j]);
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) Vec::store(c + i * ldc + j * L, acc[i][j]);
}

// tileRows for |rows| rows (1..MR, MR the set's register tile): the
// set's MatmulTileFn (kPrefetch false) and MatmulTileStreamFn.
template <int MR, bool kPrefetch>
inline void tileUpTo(int64_t rows, int64_t kc, const float* a, int64_t lda,
                     const float* b, float* c, int64_t ldc, bool loadC,
                     const char* prefetch, int64_t prefetchLines,
                     const TileEpilogue* epilogue = nullptr) {
  if constexpr (MR > 1) {
    if (rows < MR)
      return tileUpTo<MR - 1, kPrefetch>(rows, kc, a, lda, b, c, ldc, loadC,
                                         prefetch, prefetchLines, epilogue);
  }
  tileRows<MR, kPrefetch>(kc, a, lda, b, c, ldc, loadC, prefetch,
                          prefetchLines, epilogue);
}

// The set's MatmulTileFinishFn: tileUpTo with a convolution's epilogue,
// prefetching when given lines to.
template <int MR>
void tileFinish(int64_t rows, int64_t kc, const float* a, int64_t lda,
                const float* b, float* c, int64_t ldc, bool loadC,
                const char* prefetch, int64_t lines,
                const TileEpilogue* epilogue) {
  if (lines > 0)
    tileUpTo<MR, true>(rows, kc, a, lda, b, c, ldc, loadC, prefetch, lines,
                       epilogue);
  else
    tileUpTo<MR, false>(rows, kc, a, lda, b, c, ldc, loadC, nullptr, 0,
                        epilogue);
}

// The weight streams are left to the hardware prefetcher: a software
// prefetch of each panel 16 rows ahead measured 0-10% slower side by side
// (decode steps and cold one-row shapes, AVX-512 and AVX2, AMD EPYC).
template <int P>
inline void gemvPanels(int64_t k, const float* a, const float* b, float* c,
                       bool loadC) {
  constexpr int L = Vec::kLanes;
  constexpr int NV = 32 / L;
  const int64_t panelStride = k * 32;
  typename Vec::V acc[P][NV];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j)
      acc[p][j] = loadC ? Vec::load(c + p * 32 + j * L) : Vec::zero();
  for (int64_t kk = 0; kk < k; ++kk) {
    typename Vec::V av = Vec::set1(a[kk]);
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j)
        acc[p][j] = Vec::fma(av, Vec::load(b + p * panelStride + kk * 32 + j * L),
                             acc[p][j]);
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) Vec::store(c + p * 32 + j * L, acc[p][j]);
}

void gemv(int64_t panels, int64_t k, const float* a, const float* b,
          float* c, bool loadC) {
  int64_t p = 0;
  for (; p + 4 <= panels; p += 4)
    gemvPanels<4>(k, a, b + p * k * 32, c + p * 32, loadC);
  for (; p < panels; ++p) gemvPanels<1>(k, a, b + p * k * 32, c + p * 32, loadC);
}

// R rows against P whole panels, k steps [0, k): the gemv's loop with a
// broadcast per row, each B vector loaded once for all R rows.
template <int R, int P>
inline void gemvRowsPanels(int64_t k, const float* a, int64_t lda,
                           const float* b, int64_t panelStride, float* c,
                           int64_t ldc, bool loadC) {
  constexpr int L = Vec::kLanes;
  constexpr int NV = 32 / L;
  typename Vec::V acc[R][P][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j)
        acc[r][p][j] = loadC ? Vec::load(c + r * ldc + p * 32 + j * L)
                             : Vec::zero();
  for (int64_t kk = 0; kk < k; ++kk) {
    typename Vec::V av[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) av[r] = Vec::set1(a[r * lda + kk]);
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) {
        const typename Vec::V bv =
            Vec::load(b + p * panelStride + kk * 32 + j * L);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r)
          acc[r][p][j] = Vec::fma(av[r], bv, acc[r][p][j]);
      }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j)
        Vec::store(c + r * ldc + p * 32 + j * L, acc[r][p][j]);
}

// The set's MatmulGemvRowsFn: groups of P panels (P weight streams in
// flight, as the gemv), each in k blocks of KB whose P panel slices the
// row tiles of up to RMAX rows re-read from L2 (P * KB * 128 bytes).
template <int RMAX, int P, int64_t KB>
void gemvRowsBlocked(int64_t rows, int64_t panels, int64_t k, const float* a,
                     int64_t lda, const float* b, float* c, int64_t ldc,
                     bool loadC) {
  static_assert(RMAX >= 1 && RMAX <= 3, "row tiles of 1-3 rows");
  const int64_t panelStride = k * 32;
  for (int64_t p = 0; p < panels; p += P) {
    const bool whole = p + P <= panels;
    for (int64_t k0 = 0; k0 < k; k0 += KB) {
      const int64_t kc = k - k0 < KB ? k - k0 : KB;
      const bool load = loadC || k0 > 0;
      const float* bp = b + p * panelStride + k0 * 32;
      for (int64_t i = 0; i < rows;) {
        const float* ai = a + i * lda + k0;
        float* ci = c + i * ldc + p * 32;
        const int64_t left = rows - i;
        if (!whole) {
          // The last panels, fewer than P: one at a time.
          for (int64_t q = p; q < panels; ++q)
            gemvRowsPanels<1, 1>(kc, ai, lda, bp + (q - p) * panelStride,
                                 panelStride, ci + (q - p) * 32, ldc, load);
          i += 1;
          continue;
        }
        if constexpr (RMAX >= 3) {
          if (left >= 3) {
            gemvRowsPanels<3, P>(kc, ai, lda, bp, panelStride, ci, ldc, load);
            i += 3;
            continue;
          }
        }
        if constexpr (RMAX >= 2) {
          if (left >= 2) {
            gemvRowsPanels<2, P>(kc, ai, lda, bp, panelStride, ci, ldc, load);
            i += 2;
            continue;
          }
        }
        gemvRowsPanels<1, P>(kc, ai, lda, bp, panelStride, ci, ldc, load);
        i += 1;
      }
    }
  }
}

// One row of A against an unpacked B (decode attention: one query row per
// head against the KV cache), streamed once with no packing.

// c[j] (+)= sum_k a[k] * b[k * bk + j], j in [0, n): B rows contiguous
// (P x V). Blocks of 4 vectors of columns, two accumulator sets over even
// and odd k so that eight FMAs are in flight.
void rowTimesRows(int64_t k, int64_t n, const float* a, int64_t ak,
                  const float* b, int64_t bk, float* c, bool loadC) {
  constexpr int L = Vec::kLanes;
  constexpr int NV = 4;
  int64_t j0 = 0;
  for (; j0 + NV * L <= n; j0 += NV * L) {
    typename Vec::V even[NV], odd[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      even[v] = loadC ? Vec::load(c + j0 + v * L) : Vec::zero();
      odd[v] = Vec::zero();
    }
    const float* col = b + j0;
    int64_t kk = 0;
    for (; kk + 2 <= k; kk += 2) {
      typename Vec::V a0 = Vec::set1(a[kk * ak]);
      typename Vec::V a1 = Vec::set1(a[(kk + 1) * ak]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        even[v] = Vec::fma(a0, Vec::load(col + kk * bk + v * L), even[v]);
        odd[v] = Vec::fma(a1, Vec::load(col + (kk + 1) * bk + v * L), odd[v]);
      }
    }
    if (kk < k) {
      typename Vec::V a0 = Vec::set1(a[kk * ak]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        even[v] = Vec::fma(a0, Vec::load(col + kk * bk + v * L), even[v]);
    }
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      Vec::store(c + j0 + v * L, Vec::add(even[v], odd[v]));
  }
  for (; j0 + L <= n; j0 += L) {
    typename Vec::V acc = loadC ? Vec::load(c + j0) : Vec::zero();
    for (int64_t kk = 0; kk < k; ++kk)
      acc = Vec::fma(Vec::set1(a[kk * ak]), Vec::load(b + kk * bk + j0), acc);
    Vec::store(c + j0, acc);
  }
  for (; j0 < n; ++j0) {
    float acc = loadC ? c[j0] : 0.0f;
    for (int64_t kk = 0; kk < k; ++kk) acc += a[kk * ak] * b[kk * bk + j0];
    c[j0] = acc;
  }
}

// c[j * cn] (+)= dot(a[0..k), b[j * bn + 0..k)), j in [0, n): B columns
// contiguous over k (Q x K^T), a contiguous. Four columns at a time.
void rowDotColumns(int64_t k, int64_t n, const float* a, const float* b,
                   int64_t bn, float* c, int64_t cn, bool loadC) {
  constexpr int L = Vec::kLanes;
  constexpr int NC = 4;
  const int64_t kv = k / L * L;
  int64_t j = 0;
  for (; j + NC <= n; j += NC) {
    typename Vec::V acc[NC];
#pragma GCC unroll 4
    for (int q = 0; q < NC; ++q) acc[q] = Vec::zero();
    const float* col = b + j * bn;
    for (int64_t kk = 0; kk < kv; kk += L) {
      typename Vec::V av = Vec::load(a + kk);
#pragma GCC unroll 4
      for (int q = 0; q < NC; ++q)
        acc[q] = Vec::fma(av, Vec::load(col + q * bn + kk), acc[q]);
    }
#pragma GCC unroll 4
    for (int q = 0; q < NC; ++q) {
      float sum = Vec::sum(acc[q]);
      for (int64_t kk = kv; kk < k; ++kk) sum += a[kk] * col[q * bn + kk];
      c[(j + q) * cn] = loadC ? c[(j + q) * cn] + sum : sum;
    }
  }
  for (; j < n; ++j) {
    typename Vec::V acc = Vec::zero();
    const float* col = b + j * bn;
    for (int64_t kk = 0; kk < kv; kk += L)
      acc = Vec::fma(Vec::load(a + kk), Vec::load(col + kk), acc);
    float sum = Vec::sum(acc);
    for (int64_t kk = kv; kk < k; ++kk) sum += a[kk] * col[kk];
    c[j * cn] = loadC ? c[j * cn] + sum : sum;
  }
}

float expShifted(float* x, int64_t n, float shift) {
  constexpr int L = Vec::kLanes;
  typename Vec::V sum = Vec::zero(), s = Vec::set1(shift);
  int64_t j = 0;
  for (; j + L <= n; j += L) {
    typename Vec::V e = Vec::exp(Vec::sub(Vec::load(x + j), s));
    Vec::store(x + j, e);
    sum = Vec::add(sum, e);
  }
  float total = Vec::sum(sum);
  if (j < n) {
    // The tail through masked lanes (the others exp(-100), never stored).
    float tail[L];
    const typename Vec::V e =
        Vec::exp(Vec::sub(Vec::loadFirst(x + j, n - j, shift - 100.0f), s));
    Vec::storeFirst(x + j, e, n - j);
    Vec::store(tail, e);
    for (int64_t q = 0; j + q < n; ++q) total += tail[q];
  }
  return total;
}

float scaleMax(float* x, int64_t n, float scale, const float* mask) {
  constexpr int L = Vec::kLanes;
  const typename Vec::V s = Vec::set1(scale);
  typename Vec::V best = Vec::set1(-__builtin_inff());
  int64_t j = 0;
  for (; j + L <= n; j += L) {
    typename Vec::V v = Vec::mul(Vec::load(x + j), s);
    if (mask) v = Vec::add(v, Vec::load(mask + j));
    Vec::store(x + j, v);
    best = Vec::max(v, best);
  }
  if (j < n) {
    // The tail through the same vector operations on masked lanes (a
    // scalar multiply and add here could be contracted into an FMA, one
    // rounding fewer).
    typename Vec::V v = Vec::mul(Vec::loadFirst(x + j, n - j, 0.0f), s);
    if (mask) v = Vec::add(v, Vec::loadFirst(mask + j, n - j, 0.0f));
    Vec::storeFirst(x + j, v, n - j);
    best = Vec::max(Vec::keepFirst(v, n - j, -__builtin_inff()), best);
  }
  return Vec::maxOf(best);
}

// Weight-only int8: MR rows of A against P whole int8 panels (32 bytes per
// k), widened to fp32 in registers. Each group of |group| k rows
// accumulates unscaled into |part|, then meets its 32 column scales once:
// one scale multiply per group instead of one per weight. A narrow tile
// (one row, one panel) has too few accumulators to cover the FMA latency,
// so it sums KU interleaved k rows into KU separate sets. The weight
// streams are left to the hardware prefetcher (as in gemvPanels).

template <int MR, int P>
inline void quantTile(int64_t k, const float* a, int64_t lda,
                      const int8_t* b, const float* scales,
                      int64_t scaleStride, int64_t group, float* c,
                      int64_t ldc, bool loadC) {
  constexpr int L = Vec::kLanes;
  constexpr int NV = 32 / L;
  constexpr int kChains = MR * P * NV;
  constexpr int KU = kChains >= 8 ? 1 : 8 / kChains;
  const int64_t panelStride = k * 32;
  typename Vec::V total[MR][P][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j)
        total[i][p][j] =
            loadC ? Vec::load(c + i * ldc + p * 32 + j * L) : Vec::zero();
  // One k row into the accumulator set |part|.
  auto step = [&](int64_t kk, typename Vec::V (&part)[MR][P][NV]) {
    typename Vec::V av[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) av[i] = Vec::set1(a[i * lda + kk]);
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) {
        typename Vec::V w = Vec::loadI8(b + p * panelStride + kk * 32 + j * L);
#pragma GCC unroll 8
        for (int i = 0; i < MR; ++i)
          part[i][p][j] = Vec::fma(av[i], w, part[i][p][j]);
      }
  };
  for (int64_t g0 = 0; g0 < k; g0 += group) {
    const int64_t g1 = g0 + group < k ? g0 + group : k;
    typename Vec::V part[KU][MR][P][NV];
#pragma GCC unroll 8
    for (int u = 0; u < KU; ++u)
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
          for (int j = 0; j < NV; ++j) part[u][i][p][j] = Vec::zero();
    int64_t kk = g0;
    for (; kk + KU <= g1; kk += KU) {
#pragma GCC unroll 8
      for (int u = 0; u < KU; ++u) step(kk + u, part[u]);
    }
    for (; kk < g1; ++kk) step(kk, part[0]);
    const float* s = scales + (g0 / group) * scaleStride;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
        for (int j = 0; j < NV; ++j) {
          typename Vec::V sum = part[0][i][p][j];
#pragma GCC unroll 8
          for (int u = 1; u < KU; ++u) sum = Vec::add(sum, part[u][i][p][j]);
          total[i][p][j] =
              Vec::fma(sum, Vec::load(s + p * 32 + j * L), total[i][p][j]);
        }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j)
        Vec::store(c + i * ldc + p * 32 + j * L, total[i][p][j]);
}
