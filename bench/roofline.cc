//===- bench/roofline.cc - machine limits for the roofline context -------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Measures, on the spot, the limits the benchmark results are compared with:
// memory read bandwidth (GB/s) and peak fp32 FMA, bf16 dot-product and int8
// dot-product throughput (GFLOP/s, GOP/s for int8), for 1..T threads. Built by
// bench/roofline.py with `g++ -O3 -march=native -pthread`; an instruction set
// the compiler does not enable reports null. Prints one JSON object.
//
// Usage: roofline THREADS...   e.g. `roofline 1 2`
//===----------------------------------------------------------------------===//

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "read_bandwidth.h"

namespace {

using namespace strata_bench;

// Peak of a kernel that issues `kChains` independent accumulator chains so the
// FMA/dot-product pipes stay full. flopsPerOp counts multiply+add as 2.
template <typename Body>
double peak(int threads, double flopsPerIter, Body body) {
  const long iters = 4000000;
  double best = 1e30;
  for (int rep = 0; rep < 9; ++rep)  // best of 9 short runs: robust to noise
    best = std::min(best, runThreads(threads, [&](int) { body(iters); }));
  return flopsPerIter * double(iters) * threads / best / 1e9;
}

constexpr int kChains = 12;

double fp32Peak(int threads) {
#if defined(__AVX512F__) || defined(__AVX2__)
#if defined(__AVX512F__)
  using V = __m512;
  const double lanes = 16;
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define RED(x) _mm512_reduce_add_ps(x)
#else
  using V = __m256;
  const double lanes = 8;
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define RED(x) _mm256_cvtss_f32(x)
#endif
  return peak(threads, kChains * lanes * 2, [](long iters) {
    V acc[kChains];
    for (int c = 0; c < kChains; ++c)
      acc[c] = SET1(float(c));
    V a = SET1(0.999f), b = SET1(1e-7f);
    for (long i = 0; i < iters; ++i)
      for (int c = 0; c < kChains; ++c)
        acc[c] = FMA(acc[c], a, b);
    float s = 0;
    for (int c = 0; c < kChains; ++c)
      s += RED(acc[c]);
    gSink = s;
  });
#undef SET1
#undef FMA
#undef RED
#else
  return -1;
#endif
}

double bf16Peak(int threads) {
#if defined(__AVX512BF16__)
  // vdpbf16ps: 16 lanes x 2 bf16 products accumulated = 64 FLOP.
  return peak(threads, kChains * 64.0, [](long iters) {
    __m512 acc[kChains];
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm512_set1_ps(float(c));
    __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = a;
    for (long i = 0; i < iters; ++i)
      for (int c = 0; c < kChains; ++c)
        acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
    float s = 0;
    for (int c = 0; c < kChains; ++c)
      s += _mm512_reduce_add_ps(acc[c]);
    gSink = s;
  });
#else
  return -1;
#endif
}

double int8Peak(int threads) {
#if defined(__AVX512VNNI__)
  // vpdpbusd: 16 lanes x 4 u8*s8 products accumulated = 128 ops.
  return peak(threads, kChains * 128.0, [](long iters) {
    __m512i acc[kChains];
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm512_set1_epi32(c);
    __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(2);
    for (long i = 0; i < iters; ++i)
      for (int c = 0; c < kChains; ++c)
        acc[c] = _mm512_dpbusd_epi32(acc[c], a, b);
    int s = 0;
    for (int c = 0; c < kChains; ++c)
      s += _mm512_reduce_add_epi32(acc[c]);
    gSink = float(s);
  });
#elif defined(__AVX2__)
  // vpmaddubsw + vpmaddwd + vpaddd: 32 u8*s8 products per 3 instructions.
  return peak(threads, kChains * 64.0, [](long iters) {
    __m256i acc[kChains];
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm256_set1_epi32(c);
    __m256i a = _mm256_set1_epi8(1), b = _mm256_set1_epi8(2),
            ones = _mm256_set1_epi16(1);
    for (long i = 0; i < iters; ++i)
      for (int c = 0; c < kChains; ++c)
        acc[c] = _mm256_add_epi32(
            acc[c], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones));
    int s = 0;
    for (int c = 0; c < kChains; ++c)
      s += _mm256_extract_epi32(acc[c], 0);
    gSink = float(s);
  });
#else
  return -1;
#endif
}

std::string num(double v) {
  if (v < 0)
    return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> threads;
  for (int i = 1; i < argc; ++i)
    threads.push_back(std::atoi(argv[i]));
  if (threads.empty())
    threads = {1, int(std::thread::hardware_concurrency())};
  std::printf("{\"isa\": \"%s\", \"results\": [",
#if defined(__AVX512F__)
              "avx512"
#elif defined(__AVX2__)
              "avx2"
#else
              "generic"
#endif
  );
  for (size_t i = 0; i < threads.size(); ++i) {
    int t = threads[i];
    std::printf("%s{\"threads\": %d, \"read_gbps\": %s, \"fp32_gflops\": %s, "
                "\"bf16_gflops\": %s, \"int8_gops\": %s}",
                i ? ", " : "", t, num(readBandwidth(t)).c_str(),
                num(fp32Peak(t)).c_str(), num(bf16Peak(t)).c_str(),
                num(int8Peak(t)).c_str());
    std::fflush(stdout);
  }
  std::printf("]}\n");
  return 0;
}
