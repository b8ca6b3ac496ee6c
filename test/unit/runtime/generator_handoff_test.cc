//===- generator_handoff_test.cc - Prefill on one generator, decode on another
// SPDX-License-Identifier: Apache-2.0
// Disaggregated prefill and decode within one process: generator A runs a
// prompt's prefill on its session, the slot's rows of every per-sequence
// state go into the slot of a sequence begun on generator B (another
// session), and B resumes with A's first token. The toy model's next token
// depends on every cached token of the slot, so a missing or misplaced
// row changes B's tokens.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "generator_test_util.h"

namespace strata::testing {
namespace {

// Bytes one position of per-sequence state |index| takes in a row copy:
// every dim but `slots` and `context`.
size_t bytesPerPosition(const strata_module_t *module, size_t index) {
  const strata_state_signature_t *state = strata_module_state(module, index);
  size_t bytes = strata_dtype_size(state->dtype);
  for (uint32_t d = 1; d < state->rank; ++d)
    if (!state->dims[d].symbol ||
        std::string(state->dims[d].symbol) != "context")
      bytes *= static_cast<size_t>(state->dims[d].max);
  return bytes;
}

class GeneratorHandoffTest : public GeneratorTest {
protected:
  void SetUp() override {
    GeneratorTest::SetUp();
    STRATA_ASSERT_OK(strata_session_create(
        module->get(), nullptr, strata_allocator_system(), &decodeSession));
    strata_generator_options_t options;
    strata_generator_options_init(&options);
    options.callback = &TokenLog::record;
    options.callback_user = &decodeLog;
    STRATA_ASSERT_OK(
        strata_generator_create(decodeSession, &options, &decoder));
  }
  void TearDown() override {
    strata_generator_release(decoder);
    strata_session_release(decodeSession);
    GeneratorTest::TearDown();
  }

  // Prefills |prompt| on |generator| (session), hands its rows to a
  // sequence begun on |decoder| and resumes it there; returns its id on
  // the decoder and, in |*prefillId|, the id on |generator|.
  uint64_t handOff(const std::vector<int64_t> &prompt,
                   const strata_generation_params_t &params,
                   uint64_t *prefillId) {
    uint64_t id = 0;
    STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OK, strata_generator_begin_sequence(
                                                  generator, prompt.data(),
                                                  prompt.size(), &params, &id));
    STRATA_EXPECT_STATUS_IS(
        STRATA_STATUS_OK,
        strata_generator_prefill(generator, id, prompt.size(), nullptr));
    std::vector<int64_t> first = tokensOf(id);
    EXPECT_EQ(first.size(), 1u);
    int64_t from = -1, to = -1;
    STRATA_EXPECT_STATUS_IS(
        STRATA_STATUS_OK, strata_generator_sequence_slot(generator, id, &from));
    uint64_t decodeId = 0;
    STRATA_EXPECT_STATUS_IS(
        STRATA_STATUS_OK,
        strata_generator_begin_sequence(decoder, prompt.data(), prompt.size(),
                                        &params, &decodeId));
    STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OK, strata_generator_sequence_slot(
                                                  decoder, decodeId, &to));
    const int64_t count = static_cast<int64_t>(prompt.size());
    for (size_t s = 0; s < strata_module_state_count(module->get()); ++s) {
      std::vector<uint8_t> rows(bytesPerPosition(module->get(), s) *
                                prompt.size());
      STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OK, strata_session_read_state_rows(
                                                    session, s, from, 0, count,
                                                    rows.data(), rows.size()));
      STRATA_EXPECT_STATUS_IS(
          STRATA_STATUS_OK,
          strata_session_write_state_rows(decodeSession, s, to, 0, count,
                                          rows.data(), rows.size()));
    }
    STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OK, strata_generator_resume_prefilled(
                                                  decoder, decodeId, first[0]));
    *prefillId = id;
    return decodeId;
  }

  std::vector<int64_t> decodedTokens(uint64_t id) {
    const int64_t *tokens = nullptr;
    size_t count = 0;
    STRATA_EXPECT_STATUS_IS(
        STRATA_STATUS_OK,
        strata_generator_sequence_tokens(decoder, id, &tokens, &count));
    return tokens ? std::vector<int64_t>(tokens, tokens + count)
                  : std::vector<int64_t>{};
  }

  void decodeToEnd() {
    size_t active = strata_generator_active_count(decoder);
    for (int i = 0; active && i < 64; ++i)
      STRATA_ASSERT_OK(strata_generator_step(decoder, &active));
    EXPECT_EQ(active, 0u);
  }

  strata_session_t *decodeSession = nullptr;
  strata_generator_t *decoder = nullptr;
  TokenLog decodeLog;
};

