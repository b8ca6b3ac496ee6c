//===- generator_errors_test.cc - What the generator refuses and survives -===//
// SPDX-License-Identifier: Apache-2.0
// Bad requests get a clear status and leave the other sequences alone; a
// module off the prefill/decode contract is refused at create time; a
// failing model run moves no sequence, so a step can be retried.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "generator_test_util.h"

namespace strata::testing {
namespace {

// Expects |status| to have |code| and a message containing |needle|.
void expectStatus(strata_status_t status, strata_status_code_t code,
                  const std::string &needle) {
  auto [got, message] = consumeStatus(status);
  EXPECT_EQ(got, code) << message;
  EXPECT_NE(message.find(needle), std::string::npos) << message;
}

TEST_F(GeneratorTest, NoFreeSlotIsResourceExhaustedAndOthersContinue) {
  create();
  std::vector<uint64_t> ids;
  for (int64_t i = 0; i < kLmSlots; ++i)
    ids.push_back(add(lmPrompt(3, i), greedy(6)));
  std::vector<int64_t> prompt = lmPrompt(2);
  const strata_generation_params_t params = greedy();
  uint64_t id = 77;
  expectStatus(strata_generator_add_sequence(generator, prompt.data(),
                                             prompt.size(), &params, &id),
               STRATA_STATUS_RESOURCE_EXHAUSTED,
               "no free sequence slot (4 in use)");
  EXPECT_EQ(id, 77u);
  runToEnd();
  for (int64_t i = 0; i < kLmSlots; ++i)
    EXPECT_EQ(tokensOf(ids[i]), lmReference(lmPrompt(3, i), 6));
  // Now there is room again.
  uint64_t next = add(prompt, greedy(2));
  EXPECT_EQ(tokensOf(next), lmReference(prompt, 1));
}

TEST_F(GeneratorTest, PromptPastTheContextIsOutOfRange) {
  create();
  uint64_t running = add(lmPrompt(4), greedy(5));
  std::vector<int64_t> prompt = lmPrompt(30);
  strata_generation_params_t params = greedy(3);
  uint64_t id = 0;
  expectStatus(strata_generator_add_sequence(generator, prompt.data(),
                                             prompt.size(), &params, &id),
               STRATA_STATUS_OUT_OF_RANGE,
               "a prompt of 30 tokens plus max_new_tokens 3 exceeds the "
               "context of 32 tokens");
  prompt = lmPrompt(kLmContext);
  params = greedy();
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_OUT_OF_RANGE,
      strata_generator_add_sequence(generator, prompt.data(), prompt.size(),
                                    &params, &id));
  runToEnd();
  EXPECT_EQ(tokensOf(running), lmReference(lmPrompt(4), 5));
}

TEST_F(GeneratorTest, BadParamsAreInvalidArguments) {
  create();
  std::vector<int64_t> prompt = lmPrompt(3);
  uint64_t id = 0;
  auto addWith = [&](const strata_generation_params_t &params) {
    return strata_generator_add_sequence(generator, prompt.data(),
                                         prompt.size(), &params, &id);
  };
  strata_generation_params_t params = greedy();
  params.temperature = -1.0f;
  expectStatus(addWith(params), STRATA_STATUS_INVALID_ARGUMENT, "temperature");
  params = greedy();
  params.top_p = 1.5f;
  expectStatus(addWith(params), STRATA_STATUS_INVALID_ARGUMENT, "topP");
  params = greedy(-2);
  expectStatus(addWith(params), STRATA_STATUS_INVALID_ARGUMENT,
               "max_new_tokens is -2");
  params = greedy();
  params.stop_token_count = 1;
  expectStatus(addWith(params), STRATA_STATUS_INVALID_ARGUMENT, "stop_tokens");
  params = greedy();
  params.struct_size = 8;
  expectStatus(addWith(params), STRATA_STATUS_INVALID_ARGUMENT,
               "params.struct_size is 8");
  params = greedy();
  expectStatus(
      strata_generator_add_sequence(generator, prompt.data(), 0, &params, &id),
      STRATA_STATUS_INVALID_ARGUMENT, "the prompt is empty");
  EXPECT_EQ(strata_generator_active_count(generator), 0u);

  strata_generator_options_t options;
  strata_generator_options_init(&options);
  options.prefill_chunk = kLmPrefillLength + 1;
  strata_generator_t *other = nullptr;
  expectStatus(strata_generator_create(session, &options, &other),
               STRATA_STATUS_INVALID_ARGUMENT, "prefill_chunk is 9");
  EXPECT_EQ(other, nullptr);
}

TEST_F(GeneratorTest, ModulesOffTheContractAreRefused) {
  struct Case {
    std::vector<uint8_t> artifact;
    std::string needle;
  };
  LmSpec wrongKind, noDecode, wrongDtype, smallBatch;
  wrongKind.decodeKind = STRATA_ENTRY_KIND_GENERIC;
  noDecode.withDecode = false;
  wrongDtype.positionsDtype = STRATA_DTYPE_I32;
  smallBatch.batchMax = 2;
  const Case cases[] = {
      {standardArtifact(), "no symbolic dim 'slots'"},
      {lmArtifact(noDecode), "no entry 'decode'"},
      {lmArtifact(wrongKind), "entry 'decode' is not of kind DECODE"},
      {lmArtifact(wrongDtype),
       "input 'positions' of entry 'decode' must be i64[batch]"},
      {lmArtifact(smallBatch), "dim 'batch' has maximum 2"},
  };
  for (const Case &c : cases) {
    LoadedModule other(c.artifact);
    STRATA_ASSERT_OK(other.load());
    strata_session_t *otherSession = nullptr;
    STRATA_ASSERT_OK(strata_session_create(
        other.get(), nullptr, strata_allocator_system(), &otherSession));
    strata_generator_t *refused = nullptr;
    expectStatus(strata_generator_create(otherSession, nullptr, &refused),
                 STRATA_STATUS_FAILED_PRECONDITION, c.needle);
    EXPECT_EQ(refused, nullptr);
    strata_session_release(otherSession);
  }
}

// Speculative decoding's options: the drafts' source, the draft module
// against the target's, and the target's verify entry (the toy model has
// none; the e2e test check_speculative.py runs the real thing).
TEST_F(GeneratorTest, SpeculationIsRefusedWhereItCannotRun) {
  struct Case {
    LmSpec draft;
    bool withDraft;
    bool promptLookup;
    int32_t maxDraft;
    strata_status_code_t code;
    std::string needle;
  };
  LmSpec plain, otherVocab, fewerSlots, noDecode;
  otherVocab.vocab = 2 * kLmVocab;
  fewerSlots.slots = 2;
  fewerSlots.batchMax = 2;
  noDecode.withDecode = false;
  const Case cases[] = {
      {plain, true, true, 0, STRATA_STATUS_INVALID_ARGUMENT,
       "draft_session and prompt_lookup are both set"},
      {otherVocab, true, false, 0, STRATA_STATUS_FAILED_PRECONDITION,
       "the draft model's vocabulary has 32 tokens and the target's 16"},
      {fewerSlots, true, false, 0, STRATA_STATUS_FAILED_PRECONDITION,
       "the draft model holds 2 sequences of 32 tokens and the target 4"},
      {noDecode, true, false, 0, STRATA_STATUS_FAILED_PRECONDITION,
       "no entry 'decode'"},
      {plain, true, false, 0, STRATA_STATUS_FAILED_PRECONDITION,
       "no entry 'verify'"},
      {plain, false, true, 0, STRATA_STATUS_FAILED_PRECONDITION,
       "no entry 'verify'"},
  };
  for (const Case &c : cases) {
    LoadedModule draftModule(lmArtifact(c.draft));
    STRATA_ASSERT_OK(draftModule.load());
    strata_session_t *draftSession = nullptr;
    STRATA_ASSERT_OK(strata_session_create(
        draftModule.get(), nullptr, strata_allocator_system(), &draftSession));
    strata_generator_options_t options;
    strata_generator_options_init(&options);
    options.draft_session = c.withDraft ? draftSession : nullptr;
    options.prompt_lookup = c.promptLookup ? 1 : 0;
    options.max_draft_tokens = c.maxDraft;
    strata_generator_t *refused = nullptr;
    expectStatus(strata_generator_create(session, &options, &refused), c.code,
                 c.needle);
    EXPECT_EQ(refused, nullptr);
    strata_session_release(draftSession);
  }
  // The target's own session cannot draft for it.
  strata_generator_options_t options;
  strata_generator_options_init(&options);
  options.draft_session = session;
  strata_generator_t *refused = nullptr;
  expectStatus(strata_generator_create(session, &options, &refused),
               STRATA_STATUS_INVALID_ARGUMENT,
               "the draft session is the target's session");
}

TEST_F(GeneratorTest, AFailedStepMovesNoSequence) {
  LmSpec failing;
  failing.failSlot = 1;
  failing.failPosition = 10;
  load(failing);
  TokenLog log;
  create(0, &log);
  uint64_t good = add(lmPrompt(4, 1), greedy(12));
  uint64_t bad = add(lmPrompt(6, 2), greedy()); // slot 1
  // Slot 1 caches position 9 in step 3 and would cache 10 in step 5.
  for (int i = 0; i < 4; ++i)
    STRATA_ASSERT_OK(strata_generator_step(generator, nullptr));
  std::vector<int64_t> goodBefore = tokensOf(good);
  std::vector<int64_t> badBefore = tokensOf(bad);
  size_t eventsBefore = log.events.size();
  for (int attempt = 0; attempt < 2; ++attempt) {
    size_t active = 99;
    STRATA_EXPECT_STATUS_IS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                            strata_generator_step(generator, &active));
    EXPECT_EQ(active, 99u);
  }
  EXPECT_EQ(tokensOf(good), goodBefore);
  EXPECT_EQ(tokensOf(bad), badBefore);
  EXPECT_EQ(log.events.size(), eventsBefore);
  EXPECT_EQ(strata_generator_active_count(generator), 2u);
  // Cancelling the failing sequence lets the other one finish correctly.
  STRATA_ASSERT_OK(strata_generator_cancel(generator, bad));
  runToEnd();
  EXPECT_EQ(tokensOf(good), lmReference(lmPrompt(4, 1), 12));
  EXPECT_EQ(tokensOf(bad), badBefore);
}

