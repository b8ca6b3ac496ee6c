//===- prompt_lookup.h - Drafts copied from earlier in the sequence -------===//
// SPDX-License-Identifier: Apache-2.0
// Prompt lookup decoding (Saxena 2023): outputs that quote their prompt
// (code edits, summaries, answers from retrieved text) continue as an
// earlier occurrence of their last few tokens did. The draft is the tokens
// that followed the earlier occurrence sharing the longest suffix with the
// sequence (the latest of equals); no model runs. How long that match is
// says how far the copy can be trusted (on the byte-level test target,
// 33% of first drafts kept after a 2-token match, 67% after 3, 85-92%
// after 7 or more), so the draft length is chosen per match class.

#ifndef STRATA_RUNTIME_SRC_GENERATE_PROMPT_LOOKUP_H_
#define STRATA_RUNTIME_SRC_GENERATE_PROMPT_LOOKUP_H_

#include <cstddef>
#include <cstdint>

namespace strata::runtime {

/// The match lengths considered.
struct PromptLookupParams {
  size_t maxNgram = 16;  // compared at most; longer matches count as this
  size_t minNgram = 2;   // shorter matches draft nothing
};

/// Writes up to |maxTokens| drafted tokens to |out| and returns how many:
/// those following the earlier occurrence (ending before the last token)
/// that shares the longest suffix with |tokens|, of at least minNgram
/// tokens (the latest of equally long ones); 0 when none does. |matched|,
/// when given, receives that suffix's length (at most maxNgram).
size_t lookupDraft(const int32_t* tokens, size_t count,
                   const PromptLookupParams& params, size_t maxTokens,
                   int32_t* out, size_t* matched = nullptr);

/// The evidence class of a match of |matched| tokens, for the per-class
/// acceptance rates of the draft length: 2 or fewer, 3, 4-7, 8 or more.
constexpr size_t kLookupMatchClasses = 4;
inline size_t lookupMatchClass(size_t matched) {
  return matched <= 2 ? 0 : matched == 3 ? 1 : matched < 8 ? 2 : 3;
}

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_GENERATE_PROMPT_LOOKUP_H_
