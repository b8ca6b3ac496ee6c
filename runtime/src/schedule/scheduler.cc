//===- scheduler.cc - Continuous batching of generation requests ----------===//
// SPDX-License-Identifier: Apache-2.0
// One thread (the engine) owns the generator and runs iterations: apply the
// cancellations asked for since the last one, move waiting requests into
// free slots, run prefill chunks under the token budget, then one decode
// step for every sequence whose prompt has run. Other threads only touch
// the queue, the request table and the counters, under |mutex|; the engine
// never holds the lock while it runs the model or calls a callback.

#include "strata/runtime/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <system_error>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "generate/generator_state.h"
#include "versioned_struct.h"

namespace {

using strata::runtime::Clock;
using strata::runtime::millisecondsBetween;

constexpr int32_t kDefaultMaxQueue = 256;

struct Request {
  uint64_t id = 0;
  int32_t priority = 0;
  std::vector<int64_t> prompt;
  std::vector<int64_t> stopTokens;
  strata_generation_params_t params{};
  strata_request_fn callback = nullptr;
  void* user = nullptr;
  Clock::time_point submitted;
  Clock::time_point admitted;
  Clock::time_point firstToken;
  // Engine side, once admitted: the generator's sequence and progress.
  uint64_t sequence = 0;
  bool inGenerator = false;
  // Prompt tokens run or found cached so far, and of those the cached.
  size_t promptRun = 0;
  size_t promptReused = 0;
  uint64_t generated = 0;
  bool done = false;
  // Set under the scheduler's lock just before the final event is sent, so
  // that a cancel after the event finds nothing to cancel.
  bool ended = false;
};

// Waiting order: higher priority first, then earlier submission (ids grow).
struct QueueOrder {
  bool operator()(const Request* a, const Request* b) const {
    if (a->priority != b->priority) return a->priority > b->priority;
    return a->id < b->id;
  }
};

}  // namespace

struct strata_scheduler_t {
  strata_generator_t* generator = nullptr;
  size_t maxSeqs = 0;
  size_t maxBatchedTokens = 0;
  size_t maxQueue = 0;
  uint64_t context = 0;
  uint64_t vocab = 0;
  bool staticBatching = false;

  std::mutex mutex;
  std::condition_variable wake;      // the engine: work, a cancel, a stop
  std::condition_variable settled;   // drain: a request had its final event
  // Guarded by |mutex|.
  uint64_t nextId = 1;
  std::set<Request*, QueueOrder> queue;
  std::map<uint64_t, std::unique_ptr<Request>> requests;
  std::vector<uint64_t> cancels;
  bool draining = false;
  bool stopping = false;
  size_t runningCount = 0;
  uint64_t cachedTokens = 0;
  strata_generator_cache_stats_t cache{};
  strata_scheduler_stats_t counters{};

  // The engine's own.
  std::vector<Request*> running;
  std::map<uint64_t, Request*> bySequence;
  std::vector<Request*> finishedNow;
  // Static batching: generator sequences whose request has ended, still
  // decoding (their tokens dropped) until the batch's longest ends, as the
  // rows of a static batch do in the systems that batch this way.
  std::set<uint64_t> held;
  uint64_t tokensUncounted = 0;
  uint64_t paddingUncounted = 0;
  std::thread engine;

  void run();
  bool iterate();
  // |batchNewTokens|: with static batching, the most tokens any request of
  // the batch asks for (each row decodes that long).
  void admit(Request* request, int64_t batchNewTokens);
  // Positions the context has past |request|'s prompt.
  int64_t contextLeft(const Request* request) const;
  // Tokens |request| asks for: max_new_tokens, or up to the context.
  int64_t newTokensAsked(const Request* request) const;
  void prefillWaiting(size_t budget);
  // Counts the prompt tokens the generator found cached for |request|
  // since the last call (at admission, or a paged cache's first prefill).
  void countReused(Request* request);
  // Adds what speculative decoding did for |request| to the counters.
  void countDrafts(const Request* request);
  void decode();
  void finalize(Request* request, strata_request_state_t state,
                bool hasToken, int64_t token, const char* error);
  void failRunning(strata_status_t status, bool decodingOnly);
  void sweepFinished();
  static void onToken(void* user, uint64_t sequence, int64_t token,
                      int finished);
};

