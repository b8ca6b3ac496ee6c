//===- paged_cache.cc - The generator's side of a paged KV cache ----------===//
// SPDX-License-Identifier: Apache-2.0
// A sequence holds the blocks its positions fill, taken as its prompt
// starts (all of the prompt's at once, so that prompts never hold part of
// what they need while waiting for the rest) and one at a time as it
// generates. Full blocks are published for prefix caching (block_pool.h).
// When a decode step needs a block and none is left, the newest decoding
// sequence gives its blocks back (vLLM's recompute preemption): steps skip
// it until the pool has room for its entries again, which are then
// recomputed by prefill calls over its tokens so far; the tokens it
// streamed stay as they were. A prompt waits for blocks rather than
// preempt anyone, and the compiler sizes the pool for at least one whole
// context, so the oldest sequence can always go on.

#include <algorithm>
#include <cstring>

#include "generate/generator_state.h"

using strata::runtime::RowPlaces;
using strata::runtime::Sequence;
using strata::runtime::TensorHolder;

namespace {

int64_t blocksFor(size_t positions, int64_t blockSize) {
  return (static_cast<int64_t>(positions) + blockSize - 1) / blockSize;
}

}  // namespace

namespace {

// The blocks |blocks| lacks for |positions| positions, from |pool|, all or
// none.
bool reserveFrom(strata::runtime::BlockPool& pool, std::vector<int64_t>& blocks,
                 size_t positions) {
  const int64_t need = blocksFor(positions, pool.blockSize()) -
                       static_cast<int64_t>(blocks.size());
  if (need <= 0) return true;
  if (pool.available() < need) return false;
  // Room for the whole context was reserved: these never allocate.
  for (int64_t i = 0; i < need; ++i) blocks.push_back(pool.allocate());
  return true;
}

// A table row of |width| entries: |blocks|, then any valid block (a row
// reads and writes nothing past its blocks).
void writeTableRow(const std::vector<int64_t>& blocks, int64_t width,
                   int64_t* row) {
  const size_t held = std::min(blocks.size(), static_cast<size_t>(width));
  std::copy(blocks.begin(), blocks.begin() + held, row);
  std::fill(row + held, row + width, 0);
}

}  // namespace

bool strata_generator_t::reserveBlocks(Sequence* sequence, size_t positions) {
  return reserveFrom(*pool, sequence->blocks, positions);
}

bool strata_generator_t::reserveDraftBlocks(Sequence* sequence,
                                            size_t positions) {
  return !draftPool || reserveFrom(*draftPool, sequence->draftBlocks, positions);
}

RowPlaces strata_generator_t::draftPlace(Sequence* sequence, size_t row) {
  if (!draftPool) return RowPlaces{&sequence->slot, 0};
  const int64_t width = draftContract.blocksPerSequence;
  int64_t* table = draftTables.data() + row * static_cast<size_t>(width);
  writeTableRow(sequence->draftBlocks, width, table);
  return RowPlaces{table, width};
}

bool strata_generator_t::olderPromptWaiting(const Sequence* sequence) const {
  for (const Sequence* s : slotOwner) {
    if (s && s->id < sequence->id && s->tokens.empty() &&
        s->prefilled < s->promptLength &&
        static_cast<int64_t>(s->blocks.size()) <
            blocksFor(s->promptLength, pool->blockSize())) {
      return true;
    }
  }
  return false;
}

bool strata_generator_t::reservePromptBlocks(Sequence* sequence) {
  const size_t length = sequence->promptLength;
  if (static_cast<int64_t>(sequence->blocks.size()) >=
      blocksFor(length, pool->blockSize())) {
    return true;
  }
  if (olderPromptWaiting(sequence)) return false;
  // Shared blocks are taken only with the rest, so that a waiting prompt
  // holds nothing another one may need.
  const bool first = sequence->blocks.empty() && sequence->prefilled == 0;
  const size_t cached =
      first && blockSharing
          ? shareCachedBlocks(sequence, sequence->history.data(), length)
          : 0;
  if (!reserveBlocks(sequence, length)) {
    if (first) releaseBlocks(sequence);
    return false;
  }
  if (first) {
    sequence->prefilled = cached;
    sequence->reusedPrompt = cached;
  }
  return true;
}

uint64_t strata_generator_t::loadBlockTokens(uint64_t parent,
                                             const int32_t* tokens) {
  std::copy(tokens, tokens + pool->blockSize(), blockTokens.begin());
  return pool->keyOf(parent, blockTokens.data());
}

