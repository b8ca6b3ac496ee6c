//===- generator.cc - In-process text generation over prefill/decode ------===//
// SPDX-License-Identifier: Apache-2.0
// Sequences live in slots of the session's per-sequence state. A prompt goes
// through `prefill` in chunks; each step feeds every sequence's last token
// through one `decode` call. A step samples every row before it changes
// anything, so a failure leaves all sequences as they were. Everything a
// step or a new token needs is reserved up front: after the checks, the
// only fallible operations are the runtime calls, which return statuses.

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "generate/contract.h"
#include "generate/sampler.h"
#include "strata/runtime/generate.h"
#include "strata/runtime/tensor.h"

namespace {

using Clock = std::chrono::steady_clock;
using strata::runtime::Sampler;
using strata::runtime::SamplingParams;

double millisecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// One sequence, in flight (slot >= 0) or finished.
struct Sequence {
  explicit Sequence(const SamplingParams& params) : sampler(params) {}

  uint64_t id = 0;
  int64_t slot = -1;
  bool finished = false;
  size_t promptLength = 0;
  // Most tokens it may generate (max_new_tokens, or what the context holds).
  size_t maxGenerated = 0;
  std::vector<int64_t> tokens;
  // Prompt and generated tokens, for the repetition penalty.
  std::vector<int32_t> history;
  std::vector<int64_t> stopTokens;
  Sampler sampler;
  Clock::time_point start;
  Clock::time_point last;
  double ttftMs = 0;
  std::vector<double> intervalsMs;
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
                        size_t count, TensorHolder* out) {
  // Run inputs are only read, never written.
  return strata_tensor_wrap(STRATA_DTYPE_I64, rank, dims,
                            const_cast<int64_t*>(data), count * sizeof(int64_t),
                            nullptr, nullptr, strata_allocator_system(),
                            &out->tensor);
}

int32_t historyId(int64_t token) {
  // Ids outside int32 cannot be in the vocab; the sampler ignores -1.
  return token >= 0 && token <= INT32_MAX ? static_cast<int32_t>(token) : -1;
}

// Copies a versioned input struct: |given| declares its size in its first
// field; fields past this library's must be zero so none is ignored.
strata_status_t copyVersioned(const void* given, size_t size, void* out,
                              const char* what) {
  size_t givenSize = 0;
  std::memcpy(&givenSize, given, sizeof(givenSize));
  if (givenSize < size) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "%s.struct_size is %zu, smaller than any "
                              "version of the struct (%zu)",
                              what, givenSize, size);
  }
  const auto* bytes = static_cast<const unsigned char*>(given);
  for (size_t i = size; i < givenSize; ++i) {
    if (bytes[i]) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                                "%s.struct_size is %zu and sets fields this "
                                "library (struct size %zu) does not know",
                                what, givenSize, size);
    }
  }
  std::memcpy(out, given, size);
  return nullptr;
}

strata_status_t outOfMemory() {
  return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

strata_status_t inCallbackError(const char* call) {
  return STRATA_MAKE_STATUS(STRATA_STATUS_FAILED_PRECONDITION,
                            "%s called from the token callback", call);
}

}  // namespace

struct strata_generator_t {
  strata_session_t* session = nullptr;
  strata::runtime::GenerationContract contract;
  int64_t prefillChunk = 0;
  strata_generator_token_fn callback = nullptr;
  void* callbackUser = nullptr;
  bool inCallback = false;
  uint64_t nextId = 1;
  std::map<uint64_t, std::unique_ptr<Sequence>> sequences;
  // The sequence in each slot, null when free.
  std::vector<Sequence*> slotOwner;
  // Decode inputs and the tokens a step sampled, one per slot at most.
  std::vector<int64_t> rowIds;
  std::vector<int64_t> rowSlots;
  std::vector<int64_t> rowPositions;
  std::vector<Sequence*> rows;
  std::vector<int32_t> sampled;
  std::vector<TokenEvent> events;

  size_t activeCount() const {
    return static_cast<size_t>(
        std::count_if(slotOwner.begin(), slotOwner.end(),
                      [](const Sequence* s) { return s != nullptr; }));
  }

  Sequence* find(uint64_t id) const {
    auto it = sequences.find(id);
    return it == sequences.end() ? nullptr : it->second.get();
  }

  // Ends |sequence|: its slot is reset and free for the next one.
  void finish(Sequence* sequence) {
    if (sequence->slot >= 0) {
      strata_status_free(strata_session_reset_state(session, sequence->slot));
      slotOwner[static_cast<size_t>(sequence->slot)] = nullptr;
      sequence->slot = -1;
    }
    sequence->finished = true;
  }

