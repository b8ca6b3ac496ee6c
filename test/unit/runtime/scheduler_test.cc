//===- scheduler_test.cc - Continuous batching over the toy model ---------===//
// SPDX-License-Identifier: Apache-2.0
// The scheduler against the toy model of test_kernels.c, whose tokens depend
// on every cached token of their own slot: a request that shared a slot, a
// step or a prefill chunk wrongly gets other tokens than it gets alone.
// Requests come from several threads; the file runs under ThreadSanitizer
// in scripts/test.sh.

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "generator_test_util.h"
#include "strata/runtime/scheduler.h"

namespace strata::testing {
namespace {

/// What one request received; the callback fills it under |mutex|.
struct Outcome {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<int64_t> tokens;
  int finals = 0;
  strata_request_state_t state = STRATA_REQUEST_RUNNING;
  std::string error;
  strata_request_event_t last{};
  // The order of this request's first token and final event among all
  // requests' events (the events of all requests come from one thread).
  static inline std::atomic<int> clock{0};
  int firstAt = -1;
  int finalAt = -1;
  // When set, the first event waits here until released (holds the engine).
  bool holdFirst = false;
  bool released = false;
  bool holding = false;

  static void record(void* user, const strata_request_event_t* event) {
    auto* self = static_cast<Outcome*>(user);
    std::unique_lock<std::mutex> lock(self->mutex);
    if (self->holdFirst && !self->released) {
      self->holding = true;
      self->changed.notify_all();
      self->changed.wait(lock, [&] { return self->released; });
    }
    const int now = clock++;
    if (self->firstAt < 0) self->firstAt = now;
    if (event->has_token) self->tokens.push_back(event->token);
    if (event->state != STRATA_REQUEST_RUNNING) {
      self->finalAt = now;
      ++self->finals;
      self->state = event->state;
      self->last = *event;
      if (event->error) self->error = event->error;
    }
    self->changed.notify_all();
  }
  void waitFinal() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return finals > 0; });
  }
  void waitHolding() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return holding; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    released = true;
    changed.notify_all();
  }
};

class SchedulerTest : public GeneratorTest {
protected:
  void TearDown() override {
    strata_scheduler_release(scheduler);
    scheduler = nullptr;
    GeneratorTest::TearDown();
  }

  void start(int32_t maxSeqs = 0, int64_t maxBatched = 0, int32_t maxQueue = 0,
             int64_t chunk = 0, bool staticBatching = false) {
    strata_scheduler_options_t options;
    strata_scheduler_options_init(&options);
    options.static_batching = staticBatching ? 1 : 0;
    options.max_seqs = maxSeqs;
    options.max_batched_tokens = maxBatched;
    options.max_queue = maxQueue;
    options.prefill_chunk = chunk;
    STRATA_ASSERT_OK(strata_scheduler_create(session, &options, &scheduler));
  }

  uint64_t submit(const std::vector<int64_t>& prompt,
                  const strata_generation_params_t& params, Outcome* outcome,
                  int32_t priority = 0) {
    uint64_t id = 0;
    STRATA_EXPECT_STATUS_IS(
        STRATA_STATUS_OK,
        strata_scheduler_submit(scheduler, prompt.data(), prompt.size(),
                                &params, priority, &Outcome::record, outcome,
                                &id));
    return id;
  }

  strata_scheduler_stats_t stats() {
    strata_scheduler_stats_t result;
    strata_scheduler_stats_init(&result);
    STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OK,
                            strata_scheduler_stats(scheduler, &result));
    return result;
  }

  strata_scheduler_t* scheduler = nullptr;
};

