//===- buffer_cache.h - Reused buffers for generated code -----------------===//
// SPDX-License-Identifier: Apache-2.0
// Generated code allocates its intermediates and results through the
// strata_rt_alloc/strata_rt_free imports. A session keeps every freed block
// by size class and hands it out again, so after the first run of a shape a
// run takes no memory from the OS (no page faults, no zeroing of fresh
// pages: ~10% of a GPT-2 prefill with plain malloc).

#ifndef STRATA_RUNTIME_SRC_BUFFER_CACHE_H_
#define STRATA_RUNTIME_SRC_BUFFER_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "run_context.h"
#include "strata/runtime/allocator.h"

namespace strata::runtime {

/// Reference counted: the session holds one reference and every block handed
/// out as an output tensor's data holds another, so outputs may outlive the
/// session. Create with `new`, drop with release().
class BufferCache {
 public:
  /// Blocks come from |allocator| (the session's).
  explicit BufferCache(strata_allocator_t allocator) : allocator_(allocator) {}
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;

  void retain();
  /// Drops a reference; the last one frees the cache and its blocks.
  void release();

  /// Takes back every block handed out and neither released nor adopted
  /// since: the buffers of a run that ended early (run_checks.h).
  void reclaimLive();

  /// Starts a run: blocks taken from now on are marked as used by it.
  void beginRun();

  /// Frees every cached block that none of the last kKeepRuns runs took: a
  /// run of the same shapes takes the same blocks again, so the cache holds
  /// what a few recent runs needed (shapes that alternate keep theirs), not
  /// every size the session ever used (a decode loop's growing context
  /// moves to new sizes step by step). Returns the bytes freed.
  size_t trimUnused();
  static constexpr uint64_t kKeepRuns = 4;

  /// Frees every cached block (strata_session_trim).
  size_t trimAll();

  /// The 64-byte header in front of every block's data.
  struct Block {
    BufferCache* owner;
    size_t sizeClass;
    Block* prev;  // null while not on the live list
    Block* next;
    uint64_t lastRun;  // the run that took it last
  };

 private:
  ~BufferCache();
  friend void* allocateBuffer(BufferCache* cache, uint64_t bytes);
  friend void releaseBuffer(void* ptr);
  friend void* adoptBuffer(void* ptr);
  friend void releaseAdoptedBuffer(void* ptr);
  Block* take(size_t sizeClass);
  void give(Block* block);
  void adopt(Block* block);
  void link(Block* block);
  static void unlink(Block* block);

  strata_allocator_t allocator_;
  std::atomic<int> references_{1};
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  // Blocks handed out and not yet given back or adopted: a circular list
  // through their headers, of which this is the sentinel.
  Block live_{nullptr, 0, &live_, &live_, 0};
  uint64_t run_ = 0;
};

/// 64-byte aligned memory from |cache| (plain memory if null); null if the
/// system is out of memory.
void* allocateBuffer(BufferCache* cache, uint64_t bytes);

/// Returns a block of allocateBuffer to the cache it came from (or the
/// system). Null is ignored.
void releaseBuffer(void* ptr);

/// Marks a block of allocateBuffer as owned by an output tensor from now
/// on: it keeps its cache alive until releaseAdoptedBuffer. Returns |ptr|.
void* adoptBuffer(void* ptr);

/// Releases a block adopted by adoptBuffer (the tensor's data release).
void releaseAdoptedBuffer(void* ptr);

/// The strata_rt_alloc and strata_rt_free imports: buffers of the run
/// context's cache.
extern "C" void* strataRtAlloc(strata_rt_context_t* context, uint64_t bytes);
extern "C" void strataRtFree(strata_rt_context_t* context, void* ptr);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_BUFFER_CACHE_H_
