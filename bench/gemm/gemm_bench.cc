//===- gemm_bench.cc - GFLOP/s of the runtime's matmul imports ------------===//
// SPDX-License-Identifier: Apache-2.0
// Usage: strata-gemm-bench [--threads N] [--rounds 5] [--peak GFLOPS]
//                          [--shape MxKxN ...] (packed B; default: GPT-2's)
//                          [--int8] (B weight-only int8, per-column scales,
//                          in quads: int8 products on decode rows, as the
//                          compiler emits it; --int8-fp32-products: the
//                          PANEL_I8 layout, widened to fp32)
//                          [--int4] (B int4 in groups of 32, fp16 scales
//                          inside the panels; --int4-f32-scales: fp32
//                          scales apart, the other layout)
//                          [--w8a8] (B int8 per column, A int8 per row)
//                          [--bf16] (B bf16 pairs, A rounded to bf16)
//                          [--cold] (B evicted from the caches before
//                          each timed call)
//                          [--b-rows] (the --shape shapes with B not
//                          packed, read in place in rows, as a
//                          convolution's columns are)
//                          [--b-transposed] (the --shape shapes with
//                          B read as a transpose, k stride 1, as
//                          attention's K^T is)
//                          [--kernel-isa avx512|avx2|scalar] (the kernels
//                          capped below the host's best)
// Times the matmul the generated code imports on the GPT-2-small shapes,
// B pre-packed as the compiler packs weights, in rounds that take the
// shapes in turn (7 timed calls of each after a warm-up one), and prints
// the median call as GFLOP/s, % of the FMA peak (the median over the
// rounds of a round's median against the peaks probed either side of that
// round's calls; "best %": the fastest call against the highest peak
// probed) and, for M = 1, weight GB/s and, where B comes from DRAM, its %
// of the read bandwidth probed either side of the calls on the same
// threads (bench/read_bandwidth.h, the probe of the bench harness's
// roofline). The peak is measured here, with the vector width the kernels
// dispatch to and the same threads (--peak GFLOPS per core overrides it):
// a fixed figure from another host made fractions above 100%. Weight GB/s of a B that fits the last-level cache is marked
// "(cached)" (under 64 MiB: the last-level caches of the hosts measured
// hold that much; sysconf's figure is the whole socket's in a VM): it is
// not a DRAM figure; --cold reads a 256 MiB buffer before every call, so
// that B comes from DRAM as a decode step's layer weights do (each read
// once a step), and the figure is a DRAM one whatever B's size (with more
// than one thread it also times waking the others, which sleep through
// that pass). With --w8a8, int8 multiply-adds count as fp32 FLOPs
// do (2 * M * N * K) and each shape also times strata_rt_matmul_f32 on
// the packed fp32 weight and prints the ratio of the two times; --bf16
// does the same for strata_rt_matmul_f32_bf16. Their "% peak" is of the
// peak of the product their kernel set runs, measured here as the fp32
// one is, on every thread, in independent chains on registers: vpdpbusd
// (AVX-512 VNNI), vdpbf16ps (AVX512-BF16), the AVX2 int8 set's step
// (vpmaddubsw, vpmaddwd, vpaddd: 32 multiply-adds), or, where
// the kernels use AMX tiles, the tiles' own step (2 A and 2 B tiles
// loaded from L1, 4 tdpbf16ps or tdpbusd into a 32 x 32 block of C) on
// random operands; a bf16 set without bf16 instructions widens to fp32
// and is held to the FMA peak.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/read_bandwidth.h"
#include "kernels/amx.h"
#include "kernels/matmul_f32.h"
#include "run_context.h"
#include "strata_kernel_abi.h"
#include "thread_pool.h"

using namespace strata::runtime;