TEST_F(SchedulerTest, RequestsFromManyThreadsGetTheirTokensAlone) {
  // More requests than slots, prompts longer than a prefill chunk, and a
  // budget of 6 tokens per iteration: prompts run in pieces beside decodes.
  start(/*maxSeqs=*/3, /*maxBatched=*/6);
  constexpr int kThreads = 4, kPerThread = 6;
  std::vector<Outcome> outcomes(kThreads * kPerThread);
  std::vector<std::vector<int64_t>> prompts(outcomes.size());
  std::vector<int64_t> maxNew(outcomes.size());
  for (size_t i = 0; i < outcomes.size(); ++i) {
    prompts[i] = lmPrompt(1 + (i * 7) % 19, static_cast<int64_t>(i));
    maxNew[i] = static_cast<int64_t>(i % 5 == 0 ? 0 : 1 + i % 9);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int j = 0; j < kPerThread; ++j) {
        size_t i = static_cast<size_t>(t * kPerThread + j);
        submit(prompts[i], greedy(maxNew[i]), &outcomes[i]);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  STRATA_ASSERT_OK(strata_scheduler_drain(scheduler, -1));
  for (size_t i = 0; i < outcomes.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(outcomes[i].finals, 1);
    EXPECT_EQ(outcomes[i].state, STRATA_REQUEST_LENGTH);
    EXPECT_EQ(outcomes[i].tokens,
              lmReference(prompts[i], static_cast<size_t>(maxNew[i])));
    EXPECT_EQ(outcomes[i].last.generated_tokens, outcomes[i].tokens.size());
    EXPECT_EQ(outcomes[i].last.prompt_tokens, prompts[i].size());
    EXPECT_GE(outcomes[i].last.total_ms, outcomes[i].last.ttft_ms);
  }
  strata_scheduler_stats_t s = stats();
  EXPECT_EQ(s.submitted, outcomes.size());
  EXPECT_EQ(s.length, outcomes.size());
  EXPECT_EQ(s.running, 0u);
  EXPECT_EQ(s.waiting, 0u);
  EXPECT_EQ(s.cached_tokens, 0u);
  EXPECT_EQ(s.slots, 3u);
  uint64_t promptTokens = 0, generated = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    promptTokens += prompts[i].size();
    generated += outcomes[i].tokens.size();
  }
  EXPECT_EQ(s.prompt_tokens, promptTokens);
  EXPECT_EQ(s.generated_tokens, generated);
}

TEST_F(SchedulerTest, RequestsJoinRunningOnesUnlessBatchesAreStatic) {
  for (bool staticBatching : {false, true}) {
    SCOPED_TRACE(staticBatching ? "static" : "continuous");
    start(/*maxSeqs=*/2, 0, 0, 0, staticBatching);
    Outcome held, longer, shorter, late;
    held.holdFirst = true;
    submit(lmPrompt(3, 1), greedy(2), &held);
    held.waitHolding();
    submit(lmPrompt(3, 2), greedy(20), &longer);
    submit(lmPrompt(3, 3), greedy(2), &shorter);
    submit(lmPrompt(3, 4), greedy(2), &late);
    held.release();
    STRATA_ASSERT_OK(strata_scheduler_drain(scheduler, -1));
    EXPECT_EQ(longer.tokens, lmReference(lmPrompt(3, 2), 20));
    EXPECT_EQ(late.tokens, lmReference(lmPrompt(3, 4), 2));
    // Continuous: the late request takes the slot the short one freed,
    // while the long one runs. Static: it waits for the whole batch.
    if (staticBatching) {
      EXPECT_GT(late.firstAt, longer.finalAt);
    } else {
      EXPECT_LT(late.finalAt, longer.finalAt);
    }
    // Static: the short request's row decoded on to the long one's 20.
    EXPECT_EQ(stats().padding_tokens, staticBatching ? 18u : 0u);
    strata_scheduler_release(scheduler);
    scheduler = nullptr;
  }
}

// A static batch's rows run to its longest request, padding past their own
// ends: each request still ends where it asked (a stop token, its length),
// with its own tokens, and the batch's slots free only at the end.
TEST_F(SchedulerTest, StaticBatchRowsDecodeUntilItsLongestEnds) {
  start(/*maxSeqs=*/3, 0, 0, 0, /*staticBatching=*/true);
  std::vector<int64_t> stopped = lmPrompt(5, 2);
  const int64_t stop = lmReference(stopped)[3];
  strata_generation_params_t stopParams = greedy(12);
  stopParams.stop_tokens = &stop;
  stopParams.stop_token_count = 1;
  Outcome held, stopping, shorter, longer, next;
  held.holdFirst = true;
  submit(lmPrompt(3, 1), greedy(1), &held);
  held.waitHolding();
  submit(stopped, stopParams, &stopping);
  submit(lmPrompt(4, 3), greedy(5), &shorter);
  submit(lmPrompt(6, 4), greedy(12), &longer);
  submit(lmPrompt(3, 5), greedy(3), &next);
  held.release();
  STRATA_ASSERT_OK(strata_scheduler_drain(scheduler, -1));
  EXPECT_EQ(stopping.state, STRATA_REQUEST_STOPPED);
  EXPECT_EQ(stopping.tokens, lmReference(stopped, 12, {stop}));
  EXPECT_EQ(shorter.state, STRATA_REQUEST_LENGTH);
  EXPECT_EQ(shorter.tokens, lmReference(lmPrompt(4, 3), 5));
  EXPECT_EQ(longer.tokens, lmReference(lmPrompt(6, 4), 12));
  EXPECT_EQ(next.tokens, lmReference(lmPrompt(3, 5), 3));
  EXPECT_LT(shorter.finalAt, longer.finalAt);
  EXPECT_GT(next.firstAt, longer.finalAt);
  // Rows past the stop token and past the short one's length, to 12.
  const uint64_t untilStop = stopping.tokens.size();
  ASSERT_LT(untilStop, 12u);
  const strata_scheduler_stats_t s = stats();
  EXPECT_EQ(s.padding_tokens, (12 - untilStop) + (12u - 5u));
  EXPECT_EQ(s.running, 0u);
  EXPECT_EQ(s.cached_tokens, 0u);
  EXPECT_EQ(s.generated_tokens, 1u + untilStop + 5u + 12u + 3u);
}

