//===- generator_state.h - The generator's sequences and step state -------===//
// SPDX-License-Identifier: Apache-2.0
// Shared by generator.cc (the C API, prompts, plain decode steps) and
// speculative_step.cc (drafting and verification).

#ifndef STRATA_RUNTIME_SRC_GENERATE_GENERATOR_STATE_H_
#define STRATA_RUNTIME_SRC_GENERATE_GENERATOR_STATE_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "generate/block_pool.h"
#include "generate/contract.h"
#include "generate/draft_length.h"
#include "generate/prompt_lookup.h"
#include "generate/sampler.h"
#include "strata/runtime/generate.h"
#include "strata/runtime/tensor.h"

namespace strata::runtime {

using Clock = std::chrono::steady_clock;

inline double millisecondsBetween(Clock::time_point from,
                                  Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// One sequence, in flight (slot >= 0) or finished.
struct Sequence {
  Sequence(const SamplingParams& params, const SamplingParams& draftParams,
           size_t maxDraft, bool fixedDraft)
      : sampler(params),
        draftSampler(draftParams),
        draftLength(maxDraft, fixedDraft, kLookupMatchClasses) {}

  uint64_t id = 0;
  int64_t slot = -1;
  bool finished = false;
  size_t promptLength = 0;
  // The prompt, kept until prefill has run all of it, and how many of its
  // tokens have run. Steps leave a sequence out until its first token.
  std::vector<int64_t> prompt;
  size_t prefilled = 0;
  // Prompt tokens prefix reuse found cached in the slot.
  size_t reusedPrompt = 0;
  // Most tokens it may generate (max_new_tokens, or what the context holds).
  size_t maxGenerated = 0;
  std::vector<int64_t> tokens;
  // Prompt and generated tokens, for the repetition penalty (and the
  // drafts, which read the whole sequence).
  std::vector<int32_t> history;
  std::vector<int64_t> stopTokens;
  Sampler sampler;
  Clock::time_point start;
  Clock::time_point last;
  double ttftMs = 0;
  std::vector<double> intervalsMs;

  // Speculative decoding. The draft's own sampler draws the drafted tokens.
  Sampler draftSampler;
  DraftLength draftLength;
  // The evidence class of this step's drafts (prompt lookup: its match's).
  size_t draftEvidence = 0;
  // Tokens of the sequence (prompt and generated) the draft's cache holds.
  int64_t draftCached = 0;
  // This step's drafted tokens and, with a draft model, the distribution
  // each was drawn from (|vocab| doubles per draft).
  std::vector<int32_t> drafts;
  std::vector<double> draftDistributions;
  size_t draftCount = 0;
  uint64_t draftTokens = 0;
  uint64_t acceptedDraftTokens = 0;
  uint64_t targetSteps = 0;

  // A paged draft cache: the draft's blocks, in order (no prefix cache).
  std::vector<int64_t> draftBlocks;

  // A paged cache: the blocks holding its positions, in order, and the
  // prefix-cache keys of the full ones published so far.
  std::vector<int64_t> blocks;
  std::vector<uint64_t> blockKeys;
  // Its blocks went to an older sequence; steps skip it until they have
  // recomputed its entries.
  bool preempted = false;

  bool decoding() const { return !tokens.empty() && !preempted; }

  // Tokens before the last generated one: where the next call writes.
  int64_t position() const {
    return static_cast<int64_t>(promptLength + tokens.size() - 1);
  }
};

// A token to stream once the generator is consistent again.
struct TokenEvent {
  uint64_t id;
  int64_t token;
  bool finished;
};

// Releases a tensor at scope exit.
struct TensorHolder {
  strata_tensor_t* tensor = nullptr;
  ~TensorHolder() { strata_tensor_release(tensor); }
};

strata_status_t wrapI64(const int64_t* data, uint32_t rank, const int64_t* dims,
                        size_t count, TensorHolder* out);

// Where a call's rows are: one slot per row, or with a paged cache one
// block table row of |tableWidth| blocks per row.
struct RowPlaces {
  const int64_t* data;
  int64_t tableWidth;  // 0: slots
};

// Runs |session|'s prefill entry on |length| tokens at |start| of |place|
// (one row); the logits of the last one in |*logits|.
strata_status_t runPrefill(strata_session_t* session, RowPlaces place,
                           const int64_t* chunk, int64_t length, int64_t start,
                           TensorHolder* logits);

// Runs |session|'s |entry| (decode: one token per row, verify: several)
// on |rows| rows of |tokensPerRow| ids at their places and positions.
strata_status_t runRows(strata_session_t* session, const char* entry,
                        const int64_t* ids, size_t tokensPerRow,
                        RowPlaces places, const int64_t* positions,
                        size_t rows, TensorHolder* logits);

}  // namespace strata::runtime

struct strata_generator_t {
  using Sequence = strata::runtime::Sequence;
  using TokenEvent = strata::runtime::TokenEvent;

