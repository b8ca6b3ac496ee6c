//===- draft_length.cc - How many tokens to draft for a sequence ----------===//
// SPDX-License-Identifier: Apache-2.0

#include "generate/draft_length.h"

#include <algorithm>

namespace strata::runtime {
namespace {

// Weight of the newest measurement in the moving averages.
constexpr double kCostSmoothing = 0.2;
// Verify calls of a length timed before its average is trusted alone,
// and the steps (calls of any kind) after which it is timed afresh.
constexpr size_t kConfirmSamples = 3;
constexpr size_t kStaleSteps = 32;
// Per-step decay of the acceptance counts: about the last 20 steps count.
constexpr double kAcceptanceDecay = 0.95;
// While drafting is off the counts fade more slowly: a sequence that drafts
// badly should stay off for a while (each failed draft costs a verify call
// more than a decode step).
constexpr double kIdleDecay = 0.98;
// Drafting must beat plain decode by this factor: the estimates are noisy,
// and a step that drafts for nothing costs more than one that does not.
constexpr double kRequiredGain = 1.10;
// A sequence with drafting off tries one short draft every this many steps.
constexpr size_t kRetryInterval = 16;
// The acceptance rate before evidence: a draft is chosen because it mostly
// agrees with the target, so 0.6, worth two drafted tokens (one early
// rejection must not switch drafting off for long).
constexpr double kPriorRate = 0.6;
constexpr double kPriorTrials = 2.0;

// Adds |sample| to |average| unless it is the warm-up call (|warm| not yet
// set, and set now).
void smooth(bool* warm, double* average, double sample) {
  if (!*warm) {
    *warm = true;
    return;
  }
  *average = *average > 0 ? *average + kCostSmoothing * (sample - *average)
                          : sample;
}

}  // namespace

StepCosts::StepCosts(size_t maxVerifyLength)
    : verifyMs_(maxVerifyLength + 1, 0.0),
      verifySamples_(maxVerifyLength + 1, 0),
      verifyStep_(maxVerifyLength + 1, 0),
      verifyWarm_(maxVerifyLength + 1, false) {}

void StepCosts::recordDecode(double ms) {
  ++steps_;
  smooth(&decodeWarm_, &decodeMs_, ms);
}

void StepCosts::recordVerify(size_t tokens, double ms) {
  ++steps_;
  if (tokens >= verifyMs_.size()) return;
  // Timed long ago: timed afresh (the host, the context length and the
  // caches have moved since; a length timed while the process was cold
  // would otherwise keep its cold average, never chosen to be timed again).
  if (steps_ - verifyStep_[tokens] > kStaleSteps) {
    verifySamples_[tokens] = 0;
    verifyMs_[tokens] = 0;
  }
  verifyStep_[tokens] = steps_;
  if (verifyWarm_[tokens]) ++verifySamples_[tokens];  // not the warm-up
  bool warm = verifyWarm_[tokens];
  smooth(&warm, &verifyMs_[tokens], ms);
  verifyWarm_[tokens] = warm;
}

void StepCosts::recordDraftToken(double ms) {
  smooth(&draftWarm_, &draftTokenMs_, ms);
}

bool StepCosts::verifyConfirmed(size_t tokens) const {
  return tokens < verifyMs_.size() &&
         verifySamples_[tokens] >= kConfirmSamples &&
         steps_ - verifyStep_[tokens] <= kStaleSteps;
}

double StepCosts::verifyMs(size_t tokens) const {
  if (verifyConfirmed(tokens)) return verifyMs_[tokens];
  // The nearest confirmed lengths below (decode: one token) and above.
  size_t below = 1;
  double belowMs = decodeMs_;
  for (size_t m = 2; m < tokens && m < verifyMs_.size(); ++m) {
    if (verifyConfirmed(m)) {
      below = m;
      belowMs = verifyMs_[m];
    }
  }
  // None above: no more than below. Checking more tokens costs less per
  // token as the weights are read once for all of them, so the line
  // through shorter lengths overshoots (decode 1.4 ms, 2 tokens 1.55, 9
  // tokens 2.3, not 2.7).
  double estimate = belowMs;
  for (size_t m = tokens + 1; m < verifyMs_.size(); ++m) {
    if (verifyConfirmed(m)) {
      const double t = static_cast<double>(tokens - below) /
                       static_cast<double>(m - below);
      estimate = belowMs + t * (verifyMs_[m] - belowMs);
      break;
    }
  }
  // A length timed fewer times than that may have met a cold cache or a
  // busy moment: the lower of its own average and the estimate, so that
  // it is tried again where the acceptance rates favour it rather than
  // ruled out by one slow call.
  if (tokens < verifyMs_.size() && verifyMs_[tokens] > 0) {
    return std::min(verifyMs_[tokens], estimate);
  }
  return estimate;
}

DraftLength::DraftLength(size_t maxTokens, bool fixed, size_t classes)
    : maxTokens_(std::max<size_t>(maxTokens, 1)),
      fixed_(fixed),
      classes_(std::max<size_t>(classes, 1),
               Counts{std::vector<double>(maxTokens_, 0.0),
                      std::vector<double>(maxTokens_, 0.0), 0}) {}

double DraftLength::rateAt(const Counts& counts, size_t position,
                           double prior) {
  return (counts.kept[position] + prior * kPriorTrials) /
         (counts.trials[position] + kPriorTrials);
}

size_t DraftLength::classOf(size_t evidence) const {
  return std::min(evidence, classes_.size() - 1);
}

double DraftLength::keepRate(size_t position, size_t evidence) const {
  const Counts& counts = classes_[classOf(evidence)];
  double rate = kPriorRate;
  for (size_t i = 0; i <= position && i < maxTokens_; ++i) {
    rate = rateAt(counts, i, rate);
  }
  return rate;
}

void DraftLength::record(size_t drafted, size_t accepted, size_t evidence) {
  if (drafted == 0) return;
  Counts& counts = classes_[classOf(evidence)];
  for (size_t i = 0; i < maxTokens_; ++i) {
    counts.trials[i] *= kAcceptanceDecay;
    counts.kept[i] *= kAcceptanceDecay;
  }
  // Positions up to the first rejected one were decided; those before it
  // were kept. Later positions were never looked at.
  const size_t decided = std::min(accepted + (accepted < drafted ? 1 : 0),
                                  maxTokens_);
  for (size_t i = 0; i < decided; ++i) {
    counts.trials[i] += 1;
    if (i < accepted) counts.kept[i] += 1;
  }
}

size_t DraftLength::choose(const StepCosts& costs, size_t limit,
                           size_t evidence) {
  const size_t most = std::min(maxTokens_, limit);
  if (fixed_ || most == 0) return most;
  // Without a plain decode time there is nothing to compare with.
  if (!costs.decodeMeasured()) return 0;
  Counts& counts = classes_[classOf(evidence)];
  const double plainRate = 1.0 / costs.decodeMs();
  size_t best = 0;
  double bestRate = plainRate * kRequiredGain;
  // Tokens from drafting k: 1 + p1 + p1 p2 + ... + p1 ... pk, pi the rate
  // at which draft i is kept once the drafts before it were.
  double expected = 1.0;
  double reach = 1.0;
  double rate = kPriorRate;
  for (size_t k = 1; k <= most; ++k) {
    rate = rateAt(counts, k - 1, rate);
    reach *= std::min(rate, 0.999);
    expected += reach;
    const double ms = static_cast<double>(k) * costs.draftTokenMs() +
                      costs.verifyMs(k + 1);
    if (ms > 0 && expected / ms > bestRate) {
      bestRate = expected / ms;
      best = k;
    }
  }
  if (best > 0) {
    counts.idleSteps = 0;
    return best;
  }
  // Off: the evidence fades towards the prior as steps pass, since what
  // the sequence generates changes (a model that starts a loop, or quotes
  // its prompt, becomes predictable).
  for (size_t i = 0; i < maxTokens_; ++i) {
    counts.trials[i] *= kIdleDecay;
    counts.kept[i] *= kIdleDecay;
  }
  if (++counts.idleSteps >= kRetryInterval) {
    counts.idleSteps = 0;
    return 1;
  }
  return 0;
}

}  // namespace strata::runtime