TEST_F(SchedulerTest, StopTokensEndRequestsAsStopped) {
  start();
  std::vector<int64_t> prompt = lmPrompt(5, 2);
  std::vector<int64_t> full = lmReference(prompt);
  const int64_t stop = full[3];
  strata_generation_params_t params = greedy();
  params.stop_tokens = &stop;
  params.stop_token_count = 1;
  Outcome outcome;
  submit(prompt, params, &outcome);
  outcome.waitFinal();
  EXPECT_EQ(outcome.state, STRATA_REQUEST_STOPPED);
  EXPECT_EQ(outcome.tokens, lmReference(prompt, 0, {stop}));
}

TEST_F(SchedulerTest, HigherPriorityLeavesTheQueueFirst) {
  start(/*maxSeqs=*/1);
  Outcome first, low, high;
  first.holdFirst = true;
  submit(lmPrompt(3, 1), greedy(2), &first);
  first.waitHolding();  // The engine waits in the first request's callback.
  submit(lmPrompt(4, 2), greedy(2), &low, /*priority=*/0);
  submit(lmPrompt(4, 3), greedy(2), &high, /*priority=*/5);
  EXPECT_EQ(stats().waiting, 2u);
  first.release();
  low.waitFinal();
  high.waitFinal();
  // The high-priority request was admitted first, so it waited less.
  EXPECT_LT(high.last.queue_ms, low.last.queue_ms);
  EXPECT_EQ(high.tokens, lmReference(lmPrompt(4, 3), 2));
  EXPECT_EQ(low.tokens, lmReference(lmPrompt(4, 2), 2));
}

TEST_F(SchedulerTest, FullQueueRefusesAndDrainingRefuses) {
  start(/*maxSeqs=*/1, 0, /*maxQueue=*/2);
  Outcome held, a, b;
  held.holdFirst = true;
  submit(lmPrompt(3, 1), greedy(3), &held);
  held.waitHolding();
  submit(lmPrompt(3, 2), greedy(3), &a);
  submit(lmPrompt(3, 3), greedy(3), &b);
  std::vector<int64_t> prompt = lmPrompt(3, 4);
  strata_generation_params_t params = greedy(3);
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_RESOURCE_EXHAUSTED,
      strata_scheduler_submit(scheduler, prompt.data(), prompt.size(), &params,
                              0, &Outcome::record, &a, nullptr));
  held.release();
  STRATA_ASSERT_OK(strata_scheduler_drain(scheduler, -1));
  EXPECT_EQ(a.tokens, lmReference(lmPrompt(3, 2), 3));
  EXPECT_EQ(b.tokens, lmReference(lmPrompt(3, 3), 3));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_UNAVAILABLE,
      strata_scheduler_submit(scheduler, prompt.data(), prompt.size(), &params,
                              0, &Outcome::record, &a, nullptr));
}

