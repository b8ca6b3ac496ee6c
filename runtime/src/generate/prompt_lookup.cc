//===- prompt_lookup.cc - Drafts copied from earlier in the sequence ------===//
// SPDX-License-Identifier: Apache-2.0

#include "generate/prompt_lookup.h"

#include <algorithm>

namespace strata::runtime {

size_t lookupDraft(const int32_t* tokens, size_t count,
                   const PromptLookupParams& params, size_t maxTokens,
                   int32_t* out, size_t* matched) {
  if (matched) *matched = 0;
  if (maxTokens == 0 || params.minNgram == 0 ||
      params.maxNgram < params.minNgram || count < 2) {
    return 0;
  }
  // One pass over the earlier end points, latest first: the suffix shared
  // by tokens[0, end) and the whole sequence, compared back from the end.
  size_t best = 0, bestEnd = 0;
  const int32_t* last = tokens + count - 1;
  for (size_t end = count - 1; end > 0; --end) {
    if (tokens[end - 1] != *last) continue;
    const size_t most = std::min(params.maxNgram, end);
    size_t length = 1;
    while (length < most && tokens[end - 1 - length] == last[-length]) {
      ++length;
    }
    if (length > best) {
      best = length;
      bestEnd = end;
      if (best == params.maxNgram) break;
    }
  }
  if (best < params.minNgram) return 0;
  const size_t length = std::min(maxTokens, count - bestEnd);
  std::copy(tokens + bestEnd, tokens + bestEnd + length, out);
  if (matched) *matched = best;
  return length;
}

}  // namespace strata::runtime
