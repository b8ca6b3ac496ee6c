//===- attention_kv_impl.h - Compressed-KV kernels, one ISA per TU --------===//
// SPDX-License-Identifier: Apache-2.0
// Included by exactly one translation unit per ISA, inside an anonymous
// namespace, after defining the vector traits `Vec` (load, store, set1,
// zero, fma, add, sum, maxOf, loadKv for int8 and bf16, and the
// quantizer's abs, maxKeep, notFinite, storeQuantized, storeBf16). Nothing
// here may use std:: templates or libm: an inline function instantiated in
// an AVX-512 unit could be picked by the linker for callers without
// AVX-512.

// Scalar widening for the tails (bf16: the bits are the top half of fp32).
inline float widen(float x) { return x; }
inline float widen(int8_t x) { return static_cast<float>(x); }
inline float widen(uint16_t x) {
  const uint32_t bits = static_cast<uint32_t>(x) << 16;
  float f;
  __builtin_memcpy(&f, &bits, sizeof(f));
  return f;
}

// Pulls the rows of a list of runs (KvRun or KeyRun) toward L2
// kRunsAheadBytes ahead of the row being read, one row's lines for each
// row read (prefetcht2): the hardware prefetcher does not cross a 4 KB
// page, and starts cold at each, while a run is a paged cache's block (a
// page or less at a place of its own) or a slot's rows (a run of pages).
// Shuffled 4 KB blocks read by 2 threads (AMD EPYC Zen 4, medians of 25
// interleaved runs): 20 GB/s left to the hardware, 30-35 GB/s fetched 8 KB
// ahead, one long stream 26 GB/s in the same run
// (docs/design/cpu-attention.md).
constexpr int64_t kRunsAheadBytes = 8192;

template <typename Run>
struct RunsAhead {
  const Run* run;
  int64_t runs, r = 0, kk = 0, rowBytes, lines;

  RunsAhead(const Run* run, int64_t runs, int64_t n, int64_t bk,
            int64_t elementBytes)
      : run(run), runs(runs), rowBytes(bk * elementBytes),
        lines((n * elementBytes + 63) / 64) {
    // The first rows at once, then one row per row read.
    if (runs <= 0) return;
    int64_t ahead = rowBytes > 0 ? kRunsAheadBytes / rowBytes : 0;
    for (ahead = ahead > 1 ? ahead : 1; ahead > 0; --ahead) step();
  }

  void step() {
    if (r >= runs) return;
    const char* row = static_cast<const char*>(run[r].rows) + kk * rowBytes;
    for (int64_t line = 0; line < lines; ++line)
      __builtin_prefetch(row + line * 64, 0, 1);
    if (kk == 0 && run[r].scales) __builtin_prefetch(run[r].scales, 0, 1);
    if (++kk >= run[r].count) {
      ++r;
      kk = 0;
    }
  }
};

