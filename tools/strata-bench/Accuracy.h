//===- Accuracy.h - Fidelity of artifacts against a reference ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// strata-bench --accuracy: artifacts compiled from one model teacher-forced
// through their generation entries over held-out sequences, in lockstep, and
// each scored against the first (the reference): held-out cross-entropy,
// top-1 agreement and the mean KL divergence from the reference.
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_BENCH_ACCURACY_H_
#define STRATA_TOOLS_STRATA_BENCH_ACCURACY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "HeldOut.h"

namespace strata::tools {

/// The entry whose logits are scored.
enum class ScoredEntry {
  /// The first token of each sequence through `prefill`, then one `decode`
  /// step per token: what generation runs.
  Decode,
  /// Each sequence but its last token prefilled at once, scored on the
  /// every-position output `all_logits` (--prefill-logits all): what a
  /// prefill precision changes.
  Prefill,
};

/// What one artifact scored. Sums are over every scored position.
struct AccuracyResult {
  std::string path;
  /// Positions scored (each predicts the token after it).
  int64_t positions = 0;
  /// Sum of -log p(next token), in nats.
  double nllSum = 0;
  /// Positions whose argmax equals the reference's.
  int64_t top1Agreements = 0;
  /// Sum of KL(reference || artifact), in nats.
  double klSum = 0;

  /// Mean cross-entropy in nats per token.
  double natsPerToken() const;
  /// Mean cross-entropy in bits per token (per byte for a byte-level model).
  double bitsPerToken() const;
  /// Fraction of positions whose top-1 token equals the reference's.
  double top1Agreement() const;
  /// Mean KL(reference || artifact) per position, in nats.
  double meanKl() const;
};

struct ScoredModel;

/// The artifacts of one accuracy run, loaded once.
class AccuracyRun {
public:
  AccuracyRun();
  ~AccuracyRun();

  /// Loads |paths| (the first is the reference), each with its own session
  /// of |threads| threads, and checks each has the entries |entry| needs and
  /// the reference's vocabulary. Returns "" or the problem.
  std::string open(const std::vector<std::string> &paths, ScoredEntry entry,
                   uint32_t threads);

  /// The vocabulary size (the logits' last dim).
  int64_t vocab() const;
  /// The smallest compiled maxima over the artifacts: sequence slots,
  /// tokens a sequence may hold, tokens one prefill call takes.
  int64_t slots() const;
  int64_t context() const;
  int64_t prefillLength() const;

  /// Checks that |sequences| run |slots| at a time fit every artifact:
  /// ids in the vocabulary, lengths within the compiled maxima. Returns ""
  /// or the problem, naming the sequence and the artifact.
  std::string check(const std::vector<TokenSequence> &sequences,
                    int64_t slots) const;

  /// Teacher-forces |sequences| through every artifact, |slots| sequences
  /// at a time (sequence i of a group in slot i), and fills |results|, one
  /// per artifact in the order of open(). Returns "" or the problem.
  std::string score(const std::vector<TokenSequence> &sequences, int64_t slots,
                    std::vector<AccuracyResult> *results);

private:
  /// Runs one call (|rows| positions, targets |targets|) on every artifact
  /// and adds its scores to |results|.
  struct Call;
  std::string scoreCall(const Call &call, std::vector<AccuracyResult> *results);

  ScoredEntry entry_ = ScoredEntry::Decode;
  std::vector<std::unique_ptr<ScoredModel>> models_;
};

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_BENCH_ACCURACY_H_
