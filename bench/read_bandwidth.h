//===- read_bandwidth.h - Read bandwidth, read as the kernels read -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The read-bandwidth probe that bench/roofline.cc (the bench harness's
// roofline) and strata-gemm-bench (% of bandwidth of the M = 1 shapes)
// share. Header-only: roofline.cc is built on the spot by bench/roofline.py
// with `g++ -O3 -march=native`, the gemm bench by CMake for the portable
// target; the loops are chosen by the CPU at run time, so both read alike.

#ifndef STRATA_BENCH_READ_BANDWIDTH_H_
#define STRATA_BENCH_READ_BANDWIDTH_H_

#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace strata_bench {

using Clock = std::chrono::steady_clock;

inline double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Runs fn(thread_index) on `threads` threads after a common start signal and
// returns the wall time of the slowest one.
inline double runThreads(int threads, const std::function<void(int)> &fn) {
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

inline volatile float gSink;

// The sum of |streams| streams of |len| floats from |base|, stream j at
// base + j * len, read 64 floats (4 lines) of each in turn, with a software
// prefetch |prefetchFloats| ahead in each. One version per vector width,
// chosen by the CPU at run time: the gemm bench is built for the portable
// target, where the plain loop read ~40% slower than memory allows.
__attribute__((target("avx512f"))) inline float
sumStreamsAvx512(const float *base, size_t len, int streams,
                 size_t prefetchFloats) {
  __m512 acc[8];
  for (int j = 0; j < 8; ++j)
    acc[j] = _mm512_setzero_ps();
  for (size_t i = 0; i + 64 <= len; i += 64)
    for (int j = 0; j < streams; ++j) {
      const float *p = base + size_t(j) * len + i;
      if (prefetchFloats) {
        _mm_prefetch(reinterpret_cast<const char *>(p + prefetchFloats),
                     _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char *>(p + prefetchFloats + 32),
                     _MM_HINT_T0);
      }
      __m512 x = _mm512_add_ps(_mm512_load_ps(p), _mm512_load_ps(p + 16));
      __m512 y = _mm512_add_ps(_mm512_load_ps(p + 32), _mm512_load_ps(p + 48));
      acc[j & 7] = _mm512_add_ps(acc[j & 7], _mm512_add_ps(x, y));
    }
  __m512 total = acc[0];
  for (int j = 1; j < 8; ++j)
    total = _mm512_add_ps(total, acc[j]);
  return _mm512_reduce_add_ps(total);
}

__attribute__((target("avx2"))) inline float
sumStreamsAvx2(const float *base, size_t len, int streams,
               size_t prefetchFloats) {
  __m256 acc[8];
  for (int j = 0; j < 8; ++j)
    acc[j] = _mm256_setzero_ps();
  for (size_t i = 0; i + 64 <= len; i += 64)
    for (int j = 0; j < streams; ++j) {
      const float *p = base + size_t(j) * len + i;
      if (prefetchFloats) {
        _mm_prefetch(reinterpret_cast<const char *>(p + prefetchFloats),
                     _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char *>(p + prefetchFloats + 32),
                     _MM_HINT_T0);
      }
      __m256 x = _mm256_add_ps(
          _mm256_add_ps(_mm256_load_ps(p), _mm256_load_ps(p + 8)),
          _mm256_add_ps(_mm256_load_ps(p + 16), _mm256_load_ps(p + 24)));
      __m256 y = _mm256_add_ps(
          _mm256_add_ps(_mm256_load_ps(p + 32), _mm256_load_ps(p + 40)),
          _mm256_add_ps(_mm256_load_ps(p + 48), _mm256_load_ps(p + 56)));
      acc[j & 7] = _mm256_add_ps(acc[j & 7], _mm256_add_ps(x, y));
    }
  __m256 total = acc[0];
  for (int j = 1; j < 8; ++j)
    total = _mm256_add_ps(total, acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, total);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] +
         lanes[6] + lanes[7];
}

inline float sumStreamsPlain(const float *base, size_t len, int streams,
                             size_t prefetchFloats) {
  float acc[8] = {0};
  for (size_t i = 0; i + 8 <= len; i += 8)
    for (int j = 0; j < streams; ++j) {
      if (prefetchFloats && i % 16 == 0)
        __builtin_prefetch(base + size_t(j) * len + i + prefetchFloats);
      for (int k = 0; k < 8; ++k)
        acc[k] += base[size_t(j) * len + i + k];
    }
  return acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] +
         acc[7];
}

