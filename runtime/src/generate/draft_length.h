//===- draft_length.h - How many tokens to draft for a sequence -----------===//
// SPDX-License-Identifier: Apache-2.0
// Drafting k tokens costs k draft steps and one verify call of k + 1
// tokens; it yields 1 + p1 + p1 p2 + ... + p1 ... pk tokens on average,
// pi the probability that draft i is kept once those before it were.
// Acceptance comes in runs (a span the target copies is kept whole, new
// text is missed from its first token), so the pi are counted per
// position. This picks, per sequence and step, the k with the most tokens
// per millisecond from the measured call times and the sequence's own
// rates, and 0 (plain decode) when no k beats plain decode. While drafting
// is off the rates' evidence fades towards the prior and a short draft is
// retried now and then, since the rates only move while the sequence
// drafts.

#ifndef STRATA_RUNTIME_SRC_GENERATE_DRAFT_LENGTH_H_
#define STRATA_RUNTIME_SRC_GENERATE_DRAFT_LENGTH_H_

#include <cstddef>
#include <vector>

namespace strata::runtime {

/// Exponential moving averages of the generator's call times, in ms. The
/// first call of each kind (decode, draft, verify of each length) is not
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
  /// A verify call of |tokens| tokens: its average once timed three times
  /// (after the warm-up) within the last 32 steps; otherwise no more than
  /// the line between the nearest such lengths around it (decode as one
  /// token), or the nearest shorter one's time where no longer one is.
  double verifyMs(size_t tokens) const;

 private:
  // Whether |tokens|' average stands alone (timed enough, recently).
  bool verifyConfirmed(size_t tokens) const;

  // 0 until the first sample after the warm-up call.
  double decodeMs_ = 0;
  double draftTokenMs_ = 0;
  std::vector<double> verifyMs_;  // by tokens per row
  std::vector<size_t> verifySamples_;  // counted calls, by tokens per row
  std::vector<size_t> verifyStep_;     // the step each length was last timed
  size_t steps_ = 0;                   // decode and verify calls so far
  // Whether each kind's warm-up call has been seen (per verify length:
  // each length's first call touches buffers and cache rows of its own).
  bool decodeWarm_ = false;
  bool draftWarm_ = false;
  std::vector<bool> verifyWarm_;
};

/// One sequence's draft length. Its rates are kept per evidence class:
/// prompt lookup's classes are how long a match the draft was copied after
/// (prompt_lookup.h), a draft model has one.
class DraftLength {
 public:
  /// |maxTokens| >= 1; |fixed|: always |maxTokens|; |classes| >= 1.
  DraftLength(size_t maxTokens, bool fixed, size_t classes = 1);

  /// Tokens to draft this step, at most |limit|, for a draft of class
  /// |evidence|.
  size_t choose(const StepCosts& costs, size_t limit, size_t evidence = 0);
  /// The outcome of a step that drafted |drafted| tokens of class
  /// |evidence| and kept |accepted| of them.
  void record(size_t drafted, size_t accepted, size_t evidence = 0);
  /// The estimated probability that draft |position| (0 the first) of
  /// class |evidence| is kept when every draft before it was (0.6 before
  /// any evidence).
  double keepRate(size_t position, size_t evidence = 0) const;

 private:
  // Per draft position, decayed counts of drafts decided (kept, or the
  // first rejected) and of those kept. A position with little evidence
  // takes the rate of the one before it as its prior.
  struct Counts {
    std::vector<double> trials;
    std::vector<double> kept;
    // Steps since drafting was last tried while off.
    size_t idleSteps = 0;
  };
  // |counts|' rate at |position|, its evidence added to |prior|'s weight.
  static double rateAt(const Counts& counts, size_t position, double prior);
  // The class |evidence| counts in (the last for any beyond it).
  size_t classOf(size_t evidence) const;

  size_t maxTokens_;
  bool fixed_;
  std::vector<Counts> classes_;
};

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_GENERATE_DRAFT_LENGTH_H_