// A token from the generator: stream it, and a sequence's last one ends its
// request (the generator has freed the slot).
void strata_scheduler_t::onToken(void* user, uint64_t sequence, int64_t token,
                                 int finished) {
  auto* self = static_cast<strata_scheduler_t*>(user);
  if (self->held.count(sequence)) {
    ++self->paddingUncounted;
    if (finished) self->held.erase(sequence);
    return;
  }
  auto it = self->bySequence.find(sequence);
  if (it == self->bySequence.end()) return;
  Request* request = it->second;
  const Clock::time_point now = Clock::now();
  if (request->generated == 0) request->firstToken = now;
  ++request->generated;
  ++self->tokensUncounted;
  const auto& stops = request->stopTokens;
  const bool stopped = std::find(stops.begin(), stops.end(), token) != stops.end();
  // A static batch's rows run on past their own end (admit): the request
  // ends here, its sequence decodes on as padding.
  if (!finished && self->staticBatching &&
      (stopped || static_cast<int64_t>(request->generated) >=
                      self->newTokensAsked(request))) {
    self->held.insert(sequence);
    self->finalize(request, stopped ? STRATA_REQUEST_STOPPED : STRATA_REQUEST_LENGTH,
                   true, token, nullptr);
    return;
  }
  if (!finished) {
    strata_request_event_t event{};
    event.request_id = request->id;
    event.state = STRATA_REQUEST_RUNNING;
    event.has_token = 1;
    event.token = token;
    request->callback(request->user, &event);
    return;
  }
  self->finalize(request, stopped ? STRATA_REQUEST_STOPPED : STRATA_REQUEST_LENGTH,
                 true, token, nullptr);
}

// The final event; the request leaves the generator (forgotten there) and,
// at the next sweep, the engine's lists.
void strata_scheduler_t::finalize(Request* request, strata_request_state_t state,
                                  bool hasToken, int64_t token,
                                  const char* error) {
  if (request->done) return;
  request->done = true;
  if (request->inGenerator) {
    countDrafts(request);
    if (!held.count(request->sequence))
      strata_status_free(
          strata_generator_remove_sequence(generator, request->sequence));
    bySequence.erase(request->sequence);
    request->inGenerator = false;
    finishedNow.push_back(request);
  }
  const Clock::time_point now = Clock::now();
  strata_request_event_t event{};
  event.request_id = request->id;
  event.state = state;
  event.has_token = hasToken ? 1 : 0;
  event.token = token;
  event.error = error;
  event.prompt_tokens = request->prompt.size();
  event.generated_tokens = request->generated;
  const bool admitted = request->admitted != Clock::time_point();
  event.queue_ms =
      millisecondsBetween(request->submitted, admitted ? request->admitted : now);
  event.ttft_ms = request->generated
                      ? millisecondsBetween(request->submitted, request->firstToken)
                      : 0;
  event.total_ms = millisecondsBetween(request->submitted, now);
  {
    std::lock_guard<std::mutex> lock(mutex);
    request->ended = true;
    switch (state) {
      case STRATA_REQUEST_STOPPED: ++counters.stopped; break;
      case STRATA_REQUEST_LENGTH: ++counters.length; break;
      case STRATA_REQUEST_CANCELLED: ++counters.cancelled; break;
      default: ++counters.failed; break;
    }
  }
  request->callback(request->user, &event);
  // Only a request that never joined the engine's lists is freed here; the
  // others at the next sweep.
  if (!admitted || std::find(running.begin(), running.end(), request) ==
                       running.end()) {
    std::lock_guard<std::mutex> lock(mutex);
    requests.erase(request->id);
    settled.notify_all();
  }
}

// Drops finished requests from the engine's lists and the request table,
// and publishes the gauges, so a drain that returns sees them settled.
void strata_scheduler_t::sweepFinished() {
  running.erase(std::remove_if(running.begin(), running.end(),
                               [](const Request* r) { return r->done; }),
                running.end());
  uint64_t cached = 0;
  for (const Request* request : running) {
    cached += request->promptRun + request->generated;
  }
  strata_generator_cache_stats_t cacheNow;
  strata_generator_cache_stats_init(&cacheNow);
  strata_status_free(strata_generator_cache_stats(generator, &cacheNow));
  std::lock_guard<std::mutex> lock(mutex);
  runningCount = running.size();
  cachedTokens = cached;
  cache = cacheNow;
  counters.generated_tokens += std::exchange(tokensUncounted, 0);
  counters.padding_tokens += std::exchange(paddingUncounted, 0);
  if (finishedNow.empty()) return;
  for (Request* request : finishedNow) requests.erase(request->id);
  finishedNow.clear();
  settled.notify_all();
}

