//===- draft_acceptance.cc - Which drafted tokens a target step keeps -----===//
// SPDX-License-Identifier: Apache-2.0

#include "generate/draft_acceptance.h"

#include <algorithm>

namespace strata::runtime {

int32_t drawFromWeights(const double* weights, size_t vocab, double uniform) {
  double total = 0.0;
  for (size_t i = 0; i < vocab; ++i) total += weights[i];
  const double u = uniform * total;
  double cumulative = 0.0;
  int32_t last = -1;
  for (size_t i = 0; i < vocab; ++i) {
    if (weights[i] <= 0.0) continue;
    last = static_cast<int32_t>(i);
    cumulative += weights[i];
    if (u < cumulative) return last;
  }
  // u rounded up to the total: the last token with weight.
  return last;
}

namespace {

// The only token with weight, or -1: drawing from it needs no
// randomness, so greedy verification consumes none.
int32_t certainToken(const double* distribution, size_t vocab) {
  int32_t token = -1;
  for (size_t i = 0; i < vocab; ++i) {
    if (distribution[i] <= 0.0) continue;
    if (token >= 0) return -1;
    token = static_cast<int32_t>(i);
  }
  return token;
}

int32_t drawFrom(const double* weights, size_t vocab, UniformSource& random) {
  int32_t certain = certainToken(weights, vocab);
  return certain >= 0 ? certain
                      : drawFromWeights(weights, vocab, random.uniform());
}

}  // namespace

DraftVerdict acceptDrafts(const double* target, const double* draft,
                          const int32_t* drafts, size_t count, size_t vocab,
                          UniformSource& random, double* residual) {
  DraftVerdict verdict;
  for (size_t i = 0; i < count; ++i) {
    const double* p = target + i * vocab;
    const double* q = draft + i * vocab;
    const int32_t token = drafts[i];
    const bool inVocab = token >= 0 && static_cast<size_t>(token) < vocab;
    const double pt = inVocab ? p[token] : 0.0;
    const double qt = inVocab ? q[token] : 0.0;
    // Kept for sure when the target likes it at least as much; else with
    // probability p / q (q > 0: the draft drew it).
    if (inVocab && pt >= qt && pt > 0.0) continue;
    if (inVocab && qt > 0.0 && pt > 0.0 && random.uniform() * qt < pt) continue;
    double mass = 0.0;
    for (size_t j = 0; j < vocab; ++j) {
      residual[j] = std::max(0.0, p[j] - q[j]);
      mass += residual[j];
    }
    verdict.accepted = i;
    // No residual mass only when p <= q everywhere, i.e. p == q, where no
    // rejection can happen; rounding aside, fall back to p.
    verdict.next = mass > 0.0 ? drawFrom(residual, vocab, random)
                              : drawFrom(p, vocab, random);
    return verdict;
  }
  verdict.accepted = count;
  verdict.next = drawFrom(target + count * vocab, vocab, random);
  return verdict;
}

}  // namespace strata::runtime