  // Appends a sampled token (room reserved) and finishes the sequence on a
  // stop token, at its limit, or with its context full.
  void accept(Sequence* sequence, int64_t token, Clock::time_point now) {
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
  void stream() {
    inCallback = true;
    for (const TokenEvent& event : events) {
      if (callback) {
        callback(callbackUser, event.id, event.token, event.finished ? 1 : 0);
      }
    }
    inCallback = false;
    events.clear();
  }

  // Runs one prefill chunk and samples from its logits when |token| is set.
  strata_status_t prefill(Sequence* sequence, const int64_t* chunk,
                          int64_t length, int64_t start, int32_t* token) {
    int64_t idsDims[2] = {1, length};
    TensorHolder ids, slot, position, logits;
    STRATA_RETURN_IF_ERROR(
        wrapI64(chunk, 2, idsDims, static_cast<size_t>(length), &ids));
    STRATA_RETURN_IF_ERROR(wrapI64(&sequence->slot, 0, nullptr, 1, &slot));
    STRATA_RETURN_IF_ERROR(wrapI64(&start, 0, nullptr, 1, &position));
    const char* names[3] = {"input_ids", "slot", "start"};
    const strata_tensor_t* inputs[3] = {ids.tensor, slot.tensor,
                                        position.tensor};
    const char* output = "logits";
    strata_status_t status = strata_session_run_named(
        session, "prefill", names, inputs, 3, &output, &logits.tensor, 1);
    if (status) {
      char context[96];
      std::snprintf(context, sizeof(context),
                    "prefill of tokens [%" PRId64 ", %" PRId64 ")", start,
                    start + length);
      return strata_status_annotate(status, context);
    }
    if (!token) return nullptr;
    return sequence->sampler.sample(
        static_cast<const float*>(strata_tensor_const_data(logits.tensor)),
        static_cast<size_t>(contract.vocab), sequence->history.data(),
        sequence->history.size(), token);
  }

  strata_status_t addSequence(const int64_t* prompt, size_t promptLength,
                              const strata_generation_params_t& params,
                              uint64_t* outId);
  strata_status_t step(size_t* outActive);
};

strata_status_t strata_generator_t::addSequence(
    const int64_t* prompt, size_t promptLength,
    const strata_generation_params_t& params, uint64_t* outId) {
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
  auto slotIt = std::find(slotOwner.begin(), slotOwner.end(), nullptr);
  if (slotIt == slotOwner.end()) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "no free sequence slot (%zu in use)",
                              slotOwner.size());
  }

  // Every allocation happens here, before the slot is taken.
  auto owned = std::make_unique<Sequence>(sampling);
  Sequence* sequence = owned.get();
  sequence->id = nextId;
  sequence->promptLength = promptLength;
  sequence->maxGenerated = params.max_new_tokens > 0
                               ? static_cast<size_t>(params.max_new_tokens)
                               : static_cast<size_t>(context - promptLength);
  sequence->tokens.reserve(sequence->maxGenerated);
  sequence->intervalsMs.reserve(sequence->maxGenerated);
  sequence->history.reserve(promptLength + sequence->maxGenerated);
  for (size_t i = 0; i < promptLength; ++i) {
    sequence->history.push_back(historyId(prompt[i]));
  }
  if (params.stop_token_count) {
    sequence->stopTokens.assign(params.stop_tokens,
                                params.stop_tokens + params.stop_token_count);
  }
  auto inserted = sequences.emplace(sequence->id, std::move(owned));
  ++nextId;

  sequence->start = Clock::now();
  sequence->slot = slotIt - slotOwner.begin();
  slotOwner[static_cast<size_t>(sequence->slot)] = sequence;
  int32_t token = 0;
  strata_status_t status = nullptr;
  for (size_t done = 0; !status && done < promptLength;) {
    size_t length =
        std::min(promptLength - done, static_cast<size_t>(prefillChunk));
    bool last = done + length == promptLength;
    status = prefill(sequence, prompt + done, static_cast<int64_t>(length),
                     static_cast<int64_t>(done), last ? &token : nullptr);
    done += length;
  }
  if (status) {
    finish(sequence);
    sequences.erase(inserted.first);
    return status;
  }
  accept(sequence, token, Clock::now());
  *outId = sequence->id;
  stream();
  return nullptr;
}

