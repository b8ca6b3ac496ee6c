//===- panel_schedule.h - Decode matmul chunks, large first --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// A decode matmul is one weight stream split over the threads, and it is
// short (tens of microseconds per layer matrix), so the thread that finishes
// first waits for the other's last chunk. Equal chunks make that wait half a
// chunk on average; chunks that shrink as the work runs out (guided
// scheduling) make it half of the smallest one, while the large early chunks
// keep the per-claim cost and the short-stream prefetch loss low.

#ifndef STRATA_RUNTIME_SRC_KERNELS_PANEL_SCHEDULE_H_
#define STRATA_RUNTIME_SRC_KERNELS_PANEL_SCHEDULE_H_

#include <cstdint>

namespace strata::runtime::kernels {

/// Most chunks one schedule has; beyond it the last chunk takes the rest.
constexpr int kMaxPanelChunks = 256;

/// Cuts |panels| into chunks for |threads| threads claiming them in order:
/// each a quarter of what remains per thread, at most |maxChunk|, a multiple
/// of |unit| while at least |unit| (the kernels' widest tile), then 2 and 1.
/// Writes the boundaries (at most kMaxPanelChunks + 1, starting at 0) and
/// returns the chunk count.
inline int guidedPanelChunks(int64_t panels, int64_t threads,
                             int64_t maxChunk, int64_t unit,
                             int64_t bounds[kMaxPanelChunks + 1]) {
  if (threads < 1) threads = 1;
  if (unit < 1) unit = 1;
  if (maxChunk < unit) maxChunk = unit;
  int count = 0;
  int64_t done = 0;
  bounds[0] = 0;
  while (done < panels) {
    const int64_t left = panels - done;
    int64_t size = (left + 2 * threads - 1) / (2 * threads);
    if (size > maxChunk) size = maxChunk;
    if (size >= unit)
      size -= size % unit;
    else if (size >= 2)
      size = 2;
    // Never more chunks than the bounds hold: what is left spread evenly
    // over the slots that remain, at the least.
    const int64_t slots = kMaxPanelChunks - count;
    const int64_t fill = (left + slots - 1) / slots;
    if (size < fill) size = fill;
    if (size < 1) size = 1;
    if (size > left) size = left;
    done += size;
    bounds[++count] = done;
  }
  return count;
}

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_PANEL_SCHEDULE_H_
