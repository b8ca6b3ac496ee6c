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
constexpr size_t kRetryInterval = 32;

void smooth(double* average, double sample) {
  *average = *average > 0 ? *average + kCostSmoothing * (sample - *average)
                          : sample;
}

}  // namespace

StepCosts::StepCosts(size_t maxVerifyLength)
    : verifyMs_(maxVerifyLength + 1, 0.0) {}

void StepCosts::recordDecode(double ms) { smooth(&decodeMs_, ms); }

void StepCosts::recordVerify(size_t tokens, double ms) {
  if (tokens < verifyMs_.size()) smooth(&verifyMs_[tokens], ms);
}

void StepCosts::recordDraftToken(double ms) { smooth(&draftTokenMs_, ms); }

double StepCosts::verifyMs(size_t tokens) const {
  for (size_t n = std::min(tokens, verifyMs_.size() - 1); n > 0; --n) {
    if (verifyMs_[n] > 0) return verifyMs_[n];
  }
  return decodeMs_;
}

DraftLength::DraftLength(size_t maxTokens, bool fixed)
    : maxTokens_(std::max<size_t>(maxTokens, 1)), fixed_(fixed) {}

double DraftLength::acceptanceRate() const {
  // A uniform prior: 0.5 before any evidence.
  return (kept_ + 1.0) / (trials_ + 2.0);
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
  if (++idleSteps_ >= kRetryInterval) {
    idleSteps_ = 0;
    return 1;
  }
  return 0;
}

}  // namespace strata::runtime