namespace {

// Operands at 64-byte boundaries, as a session's buffers and an
// artifact's weights are: a tile row (64 bytes) that straddles two cache
// lines made the AMX kernels twice as slow here as in a session.
template <typename T>
struct Aligned64 {
  using value_type = T;
  Aligned64() = default;
  template <typename U>
  Aligned64(const Aligned64<U>&) {}
  T* allocate(size_t n) {
    void* p = std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <typename U>
  bool operator==(const Aligned64<U>&) const { return true; }
};
template <typename T>
using Buffer = std::vector<T, Aligned64<T>>;

// Independent FMA chains per thread: enough to cover the FMA latency times
// the two FMA ports of current cores.
constexpr int kChains = 12;
constexpr long kPeakIterations = 4000000;

// The sum of every lane of the chains, returned so that the loops are
// not optimized away.
template <typename Lane, typename V>
double sumChains(const V (&acc)[kChains]) {
  double sum = 0;
  for (const V& v : acc) {
    Lane lanes[sizeof(V) / sizeof(Lane)];
    std::memcpy(lanes, &v, sizeof v);
    for (Lane l : lanes) sum += l;
  }
  return sum;
}

__attribute__((target("avx512f"))) double fmaLoop512() {
  __m512 acc[kChains];
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(float(c));
  for (long i = 0; i < kPeakIterations; ++i)
    for (int c = 0; c < kChains; ++c) {
      acc[c] = _mm512_fmadd_ps(acc[c], x, y);
    }
  return sumChains<float>(acc);
}

__attribute__((target("avx2,fma"))) double fmaLoop256() {
  __m256 acc[kChains];
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(float(c));
  for (long i = 0; i < kPeakIterations; ++i)
    for (int c = 0; c < kChains; ++c) {
      acc[c] = _mm256_fmadd_ps(acc[c], x, y);
    }
  return sumChains<float>(acc);
}

// The vector products' own steps, kChains independent chains each.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) double dpbusdLoop() {
  __m512i acc[kChains];
  __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-5);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_epi32(c);
  for (long i = 0; i < kPeakIterations; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm512_dpbusd_epi32(acc[c], x, y);
  return sumChains<int32_t>(acc);
}

__attribute__((target("avx512f,avx512bf16"))) double dpbf16Loop() {
  __m512 acc[kChains];
  const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3F80);  // bf16 1.0
  const __m512bh y = (__m512bh)_mm512_set1_epi16(0x3400);  // bf16 2^-23
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(float(c));
  for (long i = 0; i < kPeakIterations; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm512_dpbf16_ps(acc[c], x, y);
  return sumChains<float>(acc);
}

// Written in assembly: compiled from intrinsics, all the chains' products
// came first and the accumulators spilled to the stack (16 ymm
// registers), or the compiler computed products the chains shared once,
// and the loop read 6-35% below the kernel itself. 8 chains (as many
// steps in all as the other loops), 4 temporaries.
__attribute__((target("avx2"))) double maddubsLoop() {
  constexpr int kUsed = 8;
  static_assert(kChains * kPeakIterations % kUsed == 0, "whole iterations");
  __m256i c[kUsed];
  for (int i = 0; i < kUsed; ++i) c[i] = _mm256_set1_epi32(i);
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i qa = _mm256_set1_epi8(61);  // a 7-bit activation plus 64
  const __m256i w = _mm256_set1_epi8(3);
  for (long i = 0; i < kChains * kPeakIterations / kUsed; ++i)
    asm volatile(
          "vpmaddubsw %[w], %[qa], %%ymm11\n\t"
          "vpmaddwd %[ones], %%ymm11, %%ymm11\n\t"
          "vpaddd %%ymm11, %[c0], %[c0]\n\t"
          "vpmaddubsw %[w], %[qa], %%ymm12\n\t"
          "vpmaddwd %[ones], %%ymm12, %%ymm12\n\t"
          "vpaddd %%ymm12, %[c1], %[c1]\n\t"
          "vpmaddubsw %[w], %[qa], %%ymm13\n\t"
          "vpmaddwd %[ones], %%ymm13, %%ymm13\n\t"
          "vpaddd %%ymm13, %[c2], %[c2]\n\t"
          "vpmaddubsw %[w], %[qa], %%ymm14\n\t"
          "vpmaddwd %[ones], %%ymm14, %%ymm14\n\t"
          "vpaddd %%ymm14, %[c3], %[c3]\n\t"
          "vpmaddubsw %[w], %[qa], %%ymm11\n\t"
          "vpmaddwd %[ones], %%ymm11, %%ymm11\n\t"
          "vpaddd %%ymm11, %[c4], %[c4]\n\t"
          "vpmaddubsw %[w], %[qa], %%ymm12\n\t"
          "vpmaddwd %[ones], %%ymm12, %%ymm12\n\t"
          "vpaddd %%ymm12, %[c5], %[c5]\n\t"
          "vpmaddubsw %[w], %[qa], %%ymm13\n\t"
          "vpmaddwd %[ones], %%ymm13, %%ymm13\n\t"
          "vpaddd %%ymm13, %[c6], %[c6]\n\t"
          "vpmaddubsw %[w], %[qa], %%ymm14\n\t"
          "vpmaddwd %[ones], %%ymm14, %%ymm14\n\t"
          "vpaddd %%ymm14, %[c7], %[c7]\n\t"
          :[c0] "+x"(c[0]), [c1] "+x"(c[1]), [c2] "+x"(c[2]),
          [c3] "+x"(c[3]), [c4] "+x"(c[4]), [c5] "+x"(c[5]), [c6] "+x"(c[6]),
          [c7] "+x"(c[7])
        : [qa] "x"(qa), [w] "x"(w), [ones] "x"(ones)
        : "xmm11", "xmm12", "xmm13", "xmm14");
  __m256i acc[kChains];
  for (int i = 0; i < kChains; ++i)
    acc[i] = i < kUsed ? c[i] : _mm256_setzero_si256();
  return sumChains<int32_t>(acc);
}

constexpr long kTileIterations = 200000;

// The tile unit's throughput as the kernels drive it: four accumulator
// tiles (a 32 x 32 block of C), per step two A and two B tiles loaded and
// four products, on random operands, not fixed or zero ones: with
// operands that do not change, the same instructions ran about 1.5 times
// faster (measured), which no real product sees. A holds |aSteps| steps
// (32 rows of 64 bytes each) and B |bSteps| (2 KB each); step s reads A's
// step s % aSteps and B's step s.
// - The tile peak: 12 steps of each, 36 KB, from L1.
// - "With B from L2": A's 16 KB (8 steps, a k call of the bf16 kernel)
//   stay in L1 while B walks 512 KB, as the kernels' tasks stream a panel
//   block: the bound of a blocking that loads one operand of each step
//   from L2.
constexpr int kProbeSteps = 12;
constexpr int kL2ASteps = 8;
constexpr int kL2BSteps = 256;

__attribute__((target("amx-tile,amx-bf16,amx-int8"))) double tileLoop(
    bool int8, int aSteps, int bSteps) {
  kernels::configureAmxTiles();
  Buffer<uint16_t> a(32 * aSteps * 32), b(bSteps * 16 * 64);
  std::mt19937 rng(7);
  for (auto* v : {&a, &b})
    for (uint16_t& x : *v)  // bf16 in [0.5, 2); as int8, any bytes
      x = static_cast<uint16_t>(0x3F00 + rng() % 0x100);
  kernels::amxMemoryFence(a.data());
  kernels::amxMemoryFence(b.data());
  const int64_t aStride = aSteps * 64;
  const char* aBytes = reinterpret_cast<const char*>(a.data());
  const char* bBytes = reinterpret_cast<const char*>(b.data());
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (long i = 0; i < kTileIterations / bSteps; ++i)
    for (int s = 0; s < bSteps; ++s) {
      const char* as = aBytes + (s % aSteps) * 64;
      const char* bs = bBytes + s * 2048;
      _tile_loadd(4, as, aStride);
      _tile_loadd(6, bs, 128);
      _tile_loadd(7, bs + 64, 128);
      _tile_loadd(5, as + 16 * aStride, aStride);
      if (int8) {
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(1, 4, 7);
        _tile_dpbusd(2, 5, 6);
        _tile_dpbusd(3, 5, 7);
      } else {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
    }
  alignas(64) float out[16 * 16];
  _tile_stored(0, out, 64);
  kernels::amxMemoryFence(out);
  kernels::releaseAmxTiles();
  return out[0];
}

// Best of 7 short runs of |loop| on |threads| threads at once (robust to
// noise): seconds.
template <typename F>
double bestParallelSeconds(unsigned threads, const F& loop) {
  std::vector<double> sink(threads);
  double best = 1e30;
  for (int rep = 0; rep < 7; ++rep) {
    std::vector<std::thread> workers;
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([&, t] { sink[t] = loop(); });
    for (std::thread& w : workers) w.join();
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - t0)
                              .count());
  }
  if (sink[0] == 12345.0) std::printf(" ");  // keeps the loops alive
  return best;
}

