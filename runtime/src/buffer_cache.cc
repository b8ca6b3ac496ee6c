//===- buffer_cache.cc - Reused buffers for generated code ----------------===//
// SPDX-License-Identifier: Apache-2.0
// Each block starts with a 64-byte header naming its cache and size class,
// so a block is released correctly whichever thread or cache is current.

#include "buffer_cache.h"

#include <cstdlib>

namespace strata::runtime {
namespace {

constexpr size_t kHeader = 64;
// Refuse absurd sizes before any arithmetic can overflow.
constexpr uint64_t kMaxBytes = uint64_t{1} << 46;

struct Header {
  BufferCache* owner;
  size_t sizeClass;
};
static_assert(sizeof(Header) <= kHeader, "header fits its slot");

thread_local BufferCache* tCurrentCache = nullptr;

// Sizes round up to 64 bytes, and above 4 KiB to an eighth of their power
// of two, so that shapes that differ a little (a growing KV cache) share
// blocks; at most 12.5% is wasted.
size_t sizeClassOf(uint64_t bytes) {
  size_t size = (bytes + 63) & ~size_t{63};
  if (size <= 4096) return size ? size : 64;
  size_t power = size_t{1} << (63 - __builtin_clzll(size - 1) + 1);
  size_t step = power / 16;
  return (size + step - 1) / step * step;
}

Header* headerOf(void* ptr) {
  return reinterpret_cast<Header*>(static_cast<char*>(ptr) - kHeader);
}

void* systemBlock(size_t sizeClass) {
  return std::aligned_alloc(64, sizeClass + kHeader);
}

}  // namespace

BufferCache::~BufferCache() {
  for (auto& [size, block] : free_) strata_allocator_free(allocator_, block);
}

void BufferCache::retain() {
  references_.fetch_add(1, std::memory_order_relaxed);
}

void BufferCache::release() {
  if (references_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

void* BufferCache::take(size_t sizeClass) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(sizeClass);
    if (it != free_.end()) {
      void* block = it->second;
      free_.erase(it);
      return block;
    }
  }
  void* block = nullptr;
  strata_status_t status =
      strata_allocator_malloc(allocator_, sizeClass + kHeader, 64, &block);
  if (status) {
    strata_status_free(status);
    return nullptr;
  }
  return block;
}

void BufferCache::give(void* block, size_t sizeClass) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.emplace(sizeClass, block);
}

void* allocateBuffer(uint64_t bytes) {
  if (bytes > kMaxBytes) return nullptr;
  size_t sizeClass = sizeClassOf(bytes);
  BufferCache* cache = tCurrentCache;
  void* block = cache ? cache->take(sizeClass) : systemBlock(sizeClass);
  if (!block) return nullptr;
  auto* header = static_cast<Header*>(block);
  header->owner = cache;
  header->sizeClass = sizeClass;
  return static_cast<char*>(block) + kHeader;
}

void releaseBuffer(void* ptr) {
  if (!ptr) return;
  Header* header = headerOf(ptr);
  if (header->owner) {
    header->owner->give(header, header->sizeClass);
  } else {
    std::free(header);
  }
}

void* adoptBuffer(void* ptr) {
  if (ptr) {
    if (BufferCache* owner = headerOf(ptr)->owner) owner->retain();
  }
  return ptr;
}

void releaseAdoptedBuffer(void* ptr) {
  if (!ptr) return;
  BufferCache* owner = headerOf(ptr)->owner;
  releaseBuffer(ptr);
  if (owner) owner->release();
}

ScopedBufferCache::ScopedBufferCache(BufferCache* cache)
    : previous_(tCurrentCache) {
  tCurrentCache = cache;
}

ScopedBufferCache::~ScopedBufferCache() { tCurrentCache = previous_; }

extern "C" void* strataRtAlloc(uint64_t bytes) { return allocateBuffer(bytes); }
extern "C" void strataRtFree(void* ptr) { releaseBuffer(ptr); }

}  // namespace strata::runtime
