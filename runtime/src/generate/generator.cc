//===- generator.cc - In-process text generation over prefill/decode ------===//
// SPDX-License-Identifier: Apache-2.0
// Sequences live in slots of the session's per-sequence state. A prompt goes
// through `prefill` in chunks; each step feeds every sequence's last token
// through one `decode` call (or, with a draft, checks drafted tokens with
// one `verify` call: speculative_step.cc). A step samples every row before it changes
// anything, so a failure leaves all sequences as they were. Everything a
// step or a new token needs is reserved up front: after the checks, the
// only fallible operations are the runtime calls, which return statuses.

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "generate/contract.h"
#include "generate/generator_state.h"
#include "generate/lead_group.h"
#include "generate/sampler.h"
#include "strata/runtime/generate.h"
#include "strata/runtime/tensor.h"
#include "versioned_struct.h"

namespace strata::runtime {

strata_status_t wrapI64(const int64_t* data, uint32_t rank, const int64_t* dims,
                        size_t count, TensorHolder* out) {
  // Run inputs are only read, never written.
  return strata_tensor_wrap(STRATA_DTYPE_I64, rank, dims,
                            const_cast<int64_t*>(data), count * sizeof(int64_t),
                            nullptr, nullptr, strata_allocator_system(),
                            &out->tensor);
}

strata_status_t runPrefill(strata_session_t* session, RowPlaces place,
                           const int64_t* chunk, int64_t length, int64_t start,
                           TensorHolder* logits) {
  int64_t idsDims[2] = {1, length};
  TensorHolder ids, slotTensor, position;
  STRATA_RETURN_IF_ERROR(
      wrapI64(chunk, 2, idsDims, static_cast<size_t>(length), &ids));
  const int64_t tableDims[2] = {1, place.tableWidth};
  if (place.tableWidth > 0) {
    STRATA_RETURN_IF_ERROR(wrapI64(place.data, 2, tableDims,
                                   static_cast<size_t>(place.tableWidth),
                                   &slotTensor));
  } else {
    STRATA_RETURN_IF_ERROR(wrapI64(place.data, 0, nullptr, 1, &slotTensor));
  }
  STRATA_RETURN_IF_ERROR(wrapI64(&start, 0, nullptr, 1, &position));
  const char* names[3] = {"input_ids",
                          place.tableWidth > 0 ? "block_table" : "slot",
                          "start"};
  const strata_tensor_t* inputs[3] = {ids.tensor, slotTensor.tensor,
                                      position.tensor};
  const char* output = "logits";
  strata_status_t status = strata_session_run_named(
      session, "prefill", names, inputs, 3, &output, &logits->tensor, 1);
  if (status) {
    char context[96];
    std::snprintf(context, sizeof(context),
                  "prefill of tokens [%" PRId64 ", %" PRId64 ")", start,
                  start + length);
    return strata_status_annotate(status, context);
  }
  return nullptr;
}

strata_status_t runRows(strata_session_t* session, const char* entry,
                        const int64_t* ids, size_t tokensPerRow,
                        RowPlaces places, const int64_t* positions,
                        size_t rows, TensorHolder* logits) {
  const int64_t batch = static_cast<int64_t>(rows);
  int64_t idsDims[2] = {batch, static_cast<int64_t>(tokensPerRow)};
  TensorHolder idsTensor, slotsTensor, positionsTensor;
  STRATA_RETURN_IF_ERROR(
      wrapI64(ids, 2, idsDims, rows * tokensPerRow, &idsTensor));
  const int64_t tableDims[2] = {batch, places.tableWidth};
  if (places.tableWidth > 0) {
    STRATA_RETURN_IF_ERROR(
        wrapI64(places.data, 2, tableDims,
                rows * static_cast<size_t>(places.tableWidth), &slotsTensor));
  } else {
    STRATA_RETURN_IF_ERROR(wrapI64(places.data, 1, &batch, rows, &slotsTensor));
  }
  STRATA_RETURN_IF_ERROR(
      wrapI64(positions, 1, &batch, rows, &positionsTensor));
  const char* names[3] = {"input_ids",
                          places.tableWidth > 0 ? "block_tables" : "slots",
                          "positions"};
  const strata_tensor_t* inputs[3] = {idsTensor.tensor, slotsTensor.tensor,
                                      positionsTensor.tensor};
  const char* output = "logits";
  return strata_session_run_named(session, entry, names, inputs, 3, &output,
                                  &logits->tensor, 1);
}

}  // namespace strata::runtime