// c[j] = (scales ? scales[j * ss] : 1) * dot(a, row j), four rows at a
// time (four independent FMA chains share each load of a); with |ahead|,
// one row pulled ahead for each row read.
template <typename T>
inline void dotRows(int64_t k, int64_t n, const float* a, const T* b,
                    int64_t bn, const float* scales, int64_t ss, float* c,
                    RunsAhead<KeyRun>* ahead = nullptr) {
  constexpr int L = Vec::kLanes;
  constexpr int NC = 4;
  const int64_t kv = k / L * L;
  int64_t j = 0;
  for (; j + NC <= n; j += NC) {
    if (ahead)
      for (int q = 0; q < NC; ++q) ahead->step();
    typename Vec::V acc[NC];
#pragma GCC unroll 4
    for (int q = 0; q < NC; ++q) acc[q] = Vec::zero();
    const T* col = b + j * bn;
    for (int64_t kk = 0; kk < kv; kk += L) {
      typename Vec::V av = Vec::load(a + kk);
#pragma GCC unroll 4
      for (int q = 0; q < NC; ++q)
        acc[q] = Vec::fma(av, Vec::loadKv(col + q * bn + kk), acc[q]);
    }
#pragma GCC unroll 4
    for (int q = 0; q < NC; ++q) {
      float sum = Vec::sum(acc[q]);
      for (int64_t kk = kv; kk < k; ++kk)
        sum += a[kk] * widen(col[q * bn + kk]);
      c[j + q] = scales ? sum * scales[(j + q) * ss] : sum;
    }
  }
  for (; j < n; ++j) {
    if (ahead) ahead->step();
    typename Vec::V acc = Vec::zero();
    const T* col = b + j * bn;
    for (int64_t kk = 0; kk < kv; kk += L)
      acc = Vec::fma(Vec::load(a + kk), Vec::loadKv(col + kk), acc);
    float sum = Vec::sum(acc);
    for (int64_t kk = kv; kk < k; ++kk) sum += a[kk] * widen(col[kk]);
    c[j] = scales ? sum * scales[j * ss] : sum;
  }
}

// c[0..n) = sum_kk coef(kk) * row kk, coef(kk) = a[kk] (* scales[kk * ss]).
// Blocks of 4 vectors of columns with two accumulator sets over even and
// odd rows, so that eight FMAs are in flight.
template <typename T>
inline void axpyRows(int64_t k, int64_t n, const float* a, const T* b,
                     int64_t bk, const float* scales, int64_t ss, float* c) {
  constexpr int L = Vec::kLanes;
  constexpr int NV = 4;
  const auto coef = [&](int64_t kk) {
    return scales ? a[kk] * scales[kk * ss] : a[kk];
  };
  int64_t j0 = 0;
  for (; j0 + NV * L <= n; j0 += NV * L) {
    typename Vec::V even[NV], odd[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) even[v] = odd[v] = Vec::zero();
    const T* col = b + j0;
    int64_t kk = 0;
    for (; kk + 2 <= k; kk += 2) {
      typename Vec::V a0 = Vec::set1(coef(kk));
      typename Vec::V a1 = Vec::set1(coef(kk + 1));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        even[v] = Vec::fma(a0, Vec::loadKv(col + kk * bk + v * L), even[v]);
        odd[v] = Vec::fma(a1, Vec::loadKv(col + (kk + 1) * bk + v * L), odd[v]);
      }
    }
    if (kk < k) {
      typename Vec::V a0 = Vec::set1(coef(kk));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        even[v] = Vec::fma(a0, Vec::loadKv(col + kk * bk + v * L), even[v]);
    }
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      Vec::store(c + j0 + v * L, Vec::add(even[v], odd[v]));
  }
  for (; j0 + L <= n; j0 += L) {
    typename Vec::V acc = Vec::zero();
    for (int64_t kk = 0; kk < k; ++kk)
      acc = Vec::fma(Vec::set1(coef(kk)), Vec::loadKv(b + kk * bk + j0), acc);
    Vec::store(c + j0, acc);
  }
  for (; j0 < n; ++j0) {
    float acc = 0.0f;
    for (int64_t kk = 0; kk < k; ++kk) acc += coef(kk) * widen(b[kk * bk + j0]);
    c[j0] = acc;
  }
}

// Row kk of |run|'s probability, times its int8 scale if it has one.
inline float runCoef(const KvRun& run, int64_t kk, int64_t ss) {
  return run.scales ? run.probs[kk] * run.scales[kk * ss] : run.probs[kk];
}

