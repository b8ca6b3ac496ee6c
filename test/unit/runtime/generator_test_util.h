//===- generator_test_util.h - The toy language model of generator tests --===//
// SPDX-License-Identifier: Apache-2.0
// Builds the artifact of strata_test_lm_prefill/decode (testdata/
// test_kernels.c) with the prefill/decode contract's entries, dims and
// state, computes its tokens by its rule, and drives generators over it.

#ifndef STRATA_TEST_UNIT_RUNTIME_GENERATOR_TEST_UTIL_H_
#define STRATA_TEST_UNIT_RUNTIME_GENERATOR_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "status_matchers.h"
#include "strata/runtime/api.h"
#include "test_artifacts.h"

namespace strata::testing {

constexpr int64_t kLmVocab = 16;
constexpr int64_t kLmSlots = 4;
constexpr int64_t kLmContext = 32;
constexpr int64_t kLmPrefillLength = 8;

/// What the toy model's artifact holds; the defaults follow the contract.
struct LmSpec {
  bool withDecode = true;
  uint32_t decodeKind = STRATA_ENTRY_KIND_DECODE;
  strata_dtype_t positionsDtype = STRATA_DTYPE_I64;
  int64_t batchMax = kLmSlots;
  /// The slots and the logits' vocabulary the manifest declares (the
  /// kernels always compute kLmVocab logits: for contract checks only).
  int64_t slots = kLmSlots;
  int64_t vocab = kLmVocab;
  /// {fail_slot, fail_position}: where the model's runs fail (-1: never).
  int64_t failSlot = -1;
  int64_t failPosition = -1;
};

inline std::vector<uint8_t> lmArtifact(const LmSpec &spec = {}) {
  using codegen::ArtifactTensor;
  codegen::ArtifactWriter writer;
  int64_t slots = writer.addSymbolicDim("slots", spec.slots);
  int64_t context = writer.addSymbolicDim("context", kLmContext);
  int64_t prefill = writer.addSymbolicDim("prefill_length", kLmPrefillLength);
  int64_t batch = writer.addSymbolicDim("batch", spec.batchMax);
  writer.addEntry({"prefill",
                   "strata_test_lm_prefill",
                   {{"input_ids", STRATA_DTYPE_I64, {1, prefill}},
                    {"slot", STRATA_DTYPE_I64, {}},
                    {"start", STRATA_DTYPE_I64, {}}},
                   {{"logits", STRATA_DTYPE_F32, {1, spec.vocab}}},
                   STRATA_ENTRY_KIND_PREFILL});
  if (spec.withDecode) {
    writer.addEntry({"decode",
                     "strata_test_lm_decode",
                     {{"input_ids", STRATA_DTYPE_I64, {batch, 1}},
                      {"slots", STRATA_DTYPE_I64, {batch}},
                      {"positions", spec.positionsDtype, {batch}}},
                     {{"logits", STRATA_DTYPE_F32, {batch, spec.vocab}}},
                     spec.decodeKind});
  }
  writer.addStateTensor({{"history", STRATA_DTYPE_I64, {slots, context}},
                         STRATA_STATE_SCOPE_PER_SEQUENCE});
  const int64_t weights[8] = {spec.failSlot, spec.failPosition};
  writer.setWeights(reinterpret_cast<const uint8_t *>(weights),
                    sizeof(weights));
  writer.setCpuCode(testKernelBytes().data(), testKernelBytes().size());
  return writeArtifact(writer);
}

/// The toy model's next token after |tokens| (test_kernels.c).
inline int64_t lmNext(const std::vector<int64_t> &tokens) {
  int64_t sum = 3 * static_cast<int64_t>(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i)
    sum += (tokens[i] + 1) * static_cast<int64_t>(i + 1);
  return sum % kLmVocab;
}

/// The greedy tokens the generator must produce for |prompt|: up to
/// |maxNew| of them (0: until the context is full), ending at the first
/// stop token, which is included.
inline std::vector<int64_t>
lmReference(std::vector<int64_t> prompt, size_t maxNew = 0,
            const std::vector<int64_t> &stops = {}) {
  std::vector<int64_t> generated;
  size_t limit = maxNew ? maxNew : kLmContext - prompt.size();
  while (generated.size() < limit) {
    int64_t token = lmNext(prompt);
    generated.push_back(token);
    prompt.push_back(token);
    if (std::find(stops.begin(), stops.end(), token) != stops.end())
      break;
  }
  return generated;
}

/// A prompt of |length| tokens that varies with |salt|.
inline std::vector<int64_t> lmPrompt(size_t length, int64_t salt = 0) {
  std::vector<int64_t> prompt;
  for (size_t i = 0; i < length; ++i)
    prompt.push_back((static_cast<int64_t>(i) * 5 + 3 + salt * 7) % kLmVocab);
  return prompt;
}

/// Greedy params with |maxNew| tokens at most.
inline strata_generation_params_t greedy(int64_t maxNew = 0) {
  strata_generation_params_t params;
  strata_generation_params_init(&params);
  params.max_new_tokens = maxNew;
  return params;
}

/// Every token the callback saw, per sequence, and its finished flags.
struct TokenLog {
  struct Event {
    uint64_t id;
    int64_t token;
    bool finished;
  };
  std::vector<Event> events;