TEST_F(GeneratorHandoffTest, BothSidesGenerateThePlainTokens) {
  const std::vector<int64_t> prompt = lmPrompt(11, 2);
  const std::vector<int64_t> expected = lmReference(prompt, 9);
  create(4);
  // A sequence already decoding on B puts the handed-off one in slot 1.
  uint64_t busy = 0;
  const std::vector<int64_t> other = lmPrompt(5, 3);
  const strata_generation_params_t params = greedy(9);
  STRATA_ASSERT_OK(strata_generator_add_sequence(decoder, other.data(),
                                                 other.size(), &params, &busy));
  uint64_t prefillId = 0;
  uint64_t id = handOff(prompt, params, &prefillId);
  int64_t slot = -1;
  STRATA_ASSERT_OK(strata_generator_sequence_slot(decoder, id, &slot));
  EXPECT_EQ(slot, 1);
  decodeToEnd();
  runToEnd();
  EXPECT_EQ(decodedTokens(id), expected);
  EXPECT_EQ(decodeLog.tokensOf(id), expected);
  EXPECT_EQ(tokensOf(prefillId), expected);
  EXPECT_EQ(decodedTokens(busy), lmReference(other, 9));
  // TTFT runs from begin_sequence to the resume.
  strata_generation_metrics_t metrics;
  strata_generation_metrics_init(&metrics);
  STRATA_ASSERT_OK(strata_generator_metrics(decoder, id, &metrics));
  EXPECT_EQ(metrics.prompt_tokens, prompt.size());
  EXPECT_EQ(metrics.generated_tokens, expected.size());
  EXPECT_GE(metrics.ttft_ms, 0.0);
}

TEST_F(GeneratorHandoffTest, ASeededSampledSequenceContinuesInStep) {
  const std::vector<int64_t> prompt = lmPrompt(9, 1);
  strata_generation_params_t params = greedy(12);
  params.temperature = 1.5f;
  params.seed = 42;
  const std::vector<int64_t> plain = alone(prompt, params);
  create();
  uint64_t prefillId = 0;
  uint64_t id = handOff(prompt, params, &prefillId);
  decodeToEnd();
  EXPECT_EQ(decodedTokens(id), plain);
}

TEST_F(GeneratorHandoffTest, RefusesWhatItCannotResume) {
  create();
  const std::vector<int64_t> prompt = lmPrompt(6);
  const strata_generation_params_t params = greedy(4);
  uint64_t id = 0;
  STRATA_ASSERT_OK(strata_generator_begin_sequence(
      decoder, prompt.data(), prompt.size(), &params, &id));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_generator_resume_prefilled(decoder, id, kLmVocab));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_generator_resume_prefilled(decoder, id, -1));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_NOT_FOUND,
                          strata_generator_resume_prefilled(decoder, 999, 1));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_generator_resume_prefilled(nullptr, id, 1));
  // A prompt whose prefill has started, or a sequence that decodes.
  size_t remaining = 0;
  STRATA_ASSERT_OK(strata_generator_prefill(decoder, id, 2, &remaining));
  EXPECT_EQ(remaining, prompt.size() - 2);
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_FAILED_PRECONDITION,
                          strata_generator_resume_prefilled(decoder, id, 1));
  uint64_t resumed = 0;
  STRATA_ASSERT_OK(strata_generator_begin_sequence(
      decoder, prompt.data(), prompt.size(), &params, &resumed));
  STRATA_ASSERT_OK(strata_generator_resume_prefilled(decoder, resumed, 3));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_FAILED_PRECONDITION,
      strata_generator_resume_prefilled(decoder, resumed, 3));
  // A finished sequence holds no slot and cannot resume.
  STRATA_ASSERT_OK(strata_generator_cancel(decoder, resumed));
  int64_t slot = -1;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_FAILED_PRECONDITION,
      strata_generator_sequence_slot(decoder, resumed, &slot));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_FAILED_PRECONDITION,
      strata_generator_resume_prefilled(decoder, resumed, 3));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_NOT_FOUND,
                          strata_generator_sequence_slot(decoder, 999, &slot));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_generator_sequence_slot(decoder, id, nullptr));
  EXPECT_EQ(slot, -1);
}

TEST_F(GeneratorHandoffTest, AFirstTokenAtTheLimitFinishesAtOnce) {
  const std::vector<int64_t> prompt = lmPrompt(4);
  const strata_generation_params_t params = greedy(1);
  uint64_t id = 0;
  STRATA_ASSERT_OK(strata_generator_begin_sequence(
      decoder, prompt.data(), prompt.size(), &params, &id));
  STRATA_ASSERT_OK(strata_generator_resume_prefilled(decoder, id, 5));
  int finished = 0;
  STRATA_ASSERT_OK(strata_generator_sequence_finished(decoder, id, &finished));
  EXPECT_EQ(finished, 1);
  ASSERT_EQ(decodeLog.events.size(), 1u);
  EXPECT_TRUE(decodeLog.events[0].finished);
  EXPECT_EQ(strata_generator_active_count(decoder), 0u);
}

} // namespace
} // namespace strata::testing