  strata_session_t* session = nullptr;
  strata::runtime::GenerationContract contract;
  int64_t prefillChunk = 0;
  strata_generator_token_fn callback = nullptr;
  void* callbackUser = nullptr;
  bool inCallback = false;
  uint64_t nextId = 1;
  // Rank 0 of a split model's group: each call that moves the sequences
  // goes to the other ranks first (lead_group.h).
  std::optional<strata_communicator_t> leadGroup;
  // Set once a call it sent failed in a way the other ranks may not have
  // met: they were told to stop, and every later call is refused.
  bool leadStopped = false;
  std::map<uint64_t, std::unique_ptr<Sequence>> sequences;
  // The sequence in each slot, null when free.
  std::vector<Sequence*> slotOwner;
  // Prefix reuse: the tokens whose entries each slot holds at positions
  // 0..n-1, and when each slot was last taken (for LRU among free slots).
  bool prefixReuse = false;
  std::vector<std::vector<int64_t>> slotTokens;
  std::vector<uint64_t> slotTaken;
  uint64_t takeClock = 0;
  // Decode inputs and the tokens a step sampled, one per slot at most.
  std::vector<int64_t> rowIds;
  std::vector<int64_t> rowSlots;
  std::vector<int64_t> rowPositions;
  std::vector<Sequence*> rows;
  std::vector<int32_t> sampled;
  std::vector<TokenEvent> events;

  // A paged cache: its blocks, each row's table for a call ([slots, N]),
  // one block's tokens for the prefix cache, a preempted sequence's ids
  // to recompute, and how many preemptions there were.
  std::optional<strata::runtime::BlockPool> pool;
  std::vector<int64_t> rowTables;
  std::vector<int64_t> blockTokens;
  std::vector<int64_t> resumeIds;
  uint64_t preemptions = 0;
  // Prefix caching over the blocks (the prefix_reuse option).
  bool blockSharing = false;

  // Speculative decoding: off when neither a draft session nor prompt
  // lookup is set.
  strata_session_t* draftSession = nullptr;
  strata::runtime::GenerationContract draftContract;
  bool promptLookup = false;
  strata::runtime::PromptLookupParams lookupParams;
  size_t maxDraft = 0;
  bool fixedDraft = false;
  // Call times, for the draft length; plain decode steps measure too.
  strata::runtime::StepCosts costs{0};
  // Verify inputs ([rows, n] ids), the target's distributions of one row
  // ((maxDraft + 1) x vocab), one-hot drafts of prompt lookup (maxDraft x
  // vocab), the acceptance rule's residual (vocab), and the rows' verdicts.
  std::vector<int64_t> verifyIds;
  std::vector<double> targetDistributions;
  std::vector<double> certainDrafts;
  std::vector<double> residual;
  std::vector<size_t> verdictAccepted;
  std::vector<int32_t> verdictNext;
  // The draft's catch-up prefill chunk and the rows of a draft round.
  std::vector<int64_t> catchUpIds;
  std::vector<Sequence*> draftRows;
  // A paged draft cache: its pool and each draft row's table ([slots, N]).
  std::optional<strata::runtime::BlockPool> draftPool;
  std::vector<int64_t> draftTables;

  bool speculative() const { return draftSession || promptLookup; }

