//===- generator_lead_test.cc - A generator's calls repeated on a follower ===//
// SPDX-License-Identifier: Apache-2.0
// Rank 0's generator leads (lead_group) and rank 1's follows on another
// session of the toy model, over the in-process group: every sequence the
// follower ends with has the lead's tokens, whatever the calls were
// (chunked prompts, sampling, cancels and removals from the token
// callback, calls that fail on both), and the follower returns when the
// lead is released. The toy model's tokens depend on every token its slot
// caches, so a call missed or made twice shows.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <thread>
#include <vector>

#include "fake_communicator.h"
#include "generator_test_util.h"
#include "strata/runtime/scheduler.h"

namespace strata::testing {
namespace {

// Rank 1: a generator that follows a group on a thread of its own. The
// thread is joined on every way out of a test (an ASSERT's early return
// included), before the group it uses goes.
struct Follower {
  strata_generator_t *generator = nullptr;
  strata_status_t status = nullptr;
  std::thread thread;

  ~Follower() {
    strata_status_free(join());
    strata_generator_release(generator);
  }
  void start(const strata_communicator_t *group) {
    thread = std::thread([this, group] {
      status = strata_generator_follow(generator, group);
    });
  }
  /// Waits for the follower to return; its status (the caller's).
  strata_status_t join() {
    if (thread.joinable())
      thread.join();
    return std::exchange(status, nullptr);
  }
};

class GeneratorLeadTest : public GeneratorTest {
protected:
  void SetUp() override {
    GeneratorTest::SetUp();
    makeFollowerSession();
  }
  void TearDown() override {
    strata_session_release(followerSession);
    GeneratorTest::TearDown();
  }

  void makeFollowerSession() {
    strata_session_release(std::exchange(followerSession, nullptr));
    STRATA_ASSERT_OK(strata_session_create(
        module->get(), nullptr, strata_allocator_system(), &followerSession));
  }

  strata_generator_options_t options(const strata_communicator_t *lead) {
    strata_generator_options_t o;
    strata_generator_options_init(&o);
    o.prefill_chunk = 3;
    o.lead_group = lead;
    return o;
  }

  // The toy model's per-slot state: every token each slot has run.
  static std::vector<int64_t> history(strata_session_t *s) {
    strata_tensor_t *copy = nullptr;
    EXPECT_EQ(strata_session_read_state(s, 0, &copy), nullptr);
    if (!copy)
      return {};
    const auto *data =
        static_cast<const int64_t *>(strata_tensor_const_data(copy));
    std::vector<int64_t> result(data, data + kLmSlots * kLmContext);
    strata_tensor_release(copy);
    return result;
  }

  /// A follower's generator on the follower session, not yet following.
  void makeFollower(Follower *follower) {
    const strata_generator_options_t o = options(nullptr);
    STRATA_ASSERT_OK(
        strata_generator_create(followerSession, &o, &follower->generator));
  }

  strata_session_t *followerSession = nullptr;
};

// Removes sequence |victim| from inside the callback at its |at|-th token.
struct RemovingLog {
  strata_generator_t *generator = nullptr;
  uint64_t victim = 0;
  size_t at = 0;
  size_t seen = 0;
  static void record(void *user, uint64_t id, int64_t, int) {
    auto *self = static_cast<RemovingLog *>(user);
    if (id == self->victim && ++self->seen == self->at) {
      strata_status_free(
          strata_generator_remove_sequence(self->generator, id));
    }
  }
};

TEST_F(GeneratorLeadTest, TheFollowerEndsWithTheLeadsSequences) {
  FakeGroup group(2);
  strata_communicator_t leadComm = group.communicator(0);
  strata_communicator_t followComm = group.communicator(1);
  Follower follower;
  makeFollower(&follower);
  follower.start(&followComm);

  RemovingLog log;
  strata_generator_options_t leadOptions = options(&leadComm);
  leadOptions.callback = &RemovingLog::record;
  leadOptions.callback_user = &log;
  STRATA_ASSERT_OK(strata_generator_create(session, &leadOptions, &generator));
  log.generator = generator;

  // Whole prompts, one of them sampled with stop tokens; one begun and
  // prefilled in pieces; one removed by the callback mid-way; one
  // cancelled between steps.
  const uint64_t a = add(lmPrompt(7, 1), greedy(9));
  strata_generation_params_t sampled = greedy(12);
  sampled.temperature = 1.5f;
  sampled.seed = 77;
  const int64_t stops[] = {15};
  sampled.stop_tokens = stops;
  sampled.stop_token_count = 1;
  const uint64_t b = add(lmPrompt(5, 2), sampled);
  uint64_t c = 0;
  const std::vector<int64_t> long_prompt = lmPrompt(11, 3);
  STRATA_ASSERT_OK(strata_generator_begin_sequence(
      generator, long_prompt.data(), long_prompt.size(), nullptr, &c));
  log.victim = add(lmPrompt(4, 4), greedy(10));
  log.at = 3;
  // Refused before anything is sent (empty prompt) and refused on both
  // ranks alike (longer than the context).
  uint64_t refused = 0;
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_generator_add_sequence(generator, nullptr, 0,
                                                        nullptr, &refused));
  const std::vector<int64_t> too_long = lmPrompt(kLmContext + 1);
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_OUT_OF_RANGE,
      strata_generator_add_sequence(generator, too_long.data(),
                                    too_long.size(), nullptr, &refused));
  size_t remaining = 1;
  for (int i = 0; i < 64 && strata_generator_active_count(generator); ++i) {
    if (remaining) {
      STRATA_ASSERT_OK(strata_generator_prefill(generator, c, 4, &remaining));
    }
    if (i == 2) STRATA_ASSERT_OK(strata_generator_cancel(generator, a));
    STRATA_ASSERT_OK(strata_generator_step(generator, nullptr));
  }
  EXPECT_EQ(strata_generator_active_count(generator), 0u);