namespace {

using strata::runtime::Clock;
using strata::runtime::copyVersioned;
using strata::runtime::GenerationContract;
using strata::runtime::millisecondsBetween;
using strata::runtime::RowPlaces;
using strata::runtime::runRows;
using strata::runtime::runPrefill;
using strata::runtime::SamplingParams;
using strata::runtime::Sequence;
using strata::runtime::TensorHolder;
using strata::runtime::TokenEvent;

int32_t historyId(int64_t token) {
  // Ids outside int32 cannot be in the vocab; the sampler ignores -1.
  return token >= 0 && token <= INT32_MAX ? static_cast<int32_t>(token) : -1;
}

strata_status_t outOfMemory() {
  return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

strata_status_t unknownSequence(uint64_t id) {
  return STRATA_MAKE_STATUS(STRATA_STATUS_NOT_FOUND,
                            "no sequence %" PRIu64 " in the generator", id);
}

strata_status_t inCallbackError(const char* call) {
  return STRATA_MAKE_STATUS(STRATA_STATUS_FAILED_PRECONDITION,
                            "%s called from the token callback", call);
}

// The draft draws its tokens from a generator of its own, seeded apart
// from the target's so the two streams of draws are independent.
constexpr uint64_t kDraftSeedSalt = 0x9E3779B97F4A7C15ull;

// The draft module against the contract and the target's |target|.
strata_status_t checkDraft(strata_session_t* draftSession,
                           const GenerationContract& target,
                           GenerationContract* draftContract) {
  strata_status_t status = strata::runtime::checkGenerationContract(
      strata_session_module(draftSession), draftContract);
  if (status) return strata_status_annotate(status, "draft model");
  if (draftContract->vocab != target.vocab) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_FAILED_PRECONDITION,
        "the draft model's vocabulary has %" PRId64
        " tokens and the target's %" PRId64
        ": drafts must come from the same tokenizer",
        draftContract->vocab, target.vocab);
  }
  if (draftContract->slots < target.slots ||
      draftContract->context < target.context) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_FAILED_PRECONDITION,
        "the draft model holds %" PRId64 " sequences of %" PRId64
        " tokens and the target %" PRId64 " of %" PRId64
        ": compile the draft with at least the target's --max-batch and "
        "--max-seq",
        draftContract->slots, draftContract->context, target.slots,
        target.context);
  }
  return nullptr;
}

// The verify entry of |session|'s module, the draft module's contract and
// the draft options of |options|.
strata_status_t checkSpeculation(strata_session_t* session,
                                 const strata_generator_options_t& options,
                                 GenerationContract* contract,
                                 GenerationContract* draftContract) {
  if (options.draft_session && options.prompt_lookup) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "draft_session and prompt_lookup are both set; "
                              "drafts come from one of them");
  }
  if (options.draft_session == session) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "the draft session is the target's session");
  }
  if (options.draft_session) {
    STRATA_RETURN_IF_ERROR(checkDraft(options.draft_session, *contract,
                                      draftContract));
  }
  STRATA_RETURN_IF_ERROR(strata::runtime::checkVerifyEntry(
      strata_session_module(session), contract));
  if (options.max_draft_tokens < 0 ||
      options.max_draft_tokens > contract->verifyLength - 1) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "max_draft_tokens is %" PRId32 ", outside [0, %" PRId64
        "] (the module's verify_length %" PRId64 " less the token before them)",
        options.max_draft_tokens, contract->verifyLength - 1,
        contract->verifyLength);
  }
  return nullptr;
}

// The lead_group option: a group this generator can lead.
strata_status_t acceptLeadGroup(const strata_communicator_t& given,
                                 bool speculative, bool fixedDraft,
                                 std::optional<strata_communicator_t>* out) {
  strata_communicator_t group;
  STRATA_RETURN_IF_ERROR(
      copyVersioned(&given, sizeof(group), &group, "lead_group"));
  if (!group.send || group.size < 2 || group.rank != 0) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "lead_group must be a group of 2 or more ranks with send, led by its "
        "rank 0 (this is rank %u of %u)",
        group.rank, group.size);
  }
  if (speculative && !fixedDraft) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "a generator that leads other ranks drafts a fixed count "
        "(fixed_draft_tokens): the adaptive count follows this process's "
        "call times, which the other ranks do not see");
  }
  *out = group;
  return nullptr;
}

using strata::runtime::LeadCall;
using strata::runtime::LeadOp;

LeadCall leadCall(LeadOp op, uint64_t sequence, uint64_t count = 0) {
  LeadCall call{};
  call.op = static_cast<uint32_t>(op);
  call.sequence = sequence;
  call.count = count;
  return call;
}

// Sends |call| (and a new sequence's ids) to the ranks |generator| leads,
// if any, with the digest of its sequences before the call.
strata_status_t lead(const strata_generator_t* generator, LeadCall call,
                     const int64_t* prompt = nullptr,
                     const int64_t* stops = nullptr) {
  if (!generator->leadGroup) return nullptr;
  if (generator->leadStopped) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_FAILED_PRECONDITION,
        "this generator stopped the ranks it leads after a failure they "
        "may not have met; make a new group");
  }
  if (!generator->inCallback) {
    call.hasDigest = 1;
    call.digest = strata::runtime::stateDigest(*generator);
  }
  return strata::runtime::sendLeadCall(*generator->leadGroup, call, prompt,
                                       stops);
}

// A new sequence's call, with the id it will get. Refusals that need no
// other rank come first, so that the ranks only see calls that can run.
strata_status_t leadNewSequence(const strata_generator_t* generator, LeadOp op,
                                const int64_t* prompt, size_t length,
                                const strata_generation_params_t& params) {
  if (!generator->leadGroup) return nullptr;
  STRATA_RETURN_IF_ERROR(generator->checkSequence(length, params, nullptr));
  if (params.stop_token_count > strata::runtime::kMostStopTokens) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "%zu stop tokens; a generator that leads other "
                              "ranks sends at most %" PRIu64,
                              params.stop_token_count,
                              strata::runtime::kMostStopTokens);
  }
  if (generator->activeCount() == generator->slotOwner.size()) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "no free sequence slot (%zu in use)",
                              generator->slotOwner.size());
  }
  LeadCall call = leadCall(op, generator->nextId, length);
  strata::runtime::putParams(params, &call);
  return lead(generator, call, prompt, params.stop_tokens);
}

