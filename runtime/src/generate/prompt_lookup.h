//===- prompt_lookup.h - Drafts copied from earlier in the sequence -------===//
// SPDX-License-Identifier: Apache-2.0
// Prompt lookup decoding (Saxena 2023): outputs that quote their prompt
// (code edits, summaries, answers from retrieved text) continue as an
// earlier occurrence of their last few tokens did. The draft is the tokens
// that followed the latest earlier occurrence of the sequence's last n
// tokens, n from the longest n-gram down; no model runs.

#ifndef STRATA_RUNTIME_SRC_GENERATE_PROMPT_LOOKUP_H_
#define STRATA_RUNTIME_SRC_GENERATE_PROMPT_LOOKUP_H_

#include <cstddef>
#include <cstdint>

namespace strata::runtime {

/// The n-gram sizes tried, longest first.
struct PromptLookupParams {
  size_t maxNgram = 3;
  size_t minNgram = 2;
};

/// Writes up to |maxTokens| drafted tokens to |out| and returns how many:
/// those following the latest earlier occurrence (ending before the last
/// token) of the last n of |tokens|, for the largest n in [minNgram,
/// maxNgram] that recurs; 0 when none does.
size_t lookupDraft(const int32_t* tokens, size_t count,
                   const PromptLookupParams& params, size_t maxTokens,
                   int32_t* out);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_GENERATE_PROMPT_LOOKUP_H_