  std::map<uint64_t, std::vector<int64_t>> leadTokens;
  for (uint64_t id : {a, b, c}) {
    leadTokens[id] = tokensOf(id);
    EXPECT_FALSE(leadTokens[id].empty()) << "sequence " << id;
  }
  EXPECT_EQ(leadTokens[c], lmReference(long_prompt));
  strata_generator_release(std::exchange(generator, nullptr));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OK, follower.join());
  for (const auto &[id, tokens] : leadTokens) {
    const int64_t *followed = nullptr;
    size_t count = 0;
    STRATA_ASSERT_OK(strata_generator_sequence_tokens(follower.generator, id,
                                                      &followed, &count));
    EXPECT_EQ(std::vector<int64_t>(followed, followed + count), tokens)
        << "sequence " << id;
  }
  // The removed one is gone on both.
  const int64_t *none = nullptr;
  size_t count = 0;
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_NOT_FOUND,
                          strata_generator_sequence_tokens(
                              follower.generator, log.victim, &none, &count));
}

TEST_F(GeneratorLeadTest, ASchedulerLeadsAFollowingScheduler) {
  FakeGroup group(2);
  strata_communicator_t leadComm = group.communicator(0);
  strata_communicator_t followComm = group.communicator(1);
  strata_scheduler_options_t options;
  strata_scheduler_options_init(&options);
  options.max_seqs = 2;
  options.max_batched_tokens = 5;
  Follower follower;  // its thread only: a scheduler makes the generator
  const strata_scheduler_options_t followOptions = options;
  follower.thread = std::thread([&] {
    follower.status =
        strata_scheduler_follow(followerSession, &followOptions, &followComm);
  });
  options.lead_group = &leadComm;
  strata_scheduler_t *scheduler = nullptr;
  STRATA_ASSERT_OK(strata_scheduler_create(session, &options, &scheduler));
  struct Result {
    std::vector<int64_t> tokens;
    static void record(void *user, const strata_request_event_t *event) {
      if (event->has_token)
        static_cast<Result *>(user)->tokens.push_back(event->token);
    }
  };
  std::vector<Result> results(5);
  for (size_t i = 0; i < results.size(); ++i) {
    const std::vector<int64_t> prompt = lmPrompt(3 + 2 * i, int64_t(i));
    const strata_generation_params_t params = greedy(int64_t(4 + i));
    uint64_t id = 0;
    STRATA_ASSERT_OK(strata_scheduler_submit(scheduler, prompt.data(),
                                             prompt.size(), &params, 0,
                                             &Result::record, &results[i],
                                             &id));
  }
  STRATA_ASSERT_OK(strata_scheduler_drain(scheduler, -1));
  strata_scheduler_release(scheduler);
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OK, follower.join());
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].tokens,
              lmReference(lmPrompt(3 + 2 * i, int64_t(i)), 4 + i));
  }
  // Every call went through the group, and the follower's slots cache
  // what the lead's do (the toy model writes each token it runs there).
  EXPECT_GT(group.messages(STRATA_COMMUNICATOR_TAG_LEAD), 10);
  EXPECT_EQ(history(followerSession), history(session));
}