// The result of a call the ranks were sent: a failure they may not have
// met stops them (they would wait for this rank in the model's next
// collective) and this generator.
strata_status_t leadOutcome(strata_generator_t* generator,
                            strata_status_t status) {
  if (!status || !generator->leadGroup || generator->leadStopped ||
      strata::runtime::failsOnEveryRank(status)) {
    return status;
  }
  generator->leadStopped = true;
  strata_status_free(strata::runtime::sendLeadCall(
      *generator->leadGroup, leadCall(LeadOp::kAbort, 0), nullptr, nullptr));
  return strata_status_annotate(
      status, "the ranks this generator leads were told to stop");
}

}  // namespace

size_t strata_generator_t::activeCount() const {
  return static_cast<size_t>(
      std::count_if(slotOwner.begin(), slotOwner.end(),
                    [](const Sequence* s) { return s != nullptr; }));
}

strata_generator_t::Sequence* strata_generator_t::find(uint64_t id) const {
  auto it = sequences.find(id);
  return it == sequences.end() ? nullptr : it->second.get();
}

void strata_generator_t::finish(Sequence* sequence) {
  // The slot is not zero-filled: the next sequence's entries read only the
  // positions they have rewritten (the contract), and zeroing a long
  // context's slot cost milliseconds at every finish and made the whole
  // slot resident.
  if (sequence->slot >= 0) {
    slotOwner[static_cast<size_t>(sequence->slot)] = nullptr;
    sequence->slot = -1;
  }
  if (pool) releaseBlocks(sequence);
  if (draftPool) {
    for (int64_t block : sequence->draftBlocks) draftPool->release(block);
    sequence->draftBlocks.clear();
  }
  sequence->finished = true;
}

// Appends a sampled token (room reserved) and finishes the sequence on a
// stop token, at its limit, or with its context full.
void strata_generator_t::accept(Sequence* sequence, int64_t token,
                                Clock::time_point now) {
  if (sequence->tokens.empty()) {
    sequence->ttftMs = millisecondsBetween(sequence->start, now);
  } else {
    sequence->intervalsMs.push_back(millisecondsBetween(sequence->last, now));
  }
  sequence->last = now;
  sequence->tokens.push_back(token);
  sequence->history.push_back(historyId(token));
  const auto& stops = sequence->stopTokens;
  bool end = std::find(stops.begin(), stops.end(), token) != stops.end() ||
             sequence->tokens.size() >= sequence->maxGenerated;
  if (end) finish(sequence);
  events.push_back({sequence->id, token, end});
}

// Streams the queued events; the callback may cancel or read.
void strata_generator_t::stream() {
  inCallback = true;
  for (const TokenEvent& event : events) {
    if (callback) {
      callback(callbackUser, event.id, event.token, event.finished ? 1 : 0);
    }
  }
  inCallback = false;
  events.clear();
}

void strata_generator_t::noteCached(int64_t slot, size_t start,
                                    const int64_t* tokens, size_t count) {
  if (!prefixReuse) return;
  std::vector<int64_t>& cached = slotTokens[static_cast<size_t>(slot)];
  // Room for the whole context was reserved: this never allocates.
  cached.resize(std::min(cached.size(), start));
  if (cached.size() == start) cached.insert(cached.end(), tokens, tokens + count);
}

int64_t strata_generator_t::chooseSlot(const int64_t* prompt,
                                       size_t promptLength, size_t* reused) {
  // A shorter shared start is not worth a slot another prefix may need.
  constexpr size_t kMinReuse = 16;
  int64_t best = -1;
  size_t bestShared = 0;
  for (size_t slot = 0; slot < slotOwner.size(); ++slot) {
    if (slotOwner[slot]) continue;
    size_t shared = 0;
    if (prefixReuse) {
      const std::vector<int64_t>& cached = slotTokens[slot];
      const size_t most = std::min(cached.size(), promptLength - 1);
      while (shared < most && cached[shared] == prompt[shared]) ++shared;
      if (shared < kMinReuse) shared = 0;
    }
    // The longest shared start; among equals the least recently taken slot,
    // which keeps the entries of recent sequences for longer.
    if (best < 0 || shared > bestShared ||
        (shared == bestShared &&
         slotTaken[slot] < slotTaken[static_cast<size_t>(best)])) {
      best = static_cast<int64_t>(slot);
      bestShared = shared;
    }
  }
  *reused = bestShared;
  return best;
}