// axpyRows over runs of rows, the accumulators kept across runs: one
// block of NV vectors of columns at a time, every run through it; the
// first block's pass pulls the rows ahead (RunsAhead), the later ones find
// them in L2.
template <typename T>
inline void axpyRuns(int64_t runs, const KvRun* run, int64_t n, int64_t bk,
                     int64_t ss, float* c, bool fetchAhead) {
  constexpr int L = Vec::kLanes;
  constexpr int NV = 4;
  RunsAhead<KvRun> ahead(run, fetchAhead && n >= NV * L ? runs : 0, n, bk,
                         sizeof(T));
  int64_t j0 = 0;
  for (; j0 + NV * L <= n; j0 += NV * L) {
    // Two sets over a run's even and odd rows: eight FMA chains in flight
    // (four cover the latency of AVX-512's one FMA a cycle, not of AVX2's
    // two).
    typename Vec::V even[NV], odd[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) even[v] = odd[v] = Vec::zero();
    for (int64_t r = 0; r < runs; ++r) {
      const T* col = static_cast<const T*>(run[r].rows) + j0;
      const int64_t count = run[r].count;
      int64_t kk = 0;
      for (; kk + 2 <= count; kk += 2) {
        ahead.step();
        ahead.step();
        const typename Vec::V c0 = Vec::set1(runCoef(run[r], kk, ss));
        const typename Vec::V c1 = Vec::set1(runCoef(run[r], kk + 1, ss));
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
          even[v] = Vec::fma(c0, Vec::loadKv(col + kk * bk + v * L), even[v]);
          odd[v] =
              Vec::fma(c1, Vec::loadKv(col + (kk + 1) * bk + v * L), odd[v]);
        }
      }
      if (kk < count) {
        ahead.step();
        const typename Vec::V c0 = Vec::set1(runCoef(run[r], kk, ss));
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
          even[v] = Vec::fma(c0, Vec::loadKv(col + kk * bk + v * L), even[v]);
      }
    }
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      Vec::store(c + j0 + v * L, Vec::add(even[v], odd[v]));
  }
  for (; j0 + L <= n; j0 += L) {
    typename Vec::V acc = Vec::zero();
    for (int64_t r = 0; r < runs; ++r) {
      const T* col = static_cast<const T*>(run[r].rows) + j0;
      for (int64_t kk = 0; kk < run[r].count; ++kk)
        acc = Vec::fma(Vec::set1(runCoef(run[r], kk, ss)),
                       Vec::loadKv(col + kk * bk), acc);
    }
    Vec::store(c + j0, acc);
  }
  for (; j0 < n; ++j0) {
    float acc = 0.0f;
    for (int64_t r = 0; r < runs; ++r) {
      const T* col = static_cast<const T*>(run[r].rows) + j0;
      for (int64_t kk = 0; kk < run[r].count; ++kk)
        acc += runCoef(run[r], kk, ss) * widen(col[kk * bk]);
    }
    c[j0] = acc;
  }
}

// dotRows over runs of rows, one call for a decode row's keys.
template <typename T>
inline void dotRuns(int64_t runs, const KeyRun* run, int64_t k,
                    const float* a, int64_t bn, int64_t ss, bool fetchAhead) {
  RunsAhead<KeyRun> ahead(run, fetchAhead ? runs : 0, k, bn, sizeof(T));
  for (int64_t r = 0; r < runs; ++r)
    dotRows(k, run[r].count, a, static_cast<const T*>(run[r].rows), bn,
            run[r].scales, ss, run[r].scores, fetchAhead ? &ahead : nullptr);
}

void dotRunsF32(int64_t runs, const KeyRun* run, int64_t k, const float* a,
                int64_t bn, bool fetchAhead) {
  dotRuns<float>(runs, run, k, a, bn, 0, fetchAhead);
}

void dotRunsI8(int64_t runs, const KeyRun* run, int64_t k, const float* a,
               int64_t bn, int64_t ss, bool fetchAhead) {
  dotRuns<int8_t>(runs, run, k, a, bn, ss, fetchAhead);
}

void dotRunsBf16(int64_t runs, const KeyRun* run, int64_t k, const float* a,
                 int64_t bn, bool fetchAhead) {
  dotRuns<uint16_t>(runs, run, k, a, bn, 0, fetchAhead);
}