strata_status_t strata_generator_t::step(size_t* outActive) {
  rows.clear();
  for (Sequence* sequence : slotOwner) {
    if (!sequence) continue;
    rowIds[rows.size()] = sequence->tokens.back();
    rowSlots[rows.size()] = sequence->slot;
    // Tokens already cached: the prompt and all generated but the last.
    rowPositions[rows.size()] = static_cast<int64_t>(
        sequence->promptLength + sequence->tokens.size() - 1);
    rows.push_back(sequence);
  }
  if (rows.empty()) {
    if (outActive) *outActive = 0;
    return nullptr;
  }
  const int64_t batch = static_cast<int64_t>(rows.size());
  int64_t idsDims[2] = {batch, 1};
  TensorHolder ids, slots, positions, logits;
  const size_t count = rows.size();
  STRATA_RETURN_IF_ERROR(wrapI64(rowIds.data(), 2, idsDims, count, &ids));
  STRATA_RETURN_IF_ERROR(wrapI64(rowSlots.data(), 1, &batch, count, &slots));
  STRATA_RETURN_IF_ERROR(
      wrapI64(rowPositions.data(), 1, &batch, count, &positions));
  const char* names[3] = {"input_ids", "slots", "positions"};
  const strata_tensor_t* inputs[3] = {ids.tensor, slots.tensor,
                                      positions.tensor};
  const char* output = "logits";
  strata_status_t status = strata_session_run_named(
      session, "decode", names, inputs, 3, &output, &logits.tensor, 1);
  if (status) return strata_status_annotate(status, "decode step");
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
  const Clock::time_point now = Clock::now();
  for (size_t row = 0; row < count; ++row) accept(rows[row], sampled[row], now);
  stream();
  // After the callbacks, which may have cancelled sequences.
  if (outActive) *outActive = activeCount();
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
  try {
    auto generator = std::make_unique<strata_generator_t>();
    generator->session = session;
    generator->contract = contract;
    generator->prefillChunk =
        given.prefill_chunk ? given.prefill_chunk : contract.prefillLength;
    generator->callback = given.callback;
    generator->callbackUser = given.callback_user;
    const size_t slots = static_cast<size_t>(contract.slots);
    generator->slotOwner.assign(slots, nullptr);
    generator->rowIds.resize(slots);
    generator->rowSlots.resize(slots);
    generator->rowPositions.resize(slots);
    generator->rows.reserve(slots);
    generator->sampled.resize(slots);
    generator->events.reserve(slots);
    // Earlier runs of the session may have left tokens in the slots.
    for (int64_t slot = 0; slot < contract.slots; ++slot) {
      STRATA_RETURN_IF_ERROR(strata_session_reset_state(session, slot));
    }
    *out = generator.release();
    return nullptr;
  } catch (const std::bad_alloc&) {
    return outOfMemory();
  }
}

void strata_generator_release(strata_generator_t* generator) {
  if (!generator) return;
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

strata_status_t strata_generator_add_sequence(
    strata_generator_t* generator, const int64_t* prompt, size_t prompt_length,
    const strata_generation_params_t* params, uint64_t* out_sequence_id) {
  if (!generator || !out_sequence_id || (prompt_length && !prompt)) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator, prompt and out_sequence_id must not "
                              "be NULL");
  }
  if (generator->inCallback) {
    return inCallbackError("strata_generator_add_sequence");
  }
  if (prompt_length == 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "the prompt is empty");
  }
  strata_generation_params_t given;
  strata_generation_params_init(&given);
  if (params) {
    STRATA_RETURN_IF_ERROR(
        copyVersioned(params, sizeof(given), &given, "params"));
  }
  try {
    return generator->addSequence(prompt, prompt_length, given,
                                  out_sequence_id);
  } catch (const std::bad_alloc&) {
    return outOfMemory();
  }
}

strata_status_t strata_generator_step(strata_generator_t* generator,
                                      size_t* out_active) {
  if (!generator) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator must not be NULL");
  }
  if (generator->inCallback) return inCallbackError("strata_generator_step");
  try {
    return generator->step(out_active);
  } catch (const std::bad_alloc&) {
    return outOfMemory();
  }
}

}  // extern "C"

namespace {

strata_status_t unknownSequence(uint64_t id) {
  return STRATA_MAKE_STATUS(STRATA_STATUS_NOT_FOUND,
                            "no sequence %" PRIu64 " in the generator", id);
}

}  // namespace

extern "C" {

strata_status_t strata_generator_cancel(strata_generator_t* generator,
                                        uint64_t sequence_id) {
  if (!generator) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator must not be NULL");
  }
  Sequence* sequence = generator->find(sequence_id);
  if (!sequence) return unknownSequence(sequence_id);
  generator->finish(sequence);
  return nullptr;
}

strata_status_t strata_generator_remove_sequence(strata_generator_t* generator,
                                                 uint64_t sequence_id) {
  STRATA_RETURN_IF_ERROR(strata_generator_cancel(generator, sequence_id));
  generator->sequences.erase(sequence_id);
  return nullptr;
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
  if (metrics->struct_size < sizeof(strata_generation_metrics_t)) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "metrics.struct_size is %zu, smaller than any "
                              "version of the struct (%zu)",
                              metrics->struct_size,
                              sizeof(strata_generation_metrics_t));
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
    std::memcpy(metrics, &result, sizeof(result));
    return nullptr;
  } catch (const std::bad_alloc&) {
    return outOfMemory();
  }
}

size_t strata_generator_active_count(const strata_generator_t* generator) {
  return generator ? generator->activeCount() : 0;
}

size_t strata_generator_slot_count(const strata_generator_t* generator) {
  return generator ? generator->slotOwner.size() : 0;
}

}  // extern "C"