strata_status_t strata_generator_t::checkSequence(
    size_t promptLength, const strata_generation_params_t& params,
    SamplingParams* out) const {
  SamplingParams sampling;
  sampling.temperature = params.temperature;
  sampling.topK = params.top_k;
  sampling.topP = params.top_p;
  sampling.minP = params.min_p;
  sampling.repetitionPenalty = params.repetition_penalty;
  sampling.seed = params.seed;
  STRATA_RETURN_IF_ERROR(strata::runtime::validateSamplingParams(sampling));
  if (params.max_new_tokens < 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "max_new_tokens is %" PRId64
                              " (must be >= 0; 0 = until the context is full)",
                              params.max_new_tokens);
  }
  if (params.stop_token_count && !params.stop_tokens) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "stop_tokens is NULL with stop_token_count %zu",
                              params.stop_token_count);
  }
  // The prompt and every generated token but the last must fit the cache.
  const uint64_t context = static_cast<uint64_t>(contract.context);
  const uint64_t wanted = params.max_new_tokens > 0
                              ? static_cast<uint64_t>(params.max_new_tokens)
                              : 1;
  if (promptLength > context || wanted > context - promptLength) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_OUT_OF_RANGE,
        "a prompt of %zu tokens plus max_new_tokens %" PRId64
        " exceeds the context of %" PRId64 " tokens",
        promptLength, params.max_new_tokens, contract.context);
  }
  if (out) *out = sampling;
  return nullptr;
}

strata_status_t strata_generator_t::beginSequence(
    const int64_t* prompt, size_t promptLength,
    const strata_generation_params_t& params, uint64_t* outId) {
  SamplingParams sampling;
  STRATA_RETURN_IF_ERROR(checkSequence(promptLength, params, &sampling));
  const uint64_t context = static_cast<uint64_t>(contract.context);
  size_t reused = 0;
  const int64_t slot = chooseSlot(prompt, promptLength, &reused);
  if (slot < 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "no free sequence slot (%zu in use)",
                              slotOwner.size());
  }

  // Every allocation happens here, before the slot is taken.
  SamplingParams draftSampling = sampling;
  draftSampling.seed = sampling.seed ^ kDraftSeedSalt;
  auto owned = std::make_unique<Sequence>(sampling, draftSampling, maxDraft,
                                          fixedDraft);
  Sequence* sequence = owned.get();
  sequence->id = nextId;
  sequence->promptLength = promptLength;
  sequence->maxGenerated = params.max_new_tokens > 0
                               ? static_cast<size_t>(params.max_new_tokens)
                               : static_cast<size_t>(context - promptLength);
  sequence->tokens.reserve(sequence->maxGenerated);
  sequence->intervalsMs.reserve(sequence->maxGenerated);
  // Drafts join the history while the target's distributions are made.
  sequence->history.reserve(promptLength + sequence->maxGenerated + maxDraft);
  for (size_t i = 0; i < promptLength; ++i) {
    sequence->history.push_back(historyId(prompt[i]));
  }
  sequence->prompt.assign(prompt, prompt + promptLength);
  if (pool) {
    const size_t perSequence = static_cast<size_t>(contract.blocksPerSequence);
    sequence->blocks.reserve(perSequence);
    sequence->blockKeys.reserve(perSequence);
  }
  if (params.stop_token_count) {
    sequence->stopTokens.assign(params.stop_tokens,
                                params.stop_tokens + params.stop_token_count);
  }
  if (speculative()) {
    sequence->drafts.resize(maxDraft);
    if (draftSession) {
      sequence->draftDistributions.resize(maxDraft *
                                          static_cast<size_t>(contract.vocab));
    }
  }
  sequences.emplace(sequence->id, std::move(owned));
  ++nextId;

  sequence->start = Clock::now();
  sequence->slot = slot;
  sequence->prefilled = reused;
  sequence->reusedPrompt = reused;
  slotOwner[static_cast<size_t>(slot)] = sequence;
  slotTaken[static_cast<size_t>(slot)] = ++takeClock;
  if (prefixReuse) slotTokens[static_cast<size_t>(slot)].resize(reused);
  *outId = sequence->id;
  return nullptr;
}

strata_status_t strata_generator_t::prefill(Sequence* sequence,
                                            size_t budget) {
  const size_t promptLength = sequence->promptLength;
  const int64_t* prompt = sequence->prompt.data();
  int32_t token = 0;
  strata_status_t status = nullptr;
  size_t done = sequence->prefilled;
  // A paged prompt takes all its blocks before its first chunk, or waits
  // holding none (also behind an older prompt that waits: first come,
  // first served).
  if (pool && done < promptLength && !reservePromptBlocks(sequence)) {
    return nullptr;
  }
  done = sequence->prefilled;
  RowPlaces place{&sequence->slot, 0};
  if (pool) {
    tableRow(sequence, rowTables.data());
    place = RowPlaces{rowTables.data(), contract.blocksPerSequence};
  }
  while (!status && done < promptLength && budget > 0) {
    size_t length = std::min({promptLength - done,
                              static_cast<size_t>(prefillChunk), budget});
    TensorHolder logits;
    status = runPrefill(session, place, prompt + done,
                        static_cast<int64_t>(length),
                        static_cast<int64_t>(done), &logits);
    noteCached(sequence->slot, done, prompt + done, status ? 0 : length);
    if (pool && !status) publishFullBlocks(sequence, done + length);
    done += length;
    budget -= length;
    if (!status && done == promptLength) {
      status = sequence->sampler.sample(
          static_cast<const float*>(strata_tensor_const_data(logits.tensor)),
          static_cast<size_t>(contract.vocab), sequence->history.data(),
          sequence->history.size(), &token);
    }
  }
  if (!status) sequence->prefilled = done;
  if (!status && done < promptLength) return nullptr;
  // The first token's time is the target's; the draft's cache then takes
  // the prompt too (its logits are not needed).
  const Clock::time_point firstToken = Clock::now();
  // A paged draft cache short of blocks for the prompt leaves it to the
  // catch-up of the first step that drafts (draftTokens).
  const size_t draftChunk = static_cast<size_t>(draftContract.prefillLength);
  const bool draftPrompt =
      draftSession && reserveDraftBlocks(sequence, promptLength);
  for (size_t drafted = 0; draftPrompt && !status && drafted < promptLength;) {
    size_t length = std::min(promptLength - drafted, draftChunk);
    TensorHolder logits;
    status = runPrefill(draftSession, draftPlace(sequence, 0),
                        prompt + drafted,
                        static_cast<int64_t>(length),
                        static_cast<int64_t>(drafted), &logits);
    if (status) status = strata_status_annotate(status, "draft model");
    drafted += length;
  }
  if (status) {
    finish(sequence);
    return status;
  }
  sequence->draftCached = draftPrompt ? static_cast<int64_t>(promptLength) : 0;
  // The drafts read the history; the prompt's own copy is no longer needed.
  sequence->prompt = std::vector<int64_t>();
  accept(sequence, token, firstToken);
  stream();
  return nullptr;
}