  static void record(void *user, uint64_t id, int64_t token, int finished) {
    static_cast<TokenLog *>(user)->events.push_back({id, token, finished != 0});
  }
  std::vector<int64_t> tokensOf(uint64_t id) const {
    std::vector<int64_t> tokens;
    for (const Event &event : events)
      if (event.id == id)
        tokens.push_back(event.token);
    return tokens;
  }
};

/// A loaded toy model with a session, and generators over it.
class GeneratorTest : public ::testing::Test {
protected:
  void SetUp() override { load({}); }
  void TearDown() override {
    strata_generator_release(generator);
    strata_session_release(session);
  }

  void load(const LmSpec &spec) {
    strata_generator_release(std::exchange(generator, nullptr));
    strata_session_release(std::exchange(session, nullptr));
    module = std::make_unique<LoadedModule>(lmArtifact(spec));
    STRATA_ASSERT_OK(module->load());
    STRATA_ASSERT_OK(strata_session_create(
        module->get(), nullptr, strata_allocator_system(), &session));
  }

  /// Replaces |generator| with a new one (chunk 0: prefill_length).
  void create(int64_t chunk = 0, TokenLog *log = nullptr) {
    strata_generator_release(std::exchange(generator, nullptr));
    strata_generator_options_t options;
    strata_generator_options_init(&options);
    options.prefill_chunk = chunk;
    options.callback = log ? &TokenLog::record : nullptr;
    options.callback_user = log;
    STRATA_ASSERT_OK(strata_generator_create(session, &options, &generator));
  }

  uint64_t add(const std::vector<int64_t> &prompt,
               const strata_generation_params_t &params) {
    uint64_t id = 0;
    STRATA_EXPECT_STATUS_IS(STRATA_STATUS_OK, strata_generator_add_sequence(
                                                  generator, prompt.data(),
                                                  prompt.size(), &params, &id));
    return id;
  }

  /// Steps until no sequence is in flight (at most |limit| steps).
  void runToEnd(int limit = 64) {
    size_t active = strata_generator_active_count(generator);
    for (int i = 0; active && i < limit; ++i)
      STRATA_ASSERT_OK(strata_generator_step(generator, &active));
    EXPECT_EQ(active, 0u);
  }

  std::vector<int64_t> tokensOf(uint64_t id) {
    const int64_t *tokens = nullptr;
    size_t count = 0;
    STRATA_EXPECT_STATUS_IS(
        STRATA_STATUS_OK,
        strata_generator_sequence_tokens(generator, id, &tokens, &count));
    return tokens ? std::vector<int64_t>(tokens, tokens + count)
                  : std::vector<int64_t>{};
  }

  /// The tokens |prompt| gets alone on a fresh generator of this session.
  std::vector<int64_t> alone(const std::vector<int64_t> &prompt,
                             const strata_generation_params_t &params,
                             int64_t chunk = 0) {
    create(chunk);
    uint64_t id = add(prompt, params);
    runToEnd();
    return tokensOf(id);
  }

  std::unique_ptr<LoadedModule> module;
  strata_session_t *session = nullptr;
  strata_generator_t *generator = nullptr;
};

} // namespace strata::testing

#endif // STRATA_TEST_UNIT_RUNTIME_GENERATOR_TEST_UTIL_H_
