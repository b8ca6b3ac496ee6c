//===- prompt_lookup.cc - Drafts copied from earlier in the sequence ------===//
// SPDX-License-Identifier: Apache-2.0

#include "generate/prompt_lookup.h"

#include <algorithm>

namespace strata::runtime {

size_t lookupDraft(const int32_t* tokens, size_t count,
                   const PromptLookupParams& params, size_t maxTokens,
                   int32_t* out) {
  if (maxTokens == 0 || params.minNgram == 0) return 0;
  for (size_t n = std::min(params.maxNgram, count > 0 ? count - 1 : 0);
       n >= params.minNgram; --n) {
    const int32_t* pattern = tokens + count - n;
    // Latest first: recent text predicts the next tokens best. A match
    // starting at i is followed by tokens[i + n ..], at least one of them.
    for (size_t i = count - n; i-- > 0;) {
      if (!std::equal(pattern, pattern + n, tokens + i)) continue;
      const size_t from = i + n;
      const size_t length = std::min(maxTokens, count - from);
      std::copy(tokens + from, tokens + from + length, out);
      return length;
    }
  }
  return 0;
}

}  // namespace strata::runtime