TEST_F(GeneratorTest, AFailedPrefillLeavesTheSlotFree) {
  LmSpec failing;
  failing.failSlot = 0;
  failing.failPosition = 3;
  load(failing);
  TokenLog log;
  create(2, &log);
  // The chunk [0, 2) is cached, then [2, 4) fails.
  std::vector<int64_t> prompt = lmPrompt(5);
  const strata_generation_params_t params = greedy(2);
  uint64_t id = 0;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_RESOURCE_EXHAUSTED,
      strata_generator_add_sequence(generator, prompt.data(), prompt.size(),
                                    &params, &id));
  EXPECT_TRUE(log.events.empty());
  EXPECT_EQ(strata_generator_active_count(generator), 0u);
  // Slot 0 again: the failed chunk's token at position 1 is still there
  // and must not change this one's (position 1 is rewritten first).
  uint64_t next = add(lmPrompt(1, 2), greedy(2));
  EXPECT_EQ(tokensOf(next), lmReference(lmPrompt(1, 2), 1));
  runToEnd();
  EXPECT_EQ(tokensOf(next), lmReference(lmPrompt(1, 2), 2));
}

TEST_F(GeneratorTest, TheCallbackMayCancelButNotStep) {
  struct Probe {
    strata_generator_t *generator = nullptr;
    strata_status_code_t stepCode = STRATA_STATUS_OK;
    int calls = 0;
  } probe;
  create();
  probe.generator = generator;
  auto callback = [](void *user, uint64_t id, int64_t, int) {
    auto *p = static_cast<Probe *>(user);
    if (++p->calls == 2) {
      p->stepCode =
          consumeStatus(strata_generator_step(p->generator, nullptr)).first;
      strata_status_free(strata_generator_cancel(p->generator, id));
    }
  };
  STRATA_ASSERT_OK(strata_generator_set_callback(generator, callback, &probe));
  uint64_t id = add(lmPrompt(3), greedy());
  STRATA_ASSERT_OK(strata_generator_step(generator, nullptr));
  EXPECT_EQ(probe.stepCode, STRATA_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(strata_generator_active_count(generator), 0u);
  EXPECT_EQ(tokensOf(id).size(), 2u);
  size_t active = 5;
  STRATA_ASSERT_OK(strata_generator_step(generator, &active));
  EXPECT_EQ(active, 0u);
}

TEST_F(GeneratorTest, NullArgumentsAndUnknownIds) {
  strata_generator_t *none = nullptr;
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_generator_create(nullptr, nullptr, &none));
  create();
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_NOT_FOUND,
                          strata_generator_cancel(generator, 12345));
  strata_generation_metrics_t metrics;
  strata_generation_metrics_init(&metrics);
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_NOT_FOUND,
                          strata_generator_metrics(generator, 12345, &metrics));
  metrics.struct_size = 4;
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_generator_metrics(generator, 1, &metrics));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_generator_step(nullptr, nullptr));
  strata_generator_release(nullptr);
}

} // namespace
} // namespace strata::testing