void axpyRunsF32(int64_t runs, const KvRun* run, int64_t n, int64_t bk,
                 float* c, bool fetchAhead) {
  axpyRuns<float>(runs, run, n, bk, 0, c, fetchAhead);
}

void axpyRunsI8(int64_t runs, const KvRun* run, int64_t n, int64_t bk,
                int64_t ss, float* c, bool fetchAhead) {
  axpyRuns<int8_t>(runs, run, n, bk, ss, c, fetchAhead);
}

void axpyRunsBf16(int64_t runs, const KvRun* run, int64_t n, int64_t bk,
                  float* c, bool fetchAhead) {
  axpyRuns<uint16_t>(runs, run, n, bk, 0, c, fetchAhead);
}

void dotI8(int64_t k, int64_t n, const float* a, const int8_t* b, int64_t bn,
           const float* scales, int64_t ss, float* c) {
  dotRows(k, n, a, b, bn, scales, ss, c);
}

void axpyI8(int64_t k, int64_t n, const float* a, const int8_t* b, int64_t bk,
            const float* scales, int64_t ss, float* c) {
  axpyRows(k, n, a, b, bk, scales, ss, c);
}

void dotBf16(int64_t k, int64_t n, const float* a, const uint16_t* b,
             int64_t bn, float* c) {
  dotRows(k, n, a, b, bn, nullptr, 0, c);
}

void axpyBf16(int64_t k, int64_t n, const float* a, const uint16_t* b,
              int64_t bk, float* c) {
  axpyRows(k, n, a, b, bk, nullptr, 0, c);
}

// The reference's arithmetic on one element (kvQuantizeI8Reference): a NaN
// is dropped after the clamps, which compare false for it.
inline int8_t quantizeOne(float x, float inv) {
  float y = x * inv;
  y = y > 127.0f ? 127.0f : y;
  y = y < -127.0f ? -127.0f : y;
  y = y == y ? y : 0.0f;
  return static_cast<int8_t>(static_cast<int>(y + (y >= 0.0f ? 0.5f : -0.5f)));
}

void quantizeI8(int64_t d, const float* x, int8_t* q, float* scale) {
  constexpr int L = Vec::kLanes;
  typename Vec::V amaxV = Vec::zero();
  bool nonFinite = false;
  int64_t e = 0;
  for (; e + L <= d; e += L) {
    const typename Vec::V ax = Vec::abs(Vec::load(x + e));
    nonFinite |= Vec::notFinite(ax);
    amaxV = Vec::maxKeep(amaxV, ax);
  }
  float amax = Vec::maxOf(amaxV);
  for (; e < d; ++e) {
    const float ax = __builtin_fabsf(x[e]);
    nonFinite |= !(ax <= 3.40282347e38f);
    amax = ax > amax ? ax : amax;
  }
  const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  const typename Vec::V invV = Vec::set1(inv);
  for (e = 0; e + L <= d; e += L)
    Vec::storeQuantized(q + e, Vec::load(x + e), invV);
  for (; e < d; ++e) q[e] = quantizeOne(x[e], inv);
  *scale = nonFinite ? __builtin_inff() : amax / 127.0f;
}

// strata_f32_to_bf16 of one value, in the integer operations the vector
// form uses.
inline uint16_t toBf16One(float x) {
  uint32_t u;
  __builtin_memcpy(&u, &x, sizeof(u));
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);
  if ((u & 0x7f800000u) == 0) return static_cast<uint16_t>((u >> 16) & 0x8000u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

void toBf16(int64_t d, const float* x, uint16_t* y) {
  constexpr int L = Vec::kLanes;
  int64_t e = 0;
  for (; e + L <= d; e += L) Vec::storeBf16(y + e, Vec::load(x + e));
  for (; e < d; ++e) y[e] = toBf16One(x[e]);
}
