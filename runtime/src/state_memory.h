//===- state_memory.h - Zero-filled memory for a session's states -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// A session's state tensors (a decoder's KV cache) are allocated at the
// compiled maxima when the session is created and start as zeros: GPT-2's
// cache at batch 16 x 1024 positions is 1.2 GB. Zeroing that up front took
// most of a session's creation and made all of it resident before the
// first token. From the system allocator the memory is instead a private
// anonymous mapping, whose pages the kernel supplies as zeros on first
// touch: creating a session costs neither the time nor the memory of the
// cache positions it has not used yet. From a caller's allocator it is
// allocated and zeroed, as the allocator contract promises nothing else.

#ifndef STRATA_RUNTIME_SRC_STATE_MEMORY_H_
#define STRATA_RUNTIME_SRC_STATE_MEMORY_H_

#include "strata/runtime/allocator.h"

#include <cstddef>
#include <utility>

namespace strata::runtime {

class StateMemory {
 public:
  StateMemory() = default;
  StateMemory(const StateMemory&) = delete;
  StateMemory& operator=(const StateMemory&) = delete;
  StateMemory(StateMemory&& other) noexcept { *this = std::move(other); }
  StateMemory& operator=(StateMemory&& other) noexcept;
  ~StateMemory() { release(); }

  /// |bytes| (at least 1) of zeros, 64-byte aligned, from |allocator|.
  static strata_status_t allocate(strata_allocator_t allocator, size_t bytes,
                                  StateMemory* out);

  void* data() const { return data_; }
  /// Zeroes all of it; a mapping gives its pages back (zeros on next touch).
  void zeroAll();

 private:
  void release();

  strata_allocator_t allocator_{};
  void* data_ = nullptr;
  size_t bytes_ = 0;
  bool mapped_ = false;  // an anonymous mapping, not the allocator's
};

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_STATE_MEMORY_H_