// GFLOP/s per core of the FMA width the kernels use, every thread busy.
double measuredPeakPerCore(unsigned threads, kernels::MatmulIsa isa) {
  using kernels::MatmulIsa;
  if (isa == MatmulIsa::kScalar) return 2.0;  // no meaningful vector peak
  const bool wide = isa == MatmulIsa::kAmx || isa == MatmulIsa::kAvx512;
  const double seconds = bestParallelSeconds(
      threads, [&] { return wide ? fmaLoop512() : fmaLoop256(); });
  return 2.0 * (wide ? 16 : 8) * kChains * double(kPeakIterations) / seconds /
         1e9;
}

// GFLOP/s (int8: GOP/s) per core of the product a --w8a8 or --bf16 kernel
// set (named |set|) runs, every thread busy; 0 where that is the fp32 FMA
// (bf16 widened in registers) or the AMX tiles (measuredTilePeakPerCore).
double measuredProductPeakPerCore(unsigned threads, const char* set,
                                  bool int8) {
  const bool vnni = int8 && !std::strcmp(set, "avx512vnni");
  const bool avx2 = int8 && !std::strcmp(set, "avx2");
  const bool dpbf16 = !int8 && !std::strcmp(set, "avx512bf16");
  if (!vnni && !avx2 && !dpbf16) return 0.0;
  const double seconds = bestParallelSeconds(threads, [&] {
    return vnni ? dpbusdLoop() : avx2 ? maddubsLoop() : dpbf16Loop();
  });
  // Multiply-adds per chain step: 16 lanes of 4 (vpdpbusd) or 2
  // (vdpbf16ps), 32 for the AVX2 step.
  const double macs = vnni ? 64 : dpbf16 ? 32 : 32;
  return 2.0 * macs * kChains * double(kPeakIterations) / seconds / 1e9;
}

