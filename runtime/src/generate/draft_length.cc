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
// A sequence with drafting off tries one short draft every this many steps.
constexpr size_t kRetryInterval = 16;
// The acceptance rate before evidence: a draft is chosen because it mostly
// agrees with the target, so 0.7, worth two drafted tokens (one early
// rejection must not switch drafting off for long).
constexpr double kPriorRate = 0.7;
constexpr double kPriorTrials = 2.0;

}  // namespace

void StepCosts::Average::add(double sample) {
  if (!warm) {
    warm = true;
    return;
  }
  ms = ms > 0 ? ms + kCostSmoothing * (sample - ms) : sample;
}

StepCosts::StepCosts(size_t maxVerifyLength) : verify_(maxVerifyLength + 1) {}

void StepCosts::recordDecode(double ms) { decode_.add(ms); }

void StepCosts::recordVerify(size_t tokens, double ms) {
  if (tokens < verify_.size()) verify_[tokens].add(ms);
}

void StepCosts::recordDraftToken(double ms) { draftToken_.add(ms); }

double StepCosts::verifyMs(size_t tokens) const {
  if (verify_.empty()) return decode_.ms;
  for (size_t n = std::min(tokens, verify_.size() - 1); n > 0; --n) {
    if (verify_[n].ms > 0) return verify_[n].ms;
  }
  return decode_.ms;
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
  double bestRate = plainRate;
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
  trials_ *= kAcceptanceDecay;
  kept_ *= kAcceptanceDecay;
  if (++idleSteps_ >= kRetryInterval) {
    idleSteps_ = 0;
    return 1;
  }
  return 0;
}

}  // namespace strata::runtime
