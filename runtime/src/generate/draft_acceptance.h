//===- draft_acceptance.h - Which drafted tokens a target step keeps ------===//
// SPDX-License-Identifier: Apache-2.0
// Speculative sampling (Leviathan et al. 2023; Chen et al. 2023): drafted
// token i, drawn from the draft's distribution q_i, is kept with probability
// min(1, p_i(d) / q_i(d)) under the target's distribution p_i, in order,
// until one is rejected; the token after the kept ones is drawn from the
// normalized residual max(0, p_i - q_i) at a rejection, or from p_k after
// all k are kept. Every token then has exactly the target's distribution.
// With one-hot distributions (greedy target, deterministic draft) this is
// the longest prefix equal to the target's argmax plus its next token, and
// no draw changes the outcome.

#ifndef STRATA_RUNTIME_SRC_GENERATE_DRAFT_ACCEPTANCE_H_
#define STRATA_RUNTIME_SRC_GENERATE_DRAFT_ACCEPTANCE_H_

#include <cstddef>
#include <cstdint>

namespace strata::runtime {

/// The outcome of one verification: drafts [0, accepted) kept, then |next|.
struct DraftVerdict {
  size_t accepted = 0;
  int32_t next = -1;
};

/// A source of uniform draws in [0, 1).
class UniformSource {
 public:
  virtual ~UniformSource() = default;
  virtual double uniform() = 0;
};

/// Applies the rule to |count| drafts. |target| holds count + 1
/// distributions over |vocab| tokens (row i: the target's next token after
/// the drafts before i), |draft| holds count (row i: what draft i was drawn
/// from; one-hot for a deterministic draft). |residual| is scratch of
/// |vocab| doubles. Draws only where the outcome is random.
DraftVerdict acceptDrafts(const double* target, const double* draft,
                          const int32_t* drafts, size_t count, size_t vocab,
                          UniformSource& random, double* residual);

/// The token at which |uniform| * total falls in the cumulative sum of
/// |weights| (unnormalized, >= 0, some positive): inverse CDF.
int32_t drawFromWeights(const double* weights, size_t vocab, double uniform);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_GENERATE_DRAFT_ACCEPTANCE_H_