// GFLOP/s (int8: GOP/s) per core of tileLoop, every thread busy: each
// instruction 16 x 16 outputs of 32 bf16 (64 int8) products.
double measuredTileRatePerCore(unsigned threads, bool int8, int aSteps,
                               int bSteps) {
  const double seconds = bestParallelSeconds(
      threads, [&] { return tileLoop(int8, aSteps, bSteps); });
  const double macs = 16.0 * 16 * (int8 ? 64 : 32);
  const double products = 4.0 * (kTileIterations / bSteps) * bSteps;
  return 2.0 * macs * products / seconds / 1e9;
}

double measuredTilePeakPerCore(unsigned threads, bool int8) {
  return measuredTileRatePerCore(threads, int8, kProbeSteps, kProbeSteps);
}

double measuredL2FedTileRatePerCore(unsigned threads, bool int8) {
  return measuredTileRatePerCore(threads, int8, kL2ASteps, kL2BSteps);
}

}  // namespace

int main(int argc, char** argv) {
  unsigned threads = 1;
  int rounds = 5;
  double peakPerCore = 0;
  struct Shape { int64_t m, k, n; bool packed; };
  std::vector<Shape> chosen;
  bool int8 = false, int4 = false, w8a8 = false, bf16 = false;
  bool int8Fp32Products = false;
  bool int4F32Scales = false, cold = false, bRows = false;
  bool bTransposed = false;
  auto isModeFlag = [](const char* arg) {
    return !std::strcmp(arg, "--int8") || !std::strcmp(arg, "--int4") ||
           !std::strcmp(arg, "--int8-fp32-products") ||
           !std::strcmp(arg, "--int4-f32-scales") ||
           !std::strcmp(arg, "--w8a8") || !std::strcmp(arg, "--bf16") ||
           !std::strcmp(arg, "--cold") || !std::strcmp(arg, "--b-rows") ||
           !std::strcmp(arg, "--b-transposed");
  };
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--int8")) int8 = true;
    if (!std::strcmp(argv[i], "--int8-fp32-products"))
      int8 = int8Fp32Products = true;
    if (!std::strcmp(argv[i], "--int4")) int4 = true;
    if (!std::strcmp(argv[i], "--int4-f32-scales")) int4 = int4F32Scales = true;
    if (!std::strcmp(argv[i], "--w8a8")) w8a8 = true;
    if (!std::strcmp(argv[i], "--bf16")) bf16 = true;
    if (!std::strcmp(argv[i], "--cold")) cold = true;
    if (!std::strcmp(argv[i], "--b-rows")) bRows = true;
    if (!std::strcmp(argv[i], "--b-transposed")) bTransposed = true;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    if (isModeFlag(argv[i])) --i;
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--peak")) peakPerCore = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--kernel-isa")) {
      kernels::MatmulIsa isa;
      if (!kernels::matmulIsaNamed(argv[i + 1], &isa)) {
        std::fprintf(stderr,
                     "--kernel-isa expects amx, avx512, avx2 or scalar\n");
        return 1;
      }
      kernels::capMatmulIsa(isa);
    }
    long m, k, n;
    if (!std::strcmp(argv[i], "--shape") &&
        std::sscanf(argv[i + 1], "%ldx%ldx%ld", &m, &k, &n) == 3 && m > 0 &&
        k > 0 && n > 0)
      chosen.push_back({m, k, n, !bRows && !bTransposed});
  }
  const std::vector<Shape> defaults = {
      {512, 768, 768, true},   {512, 768, 3072, true}, {512, 3072, 768, true},
      {128, 768, 2304, true},  {512, 768, 50257, true},
      {512, 64, 512, false},   // attention scores per head (B = K^T strided)
      {1, 768, 3072, true},    {1, 3072, 768, true},   {1, 768, 50257, true},
  };
  const std::vector<Shape>& shapes = chosen.empty() ? defaults : chosen;
  // --cold: read before every timed call, more than any last-level cache.
  std::vector<int64_t> evict(
      cold || std::any_of(shapes.begin(), shapes.end(),
                          [](const Shape& s) { return s.m == 1; })
          ? (256 << 20) / sizeof(int64_t)
          : 0,
      1);
  volatile int64_t evictSink = 0;
  auto evictCaches = [&] {
    int64_t sum = 0;
    for (size_t i = 0; i < evict.size(); i += 8) sum += evict[i];
    evictSink = evictSink + sum;
  };
  ThreadPool pool(threads);
  // What a session passes the kernel: its pool and kernel scratch.
  KernelScratch scratch(strata_allocator_system());
  strata_rt_context_t context;
  context.pool = &pool;
  context.scratch = &scratch;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  const kernels::MatmulIsa isa = kernels::matmulIsa();
  const char* isaNames[] = {"amx", "avx512", "avx2", "scalar"};
  // This VM's speed moves by 10-20% within minutes, and a peak probed once
  // for the whole run put some shapes' medians 10% under what the same
  // kernel reached a minute later. So the shapes run in --rounds rounds,
  // taken in turn, the peaks are probed between every two shapes' calls,
  // and a shape's fraction of a round is of the peaks probed either side
  // of its calls (the larger: one probe that met a slow moment had put
  // every fraction of its run above 100%); "% peak" is the median over the
  // rounds, "best %" the fastest call over the highest peak of the run.
  const bool tiles = isa == kernels::MatmulIsa::kAmx && (bf16 || w8a8);
  // int4 and int8 (quads) rows of up to 16 (decode batches) run on int8
  // dot products of the activations quantized per group (matmul_f32.cc);
  // longer ones widen the weights to the fp32 tiles.
  constexpr int64_t kInt4ProductRows = 16;
  const bool int8Products = int8 && !int8Fp32Products;
  const bool groupProducts = int4 || int8Products;
  const char* productSet = w8a8           ? kernels::matmulW8A8KernelSet()
                           : bf16         ? kernels::matmulBf16KernelSet()
                           : int4         ? kernels::matmulI4KernelSet()
                           : int8Products ? kernels::matmulI8KernelSet()
                                          : "";
  const bool peakGiven = peakPerCore > 0;
  struct Peaks {
    double fma = 0, product = 0;  // per core
  };
  Peaks highest, lowest{1e30, 1e30};
  auto probePeaks = [&] {
    Peaks p;
    p.fma = peakGiven ? peakPerCore : measuredPeakPerCore(threads, isa);
    // The tile peak of the product the tiles run (bf16 or int8), or the
    // vector product's.
    p.product = tiles ? measuredTilePeakPerCore(threads, w8a8)
                : (w8a8 || bf16 || groupProducts)
                    ? measuredProductPeakPerCore(threads, productSet,
                                                 w8a8 || groupProducts)
                    : 0.0;
    highest = {std::max(highest.fma, p.fma),
               std::max(highest.product, p.product)};
    lowest = {std::min(lowest.fma, p.fma), std::min(lowest.product, p.product)};
    return p;
  };
  const double l2FedPerCore =
      tiles ? measuredL2FedTileRatePerCore(threads, w8a8) : 0.0;
  // The read bandwidth likewise, either side of the calls of every M = 1
  // shape whose B comes from DRAM, over every pattern each time: one probe
  // taken in a slow moment had put a cold M = 1 shape at 104% of it, and
  // the one pattern that read fastest before the rounds read below the
  // kernel later (101%).
  std::unique_ptr<strata_bench::ReadProbe> readProbe;
  double bandwidthHighest = 0, bandwidthLowest = 1e30;
  auto probeBandwidth = [&] {
    const double gbs = readProbe->best();
    bandwidthHighest = std::max(bandwidthHighest, gbs);
    bandwidthLowest = std::min(bandwidthLowest, gbs);
    return gbs;
  };
  constexpr double kCacheResidentBytes = 64.0 * (1 << 20);
  // One shape's operands and call parameters, set up before the rounds.
  struct Case {
    Shape s;
    Buffer<float> a, c, packed, unpacked;
    Buffer<int8_t> packedQ, packedQuads, packedW;
    Buffer<uint16_t> packedBf16;
    Buffer<uint8_t> packedQ4;
    std::vector<float> scales, scalesW, scales4;
    int64_t p[STRATA_MM_PARAM_COUNT] = {};
    int64_t fp32[STRATA_MM_PARAM_COUNT] = {};  // the fp32 product, for ratios
    void (*import)(strata_rt_context_t*, const int64_t*) = nullptr;
    bool quantized = false, int8Quads = false, compareFp32 = false;
    bool evictEach = false, fromDram = false, cached = false, product = false;
    double weightBytes = 0;
    std::vector<double> callMs, fp32CallMs, fractions, bandwidthFractions;
  };
  std::vector<std::unique_ptr<Case>> cases;
  for (const Shape& s : shapes) {
    cases.push_back(std::make_unique<Case>());
    Case& cs = *cases.back();
    cs.s = s;
    Buffer<float> b(s.k * s.n);
    cs.a.resize(s.m * s.k);
    cs.c.resize(s.m * s.n);
    for (float& x : cs.a) x = dist(rng);
    for (float& x : b) x = dist(rng);
    cs.packed.resize(strata_packed_b_f32_elements(s.k, s.n));
    strata_pack_b_f32(b.data(), s.k, s.n, s.n, 1, cs.packed.data());
    cs.quantized = (int8 || int4 || w8a8 || bf16) && s.packed;
    std::vector<int8_t> q(s.k * s.n);
    cs.scales.assign(cs.packed.size() / s.k, 1.0f / 127);
    for (size_t i = 0; i < q.size(); ++i)
      q[i] = static_cast<int8_t>(b[i] * 127);
    if (cs.quantized) {
      cs.packedQ.resize(cs.packed.size());
      strata_pack_b_i8(q.data(), s.k, s.n, s.n, 1, cs.packedQ.data());
    }
    // --int8: the quads the compiler emits (K a multiple of 16).
    cs.int8Quads = int8 && !int8Fp32Products && s.k % 16 == 0;
    if (cs.int8Quads) {
      cs.packedQuads.resize(strata_packed_b_i8_quads_bytes(s.k, s.n));
      strata_pack_b_i8_quads(q.data(), s.k, s.n, s.n, 1,
                             cs.packedQuads.data());
    }
    // W8A8: symmetric per-column int8, in quads of rows.
    if (w8a8 && s.packed) {
      cs.scalesW.assign(cs.packed.size() / s.k, 0.0f);
      std::vector<int8_t> qW(s.k * s.n);
      for (int64_t j = 0; j < s.n; ++j) {
        float amax = 0;
        for (int64_t kk = 0; kk < s.k; ++kk)
          amax = std::max(amax, std::fabs(b[kk * s.n + j]));
        cs.scalesW[j] = amax > 0 ? amax / 127 : 1.0f;
        for (int64_t kk = 0; kk < s.k; ++kk)
          qW[kk * s.n + j] = static_cast<int8_t>(
              std::lround(b[kk * s.n + j] / cs.scalesW[j]));
      }
      cs.packedW.resize(strata_packed_b_i8_quads_bytes(s.k, s.n));
      strata_pack_b_i8_quads(qW.data(), s.k, s.n, s.n, 1, cs.packedW.data());
    }
    // bf16: the fp32 weight rounded, in pairs of rows.
    if (bf16 && s.packed) {
      cs.packedBf16.resize(strata_packed_b_bf16_pairs_elements(s.k, s.n));
      strata_pack_b_bf16_pairs(b.data(), s.k, s.n, s.n, 1,
                               cs.packedBf16.data());
    }
    constexpr int64_t kGroup = 32;
    cs.scales4.assign((s.k + kGroup - 1) / kGroup * (cs.packed.size() / s.k),
                      1.0f / 7);
    if (int4) {
      std::vector<int8_t> q4(s.k * s.n);
      for (size_t i = 0; i < q4.size(); ++i)
        q4[i] = static_cast<int8_t>(b[i] * 7);
      if (int4F32Scales) {
        cs.packedQ4.resize(strata_packed_b_i4_bytes(s.k, s.n, kGroup));
        strata_pack_b_i4(q4.data(), s.k, s.n, s.n, 1, kGroup,
                         cs.packedQ4.data());
      } else {
        cs.packedQ4.resize(
            strata_packed_b_i4_f16_blocks_bytes(s.k, s.n, kGroup));
        strata_pack_b_i4_f16_blocks(q4.data(), s.k, s.n, s.n, 1, kGroup,
                                    cs.scales4.data(), cs.packedQ4.data());
      }
    }
    if (!s.packed) cs.unpacked = std::move(b);
    int64_t* p = cs.p;
    p[STRATA_MM_B_LAYOUT] =
        s.packed ? STRATA_MM_LAYOUT_PANEL_F32 : STRATA_MM_LAYOUT_STRIDED;
    p[STRATA_MM_M] = s.m;
    p[STRATA_MM_N] = s.n;
    p[STRATA_MM_K] = s.k;
    p[STRATA_MM_A_ADDR] = reinterpret_cast<intptr_t>(cs.a.data());
    p[STRATA_MM_A_STRIDE_M] = s.k;
    p[STRATA_MM_A_STRIDE_K] = 1;
    p[STRATA_MM_B_ADDR] = reinterpret_cast<intptr_t>(
        s.packed ? cs.packed.data() : cs.unpacked.data());
    // Unpacked: B read as a transpose (k stride 1), as attention's K^T,
    // or with --b-rows in rows (n stride 1), as a convolution's columns.
    p[STRATA_MM_B_STRIDE_K] = bRows ? s.n : 1;
    p[STRATA_MM_B_STRIDE_N] = bRows ? 1 : s.k;
    p[STRATA_MM_C_ADDR] = reinterpret_cast<intptr_t>(cs.c.data());
    p[STRATA_MM_C_STRIDE_M] = s.n;
    p[STRATA_MM_C_STRIDE_N] = 1;
    std::memcpy(cs.fp32, p, sizeof cs.fp32);
    if (cs.quantized) {
      p[STRATA_MM_B_LAYOUT] = STRATA_MM_LAYOUT_PANEL_I8;
      p[STRATA_MM_B_ADDR] = reinterpret_cast<intptr_t>(cs.packedQ.data());
      p[STRATA_MM_B_SCALES] = reinterpret_cast<intptr_t>(cs.scales.data());
      p[STRATA_MM_GROUP_SIZE] = s.k;
      if (cs.int8Quads) {
        p[STRATA_MM_B_LAYOUT] = STRATA_MM_LAYOUT_PANEL_I8_QUADS;
        p[STRATA_MM_B_ADDR] = reinterpret_cast<intptr_t>(cs.packedQuads.data());
      }
      if (int4) {
        p[STRATA_MM_B_LAYOUT] = int4F32Scales
                                    ? STRATA_MM_LAYOUT_PANEL_I4_GROUPS
                                    : STRATA_MM_LAYOUT_PANEL_I4_F16_BLOCKS;
        p[STRATA_MM_B_ADDR] = reinterpret_cast<intptr_t>(cs.packedQ4.data());
        p[STRATA_MM_B_SCALES] =
            int4F32Scales ? reinterpret_cast<intptr_t>(cs.scales4.data()) : 0;
        p[STRATA_MM_GROUP_SIZE] = kGroup;
      }
      if (w8a8) {
        p[STRATA_MM_B_LAYOUT] = STRATA_MM_LAYOUT_PANEL_I8_QUADS;
        p[STRATA_MM_B_ADDR] = reinterpret_cast<intptr_t>(cs.packedW.data());
        p[STRATA_MM_B_SCALES] = reinterpret_cast<intptr_t>(cs.scalesW.data());
        p[STRATA_MM_GROUP_SIZE] = s.k;
      }
      if (bf16) {
        p[STRATA_MM_B_LAYOUT] = STRATA_MM_LAYOUT_PANEL_BF16_PAIRS;
        p[STRATA_MM_B_ADDR] = reinterpret_cast<intptr_t>(cs.packedBf16.data());
        p[STRATA_MM_B_SCALES] = p[STRATA_MM_GROUP_SIZE] = 0;
      }
    }
    cs.import = !cs.quantized ? kernels::strataMatmulF32
                : w8a8        ? kernels::strataMatmulF32W8A8
                : bf16        ? kernels::strataMatmulF32Bf16
                : int4        ? kernels::strataMatmulF32I4
                              : kernels::strataMatmulF32I8;
    // The fp32 product on the packed fp32 weight, for the W8A8 or bf16
    // ratio.
    cs.compareFp32 = (w8a8 || bf16) && cs.quantized;
    cs.weightBytes = (!cs.quantized ? 4.0
                      : int4 ? 0.5 + (int4F32Scales ? 4.0 : 2.0) / kGroup
                      : bf16 ? 2.0
                             : 1.0) *
                     s.k * s.n;
    // An M = 1 shape whose B is larger than the caches reads B from DRAM
    // only if it is evicted before each call: else the last-level cache (a
    // victim cache on AMD) still holds part of the previous call's B, and
    // the LM head's 154 MB read at 103% of the read bandwidth.
    cs.evictEach = cold || (s.m == 1 && cs.weightBytes > kCacheResidentBytes);
    cs.cached = s.m == 1 && cs.weightBytes <= kCacheResidentBytes && !cold;
    cs.fromDram = s.m == 1 && !cs.cached;
    cs.product = cs.quantized &&
                 (!groupProducts ||
                  (s.m <= kInt4ProductRows && (int4 || cs.int8Quads)));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  // One round's calls of a shape: 1 warm-up call (the other shapes' calls
  // have had the caches since), then 7 timed ones; their median.
  auto timeCalls = [&](const Case& cs,
                       void (*import)(strata_rt_context_t*, const int64_t*),
                       const int64_t* params, std::vector<double>* all) {
    std::vector<double> ms;
    for (int r = 0; r < 8; ++r) {
      if (cs.evictEach) evictCaches();
      auto t0 = std::chrono::steady_clock::now();
      import(&context, params);
      auto t1 = std::chrono::steady_clock::now();
      if (r >= 1)
        ms.push_back(
            std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    all->insert(all->end(), ms.begin(), ms.end());
    return median(ms);
  };
  auto gflopsOf = [](const Shape& s, double ms) {
    return 2.0 * s.m * s.n * s.k / (ms * 1e6);
  };
  const bool anyFromDram =
      std::any_of(cases.begin(), cases.end(),
                  [](const std::unique_ptr<Case>& cs) { return cs->fromDram; });
  if (anyFromDram)
    readProbe = std::make_unique<strata_bench::ReadProbe>(threads);
  Peaks before = probePeaks();
  for (int round = 0; round < rounds; ++round)
    for (const std::unique_ptr<Case>& casePtr : cases) {
      Case& cs = *casePtr;
      const double bandwidthBefore = cs.fromDram ? probeBandwidth() : 0;
      const double ms = timeCalls(cs, cs.import, cs.p, &cs.callMs);
      if (cs.compareFp32)
        timeCalls(cs, kernels::strataMatmulF32, cs.fp32, &cs.fp32CallMs);
      const double bandwidthAfter = cs.fromDram ? probeBandwidth() : 0;
      const Peaks after = probePeaks();
      const double peak = cs.product
                              ? std::max(before.product, after.product)
                              : std::max(before.fma, after.fma);
      cs.fractions.push_back(gflopsOf(cs.s, ms) / (peak * threads));
      if (cs.fromDram)
        cs.bandwidthFractions.push_back(
            cs.weightBytes / (ms * 1e6) /
            std::max(bandwidthBefore, bandwidthAfter));
      before = after;
    }
  std::printf("threads %u, kernels %s, FMA peak %.1f GFLOP/s per core "
              "(probes %.1f-%.1f)",
              threads, isaNames[static_cast<int>(isa)], highest.fma,
              lowest.fma, highest.fma);
  if (highest.product > 0) {
    std::printf(", %s %s peak %.0f GOP/s per core (%% peak of the packed "
                "shapes",
                productSet, w8a8 || groupProducts ? "int8" : "bf16",
                highest.product);
    if (groupProducts)
      std::printf(" of up to %ld rows", long{kInt4ProductRows});
    std::printf(")");
  }
  if (l2FedPerCore > 0)
    std::printf(", with B from L2 %.0f (%.0f%%)", l2FedPerCore,
                100.0 * l2FedPerCore / highest.product);
  if (!tiles && kernels::amxUnavailableReason()[0])
    std::printf(" (no AMX: %s)", kernels::amxUnavailableReason());
  if (anyFromDram)
    std::printf(", read bandwidth %.1f GB/s (probes %.1f-%.1f)",
                bandwidthHighest, bandwidthLowest, bandwidthHighest);
  std::printf("\n%d rounds; %% peak and %% bw: the median over the rounds of "
              "a round's median call against the probes either side of "
              "it\n",
              rounds);
  std::printf("%-18s %10s %10s %8s %8s %10s %6s%s\n", "MxKxN", "median ms",
              "GFLOP/s", "% peak", "best %", "weight GB/s", "% bw",
              w8a8   ? "    fp32 ms  fp32/w8a8"
              : bf16 ? "    fp32 ms  fp32/bf16"
                     : "");
  for (const std::unique_ptr<Case>& casePtr : cases) {
    const Case& cs = *casePtr;
    const Shape& s = cs.s;
    const double ms = median(cs.callMs);
    const double bestMs = *std::min_element(cs.callMs.begin(), cs.callMs.end());
    const double peak = cs.product ? highest.product : highest.fma;
    char shape[64];
    std::snprintf(shape, sizeof(shape), "%ldx%ldx%ld%s", (long)s.m, (long)s.k,
                  (long)s.n, s.packed ? "" : bRows ? " (B rows)" : " (B^T)");
    char ratio[48] = "";
    if (cs.compareFp32) {
      const double fp32Ms = median(cs.fp32CallMs);
      std::snprintf(ratio, sizeof(ratio), " %10.3f %9.2fx", fp32Ms,
                    fp32Ms / ms);
    }
    char bw[16] = "";
    if (cs.fromDram)
      std::snprintf(bw, sizeof(bw), "%5.1f%%",
                    100.0 * median(cs.bandwidthFractions));
    std::printf("%-18s %10.3f %10.1f %7.1f%% %7.1f%% %10.1f %6s%s%s\n",
                shape, ms, gflopsOf(s, ms), 100.0 * median(cs.fractions),
                100.0 * gflopsOf(s, bestMs) / (peak * threads),
                s.m == 1 ? cs.weightBytes / (ms * 1e6) : 0.0, bw, ratio,
                cs.cached ? " (cached)" : "");
  }
  return 0;
}
