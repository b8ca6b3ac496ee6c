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

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Runs fn(thread_index) on `threads` threads after a common start signal and
// returns the wall time of the slowest one.
double runThreads(int threads, const std::function<void(int)> &fn) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load()) {
      }
      fn(t);
    });
  while (ready.load() != threads) {
  }
  auto start = Clock::now();
  go.store(true);
  for (auto &th : pool)
    th.join();
  return seconds(start, Clock::now());
}

volatile float gSink;

// Sums a large buffer (4x L3) the way the decode kernels read weights:
// each thread walks its share as `streams` interleaved sequential streams
// (a weight panel per stream), several independent accumulators per
// stream, and, with `prefetchBytes` > 0, a software prefetch that far ahead
// in each stream (as the decode kernels issue). Best of 7 passes.
double readBandwidthStreams(int threads, int streams, size_t prefetchBytes) {
  const size_t prefetchFloats = prefetchBytes / sizeof(float);
  const size_t bytes = size_t(512) << 20;
  const size_t n = bytes / sizeof(float);
  float *buf = static_cast<float *>(std::aligned_alloc(64, bytes));
  runThreads(threads, [&](int t) {  // first touch by the reading thread
    size_t lo = n * t / threads, hi = n * (t + 1) / threads;
    for (size_t i = lo; i < hi; ++i)
      buf[i] = float(i & 7);
  });
  double best = 1e30;
  for (int rep = 0; rep < 7; ++rep) {
    std::vector<float> partial(threads * 16);
    double s = runThreads(threads, [&](int t) {
      size_t lo = n * t / threads, hi = n * (t + 1) / threads;
      // Stream j covers [lo + j * len, lo + (j + 1) * len), 64-float steps.
      size_t len = ((hi - lo) / streams) / 64 * 64;
#if defined(__AVX512F__)
      __m512 acc[8];
      for (int j = 0; j < 8; ++j)
        acc[j] = _mm512_setzero_ps();
      for (size_t i = 0; i + 64 <= len; i += 64)
        for (int j = 0; j < streams; ++j) {
          const float *p = buf + lo + size_t(j) * len + i;
          if (prefetchFloats) {
            _mm_prefetch(reinterpret_cast<const char *>(p + prefetchFloats),
                         _MM_HINT_T0);
            _mm_prefetch(
                reinterpret_cast<const char *>(p + prefetchFloats + 32),
                _MM_HINT_T0);
          }
          __m512 x = _mm512_add_ps(_mm512_load_ps(p), _mm512_load_ps(p + 16));
          __m512 y =
              _mm512_add_ps(_mm512_load_ps(p + 32), _mm512_load_ps(p + 48));
          acc[j & 7] = _mm512_add_ps(acc[j & 7], _mm512_add_ps(x, y));
        }
      __m512 total = acc[0];
      for (int j = 1; j < 8; ++j)
        total = _mm512_add_ps(total, acc[j]);
      partial[t * 16] = _mm512_reduce_add_ps(total);
#else
      float acc[8] = {0};
      for (size_t i = 0; i + 8 <= len; i += 8)
        for (int j = 0; j < streams; ++j) {
          if (prefetchFloats && i % 16 == 0)
            __builtin_prefetch(buf + lo + size_t(j) * len + i +
                               prefetchFloats);
          for (int k = 0; k < 8; ++k)
            acc[k] += buf[lo + size_t(j) * len + i + k];
        }
      partial[t * 16] = acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] +
                        acc[6] + acc[7];
#endif
    });
    gSink = partial[0];
    best = std::min(best, s);
  }
  std::free(buf);
  // Bytes actually read: whole 64-float steps of every stream.
  size_t read = 0;
  for (int t = 0; t < threads; ++t) {
    size_t lo = n * t / threads, hi = n * (t + 1) / threads;
    read += ((hi - lo) / streams) / 64 * 64 * streams * sizeof(float);
  }
  return double(read) / best / 1e9;
}

// The best read bandwidth over 1, 2, 4 and 8 streams per thread, without
// and with a software prefetch 1 or 2 KB ahead: a one-stream probe, or one
// that leaves all prefetching to the hardware, understates what the
// prefetching decode kernels reach (the fp32 decode step measured above
// 100% of such a probe).
double readBandwidth(int threads) {
  double best = 0;
  for (int streams : {1, 2, 4, 8})
    for (size_t prefetch : {size_t(0), size_t(1024), size_t(2048)})
      best = std::max(best, readBandwidthStreams(threads, streams, prefetch));
  return best;
}

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