int64_t strata_scheduler_t::contextLeft(const Request* request) const {
  return static_cast<int64_t>(context) -
         static_cast<int64_t>(request->prompt.size());
}

int64_t strata_scheduler_t::newTokensAsked(const Request* request) const {
  const int64_t rest = contextLeft(request);
  const int64_t asked = request->params.max_new_tokens;
  return asked > 0 && asked < rest ? asked : rest;
}

void strata_scheduler_t::admit(Request* request, int64_t batchNewTokens) {
  request->admitted = Clock::now();
  // Static batching: the generator runs the row to the batch's longest
  // (within the context; never short of the request's own, which is among
  // them), with no stop tokens; onToken ends the request where it asked.
  strata_generation_params_t params = request->params;
  if (staticBatching) {
    params.max_new_tokens = std::min(batchNewTokens, contextLeft(request));
    params.stop_tokens = nullptr;
    params.stop_token_count = 0;
  }
  uint64_t sequence = 0;
  strata_status_t status = strata_generator_begin_sequence(
      generator, request->prompt.data(), request->prompt.size(), &params,
      &sequence);
  if (status) {
    finalize(request, STRATA_REQUEST_FAILED, false, 0,
             strata_status_message(status));
    strata_status_free(status);
    return;
  }
  request->sequence = sequence;
  request->inGenerator = true;
  countReused(request);
  bySequence[sequence] = request;
  running.push_back(request);
}

void strata_scheduler_t::countReused(Request* request) {
  strata_generation_metrics_t metrics;
  strata_generation_metrics_init(&metrics);
  strata_status_free(
      strata_generator_metrics(generator, request->sequence, &metrics));
  const size_t reused = metrics.reused_prompt_tokens;
  if (reused <= request->promptReused) return;
  const size_t added = reused - request->promptReused;
  request->promptReused = reused;
  request->promptRun += added;
  std::lock_guard<std::mutex> lock(mutex);
  counters.reused_prompt_tokens += added;
}

void strata_scheduler_t::countDrafts(const Request* request) {
  strata_generation_metrics_t metrics;
  strata_generation_metrics_init(&metrics);
  if (strata_status_t status =
          strata_generator_metrics(generator, request->sequence, &metrics)) {
    strata_status_free(status);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex);
  counters.draft_tokens += metrics.draft_tokens;
  counters.accepted_draft_tokens += metrics.accepted_draft_tokens;
  counters.target_steps += metrics.target_steps;
}

// Prompt chunks, in admission order, until |budget| tokens have run.
void strata_scheduler_t::prefillWaiting(size_t budget) {
  for (size_t i = 0; i < running.size() && budget > 0; ++i) {
    Request* request = running[i];
    if (request->done || request->generated ||
        request->promptRun == request->prompt.size()) {
      continue;
    }
    size_t remaining = 0;
    strata_status_t status = strata_generator_prefill(
        generator, request->sequence, budget, &remaining);
    if (status) {
      finalize(request, STRATA_REQUEST_FAILED, false, 0,
               strata_status_message(status));
      strata_status_free(status);
      continue;
    }
    // A paged cache finds its cached blocks when the prompt first runs.
    countReused(request);
    const size_t ran = request->prompt.size() - remaining - request->promptRun;
    request->promptRun += ran;
    budget -= std::min(budget, ran);
    std::lock_guard<std::mutex> lock(mutex);
    counters.prompt_tokens += ran;
  }
}

void strata_scheduler_t::failRunning(strata_status_t status,
                                     bool decodingOnly) {
  const std::string message = strata_status_message(status);
  strata_status_free(status);
  for (Request* request : std::vector<Request*>(running)) {
    if (decodingOnly && !request->generated) continue;
    finalize(request, STRATA_REQUEST_FAILED, false, 0, message.c_str());
  }
}

void strata_scheduler_t::decode() {
  bool anyDecoding = !held.empty() ||
                     std::any_of(running.begin(), running.end(), [](const Request* r) {
                       return !r->done && r->generated > 0;
                     });
  if (!anyDecoding) return;
  strata_status_t status = strata_generator_step(generator, nullptr);
  // A failed step moved nothing; retrying would fail the same way, so the
  // decoding requests end with its message instead of spinning, and a
  // static batch's padding rows stop.
  if (!status) return;
  for (uint64_t sequence : held)
    strata_status_free(strata_generator_remove_sequence(generator, sequence));
  held.clear();
  failRunning(status, true);
}