TEST_F(GeneratorLeadTest, GroupsThatCannotLeadOrFollowAreRefused) {
  FakeGroup group(2);
  strata_communicator_t rank0 = group.communicator(0);
  strata_communicator_t rank1 = group.communicator(1);
  strata_generator_options_t o = options(&rank1);
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_generator_create(session, &o, &generator));
  strata_communicator_t alone;
  strata_communicator_init(&alone);
  alone.all_gather = rank0.all_gather;
  alone.send = rank0.send;
  o = options(&alone);
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_generator_create(session, &o, &generator));
  // The adaptive draft count follows this process's clock.
  o = options(&rank0);
  o.prompt_lookup = 1;
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_generator_create(session, &o, &generator));

  o = options(nullptr);
  STRATA_ASSERT_OK(strata_generator_create(session, &o, &generator));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_generator_follow(generator, &rank0));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_generator_follow(generator, nullptr));
  strata_generator_release(std::exchange(generator, nullptr));

  // A leading generator cannot take another process's prefill (its ranks
  // would not have the rows).
  o = options(&rank0);
  STRATA_ASSERT_OK(strata_generator_create(session, &o, &generator));
  uint64_t id = 0;
  const std::vector<int64_t> prompt = lmPrompt(4);
  Follower follower;
  makeFollower(&follower);
  follower.start(&rank1);
  STRATA_ASSERT_OK(strata_generator_begin_sequence(
      generator, prompt.data(), prompt.size(), nullptr, &id));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_FAILED_PRECONDITION,
                          strata_generator_resume_prefilled(generator, id, 1));
  strata_generator_release(std::exchange(generator, nullptr));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OK, follower.join());
}

TEST_F(GeneratorLeadTest, AMalformedCallEndsTheFollower) {
  FakeGroup group(2);
  strata_communicator_t rank0 = group.communicator(0);
  strata_communicator_t rank1 = group.communicator(1);
  Follower follower;
  makeFollower(&follower);
  follower.start(&rank1);
  const uint64_t garbage = 42;
  STRATA_ASSERT_OK(rank0.send(rank0.self, &garbage, sizeof(garbage), 1,
                              STRATA_COMMUNICATOR_TAG_LEAD));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_UNAVAILABLE, follower.join());
}

TEST_F(GeneratorLeadTest, AFollowerThatDivergedStops) {
  // The follower holds a sequence the lead never made: the digest the
  // lead's first call carries tells them apart before anything runs. (The
  // lead's release then finds no follower: a short wait.)
  FakeGroup group(2, std::chrono::milliseconds(100));
  strata_communicator_t rank0 = group.communicator(0);
  strata_communicator_t rank1 = group.communicator(1);
  Follower follower;
  makeFollower(&follower);
  const std::vector<int64_t> stray = lmPrompt(3);
  uint64_t strayId = 0;
  STRATA_ASSERT_OK(strata_generator_begin_sequence(
      follower.generator, stray.data(), stray.size(), nullptr, &strayId));
  follower.start(&rank1);
  const strata_generator_options_t o = options(&rank0);
  STRATA_ASSERT_OK(strata_generator_create(session, &o, &generator));
  add(lmPrompt(5), greedy(3));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_FAILED_PRECONDITION, follower.join());
  // Released while the group lives: the release is sent over it.
  strata_generator_release(std::exchange(generator, nullptr));
}

TEST_F(GeneratorLeadTest, AFailureOneRankMayMeetAloneStopsTheGroup) {
  // The model fails at slot 0, position 4, for want of memory, which
  // another rank need not meet: the lead tells the follower to stop and
  // refuses every later call.
  LmSpec spec;
  spec.failSlot = 0;
  spec.failPosition = 4;
  load(spec);
  makeFollowerSession();
  // The follower stops at its own failure; the lead's word to stop then
  // finds no one: a short wait.
  FakeGroup group(2, std::chrono::milliseconds(100));
  strata_communicator_t rank0 = group.communicator(0);
  strata_communicator_t rank1 = group.communicator(1);
  Follower follower;
  makeFollower(&follower);
  follower.start(&rank1);
  const strata_generator_options_t o = options(&rank0);
  STRATA_ASSERT_OK(strata_generator_create(session, &o, &generator));
  const uint64_t id = add(lmPrompt(3), greedy(8));
  strata_status_t status = nullptr;
  for (int i = 0; i < 8 && !status; ++i)
    status = strata_generator_step(generator, nullptr);
  // The toy model's failure: an allocation it could not make.
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_RESOURCE_EXHAUSTED, status);
  strata_status_t followed = follower.join();
  EXPECT_NE(followed, nullptr);
  strata_status_free(followed);
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_FAILED_PRECONDITION,
                          strata_generator_cancel(generator, id));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_FAILED_PRECONDITION,
                          strata_generator_step(generator, nullptr));
  strata_generator_release(std::exchange(generator, nullptr));
}

} // namespace
} // namespace strata::testing