strata_status_t strata_generator_t::step(size_t* outActive) {
  if (pool) STRATA_RETURN_IF_ERROR(resumePreempted());
  rows.clear();
  for (Sequence* sequence : slotOwner) {
    if (sequence && sequence->decoding()) rows.push_back(sequence);
  }
  if (pool) growRowBlocks();
  if (rows.empty()) {
    if (outActive) *outActive = activeCount();
    return nullptr;
  }
  STRATA_RETURN_IF_ERROR(speculative() ? speculativeStep() : decodeStep());
  stream();
  // After the callbacks, which may have cancelled sequences.
  if (outActive) *outActive = activeCount();
  return nullptr;
}

strata_status_t strata_generator_t::decodeStep() {
  const size_t count = rows.size();
  const int64_t width = contract.blocksPerSequence;
  for (size_t row = 0; row < count; ++row) {
    rowIds[row] = rows[row]->tokens.back();
    rowSlots[row] = rows[row]->slot;
    rowPositions[row] = rows[row]->position();
    if (pool) tableRow(rows[row], rowTables.data() + row * width);
  }
  TensorHolder logits;
  const Clock::time_point started = Clock::now();
  const RowPlaces places = pool ? RowPlaces{rowTables.data(), width}
                                : RowPlaces{rowSlots.data(), 0};
  strata_status_t status =
      runRows(session, "decode", rowIds.data(), 1, places,
              rowPositions.data(), count, &logits);
  for (size_t row = 0; row < count; ++row) {
    noteCached(rowSlots[row], static_cast<size_t>(rowPositions[row]),
               &rowIds[row], status ? 0 : 1);
  }
  if (status) return strata_status_annotate(status, "decode step");
  if (pool) {
    for (size_t row = 0; row < count; ++row) {
      publishFullBlocks(rows[row], static_cast<size_t>(rowPositions[row]) + 1);
    }
  }
  const Clock::time_point now = Clock::now();
  costs.recordDecode(millisecondsBetween(started, now));
  const auto* values =
      static_cast<const float*>(strata_tensor_const_data(logits.tensor));
  const size_t vocab = static_cast<size_t>(contract.vocab);
  // Sample every row before accepting any token, so a failure moves none.
  for (size_t row = 0; row < count; ++row) {
    Sequence* sequence = rows[row];
    status = sequence->sampler.sample(values + row * vocab, vocab,
                                      sequence->history.data(),
                                      sequence->history.size(), &sampled[row]);
    if (status) {
      char context[64];
      std::snprintf(context, sizeof(context), "sampling sequence %" PRIu64,
                    sequence->id);
      return strata_status_annotate(status, context);
    }
  }
  for (size_t row = 0; row < count; ++row) {
    ++rows[row]->targetSteps;
    accept(rows[row], sampled[row], now);
  }
  return nullptr;
}