// One iteration; false once stopped with nothing left.
bool strata_scheduler_t::iterate() {
  std::vector<Request*> admitted;
  std::vector<Request*> cancelled;
  {
    std::unique_lock<std::mutex> lock(mutex);
    wake.wait(lock, [&] {
      return stopping || !cancels.empty() || !running.empty() ||
             !held.empty() || (!queue.empty() && running.size() < maxSeqs);
    });
    // A static batch takes no one until it has finished entirely.
    const bool admitting = !staticBatching || (running.empty() && held.empty());
    for (uint64_t id : cancels) {
      auto it = requests.find(id);
      if (it == requests.end() || it->second->done) continue;
      Request* request = it->second.get();
      queue.erase(request);
      cancelled.push_back(request);
    }
    cancels.clear();
    size_t free = maxSeqs - std::min(maxSeqs, running.size());
    while (admitting && free > 0 && !queue.empty()) {
      Request* request = *queue.begin();
      queue.erase(queue.begin());
      admitted.push_back(request);
      --free;
    }
    // Counted as running from the moment they leave the queue, so the
    // gauges never show an admitted request in neither place.
    runningCount += admitted.size();
    if (stopping && queue.empty() && running.empty() && admitted.empty() &&
        cancelled.empty()) {
      return false;
    }
  }
  const Clock::time_point started = Clock::now();
  for (Request* request : cancelled) {
    finalize(request, STRATA_REQUEST_CANCELLED, false, 0, nullptr);
  }
  int64_t batchNewTokens = 0;
  for (const Request* request : admitted)
    batchNewTokens = std::max(batchNewTokens, newTokensAsked(request));
  for (Request* request : admitted) admit(request, batchNewTokens);
  sweepFinished();
  size_t decoding = 0;
  for (const Request* request : running) decoding += request->generated ? 1 : 0;
  // At least one prompt token runs per iteration, so prompts advance even
  // when the decodes alone fill the budget; a static batch runs all its
  // prompts first.
  prefillWaiting(staticBatching
                     ? SIZE_MAX
                     : std::max<size_t>(1, maxBatchedTokens -
                                               std::min(maxBatchedTokens,
                                                        decoding)));
  sweepFinished();
  decode();
  sweepFinished();
  std::lock_guard<std::mutex> lock(mutex);
  if (!admitted.empty() || decoding || !running.empty()) {
    ++counters.iterations;
    counters.busy_ms += millisecondsBetween(started, Clock::now());
  }
  return true;
}

void strata_scheduler_t::run() {
  try {
    while (iterate()) {
    }
  } catch (const std::bad_alloc&) {
    // Out of memory inside the engine: every request in flight or waiting
    // gets a final FAILED event rather than silence.
    failRunning(STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                                   "out of memory in the scheduler"),
                false);
    sweepFinished();
    std::vector<Request*> waiting;
    {
      std::lock_guard<std::mutex> lock(mutex);
      waiting.assign(queue.begin(), queue.end());
      queue.clear();
      draining = true;
    }
    for (Request* request : waiting) {
      finalize(request, STRATA_REQUEST_FAILED, false, 0,
               "out of memory in the scheduler");
    }
  }
}

extern "C" {

void strata_scheduler_options_init(strata_scheduler_options_t* options) {
  if (!options) return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
}

void strata_scheduler_stats_init(strata_scheduler_stats_t* stats) {
  if (!stats) return;
  std::memset(stats, 0, sizeof(*stats));
  stats->struct_size = sizeof(*stats);
}

namespace {

// |options| (NULL: the defaults) checked into |*given|, and the options of
// the scheduler's generator (lead_group left out).
strata_status_t acceptOptions(const strata_scheduler_options_t* options,
                              strata_scheduler_options_t* given,
                              strata_generator_options_t* generatorOptions) {
  strata_scheduler_options_init(given);
  if (options) {
    STRATA_RETURN_IF_ERROR(strata::runtime::copyVersioned(
        options, sizeof(*given), given, "options"));
  }
  if (given->max_batched_tokens < 0 || given->max_queue < 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "max_batched_tokens (%" PRId64
                              ") and max_queue (%" PRId32 ") must be >= 0",
                              given->max_batched_tokens, given->max_queue);
  }
  strata_generator_options_init(generatorOptions);
  generatorOptions->prefill_chunk = given->prefill_chunk;
  generatorOptions->prefix_reuse = given->prefix_reuse;
  generatorOptions->draft_session = given->draft_session;
  generatorOptions->prompt_lookup = given->prompt_lookup;
  generatorOptions->max_draft_tokens = given->max_draft_tokens;
  generatorOptions->fixed_draft_tokens = given->fixed_draft_tokens;
  return nullptr;
}

}  // namespace

