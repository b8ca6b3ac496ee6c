//===- draft_length.cc - How many tokens to draft for a sequence ----------===//
// SPDX-License-Identifier: Apache-2.0

#include "generate/draft_length.h"

#include <algorithm>
#include <cmath>

namespace strata::runtime {
namespace {

// Weight of the newest measurement in the moving averages.
constexpr double kCostSmoothing = 0.2;
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
    : verifyMs_(maxVerifyLength + 1, 0.0) {}

void StepCosts::recordDecode(double ms) { smooth(&decodeWarm_, &decodeMs_, ms); }

void StepCosts::recordVerify(size_t tokens, double ms) {
  if (tokens < verifyMs_.size()) {
    smooth(&verifyWarm_, &verifyMs_[tokens], ms);
  }
}

void StepCosts::recordDraftToken(double ms) {
  smooth(&draftWarm_, &draftTokenMs_, ms);
}

double StepCosts::verifyMs(size_t tokens) const {
  if (tokens < verifyMs_.size() && verifyMs_[tokens] > 0) {
    return verifyMs_[tokens];
  }
  // The nearest measured length m > 1, and the line through decode (one
  // token) and it.
  const auto distance = [&](size_t x) {
    return x > tokens ? x - tokens : tokens - x;
  };
  size_t nearest = 0;
  for (size_t m = 2; m < verifyMs_.size(); ++m) {
    if (verifyMs_[m] > 0 && (nearest == 0 || distance(m) < distance(nearest))) {
      nearest = m;
    }
  }
  if (nearest == 0 || tokens == 0) return decodeMs_;
  const double slope =
      (verifyMs_[nearest] - decodeMs_) / static_cast<double>(nearest - 1);
  return std::max(0.0, decodeMs_ + slope * static_cast<double>(tokens - 1));
}

DraftLength::DraftLength(size_t maxTokens, bool fixed)
    : maxTokens_(std::max<size_t>(maxTokens, 1)), fixed_(fixed) {}

double DraftLength::acceptanceRate() const {
  return (kept_ + kPriorRate * kPriorTrials) / (trials_ + kPriorTrials);
}

void DraftLength::record(size_t drafted, size_t accepted) {
  if (drafted == 0) return;
  trials_ *= kAcceptanceDecay;
  kept_ *= kAcceptanceDecay;
  // The kept ones and, unless all were kept, the one rejected.
  trials_ += static_cast<double>(accepted + (accepted < drafted ? 1 : 0));
  kept_ += static_cast<double>(accepted);
}

size_t DraftLength::choose(const StepCosts& costs, size_t limit) {
  const size_t most = std::min(maxTokens_, limit);
  if (fixed_ || most == 0) return most;
  // Without a plain decode time there is nothing to compare with.
  if (!costs.decodeMeasured()) return 0;
  const double a = std::min(acceptanceRate(), 0.999);
  const double plainRate = 1.0 / costs.decodeMs();
  size_t best = 0;
  double bestRate = plainRate * kRequiredGain;
  double expected = 1.0;  // tokens from drafting k: 1 + a + ... + a^k
  double power = 1.0;
  for (size_t k = 1; k <= most; ++k) {
    power *= a;
    expected += power;
    const double ms = static_cast<double>(k) * costs.draftTokenMs() +
                      costs.verifyMs(k + 1);
    if (ms > 0 && expected / ms > bestRate) {
      bestRate = expected / ms;
      best = k;
    }
  }
  if (best > 0) {
    idleSteps_ = 0;
    return best;
  }
  // Off: the evidence fades towards the prior as steps pass, since what
  // the sequence generates changes (a model that starts a loop, or quotes
  // its prompt, becomes predictable).
  trials_ *= kIdleDecay;
  kept_ *= kIdleDecay;
  if (++idleSteps_ >= kRetryInterval) {
    idleSteps_ = 0;
    return 1;
  }
  return 0;
}

}  // namespace strata::runtime
