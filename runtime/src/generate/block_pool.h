//===- block_pool.h - The blocks of a paged KV cache ----------------------===//
// SPDX-License-Identifier: Apache-2.0
// Which blocks of a paged cache's pool are free, which sequences hold each
// one, and which full blocks may be shared by prompts that start alike
// (automatic prefix caching). A block full of a known token run is
// published under the hash of its tokens chained to its predecessor's; a
// later sequence whose prompt starts with the same runs takes those blocks
// instead of recomputing them. Shared blocks are only read: a sequence
// writes positions past the blocks it took, so no block is ever written
// while another sequence holds it and no copy on write arises. Blocks no
// sequence holds stay published until a new block is needed and no free
// one is left; then the least recently released goes (LRU).

#ifndef STRATA_RUNTIME_SRC_GENERATE_BLOCK_POOL_H_
#define STRATA_RUNTIME_SRC_GENERATE_BLOCK_POOL_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

namespace strata::runtime {

class BlockPool {
 public:
  /// |blocks| blocks of |blockSize| positions. Allocates its bookkeeping
  /// here; publishing adds a map node (and skips the block if it cannot).
  BlockPool(int64_t blocks, int64_t blockSize);

  int64_t blockSize() const { return blockSize_; }
  int64_t blockCount() const { return static_cast<int64_t>(refs_.size()); }
  /// Blocks some sequence holds.
  int64_t used() const { return used_; }
  /// Blocks a new sequence can have: free, or published and held by none.
  int64_t available() const {
    return static_cast<int64_t>(free_.size() + idle_.size());
  }

  /// A block for one sequence (reference count 1), evicting the least
  /// recently released published block when none is free; -1 when every
  /// block is held.
  int64_t allocate();
  /// Drops one sequence's hold on |block|: a published block stays
  /// findable until evicted, another goes back to the free list.
  void release(int64_t block);

  /// The key of a block of |tokens| (blockSize() ids) after the block
  /// keyed |parent| (0: the first block of a sequence).
  uint64_t keyOf(uint64_t parent, const int64_t* tokens) const;
  /// Marks |block| (held, full) as holding |tokens| after the block keyed
  /// |parent|, under |key| (keyOf); a block already published, or a key
  /// another block has, is left as it is.
  void publish(int64_t block, uint64_t key, uint64_t parent,
               const int64_t* tokens);
  /// The published block holding |tokens| after the block keyed |parent|,
  /// now held once more by the caller; -1 if none.
  int64_t share(uint64_t key, uint64_t parent, const int64_t* tokens);

 private:
  struct Published {
    uint64_t key = 0, parent = 0;
    std::vector<int64_t> tokens;
    bool published = false;
    // Where it sits in idle_ while no sequence holds it.
    std::list<int64_t>::iterator idle;
  };

  void unpublish(int64_t block);

  int64_t blockSize_;
  std::vector<int32_t> refs_;
  std::vector<Published> blocks_;
  std::vector<int64_t> free_;
  // Published blocks no sequence holds, least recently released first.
  std::list<int64_t> idle_;
  std::unordered_map<uint64_t, int64_t> byKey_;
  int64_t used_ = 0;
};

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_GENERATE_BLOCK_POOL_H_