extern "C" {

void strata_generator_options_init(strata_generator_options_t* options) {
  if (!options) return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
}

void strata_generation_params_init(strata_generation_params_t* params) {
  if (!params) return;
  std::memset(params, 0, sizeof(*params));
  params->struct_size = sizeof(*params);
  params->top_p = 1.0f;
  params->repetition_penalty = 1.0f;
}

void strata_generation_metrics_init(strata_generation_metrics_t* metrics) {
  if (!metrics) return;
  std::memset(metrics, 0, sizeof(*metrics));
  metrics->struct_size = sizeof(*metrics);
}

strata_status_t strata_generator_create(
    strata_session_t* session, const strata_generator_options_t* options,
    strata_generator_t** out) {
  if (!session || !out) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "session and out must not be NULL");
  }
  strata_generator_options_t given;
  strata_generator_options_init(&given);
  if (options) {
    STRATA_RETURN_IF_ERROR(
        copyVersioned(options, sizeof(given), &given, "options"));
  }
  strata::runtime::GenerationContract contract;
  STRATA_RETURN_IF_ERROR(strata::runtime::checkGenerationContract(
      strata_session_module(session), &contract));
  if (given.prefill_chunk < 0 || given.prefill_chunk > contract.prefillLength) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "prefill_chunk is %" PRId64
                              ", outside [0, %" PRId64 "] (0 = prefill_length)",
                              given.prefill_chunk, contract.prefillLength);
  }
  const bool speculative = given.draft_session || given.prompt_lookup;
  std::optional<strata_communicator_t> leadGroup;
  if (given.lead_group) {
    STRATA_RETURN_IF_ERROR(acceptLeadGroup(*given.lead_group, speculative,
                                           given.fixed_draft_tokens != 0,
                                           &leadGroup));
  }
  GenerationContract draftContract;
  if (speculative) {
    STRATA_RETURN_IF_ERROR(checkSpeculation(session, given, &contract,
                                            &draftContract));
  }
  try {
    auto generator = std::make_unique<strata_generator_t>();
    generator->session = session;
    generator->contract = contract;
    generator->prefillChunk =
        given.prefill_chunk ? given.prefill_chunk : contract.prefillLength;
    generator->callback = given.callback;
    generator->callbackUser = given.callback_user;
    generator->leadGroup = leadGroup;
    const size_t slots = static_cast<size_t>(contract.slots);
    const size_t vocab = static_cast<size_t>(contract.vocab);
    generator->slotOwner.assign(slots, nullptr);
    generator->slotTaken.assign(slots, 0);
    generator->prefixReuse =
        given.prefix_reuse && !speculative && contract.positionsInPlace;
    if (generator->prefixReuse) {
      generator->slotTokens.resize(slots);
      for (auto& cached : generator->slotTokens) {
        cached.reserve(static_cast<size_t>(contract.context));
      }
    }
    if (contract.paged()) {
      generator->pool.emplace(contract.blockCount, contract.blockSize);
      // Off with speculation, as slot reuse is.
      generator->blockSharing = given.prefix_reuse != 0 && !speculative;
      generator->rowTables.resize(
          slots * static_cast<size_t>(contract.blocksPerSequence));
      generator->blockTokens.resize(static_cast<size_t>(contract.blockSize));
      generator->resumeIds.resize(static_cast<size_t>(contract.context));
    }
    generator->rowIds.resize(slots);
    generator->rowSlots.resize(slots);
    generator->rowPositions.resize(slots);
    generator->rows.reserve(slots);
    generator->sampled.resize(slots);
    if (speculative) {
      const size_t most =
          given.max_draft_tokens > 0
              ? static_cast<size_t>(given.max_draft_tokens)
              : static_cast<size_t>(contract.verifyLength - 1);
      generator->draftSession = given.draft_session;
      generator->draftContract = draftContract;
      generator->promptLookup = given.prompt_lookup != 0;
      generator->maxDraft = most;
      generator->fixedDraft = given.fixed_draft_tokens != 0;
      generator->costs = strata::runtime::StepCosts(most + 1);
      generator->verifyIds.resize(slots * (most + 1));
      generator->targetDistributions.resize((most + 1) * vocab);
      if (generator->promptLookup) generator->certainDrafts.resize(most * vocab);
      generator->residual.resize(vocab);
      generator->verdictAccepted.resize(slots);
      generator->verdictNext.resize(slots);
      generator->catchUpIds.resize(
          static_cast<size_t>(draftContract.prefillLength));
      if (draftContract.paged()) {
        generator->draftPool.emplace(draftContract.blockCount,
                                     draftContract.blockSize);
        generator->draftTables.resize(
            slots * static_cast<size_t>(draftContract.blocksPerSequence));
      }
      generator->draftRows.reserve(slots);
    }
    generator->events.reserve(slots * (generator->maxDraft + 1));
    // Tokens earlier runs of the sessions left in the slots are never read
    // (finish() says why), so the slots are taken as they are.
    *out = generator.release();
    return nullptr;
  } catch (const std::bad_alloc&) {
    return outOfMemory();
  }
}

void strata_generator_release(strata_generator_t* generator) {
  if (!generator) return;
  // The followers return from strata_generator_follow; a transport that
  // fails here leaves nothing to tell.
  if (generator->leadGroup && !generator->leadStopped) {
    strata_status_free(sendLeadCall(*generator->leadGroup,
                                    leadCall(LeadOp::kRelease, 0), nullptr,
                                    nullptr));
  }
  for (Sequence* sequence : generator->slotOwner) {
    if (sequence) generator->finish(sequence);
  }
  delete generator;
}

strata_status_t strata_generator_set_callback(
    strata_generator_t* generator, strata_generator_token_fn callback,
    void* user) {
  if (!generator) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator must not be NULL");
  }
  if (generator->inCallback) {
    return inCallbackError("strata_generator_set_callback");
  }
  generator->callback = callback;
  generator->callbackUser = user;
  return nullptr;
}

namespace {

// The checks add_sequence and begin_sequence share; |*given| the params.
strata_status_t checkNewSequence(const strata_generator_t* generator,
                                 const int64_t* prompt, size_t prompt_length,
                                 const strata_generation_params_t* params,
                                 const uint64_t* out_sequence_id,
                                 const char* call,
                                 strata_generation_params_t* given) {
  if (!generator || !out_sequence_id || (prompt_length && !prompt)) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator, prompt and out_sequence_id must not "
                              "be NULL");
  }
  if (generator->inCallback) return inCallbackError(call);
  if (prompt_length == 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "the prompt is empty");
  }
  strata_generation_params_init(given);
  if (params) {
    STRATA_RETURN_IF_ERROR(
        copyVersioned(params, sizeof(*given), given, "params"));
  }
  return nullptr;
}

}  // namespace