TEST_F(SchedulerTest, CancelledRequestsEndOnceAndFreeTheirSlots) {
  start(/*maxSeqs=*/2);
  Outcome held, queued, other;
  held.holdFirst = true;
  uint64_t running = submit(lmPrompt(6, 1), greedy(), &held);
  held.waitHolding();
  submit(lmPrompt(6, 2), greedy(), &other);
  uint64_t third = submit(lmPrompt(6, 3), greedy(), &queued);
  STRATA_ASSERT_OK(strata_scheduler_cancel(scheduler, running));
  STRATA_ASSERT_OK(strata_scheduler_cancel(scheduler, third));
  held.release();
  held.waitFinal();
  queued.waitFinal();
  EXPECT_EQ(held.state, STRATA_REQUEST_CANCELLED);
  EXPECT_EQ(queued.state, STRATA_REQUEST_CANCELLED);
  EXPECT_TRUE(queued.tokens.empty());
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_NOT_FOUND,
                          strata_scheduler_cancel(scheduler, third));
  STRATA_ASSERT_OK(strata_scheduler_drain(scheduler, -1));
  EXPECT_EQ(other.tokens, lmReference(lmPrompt(6, 2)));
  EXPECT_EQ(held.finals + queued.finals + other.finals, 3);
  strata_scheduler_stats_t s = stats();
  EXPECT_EQ(s.cancelled, 2u);
  EXPECT_EQ(s.running, 0u);
}

TEST_F(SchedulerTest, ReleaseAndDrainDeadlineCancelWhatIsLeft) {
  start(/*maxSeqs=*/1);
  Outcome held, waiting;
  held.holdFirst = true;
  submit(lmPrompt(4, 1), greedy(), &held);
  held.waitHolding();
  submit(lmPrompt(4, 2), greedy(), &waiting);
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    held.release();
  });
  // The deadline passes while the engine is held: both end cancelled or
  // (the first, if its last tokens ran first) by length.
  STRATA_ASSERT_OK(strata_scheduler_drain(scheduler, 1));
  releaser.join();
  EXPECT_EQ(held.finals, 1);
  EXPECT_EQ(waiting.finals, 1);
  EXPECT_EQ(waiting.state, STRATA_REQUEST_CANCELLED);

  // Release with requests in flight: each gets its final event.
  start();
  Outcome a, b;
  submit(lmPrompt(9, 3), greedy(), &a);
  submit(lmPrompt(2, 4), greedy(), &b);
  strata_scheduler_release(scheduler);
  scheduler = nullptr;
  EXPECT_EQ(a.finals, 1);
  EXPECT_EQ(b.finals, 1);
}

TEST_F(SchedulerTest, BadRequestsAreRefusedAtSubmission) {
  start();
  Outcome outcome;
  std::vector<int64_t> prompt = lmPrompt(4);
  strata_generation_params_t params = greedy();
  params.top_p = 2.0f;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_scheduler_submit(scheduler, prompt.data(), prompt.size(), &params,
                              0, &Outcome::record, &outcome, nullptr));
  params = greedy(kLmContext);
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_OUT_OF_RANGE,
      strata_scheduler_submit(scheduler, prompt.data(), prompt.size(), &params,
                              0, &Outcome::record, &outcome, nullptr));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_scheduler_submit(scheduler, prompt.data(), 0, nullptr, 0,
                              &Outcome::record, &outcome, nullptr));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_scheduler_submit(scheduler, prompt.data(), prompt.size(), nullptr,
                              0, nullptr, &outcome, nullptr));
  EXPECT_EQ(outcome.finals, 0);
  EXPECT_EQ(stats().submitted, 0u);

  strata_scheduler_options_t options;
  strata_scheduler_options_init(&options);
  options.max_seqs = kLmSlots + 1;
  strata_scheduler_t* refused = nullptr;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_scheduler_create(session, &options, &refused));
  EXPECT_EQ(refused, nullptr);
}

TEST_F(SchedulerTest, AFailingModelFailsItsRequestsNotTheScheduler) {
  LmSpec spec;
  spec.failSlot = 0;
  spec.failPosition = 5;
  load(spec);
  start(/*maxSeqs=*/1);
  Outcome failing, after;
  submit(lmPrompt(3, 1), greedy(), &failing);
  failing.waitFinal();
  EXPECT_EQ(failing.state, STRATA_REQUEST_FAILED);
  EXPECT_FALSE(failing.error.empty());
  // Slot 0 is free again; a short request there ends before position 5.
  submit(lmPrompt(2, 2), greedy(2), &after);
  after.waitFinal();
  EXPECT_EQ(after.state, STRATA_REQUEST_LENGTH);
  EXPECT_EQ(after.tokens, lmReference(lmPrompt(2, 2), 2));
  EXPECT_EQ(stats().failed, 1u);
}

}  // namespace
}  // namespace strata::testing