  size_t activeCount() const;
  Sequence* find(uint64_t id) const;
  void finish(Sequence* sequence);
  void accept(Sequence* sequence, int64_t token, strata::runtime::Clock::time_point now);
  void stream();
  // The checks of a new sequence that need no slot: its params and that the
  // prompt plus max_new_tokens fit the context. |out| (may be null) gets
  // the sampling params. Reads only the contract: callable from any thread.
  strata_status_t checkSequence(size_t promptLength,
                                const strata_generation_params_t& params,
                                strata::runtime::SamplingParams* out) const;
  // Records that |slot| now holds entries for |tokens| at positions
  // [start, start + count) (and none past them).
  void noteCached(int64_t slot, size_t start, const int64_t* tokens,
                  size_t count);
  // The free slot a new sequence with |prompt| takes, and the prompt tokens
  // whose entries it already holds; -1 if none is free.
  int64_t chooseSlot(const int64_t* prompt, size_t promptLength,
                     size_t* reused);
  // Checks a new sequence and takes a slot for it; runs nothing.
  strata_status_t beginSequence(const int64_t* prompt, size_t promptLength,
                                const strata_generation_params_t& params,
                                uint64_t* outId);
  // Runs up to |budget| more prompt tokens of |sequence|; samples and
  // streams its first token once the whole prompt has run. A failure
  // finishes the sequence with no tokens.
  strata_status_t prefill(Sequence* sequence, size_t budget);
  // Takes |token| as the first token of |sequence|, whose prompt another
  // session ran and whose cache entries were written into its slot
  // (resume_prefilled.cc).
  strata_status_t resumePrefilled(Sequence* sequence, int64_t token);
  strata_status_t step(size_t* outActive);

  // Paged caches (paged_cache.cc). The blocks |sequence| lacks for its
  // first |positions| positions, all or none; false when too few are free
  // (it then holds what it held).
  bool reserveBlocks(Sequence* sequence, size_t positions);
  // The same for its draft cache's blocks, from the draft's pool.
  bool reserveDraftBlocks(Sequence* sequence, size_t positions);
  // Where the draft's call for |sequence| reads and writes: its slot, or
  // with a paged draft cache its table, in row |row| of draftTables.
  strata::runtime::RowPlaces draftPlace(Sequence* sequence, size_t row);
  // Whether a prompt older than |sequence|'s still waits for its blocks
  // (prompts take blocks first come, first served).
  bool olderPromptWaiting(const Sequence* sequence) const;
  // Every block |sequence|'s prompt fills, the published ones that hold
  // its start shared (prefix caching: its prefill then starts after them),
  // or none when too few are free or an older prompt waits; false then.
  bool reservePromptBlocks(Sequence* sequence);
  // One block's ids (|tokens|, blockSize() of them) into |blockTokens|;
  // returns their prefix-cache key after the block keyed |parent|.
  uint64_t loadBlockTokens(uint64_t parent, const int32_t* tokens);
  // Takes the published blocks that hold the start of |tokens| (|count|
  // ids; at most the blocks before the last token's) for |sequence|;
  // returns the positions they cover.
  size_t shareCachedBlocks(Sequence* sequence, const int32_t* tokens,
                           size_t count);
  // Publishes |sequence|'s blocks that its first |filled| positions fill.
  void publishFullBlocks(Sequence* sequence, size_t filled);
  // Drops |sequence|'s hold on its blocks.
  void releaseBlocks(Sequence* sequence);
  // Gives the blocks of the newest decoding sequence newer than |than| (or
  // |than| itself) back; it recomputes them later. Returns the preempted.
  Sequence* preemptNewest(Sequence* than);
  // A block for each row's next position, preempting the newest decoding
  // sequences where the pool is short; drops preempted rows from |rows|.
  void growRowBlocks();
  // Recomputes the entries of preempted sequences the pool has room for.
  strata_status_t resumePreempted();
  // |sequence|'s block table row (padded with a valid block).
  void tableRow(const Sequence* sequence, int64_t* row) const;
  // One decode call for every row in |rows|.
  strata_status_t decodeStep();
  // Drafts, one verify call, acceptance (speculative_step.cc).
  strata_status_t speculativeStep();
  // Draws up to |longest| drafts per row from the draft model.
  strata_status_t draftTokens(size_t longest);
};

#endif  // STRATA_RUNTIME_SRC_GENERATE_GENERATOR_STATE_H_