strata_status_t strata_generator_begin_sequence(
    strata_generator_t* generator, const int64_t* prompt, size_t prompt_length,
    const strata_generation_params_t* params, uint64_t* out_sequence_id) {
  strata_generation_params_t given;
  STRATA_RETURN_IF_ERROR(checkNewSequence(generator, prompt, prompt_length,
                                          params, out_sequence_id,
                                          "strata_generator_begin_sequence",
                                          &given));
  STRATA_RETURN_IF_ERROR(leadNewSequence(generator, LeadOp::kBeginSequence,
                                         prompt, prompt_length, given));
  strata_status_t status = nullptr;
  try {
    status = generator->beginSequence(prompt, prompt_length, given,
                                      out_sequence_id);
  } catch (const std::bad_alloc&) {
    status = outOfMemory();
  }
  return leadOutcome(generator, status);
}

strata_status_t strata_generator_prefill(strata_generator_t* generator,
                                         uint64_t sequence_id,
                                         size_t max_tokens,
                                         size_t* out_remaining) {
  if (!generator) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator must not be NULL");
  }
  if (generator->inCallback) return inCallbackError("strata_generator_prefill");
  Sequence* sequence = generator->find(sequence_id);
  if (!sequence) return unknownSequence(sequence_id);
  if (sequence->finished) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_FAILED_PRECONDITION,
                              "sequence %" PRIu64 " has finished",
                              sequence_id);
  }
  if (max_tokens == 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "max_tokens is 0");
  }
  STRATA_RETURN_IF_ERROR(
      lead(generator, leadCall(LeadOp::kPrefill, sequence_id, max_tokens)));
  strata_status_t status = nullptr;
  try {
    // A preempted sequence is recomputed by the steps, not here.
    if (!sequence->decoding() && !sequence->preempted) {
      status = generator->prefill(sequence, max_tokens);
    }
  } catch (const std::bad_alloc&) {
    status = outOfMemory();
  }
  // The token callback may have removed the sequence.
  sequence = generator->find(sequence_id);
  if (out_remaining) {
    *out_remaining = !sequence || sequence->decoding() || sequence->finished
                         ? 0
                         : sequence->promptLength - sequence->prefilled;
  }
  return leadOutcome(generator, status);
}

strata_status_t strata_generator_add_sequence(
    strata_generator_t* generator, const int64_t* prompt, size_t prompt_length,
    const strata_generation_params_t* params, uint64_t* out_sequence_id) {
  strata_generation_params_t given;
  STRATA_RETURN_IF_ERROR(checkNewSequence(generator, prompt, prompt_length,
                                          params, out_sequence_id,
                                          "strata_generator_add_sequence",
                                          &given));
  STRATA_RETURN_IF_ERROR(leadNewSequence(generator, LeadOp::kAddSequence,
                                         prompt, prompt_length, given));
  strata_status_t status = nullptr;
  try {
    uint64_t id = 0;
    status = generator->beginSequence(prompt, prompt_length, given, &id);
    if (!status) status = generator->prefill(generator->find(id), prompt_length);
    // The token callback may have removed the sequence.
    Sequence* sequence = status ? nullptr : generator->find(id);
    // A paged prompt that found too few free blocks ran nothing.
    if (sequence && generator->pool && !sequence->finished &&
        !sequence->decoding()) {
      status = STRATA_MAKE_STATUS(
          STRATA_STATUS_RESOURCE_EXHAUSTED,
          "the paged KV cache has %" PRId64 " free blocks of %" PRId64
          ", too few for a prompt of %zu tokens",
          generator->pool->available(), generator->contract.blockSize,
          prompt_length);
      generator->finish(sequence);
    }
    if (status) {
      generator->sequences.erase(id);
    } else {
      *out_sequence_id = id;
    }
  } catch (const std::bad_alloc&) {
    status = outOfMemory();
  }
  return leadOutcome(generator, status);
}

strata_status_t strata_generator_step(strata_generator_t* generator,
                                      size_t* out_active) {
  if (!generator) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator must not be NULL");
  }
  if (generator->inCallback) return inCallbackError("strata_generator_step");
  STRATA_RETURN_IF_ERROR(lead(generator, leadCall(LeadOp::kStep, 0)));
  strata_status_t status = nullptr;
  try {
    status = generator->step(out_active);
  } catch (const std::bad_alloc&) {
    status = outOfMemory();
  }
  return leadOutcome(generator, status);
}

namespace {

// Cancels sequence |id| and, for kRemoveSequence, forgets it; one call
// for the ranks |generator| leads.
strata_status_t endSequence(strata_generator_t* generator, uint64_t id,
                            LeadOp op) {
  if (!generator) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator must not be NULL");
  }
  Sequence* sequence = generator->find(id);
  if (!sequence) return unknownSequence(id);
  STRATA_RETURN_IF_ERROR(lead(generator, leadCall(op, id)));
  generator->finish(sequence);
  if (op == LeadOp::kRemoveSequence) generator->sequences.erase(id);
  return nullptr;
}

}  // namespace

