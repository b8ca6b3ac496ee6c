//===- buffer_cache.cc - Reused buffers for generated code ----------------===//
// SPDX-License-Identifier: Apache-2.0
// Each block starts with a 64-byte header naming its cache and size class,
// so a block is released correctly whichever thread or cache is current.

#include "buffer_cache.h"

#include "run_checks.h"

#include <cstdlib>
#include <vector>

namespace strata::runtime {
namespace {

constexpr size_t kHeader = 64;
// Refuse absurd sizes before any arithmetic can overflow.
constexpr uint64_t kMaxBytes = uint64_t{1} << 46;

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

void BufferCache::link(Block* block) {
  block->prev = &live_;
  block->next = live_.next;
  live_.next->prev = block;
  live_.next = block;
}

void BufferCache::unlink(Block* block) {
  if (!block->prev) return;
  block->prev->next = block->next;
  block->next->prev = block->prev;
  block->prev = block->next = nullptr;
}

BufferCache::Block* BufferCache::take(size_t sizeClass) {
  static_assert(sizeof(Block) <= kHeader, "header fits its slot");
  void* memory = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(sizeClass);
    if (it != free_.end()) {
      memory = it->second;
      free_.erase(it);
    }
  }
  if (!memory) {
    strata_status_t status =
        strata_allocator_malloc(allocator_, sizeClass + kHeader, 64, &memory);
    if (status) {
      strata_status_free(status);
      return nullptr;
    }
  }
  auto* block = static_cast<Block*>(memory);
  block->owner = this;
  block->sizeClass = sizeClass;
  std::lock_guard<std::mutex> lock(mutex_);
  block->lastRun = run_;
  link(block);
  return block;
}

void BufferCache::beginRun() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++run_;
}

size_t BufferCache::trimUnused() {
  std::vector<void*> unused;
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = free_.begin(); it != free_.end();) {
      if (static_cast<Block*>(it->second)->lastRun + kKeepRuns > run_) {
        ++it;
        continue;
      }
      bytes += it->first + kHeader;
      unused.push_back(it->second);
      it = free_.erase(it);
    }
  }
  for (void* block : unused) strata_allocator_free(allocator_, block);
  return bytes;
}

size_t BufferCache::trimAll() {
  std::multimap<size_t, void*> all;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    all.swap(free_);
  }
  size_t bytes = 0;
  for (auto& [size, block] : all) {
    bytes += size + kHeader;
    strata_allocator_free(allocator_, block);
  }
  return bytes;
}

void BufferCache::give(Block* block) {
  std::lock_guard<std::mutex> lock(mutex_);
  unlink(block);
  free_.emplace(block->sizeClass, block);
}

void BufferCache::adopt(Block* block) {
  retain();
  std::lock_guard<std::mutex> lock(mutex_);
  unlink(block);
}

void BufferCache::reclaimLive() {
  std::lock_guard<std::mutex> lock(mutex_);
  while (live_.next != &live_) {
    Block* block = live_.next;
    unlink(block);
    free_.emplace(block->sizeClass, block);
  }
}

namespace {

BufferCache::Block* headerOf(void* ptr) {
  return reinterpret_cast<BufferCache::Block*>(static_cast<char*>(ptr) -
                                               kHeader);
}

}  // namespace

void* allocateBuffer(BufferCache* cache, uint64_t bytes) {
  if (bytes > kMaxBytes) return nullptr;
  size_t sizeClass = sizeClassOf(bytes);
  BufferCache::Block* block = nullptr;
  if (cache) {
    block = cache->take(sizeClass);
  } else {
    block = static_cast<BufferCache::Block*>(
        std::aligned_alloc(64, sizeClass + kHeader));
    if (block) *block = {nullptr, sizeClass, nullptr, nullptr, 0};
  }
  if (!block) return nullptr;
  return reinterpret_cast<char*>(block) + kHeader;
}

void releaseBuffer(void* ptr) {
  if (!ptr) return;
  BufferCache::Block* block = headerOf(ptr);
  if (block->owner) {
    block->owner->give(block);
  } else {
    std::free(block);
  }
}

void* adoptBuffer(void* ptr) {
  if (ptr) {
    BufferCache::Block* block = headerOf(ptr);
    if (block->owner) block->owner->adopt(block);
  }
  return ptr;
}

void releaseAdoptedBuffer(void* ptr) {
  if (!ptr) return;
  BufferCache* owner = headerOf(ptr)->owner;
  releaseBuffer(ptr);
  if (owner) owner->release();
}

// Generated code allocates only in its entry function, on the thread that
// runs it: a failure there ends the run with RESOURCE_EXHAUSTED (the code
// does not check for null).
extern "C" void* strataRtAlloc(strata_rt_context_t* context, uint64_t bytes) {
  void* block = allocateBuffer(context->buffers, bytes);
  if (!block) failRunOutOfMemory(context, bytes);
  return block;
}
extern "C" void strataRtFree(strata_rt_context_t*, void* ptr) {
  releaseBuffer(ptr);
}

}  // namespace strata::runtime