inline float sumStreams(const float *base, size_t len, int streams,
                        size_t prefetchFloats) {
  if (__builtin_cpu_supports("avx512f"))
    return sumStreamsAvx512(base, len, streams, prefetchFloats);
  if (__builtin_cpu_supports("avx2"))
    return sumStreamsAvx2(base, len, streams, prefetchFloats);
  return sumStreamsPlain(base, len, streams, prefetchFloats);
}

// Sums a large buffer (4x L3) the way the decode kernels read weights:
// each thread walks its share as `streams` interleaved sequential streams
// (a weight panel per stream), several independent accumulators per
// stream, and, with `prefetchBytes` > 0, a software prefetch that far ahead
// in each stream (as the decode kernels issue). The buffer is allocated
// and touched once, so a probe beside every measurement costs only its
// passes.
class ReadProbe {
public:
  explicit ReadProbe(int threads) : threads_(threads) {
    // On 2 MB boundaries, asking for transparent huge pages: the machine's
    // limit at the least page-walk cost. From scattered 4 KB pages this
    // probe read up to 31% less on an AMD EPYC host (8 of 9 side-by-side
    // runs less, one 5% more), and decode steps, whose
    // weights lie in the page cache's large (physically contiguous) folios,
    // came out "above 100%" of it (docs/benchmarking.md).
    const size_t huge = size_t(2) << 20;
    buf_ = static_cast<float *>(std::aligned_alloc(huge, kBytes));
    if (!buf_)
      return;
#ifdef MADV_HUGEPAGE
    madvise(buf_, kBytes, MADV_HUGEPAGE);  // advice: 4 KB pages where refused
#endif
    runThreads(threads_, [&](int t) {  // first touch by the reading thread
      size_t lo = kN * t / threads_, hi = kN * (t + 1) / threads_;
      for (size_t i = lo; i < hi; ++i)
        buf_[i] = float(i & 7);
    });
  }
  ~ReadProbe() { std::free(buf_); }
  ReadProbe(const ReadProbe &) = delete;
  ReadProbe &operator=(const ReadProbe &) = delete;

  // GB/s of the best of 7 passes in one pattern (0 without the buffer).
  double streams(int streams, size_t prefetchBytes) {
    if (!buf_)
      return 0;
    const size_t prefetchFloats = prefetchBytes / sizeof(float);
    double best = 1e30;
    for (int rep = 0; rep < 7; ++rep) {
      std::vector<float> partial(threads_ * 16);
      double s = runThreads(threads_, [&](int t) {
        size_t lo = kN * t / threads_, hi = kN * (t + 1) / threads_;
        // Stream j covers [lo + j * len, lo + (j + 1) * len), 64-float steps.
        size_t len = ((hi - lo) / streams) / 64 * 64;
        partial[t * 16] = sumStreams(buf_ + lo, len, streams, prefetchFloats);
      });
      gSink = partial[0];
      best = std::min(best, s);
    }
    // Bytes actually read: whole 64-float steps of every stream.
    size_t read = 0;
    for (int t = 0; t < threads_; ++t) {
      size_t lo = kN * t / threads_, hi = kN * (t + 1) / threads_;
      read += ((hi - lo) / streams) / 64 * 64 * streams * sizeof(float);
    }
    return double(read) / best / 1e9;
  }

  // The best over 1, 2, 4 and 8 streams per thread, without and with a
  // software prefetch 1 or 2 KB ahead: a one-stream probe understates what
  // the multi-stream decode kernels reach, and on some hosts a software
  // prefetch reads faster, on others slower, so the probe takes whichever
  // is best here and now (the best pattern of one moment read below a
  // kernel's DRAM stream at another: 101% of it).
  double best() {
    double result = 0;
    for (int s : {1, 2, 4, 8})
      for (size_t prefetch : {size_t(0), size_t(1024), size_t(2048)})
        result = std::max(result, streams(s, prefetch));
    return result;
  }

private:
  static constexpr size_t kBytes = size_t(512) << 20;
  static constexpr size_t kN = kBytes / sizeof(float);
  int threads_;
  float *buf_ = nullptr;
};

// ReadProbe(threads).best(): the read bandwidth on |threads| threads.
inline double readBandwidth(int threads) { return ReadProbe(threads).best(); }

}  // namespace strata_bench

#endif  // STRATA_BENCH_READ_BANDWIDTH_H_