strata_status_t strata_scheduler_create(
    strata_session_t* session, const strata_scheduler_options_t* options,
    strata_scheduler_t** out) {
  if (!session || !out) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "session and out must not be NULL");
  }
  strata_scheduler_options_t given;
  strata_generator_options_t generatorOptions;
  STRATA_RETURN_IF_ERROR(acceptOptions(options, &given, &generatorOptions));
  generatorOptions.lead_group = given.lead_group;
  try {
    auto scheduler = std::make_unique<strata_scheduler_t>();
    generatorOptions.callback = &strata_scheduler_t::onToken;
    generatorOptions.callback_user = scheduler.get();
    STRATA_RETURN_IF_ERROR(strata_generator_create(session, &generatorOptions,
                                                   &scheduler->generator));
    const strata::runtime::GenerationContract contract =
        scheduler->generator->contract;
    if (given.max_seqs < 0 || given.max_seqs > contract.slots) {
      strata_generator_release(scheduler->generator);
      return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                                "max_seqs is %" PRId32 ", outside [0, %" PRId64
                                "] (the module's sequence slots)",
                                given.max_seqs, contract.slots);
    }
    scheduler->maxSeqs = given.max_seqs ? static_cast<size_t>(given.max_seqs)
                                        : static_cast<size_t>(contract.slots);
    scheduler->maxBatchedTokens =
        given.max_batched_tokens
            ? static_cast<size_t>(given.max_batched_tokens)
            : static_cast<size_t>(contract.prefillLength) + scheduler->maxSeqs;
    scheduler->maxQueue = given.max_queue ? static_cast<size_t>(given.max_queue)
                                          : kDefaultMaxQueue;
    scheduler->context = static_cast<uint64_t>(contract.context);
    scheduler->vocab = static_cast<uint64_t>(contract.vocab);
    scheduler->staticBatching = given.static_batching != 0;
    scheduler->running.reserve(scheduler->maxSeqs);
    scheduler->engine = std::thread([s = scheduler.get()] { s->run(); });
    *out = scheduler.release();
    return nullptr;
  } catch (const std::bad_alloc&) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::system_error&) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "cannot start the scheduler's thread");
  }
}

strata_status_t strata_scheduler_follow(
    strata_session_t* session, const strata_scheduler_options_t* options,
    const strata_communicator_t* group) {
  if (!session || !group) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "session and group must not be NULL");
  }
  strata_scheduler_options_t given;
  strata_generator_options_t generatorOptions;
  STRATA_RETURN_IF_ERROR(acceptOptions(options, &given, &generatorOptions));
  strata_generator_t* generator = nullptr;
  STRATA_RETURN_IF_ERROR(
      strata_generator_create(session, &generatorOptions, &generator));
  strata_status_t status = strata_generator_follow(generator, group);
  strata_generator_release(generator);
  return status;
}

void strata_scheduler_release(strata_scheduler_t* scheduler) {
  if (!scheduler) return;
  {
    std::lock_guard<std::mutex> lock(scheduler->mutex);
    scheduler->draining = true;
    scheduler->stopping = true;
    for (const auto& entry : scheduler->requests) {
      scheduler->cancels.push_back(entry.first);
    }
  }
  scheduler->wake.notify_all();
  if (scheduler->engine.joinable()) scheduler->engine.join();
  strata_generator_release(scheduler->generator);
  delete scheduler;
}

