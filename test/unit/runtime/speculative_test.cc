//===- speculative_test.cc - Draft acceptance, prompt lookup, draft length ===//
// SPDX-License-Identifier: Apache-2.0
// The acceptance rule of speculative sampling against its promise: the
// tokens it emits have the target's distribution whatever the draft's, by a
// chi-square test over many seeded draws, and the same test rejects a rule
// that is wrong in a plausible way. Greedy verification is deterministic.
// Then prompt lookup's matches and the draft length's choices.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "generate/draft_acceptance.h"
#include "generate/draft_length.h"
#include "generate/prompt_lookup.h"
#include "generate/sampler.h"

namespace strata::runtime {
namespace {

class XoshiroDraws final : public UniformSource {
 public:
  explicit XoshiroDraws(uint64_t seed) : generator_(seed) {}
  double uniform() override { return generator_.nextDouble(); }

 private:
  Xoshiro256StarStar generator_;
};

class NoDraws final : public UniformSource {
 public:
  double uniform() override {
    ADD_FAILURE() << "a deterministic verification drew a number";
    return 0.5;
  }
};

using Rule = std::function<DraftVerdict(const double*, const double*,
                                        const int32_t*, size_t, size_t,
                                        UniformSource&, double*)>;

// The first two emitted tokens' counts over |trials| verifications of
// drafts drawn from |draft|, and the chi-square statistics of those counts
// against the target's rows 0 and 1 (which do not depend on the prefix
// here, so each emitted position must follow its row exactly).
struct ChiSquare {
  double first = 0;
  double second = 0;
};

ChiSquare emittedAgainstTarget(const Rule& rule,
                               const std::vector<double>& target,
                               const std::vector<double>& draft, size_t k,
                               size_t vocab, size_t trials) {
  XoshiroDraws draftDraws(11), ruleDraws(12);
  std::vector<double> residual(vocab);
  std::vector<int32_t> drafts(k);
  std::vector<double> firstCounts(vocab, 0), secondCounts(vocab, 0);
  double secondTotal = 0;
  for (size_t t = 0; t < trials; ++t) {
    for (size_t i = 0; i < k; ++i) {
      drafts[i] = drawFromWeights(draft.data() + i * vocab, vocab,
                                  draftDraws.uniform());
    }
    DraftVerdict v = rule(target.data(), draft.data(), drafts.data(), k, vocab,
                          ruleDraws, residual.data());
    const int32_t first = v.accepted > 0 ? drafts[0] : v.next;
    firstCounts[first] += 1;
    if (v.accepted >= 1) {
      const int32_t second = v.accepted > 1 ? drafts[1] : v.next;
      secondCounts[second] += 1;
      secondTotal += 1;
    }
  }
  auto chi = [&](const std::vector<double>& counts, const double* p,
                 double total) {
    double sum = 0;
    for (size_t j = 0; j < vocab; ++j) {
      const double expected = p[j] * total;
      if (expected > 0) sum += (counts[j] - expected) * (counts[j] - expected) / expected;
      else if (counts[j] > 0) sum += 1e9;  // a token the target never makes
    }
    return sum;
  };
  ChiSquare result;
  result.first = chi(firstCounts, target.data(), static_cast<double>(trials));
  result.second = chi(secondCounts, target.data() + vocab, secondTotal);
  return result;
}

// A small vocabulary with a draft that disagrees with the target in every
// direction: it over- and under-weights tokens and misses one entirely.
constexpr size_t kVocab = 5;
constexpr size_t kDrafts = 3;
const std::vector<double> kTarget = {
    0.40, 0.25, 0.20, 0.10, 0.05,  // position 0
    0.05, 0.15, 0.30, 0.30, 0.20,  // position 1
    0.20, 0.20, 0.20, 0.20, 0.20,  // position 2
    0.10, 0.20, 0.30, 0.20, 0.20,  // after all drafts
};
const std::vector<double> kDraft = {
    0.10, 0.50, 0.20, 0.20, 0.00,  //
    0.30, 0.30, 0.10, 0.10, 0.20,  //
    0.60, 0.10, 0.10, 0.10, 0.10,  //
};
// Chi-square with 4 degrees of freedom: P(X > 30) is about 5e-6, so a
// correct rule fails by chance once in 200000 runs (the draws are seeded:
// never, in fact); a wrong rule's statistic grows with the trials.
constexpr double kChiSquareLimit = 30.0;
constexpr size_t kTrials = 200000;

TEST(DraftAcceptanceTest, EmittedTokensFollowTheTarget) {
  ChiSquare chi = emittedAgainstTarget(acceptDrafts, kTarget, kDraft, kDrafts,
                                       kVocab, kTrials);
  EXPECT_LT(chi.first, kChiSquareLimit);
  EXPECT_LT(chi.second, kChiSquareLimit);
}

// The usual mistake: after a rejection, draw from the target instead of the
// residual max(0, p - q). It over-produces the tokens the draft already
// favoured, and the test must see it.
TEST(DraftAcceptanceTest, TheTestCatchesAWrongRule) {
  Rule wrong = [](const double* target, const double* draft,
                  const int32_t* drafts, size_t count, size_t vocab,
                  UniformSource& random, double* residual) {
    for (size_t i = 0; i < count; ++i) {
      const double p = target[i * vocab + drafts[i]];
      const double q = draft[i * vocab + drafts[i]];
      if (p >= q || random.uniform() * q < p) continue;
      for (size_t j = 0; j < vocab; ++j) residual[j] = target[i * vocab + j];
      return DraftVerdict{i, drawFromWeights(residual, vocab, random.uniform())};
    }
    return DraftVerdict{count, drawFromWeights(target + count * vocab, vocab,
                                               random.uniform())};
  };
  ChiSquare chi =
      emittedAgainstTarget(wrong, kTarget, kDraft, kDrafts, kVocab, kTrials);
  EXPECT_GT(chi.first, 10 * kChiSquareLimit);
}

// Another: keeping every draft the target gives any probability.
TEST(DraftAcceptanceTest, TheTestCatchesAcceptingTooMuch) {
  Rule greedyKeep = [](const double* target, const double*,
                       const int32_t* drafts, size_t count, size_t vocab,
                       UniformSource& random, double*) {
    for (size_t i = 0; i < count; ++i) {
      if (target[i * vocab + drafts[i]] > 0) continue;
      return DraftVerdict{i, drawFromWeights(target + i * vocab, vocab,
                                             random.uniform())};
    }
    return DraftVerdict{count, drawFromWeights(target + count * vocab, vocab,
                                               random.uniform())};
  };
  ChiSquare chi = emittedAgainstTarget(greedyKeep, kTarget, kDraft, kDrafts,
                                       kVocab, kTrials);
  EXPECT_GT(chi.first, 10 * kChiSquareLimit);
}

std::vector<double> oneHot(std::initializer_list<int32_t> tokens,
                           size_t vocab) {
  std::vector<double> rows(tokens.size() * vocab, 0.0);
  size_t row = 0;
  for (int32_t token : tokens) rows[row++ * vocab + token] = 1.0;
  return rows;
}

TEST(DraftAcceptanceTest, GreedyKeepsTheAgreeingPrefixWithoutDraws) {
  // The target's argmax after each prefix: 3, 1, 4, then 2.
  std::vector<double> target = oneHot({3, 1, 4, 2}, kVocab);
  std::vector<double> residual(kVocab);
  NoDraws none;
  const int32_t agree[3] = {3, 1, 4};
  std::vector<double> draft = oneHot({3, 1, 4}, kVocab);
  DraftVerdict all = acceptDrafts(target.data(), draft.data(), agree, 3,
                                  kVocab, none, residual.data());
  EXPECT_EQ(all.accepted, 3u);
  EXPECT_EQ(all.next, 2);
  const int32_t differ[3] = {3, 0, 4};
  draft = oneHot({3, 0, 4}, kVocab);
  DraftVerdict two = acceptDrafts(target.data(), draft.data(), differ, 3,
                                  kVocab, none, residual.data());
  EXPECT_EQ(two.accepted, 1u);
  EXPECT_EQ(two.next, 1);  // the target's own token where the draft erred
  DraftVerdict zero = acceptDrafts(target.data(), draft.data(), differ, 0,
                                   kVocab, none, residual.data());
  EXPECT_EQ(zero.accepted, 0u);
  EXPECT_EQ(zero.next, 3);
}

TEST(DraftAcceptanceTest, ADraftOutsideTheVocabularyIsRejected) {
  std::vector<double> target = oneHot({3, 1}, kVocab);
  std::vector<double> draft(kVocab, 0.0);
  std::vector<double> residual(kVocab);
  const int32_t bad[1] = {77};
  NoDraws none;
  DraftVerdict v = acceptDrafts(target.data(), draft.data(), bad, 1, kVocab,
                                none, residual.data());
  EXPECT_EQ(v.accepted, 0u);
  EXPECT_EQ(v.next, 3);
}

TEST(DrawFromWeightsTest, InverseCdfOverUnnormalizedWeights) {
  const double weights[4] = {0.0, 2.0, 0.0, 6.0};
  EXPECT_EQ(drawFromWeights(weights, 4, 0.0), 1);
  EXPECT_EQ(drawFromWeights(weights, 4, 0.24), 1);
  EXPECT_EQ(drawFromWeights(weights, 4, 0.26), 3);
  EXPECT_EQ(drawFromWeights(weights, 4, 0.9999999), 3);
}

TEST(PromptLookupTest, CopiesWhatFollowedTheLatestLongestMatch) {
  // ... 5 6 7 [8 9] ... 6 7 [1 2] ... 6 7: the trigram "5 6 7" recurs
  // first (longest n wins), so its continuation 8 9 is the draft.
  const int32_t tokens[] = {5, 6, 7, 8, 9, 0, 6, 7, 1, 2, 3, 5, 6, 7};
  int32_t out[4] = {};
  PromptLookupParams params;
  EXPECT_EQ(lookupDraft(tokens, 14, params, 4, out), 4u);
  EXPECT_EQ(std::vector<int32_t>(out, out + 4),
            (std::vector<int32_t>{8, 9, 0, 6}));
  // Only the bigram "6 7" recurs: its latest earlier occurrence wins.
  const int32_t bigram[] = {6, 7, 8, 4, 6, 7, 1, 2, 9, 6, 7};
  EXPECT_EQ(lookupDraft(bigram, 11, params, 3, out), 3u);
  EXPECT_EQ(std::vector<int32_t>(out, out + 3),
            (std::vector<int32_t>{1, 2, 9}));
  // A match near the end has fewer tokens after it.
  const int32_t tail[] = {1, 2, 1, 2};
  EXPECT_EQ(lookupDraft(tail, 4, params, 8, out), 2u);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 2);
}

TEST(PromptLookupTest, ReportsTheMatchLength) {
  // ... [1 2 3 4] 7 ... [3 4] 8 ... 1 2 3 4: the 4-token match wins over the
  // later 2-token one.
  const int32_t tokens[] = {1, 2, 3, 4, 7, 0, 3, 4, 8, 1, 2, 3, 4};
  int32_t out[2] = {};
  size_t matched = 99;
  PromptLookupParams params;
  EXPECT_EQ(lookupDraft(tokens, 13, params, 2, out, &matched), 2u);
  EXPECT_EQ(matched, 4u);
  EXPECT_EQ(out[0], 7);
  EXPECT_EQ(out[1], 0);
  // Compared up to maxNgram tokens: the latest of the capped matches.
  params.maxNgram = 2;
  EXPECT_EQ(lookupDraft(tokens, 13, params, 1, out, &matched), 1u);
  EXPECT_EQ(matched, 2u);
  EXPECT_EQ(out[0], 8);
  // Nothing found: 0 matched.
  const int32_t fresh[] = {1, 2, 3};
  EXPECT_EQ(lookupDraft(fresh, 3, params, 4, out, &matched), 0u);
  EXPECT_EQ(matched, 0u);
  EXPECT_EQ(lookupMatchClass(2), 0u);
  EXPECT_EQ(lookupMatchClass(3), 1u);
  EXPECT_EQ(lookupMatchClass(7), 2u);
  EXPECT_EQ(lookupMatchClass(16), 3u);
}

TEST(PromptLookupTest, NothingWithoutARecurringNgram) {
  const int32_t tokens[] = {1, 2, 3, 4, 5, 6, 7, 8};
  int32_t out[4] = {};
  PromptLookupParams params;
  EXPECT_EQ(lookupDraft(tokens, 8, params, 4, out), 0u);
  EXPECT_EQ(lookupDraft(tokens, 1, params, 4, out), 0u);
  EXPECT_EQ(lookupDraft(tokens, 0, params, 4, out), 0u);
  const int32_t repeats[] = {1, 2, 1, 2};
  EXPECT_EQ(lookupDraft(repeats, 4, params, 0, out), 0u);
}

// |calls| verify calls of |tokens| tokens at |ms| each.
void timeVerify(StepCosts* costs, size_t tokens, double ms, int calls) {
  for (int i = 0; i < calls; ++i) costs->recordVerify(tokens, ms);
}

// Each kind's first call is its warm-up and not counted (the verify
// entry's once per length); a verify length counts as timed after three
// more.
StepCosts warmCosts(double decode, double draftToken, double verify) {
  StepCosts costs(9);
  costs.recordDecode(50 * decode);
  costs.recordDraftToken(50 * draftToken);
  costs.recordDecode(decode);
  costs.recordDraftToken(draftToken);
  for (size_t n = 2; n <= 9; ++n) {
    costs.recordVerify(n, 50 * verify);
    timeVerify(&costs, n, verify, 3);
  }
  return costs;
}

TEST(DraftLengthTest, NothingUntilPlainDecodeIsTimed) {
  StepCosts costs(9);
  DraftLength length(8, /*fixed=*/false);
  EXPECT_EQ(length.choose(costs, 8), 0u);
  DraftLength fixed(8, /*fixed=*/true);
  EXPECT_EQ(fixed.choose(costs, 5), 5u);
  EXPECT_EQ(fixed.choose(costs, 8), 8u);
}

TEST(DraftLengthTest, LongDraftsWhenTheyAreKeptAndCheap) {
  StepCosts costs = warmCosts(10.0, 0.5, 10.5);
  DraftLength length(8, false);
  for (int step = 0; step < 30; ++step) length.record(8, 8);
  EXPECT_GT(length.keepRate(0), 0.9);
  EXPECT_EQ(length.choose(costs, 8), 8u);
  EXPECT_EQ(length.choose(costs, 3), 3u);  // capped by the caller
}

TEST(DraftLengthTest, TheFirstCallOfEachKindIsAWarmUp) {
  StepCosts costs(9);
  costs.recordDecode(40.0);
  EXPECT_FALSE(costs.decodeMeasured());
  costs.recordDecode(10.0);
  EXPECT_DOUBLE_EQ(costs.decodeMs(), 10.0);
  costs.recordVerify(5, 100.0);
  EXPECT_DOUBLE_EQ(costs.verifyMs(5), 10.0);  // untimed: decode's
  costs.recordVerify(3, 90.0);  // each length has its own warm-up
  timeVerify(&costs, 3, 12.0, 3);
  EXPECT_DOUBLE_EQ(costs.verifyMs(3), 12.0);
  // Between decode (1 token, 10 ms) and 3 tokens on their line; longer
  // lengths no more than 3 tokens cost until timed.
  EXPECT_DOUBLE_EQ(costs.verifyMs(2), 11.0);
  EXPECT_DOUBLE_EQ(costs.verifyMs(5), 12.0);
  costs.recordVerify(9, 60.0);
  timeVerify(&costs, 9, 20.0, 3);
  EXPECT_DOUBLE_EQ(costs.verifyMs(9), 20.0);
  EXPECT_DOUBLE_EQ(costs.verifyMs(6), 16.0);  // between 3 and 9
  timeVerify(&costs, 5, 14.0, 3);  // its warm-up was the 100 ms call
  EXPECT_DOUBLE_EQ(costs.verifyMs(7), 17.0);  // between 5 and 9
  EXPECT_DOUBLE_EQ(costs.verifyMs(4), 13.0);
}

// One slow call of a length (a cold cache, a busy moment) does not rule
// it out: until timed three times it costs no more than its neighbours'
// line says.
TEST(DraftLengthTest, OneSlowCallIsNotTheLastWord) {
  StepCosts cold(9);
  cold.recordDecode(50.0);
  cold.recordDecode(10.0);
  cold.recordVerify(9, 50.0);
  cold.recordVerify(9, 30.0);
  EXPECT_DOUBLE_EQ(cold.verifyMs(9), 10.0);
  cold.recordVerify(9, 30.0);
  cold.recordVerify(9, 30.0);
  EXPECT_DOUBLE_EQ(cold.verifyMs(9), 30.0);  // timed three times
}

// A long draft's verify length never timed is tried when the rates
// favour it, and dropped once timed if it costs too much.
TEST(DraftLengthTest, AnUntimedLengthIsTriedThenJudgedByItsTime) {
  StepCosts costs(9);
  costs.recordDecode(50.0);
  costs.recordDecode(1.0);
  costs.recordDraftToken(0.0);
  costs.recordDraftToken(0.0);
  costs.recordVerify(2, 50.0);
  timeVerify(&costs, 2, 1.2, 3);
  DraftLength length(8, false);
  for (int step = 0; step < 30; ++step) length.record(8, 5);
  EXPECT_EQ(length.choose(costs, 8), 8u);
  // Timed at 5 decodes: 1 + 5 kept of 8 drafts is not worth it; 5 drafts
  // (1.2 + 3 * 3.8 / 7 ms) are.
  costs.recordVerify(9, 50.0);
  timeVerify(&costs, 9, 5.0, 3);
  EXPECT_EQ(length.choose(costs, 8), 5u);
}

TEST(DraftLengthTest, OffWhenNothingIsKeptAndRetriedNowAndThen) {
  StepCosts costs = warmCosts(10.0, 2.0, 12.0);
  DraftLength length(8, false);
  for (int step = 0; step < 30; ++step) length.record(4, 0);
  EXPECT_LT(length.keepRate(0), 0.15);
  // A sequence whose drafts are never kept drafts a token now and then.
  size_t drafted = 0, draftingSteps = 0;
  for (int step = 0; step < 64; ++step) {
    const size_t k = length.choose(costs, 8);
    drafted += k;
    draftingSteps += k > 0;
    length.record(k, 0);
  }
  EXPECT_GE(draftingSteps, 2u);
  EXPECT_LE(drafted, 8u);
}

TEST(DraftLengthTest, AModestRateGetsAModestLength) {
  // a = 0.5: k tokens yield 2 - 0.5^k on average; a verify costs the same
  // as a decode and each draft a tenth of one, so 1 + 0.5 + 0.25 per
  // 1.2 decodes (k = 2) beats k = 1 (1.5 per 1.1) and k = 3.
  StepCosts costs = warmCosts(1.0, 0.1, 1.0);
  DraftLength length(8, false);
  for (int step = 0; step < 200; ++step) {
    length.record(1, step % 2);  // kept half the time
  }
  EXPECT_NEAR(length.keepRate(0), 0.5, 0.05);
  const size_t k = length.choose(costs, 8);
  EXPECT_GE(k, 2u);
  EXPECT_LE(k, 3u);
}

TEST(DraftLengthTest, RatesArePerPosition) {
  // Copies of three tokens: the first draft is kept 40% of the time, the
  // next two whenever it is, the fourth never. A verify costs a twentieth
  // of a decode more per token, drafts cost nothing: 1 + 0.4 * 3 tokens
  // for 1.15 decodes at k = 3 is the best.
  StepCosts costs(9);
  costs.recordDecode(50.0);
  costs.recordDecode(1.0);
  costs.recordDraftToken(0.0);
  costs.recordDraftToken(0.0);
  for (size_t n = 2; n <= 9; ++n) {
    costs.recordVerify(n, 50.0);
    timeVerify(&costs, n, 1.0 + 0.05 * (n - 1), 3);
  }
  DraftLength length(8, false);
  for (int step = 0; step < 200; ++step) {
    length.record(8, step % 5 < 2 ? 3 : 0);
  }
  EXPECT_NEAR(length.keepRate(0), 0.4, 0.1);
  EXPECT_GT(length.keepRate(1), 0.8);  // shrunk towards the first rate
  EXPECT_GT(length.keepRate(2), 0.8);
  EXPECT_LT(length.keepRate(3), 0.3);
  EXPECT_EQ(length.choose(costs, 8), 3u);
}

TEST(DraftLengthTest, ClassesKeepTheirOwnRates) {
  // Long matches are copied whole, short ones hardly ever: the first class
  // stops drafting, the last drafts all it may.
  StepCosts costs = warmCosts(1.0, 0.0, 1.2);
  DraftLength length(8, false, 4);
  for (int step = 0; step < 40; ++step) {
    length.record(8, 0, 0);
    length.record(8, 8, 3);
  }
  EXPECT_LT(length.keepRate(0, 0), 0.15);
  EXPECT_GT(length.keepRate(7, 3), 0.9);
  EXPECT_EQ(length.choose(costs, 8, 0), 0u);
  EXPECT_EQ(length.choose(costs, 8, 3), 8u);
  EXPECT_EQ(length.choose(costs, 5, 3), 5u);  // capped by the caller
}

}  // namespace
}  // namespace strata::runtime
