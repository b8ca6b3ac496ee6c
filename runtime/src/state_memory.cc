//===- state_memory.cc - Zero-filled memory for a session's states --------===//
// SPDX-License-Identifier: Apache-2.0

#include "state_memory.h"

#include <sys/mman.h>

#include <cstring>
#include <utility>

namespace strata::runtime {

StateMemory& StateMemory::operator=(StateMemory&& other) noexcept {
  if (this != &other) {
    release();
    allocator_ = other.allocator_;
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    mapped_ = std::exchange(other.mapped_, false);
  }
  return *this;
}

strata_status_t StateMemory::allocate(strata_allocator_t allocator,
                                      size_t bytes, StateMemory* out) {
  if (bytes == 0) bytes = 1;
  StateMemory memory;
  memory.allocator_ = allocator;
  memory.bytes_ = bytes;
  if (allocator.fn == strata_allocator_system().fn) {
    // Page aligned, so 64-byte aligned; zeros on first touch.
    void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                                "cannot map %zu bytes for a state tensor",
                                bytes);
    }
    memory.data_ = data;
    memory.mapped_ = true;
  } else {
    STRATA_RETURN_IF_ERROR(
        strata_allocator_malloc(allocator, bytes, 64, &memory.data_));
    std::memset(memory.data_, 0, bytes);
  }
  *out = std::move(memory);
  return nullptr;
}

void StateMemory::zeroAll() {
  if (!data_) return;
  if (mapped_ && madvise(data_, bytes_, MADV_DONTNEED) == 0) return;
  std::memset(data_, 0, bytes_);
}

void StateMemory::release() {
  if (!data_) return;
  if (mapped_) {
    munmap(data_, bytes_);
  } else {
    strata_allocator_free(allocator_, data_);
  }
  data_ = nullptr;
}

}  // namespace strata::runtime