strata_status_t strata_generator_cancel(strata_generator_t* generator,
                                        uint64_t sequence_id) {
  return endSequence(generator, sequence_id, LeadOp::kCancel);
}

strata_status_t strata_generator_remove_sequence(strata_generator_t* generator,
                                                 uint64_t sequence_id) {
  return endSequence(generator, sequence_id, LeadOp::kRemoveSequence);
}

strata_status_t strata_generator_sequence_tokens(
    const strata_generator_t* generator, uint64_t sequence_id,
    const int64_t** tokens, size_t* count) {
  if (!generator || !tokens || !count) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator, tokens and count must not be NULL");
  }
  const Sequence* sequence = generator->find(sequence_id);
  if (!sequence) return unknownSequence(sequence_id);
  *tokens = sequence->tokens.data();
  *count = sequence->tokens.size();
  return nullptr;
}

strata_status_t strata_generator_sequence_finished(
    const strata_generator_t* generator, uint64_t sequence_id,
    int* out_finished) {
  if (!generator || !out_finished) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator and out_finished must not be NULL");
  }
  const Sequence* sequence = generator->find(sequence_id);
  if (!sequence) return unknownSequence(sequence_id);
  *out_finished = sequence->finished ? 1 : 0;
  return nullptr;
}

strata_status_t strata_generator_metrics(const strata_generator_t* generator,
                                         uint64_t sequence_id,
                                         strata_generation_metrics_t* metrics) {
  if (!generator || !metrics) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator and metrics must not be NULL");
  }
  // The first version of the struct ended before the speculative fields.
  constexpr size_t kFirstVersionSize =
      offsetof(strata_generation_metrics_t, draft_tokens);
  if (metrics->struct_size < kFirstVersionSize) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "metrics.struct_size is %zu, smaller than any "
                              "version of the struct (%zu)",
                              metrics->struct_size, kFirstVersionSize);
  }
  const Sequence* sequence = generator->find(sequence_id);
  if (!sequence) return unknownSequence(sequence_id);
  try {
    strata_generation_metrics_t result;
    strata_generation_metrics_init(&result);
    result.struct_size = metrics->struct_size;
    result.prompt_tokens = sequence->promptLength;
    result.generated_tokens = sequence->tokens.size();
    result.ttft_ms = sequence->ttftMs;
    result.draft_tokens = sequence->draftTokens;
    result.accepted_draft_tokens = sequence->acceptedDraftTokens;
    result.target_steps = sequence->targetSteps;
    result.reused_prompt_tokens = sequence->reusedPrompt;
    std::vector<double> sorted = sequence->intervalsMs;
    if (!sorted.empty()) {
      std::sort(sorted.begin(), sorted.end());
      double sum = 0;
      for (double interval : sorted) sum += interval;
      result.tpot_ms = sum / static_cast<double>(sorted.size());
      // Nearest rank: the smallest value with at least p of them below.
      auto rank = [&](double p) {
        size_t index = static_cast<size_t>(
            std::ceil(p * static_cast<double>(sorted.size())));
        return sorted[std::max<size_t>(index, 1) - 1];
      };
      result.p50_ms = rank(0.5);
      result.p99_ms = rank(0.99);
    }
    double elapsedMs = millisecondsBetween(sequence->start, sequence->last);
    if (!sequence->tokens.empty() && elapsedMs > 0) {
      result.tokens_per_second =
          static_cast<double>(sequence->tokens.size()) * 1000.0 / elapsedMs;
    }
    // An older caller's struct gets the fields it has.
    std::memcpy(metrics, &result, std::min(sizeof(result), metrics->struct_size));
    return nullptr;
  } catch (const std::bad_alloc&) {
    return outOfMemory();
  }
}

void strata_generator_cache_stats_init(strata_generator_cache_stats_t* stats) {
  if (!stats) return;
  std::memset(stats, 0, sizeof(*stats));
  stats->struct_size = sizeof(*stats);
}

strata_status_t strata_generator_cache_stats(
    const strata_generator_t* generator,
    strata_generator_cache_stats_t* stats) {
  if (!generator || !stats) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator and stats must not be NULL");
  }
  if (stats->struct_size < sizeof(*stats)) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "stats.struct_size is %zu, smaller than any "
                              "version of the struct (%zu)",
                              stats->struct_size, sizeof(*stats));
  }
  strata_generator_cache_stats_t result;
  strata_generator_cache_stats_init(&result);
  if (generator->pool) {
    result.block_size = static_cast<uint64_t>(generator->pool->blockSize());
    result.blocks_total = static_cast<uint64_t>(generator->pool->blockCount());
    result.blocks_used = static_cast<uint64_t>(generator->pool->used());
    result.preemptions = generator->preemptions;
  }
  std::memcpy(stats, &result, sizeof(result));
  return nullptr;
}

size_t strata_generator_active_count(const strata_generator_t* generator) {
  return generator ? generator->activeCount() : 0;
}

size_t strata_generator_slot_count(const strata_generator_t* generator) {
  return generator ? generator->slotOwner.size() : 0;
}

}  // extern "C"
