//===- block_pool.cc - The blocks of a paged KV cache ---------------------===//
// SPDX-License-Identifier: Apache-2.0

#include "generate/block_pool.h"

#include <algorithm>
#include <new>

namespace strata::runtime {

BlockPool::BlockPool(int64_t blocks, int64_t blockSize)
    : blockSize_(blockSize),
      refs_(static_cast<size_t>(blocks), 0),
      blocks_(static_cast<size_t>(blocks)) {
  free_.reserve(static_cast<size_t>(blocks));
  for (Published& entry : blocks_) entry.tokens.reserve(blockSize);
  byKey_.reserve(static_cast<size_t>(blocks));
  // Handed out from the back: block 0 first.
  for (int64_t b = blocks - 1; b >= 0; --b) free_.push_back(b);
}

int64_t BlockPool::allocate() {
  int64_t block = -1;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else if (!idle_.empty()) {
    block = idle_.front();
    idle_.pop_front();
    unpublish(block);
  } else {
    return -1;
  }
  refs_[static_cast<size_t>(block)] = 1;
  ++used_;
  return block;
}

void BlockPool::release(int64_t block) {
  int32_t& refs = refs_[static_cast<size_t>(block)];
  if (refs <= 0) return;
  if (--refs > 0) return;
  --used_;
  Published& entry = blocks_[static_cast<size_t>(block)];
  if (entry.published) {
    entry.idle = idle_.insert(idle_.end(), block);
  } else {
    free_.push_back(block);
  }
}

uint64_t BlockPool::keyOf(uint64_t parent, const int64_t* tokens) const {
  // FNV-1a over the parent's key and the ids, then a final mix; a match is
  // confirmed against the stored tokens, so a collision costs a miss only.
  uint64_t h = 0xcbf29ce484222325ull ^ parent;
  for (int64_t i = 0; i < blockSize_; ++i) {
    uint64_t v = static_cast<uint64_t>(tokens[i]);
    for (int byte = 0; byte < 8; ++byte) {
      h ^= (v >> (8 * byte)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h == 0 ? 1 : h;  // 0 stands for "no parent"
}

void BlockPool::publish(int64_t block, uint64_t key, uint64_t parent,
                        const int64_t* tokens) {
  Published& entry = blocks_[static_cast<size_t>(block)];
  if (entry.published || byKey_.count(key)) return;
  // The map's node is the one allocation after construction: without it
  // the block is simply not shared.
  try {
    byKey_.emplace(key, block);
  } catch (const std::bad_alloc&) {
    return;
  }
  entry.key = key;
  entry.parent = parent;
  entry.tokens.assign(tokens, tokens + blockSize_);  // capacity reserved
  entry.published = true;
}

int64_t BlockPool::share(uint64_t key, uint64_t parent,
                         const int64_t* tokens) {
  auto it = byKey_.find(key);
  if (it == byKey_.end()) return -1;
  const int64_t block = it->second;
  const Published& entry = blocks_[static_cast<size_t>(block)];
  if (entry.parent != parent ||
      !std::equal(tokens, tokens + blockSize_, entry.tokens.begin())) {
    return -1;
  }
  int32_t& refs = refs_[static_cast<size_t>(block)];
  if (refs == 0) {
    idle_.erase(entry.idle);
    ++used_;
  }
  ++refs;
  return block;
}

void BlockPool::unpublish(int64_t block) {
  Published& entry = blocks_[static_cast<size_t>(block)];
  byKey_.erase(entry.key);
  entry.published = false;
}

}  // namespace strata::runtime
