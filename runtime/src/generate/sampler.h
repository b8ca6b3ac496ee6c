//===- sampler.h - Picks the next token from a step's logits --------------===//
// SPDX-License-Identifier: Apache-2.0
// Greedy decoding and temperature sampling with repetition penalty, top-k,
// top-p and min-p, applied in that order (docs/runtime-api.md#sampling).
// Draws come from a seeded xoshiro256** generator written out here, so a
// seed gives the same tokens on every platform and standard library.

#ifndef STRATA_RUNTIME_SRC_GENERATE_SAMPLER_H_
#define STRATA_RUNTIME_SRC_GENERATE_SAMPLER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/runtime/status.h"

namespace strata::runtime {

/// How the next token is chosen. The defaults are greedy decoding with every
/// filter off.
struct SamplingParams {
  /// Divides the logits before the softmax; 0 picks the argmax (greedy).
  float temperature = 0.0f;
  /// Keeps only the k most likely tokens; 0 = off.
  int32_t topK = 0;
  /// Keeps the smallest set of most likely tokens whose probability adds up
  /// to at least topP; 1 = off.
  float topP = 1.0f;
  /// Drops tokens less likely than minP times the most likely one; 0 = off.
  float minP = 0.0f;
  /// Divides positive and multiplies negative logits of tokens already in
  /// the history (Hugging Face's rule); 1 = off.
  float repetitionPenalty = 1.0f;
  /// Seeds the generator of the draws.
  uint64_t seed = 0;
};

/// INVALID_ARGUMENT, naming the field and its value, for a temperature that
/// is negative or not finite, a negative topK, a topP outside (0, 1], a minP
/// outside [0, 1), or a repetitionPenalty that is not finite and positive.
strata_status_t validateSamplingParams(const SamplingParams& params);

/// xoshiro256** (Blackman and Vigna) with its state filled by splitmix64
/// from a 64-bit seed: a fixed sequence on every platform.
class Xoshiro256StarStar {
 public:
  explicit Xoshiro256StarStar(uint64_t seed);

  /// The next 64 random bits.
  uint64_t next();

  /// A uniform double in [0, 1) from the top 53 bits of next().
  double nextDouble() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_[4];
};

/// Chooses tokens with one SamplingParams and its own generator. Not thread
/// safe; one per sequence. Keeps scratch buffers sized to the largest vocab
/// seen, so calls after the first with that vocab allocate nothing.
class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  const SamplingParams& params() const { return params_; }

  /// Picks the next token from |logits| (|vocab| of them, never written)
  /// given the tokens generated so far (|history|, for the repetition
  /// penalty; ids outside [0, vocab) are ignored), into |*outToken|.
  /// INVALID_ARGUMENT for invalid params, NULL pointers, a vocab of 0 or
  /// above INT32_MAX, a NaN logit (naming its position) or logits that are
  /// all -inf; RESOURCE_EXHAUSTED if the scratch buffers cannot grow.
  /// Tokens whose logit is +inf share all the probability.
  strata_status_t sample(const float* logits, size_t vocab,
                         const int32_t* history, size_t historyCount,
                         int32_t* outToken);

  /// The distribution sample() would draw from, every filter applied, as
  /// |vocab| probabilities in |out| (one-hot on the argmax when greedy).
  /// Fails as sample() does; draws nothing.
  strata_status_t distribution(const float* logits, size_t vocab,
                               const int32_t* history, size_t historyCount,
                               double* out);

  /// The next uniform draw in [0, 1) of this sampler's generator.
  double uniform() { return generator_.nextDouble(); }

  /// The tokens the last successful non-greedy sample() drew from, after
  /// every filter, in increasing id order, and their probabilities. For
  /// tests and for reporting the distribution; these copies allocate.
  std::vector<int32_t> lastCandidateTokens() const;
  std::vector<double> lastCandidateProbabilities() const;

 private:
  strata_status_t checkArguments(const float* logits, size_t vocab,
                                 const int32_t* history, size_t historyCount,
                                 const void* out) const;
  // Leaves the surviving candidates in the buffers below, or with greedy
  // params the argmax in |*argmax|.
  strata_status_t selectCandidates(const float* logits, size_t vocab,
                                   const int32_t* history, size_t historyCount,
                                   int32_t* argmax);
  void growScratch(size_t vocab);
  // Grows the buffers only when these params use them.
  void growScratchFor(size_t vocab, size_t historyCount);
  const float* applyRepetitionPenalty(const float* logits, size_t vocab,
                                      const int32_t* history,
                                      size_t historyCount);
  void selectTopK(const float* values, size_t vocab, size_t k);
  double weighAll(const float* values, size_t vocab, float maxValue);
  double weighSelected(const float* values, float maxValue);
  void applyTopP(double totalWeight);
  void applyMinP();
  int32_t draw();

  SamplingParams params_;
  Xoshiro256StarStar generator_;
  // The buffers below have room for the largest vocab seen (they never
  // shrink); candidateCount_ says how much of the candidate ones is in use.
  // The penalized copy of the logits: the caller's are never written.
  std::vector<float> penalized_;
  // The surviving tokens, in increasing id order, and their weights
  // (exp((logit - max) / temperature), so the most likely weighs 1).
  std::vector<int32_t> candidateTokens_;
  std::vector<float> candidateWeights_;
  size_t candidateCount_ = 0;
  // Positions into the candidates, sorted by weight for top-p.
  std::vector<uint32_t> order_;
  // The vocab every buffer above has room for.
  size_t scratchVocab_ = 0;
};

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_GENERATE_SAMPLER_H_
