//===- draft_length.h - How many tokens to draft for a sequence -----------===//
// SPDX-License-Identifier: Apache-2.0
// Drafting k tokens costs k draft steps and one verify call of k + 1
// tokens; it yields 1 + a + a^2 + ... + a^k tokens on average when each
// draft is accepted with probability a. This picks, per sequence and step,
// the k with the most tokens per millisecond from the measured call times
// and the sequence's own acceptance rate, and 0 (plain decode) when no k
// beats plain decode. While drafting is off the rate's evidence fades
// towards the prior and a short draft is retried now and then, since the
// rate only moves while the sequence drafts.

#ifndef STRATA_RUNTIME_SRC_GENERATE_DRAFT_LENGTH_H_
#define STRATA_RUNTIME_SRC_GENERATE_DRAFT_LENGTH_H_

#include <cstddef>
#include <vector>

namespace strata::runtime {

/// Exponential moving averages of the generator's call times, in ms. The
/// first call of each kind (decode, draft, verify of any length) is not
/// counted: it pays for page faults and cold caches, several times a later
/// call's time.
class StepCosts {
 public:
  explicit StepCosts(size_t maxVerifyLength);

  void recordDecode(double ms);
  /// One verify call of |tokens| tokens per row.
  void recordVerify(size_t tokens, double ms);
  /// The draft's share of one step, per drafted token.
  void recordDraftToken(double ms);

  bool decodeMeasured() const { return decodeMs_ > 0; }
  double decodeMs() const { return decodeMs_; }
  double draftTokenMs() const { return draftTokenMs_; }
  /// A verify call of |tokens| tokens; a length not measured yet is
  /// interpolated linearly between decode (one token) and the nearest
  /// measured length (decode's time while none is).
  double verifyMs(size_t tokens) const;

 private:
  // 0 until the first sample after the warm-up call.
  double decodeMs_ = 0;
  double draftTokenMs_ = 0;
  std::vector<double> verifyMs_;  // by tokens per row
  // Whether each kind's warm-up call has been seen.
  bool decodeWarm_ = false;
  bool draftWarm_ = false;
  bool verifyWarm_ = false;
};

/// One sequence's draft length.
class DraftLength {
 public:
  /// |maxTokens| >= 1; |fixed|: always |maxTokens|.
  DraftLength(size_t maxTokens, bool fixed);

  /// Tokens to draft this step, at most |limit|.
  size_t choose(const StepCosts& costs, size_t limit);
  /// The outcome of a step that drafted |drafted| tokens and kept
  /// |accepted| of them.
  void record(size_t drafted, size_t accepted);
  /// The estimated probability that a drafted token is kept (0.6 before
  /// any evidence).
  double acceptanceRate() const;

 private:
  size_t maxTokens_;
  bool fixed_;
  // Decayed counts of drafted tokens decided (kept, or the first
  // rejected) and of those kept.
  double trials_ = 0;
  double kept_ = 0;
  // Steps since drafting was last tried while off.
  size_t idleSteps_ = 0;
};

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_GENERATE_DRAFT_LENGTH_H_
