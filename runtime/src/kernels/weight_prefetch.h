//===- weight_prefetch.h - Software prefetch of a decode weight stream -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The quantized decode kernels read each weight once per step, one
// sequential stream per thread, and most of a step's matrices are a few
// hundred KB: the hardware prefetcher starts cold at every 4 KB page of
// them. Where it pays, each kernel asks for the line kWeightPrefetchBytes
// past every line it loads (a prefetch never faults, so past the end of a
// weight is harmless). Whether it pays depends on the core: GPT-2-small
// int4 decode steps, 2 threads, 4 KB ahead: AMD Zen 5 5-8% faster (8 of 8
// and 10 of 10 paired runs), its AVX2 kernels 5%, int8 1-2%; AMD Zen 4
// 9-11% slower 2 KB ahead and slower still 8 KB ahead
// (docs/design/precision.md). Other cores are unmeasured and keep the
// hardware's prefetch alone.

#ifndef STRATA_RUNTIME_SRC_KERNELS_WEIGHT_PREFETCH_H_
#define STRATA_RUNTIME_SRC_KERNELS_WEIGHT_PREFETCH_H_

#include <cstdint>

namespace strata::runtime::kernels {

constexpr int64_t kWeightPrefetchBytes = 4096;

/// Whether the decode kernels prefetch their weight stream on this CPU
/// (AMD family 1Ah, Zen 5, and later; CPUID read once), unless a test has
/// forced the choice.
bool weightPrefetchPays();

/// Tests: 1 prefetches, 0 does not, -1 (the start) follows the CPU.
void forceWeightPrefetchForTesting(int mode);

/// How a weight line is asked for: kept (prefetcht0) or streamed
/// (prefetchnta, read once a step). On Zen 5 (GPT-2-small, 2 threads, paired
/// runs) the int4 steps took 0.955-0.978x prefetcht0's time streamed at
/// batch 1 (16 of 24 faster) and 0.964x at batch 8 (6 of 6); int8 0.969x at
/// batch 1 (6 of 8) but 1.048x at batch 8 (0 of 4), where every row block
/// after the first reads the panel again (that a streamed line is no longer
/// in L2 then is the likely reason, not measured). So int4 streams and int8
/// keeps.
enum class WeightLineHint { kKeep, kStream };

/// Asks for the line kWeightPrefetchBytes past |line| when |Prefetch|.
template <bool Prefetch, WeightLineHint Hint>
inline void prefetchWeightLine(const void* line) {
  if constexpr (Prefetch)
    __builtin_prefetch(static_cast<const char*>(line) + kWeightPrefetchBytes,
                       0, Hint == WeightLineHint::kStream ? 0 : 3);
}

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_WEIGHT_PREFETCH_H_