strata_status_t strata_scheduler_submit(
    strata_scheduler_t* scheduler, const int64_t* prompt, size_t prompt_length,
    const strata_generation_params_t* params, int32_t priority,
    strata_request_fn callback, void* user, uint64_t* out_request_id) {
  if (!scheduler || !callback || (prompt_length && !prompt)) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "scheduler, prompt and callback must not be "
                              "NULL");
  }
  if (prompt_length == 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "the prompt is empty");
  }
  strata_generation_params_t given;
  strata_generation_params_init(&given);
  if (params) {
    STRATA_RETURN_IF_ERROR(strata::runtime::copyVersioned(
        params, sizeof(given), &given, "params"));
  }
  STRATA_RETURN_IF_ERROR(
      scheduler->generator->checkSequence(prompt_length, given, nullptr));
  try {
    auto request = std::make_unique<Request>();
    request->priority = priority;
    request->prompt.assign(prompt, prompt + prompt_length);
    if (given.stop_token_count) {
      request->stopTokens.assign(given.stop_tokens,
                                 given.stop_tokens + given.stop_token_count);
    }
    request->params = given;
    request->params.stop_tokens = request->stopTokens.data();
    request->callback = callback;
    request->user = user;
    request->submitted = Clock::now();
    {
      std::lock_guard<std::mutex> lock(scheduler->mutex);
      if (scheduler->draining) {
        return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                                  "the scheduler is draining: no new requests");
      }
      if (scheduler->queue.size() >= scheduler->maxQueue) {
        return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                                  "%zu requests are waiting (max_queue)",
                                  scheduler->queue.size());
      }
      request->id = scheduler->nextId++;
      scheduler->queue.insert(request.get());
      if (out_request_id) *out_request_id = request->id;
      ++scheduler->counters.submitted;
      scheduler->requests.emplace(request->id, std::move(request));
    }
    scheduler->wake.notify_one();
    return nullptr;
  } catch (const std::bad_alloc&) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
}

strata_status_t strata_scheduler_cancel(strata_scheduler_t* scheduler,
                                        uint64_t request_id) {
  if (!scheduler) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "scheduler must not be NULL");
  }
  try {
    std::lock_guard<std::mutex> lock(scheduler->mutex);
    // |ended| is the one field of a request other threads read.
    auto it = scheduler->requests.find(request_id);
    if (it == scheduler->requests.end() || it->second->ended) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_NOT_FOUND,
                                "no request %" PRIu64 " waiting or running",
                                request_id);
    }
    scheduler->cancels.push_back(request_id);
  } catch (const std::bad_alloc&) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  scheduler->wake.notify_one();
  return nullptr;
}

strata_status_t strata_scheduler_drain(strata_scheduler_t* scheduler,
                                       int64_t timeout_ms) {
  if (!scheduler) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "scheduler must not be NULL");
  }
  std::unique_lock<std::mutex> lock(scheduler->mutex);
  scheduler->draining = true;
  auto empty = [&] { return scheduler->requests.empty(); };
  bool done = timeout_ms < 0
                  ? (scheduler->settled.wait(lock, empty), true)
                  : scheduler->settled.wait_for(
                        lock, std::chrono::milliseconds(timeout_ms), empty);
  if (!done) {
    for (const auto& entry : scheduler->requests) {
      scheduler->cancels.push_back(entry.first);
    }
    scheduler->wake.notify_one();
    scheduler->settled.wait(lock, empty);
  }
  return nullptr;
}

strata_status_t strata_scheduler_stats(strata_scheduler_t* scheduler,
                                       strata_scheduler_stats_t* stats) {
  if (!scheduler || !stats) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "scheduler and stats must not be NULL");
  }
  // The first version of the struct ended before the paged cache's fields.
  constexpr size_t kFirstVersionSize =
      offsetof(strata_scheduler_stats_t, kv_block_size);
  if (stats->struct_size < kFirstVersionSize) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "stats.struct_size is %zu, smaller than any "
                              "version of the struct (%zu)",
                              stats->struct_size, kFirstVersionSize);
  }
  std::lock_guard<std::mutex> lock(scheduler->mutex);
  strata_scheduler_stats_t result = scheduler->counters;
  result.struct_size = sizeof(result);
  result.waiting = scheduler->queue.size();
  result.running = scheduler->runningCount;
  result.slots = scheduler->maxSeqs;
  result.context = scheduler->context;
  result.vocab = scheduler->vocab;
  result.cached_tokens = scheduler->cachedTokens;
  result.kv_block_size = scheduler->cache.block_size;
  result.kv_blocks_total = scheduler->cache.blocks_total;
  result.kv_blocks_used = scheduler->cache.blocks_used;
  result.preemptions = scheduler->cache.preemptions;
  // An older caller's struct gets the fields it has.
  std::memcpy(stats, &result, std::min(sizeof(result), stats->struct_size));
  return nullptr;
}

}  // extern "C"