size_t strata_generator_t::shareCachedBlocks(Sequence* sequence,
                                              const int32_t* tokens,
                                              size_t count) {
  const int64_t size = pool->blockSize();
  // The last token's block is written by the call that runs it, so it is
  // never one another sequence may hold.
  const size_t most = count > 0 ? (count - 1) / static_cast<size_t>(size) : 0;
  uint64_t parent = 0;
  for (size_t i = 0; i < most; ++i) {
    const uint64_t key = loadBlockTokens(parent, tokens + i * size);
    const int64_t block = pool->share(key, parent, blockTokens.data());
    if (block < 0) break;
    sequence->blocks.push_back(block);
    sequence->blockKeys.push_back(key);
    parent = key;
  }
  return sequence->blocks.size() * static_cast<size_t>(size);
}

void strata_generator_t::publishFullBlocks(Sequence* sequence, size_t filled) {
  if (!blockSharing) return;
  const int64_t size = pool->blockSize();
  const size_t full = std::min(filled / static_cast<size_t>(size),
                               sequence->blocks.size());
  for (size_t i = sequence->blockKeys.size(); i < full; ++i) {
    const uint64_t parent = i ? sequence->blockKeys[i - 1] : 0;
    const uint64_t key = loadBlockTokens(
        parent, sequence->history.data() + i * static_cast<size_t>(size));
    pool->publish(sequence->blocks[i], key, parent, blockTokens.data());
    sequence->blockKeys.push_back(key);
  }
}

void strata_generator_t::releaseBlocks(Sequence* sequence) {
  for (int64_t block : sequence->blocks) pool->release(block);
  sequence->blocks.clear();
  sequence->blockKeys.clear();
}

Sequence* strata_generator_t::preemptNewest(Sequence* than) {
  Sequence* newest = than;
  for (Sequence* s : slotOwner) {
    if (s && s->decoding() && !s->blocks.empty() && s->id > newest->id) {
      newest = s;
    }
  }
  releaseBlocks(newest);
  newest->preempted = true;
  ++preemptions;
  return newest;
}

void strata_generator_t::growRowBlocks() {
  // Oldest first: the newest give way.
  std::sort(rows.begin(), rows.end(),
            [](const Sequence* a, const Sequence* b) { return a->id < b->id; });
  for (Sequence* sequence : rows) {
    if (sequence->preempted) continue;
    const size_t positions = static_cast<size_t>(sequence->position()) + 1;
    while (!reserveBlocks(sequence, positions)) {
      if (preemptNewest(sequence) == sequence) break;
    }
  }
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [](const Sequence* s) { return s->preempted; }),
             rows.end());
}

void strata_generator_t::tableRow(const Sequence* sequence,
                                  int64_t* row) const {
  writeTableRow(sequence->blocks, contract.blocksPerSequence, row);
}

strata_status_t strata_generator_t::resumePreempted() {
  // Oldest first, while the pool has room.
  for (;;) {
    Sequence* oldest = nullptr;
    for (Sequence* s : slotOwner) {
      if (s && s->preempted && (!oldest || s->id < oldest->id)) oldest = s;
    }
    if (!oldest) return nullptr;
    // Its entries: every token but the last generated one, which the next
    // decode step runs.
    const size_t length = static_cast<size_t>(oldest->position());
    const size_t cached =
        blockSharing
            ? shareCachedBlocks(oldest, oldest->history.data(), length + 1)
            : 0;
    if (!reserveBlocks(oldest, length)) {
      releaseBlocks(oldest);
      return nullptr;
    }
    tableRow(oldest, rowTables.data());
    const RowPlaces place{rowTables.data(), contract.blocksPerSequence};
    for (size_t done = cached; done < length;) {
      const size_t chunk =
          std::min(length - done, static_cast<size_t>(prefillChunk));
      for (size_t i = 0; i < chunk; ++i) {
        resumeIds[i] = oldest->history[done + i];
      }
      TensorHolder logits;
      STRATA_RETURN_IF_ERROR(strata::runtime::runPrefill(
          session, place, resumeIds.data(), static_cast<int64_t>(chunk),
          static_cast<int64_t>(done), &logits));
      done += chunk;
    }
    publishFullBlocks(oldest, length);
    oldest->preempted = false;
  }
}
