//===- gpt2_pretokenizer.h - GPT-2's split of text before BPE -------------===//
// SPDX-License-Identifier: Apache-2.0
// GPT-2 runs BPE on pieces that its regular expression
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// finds; this matches that expression by hand, on code points.

#ifndef STRATA_TOKENIZERS_SRC_GPT2_PRETOKENIZER_H_
#define STRATA_TOKENIZERS_SRC_GPT2_PRETOKENIZER_H_

#include <string_view>
#include <vector>

namespace strata::tokenizers {

/// The consecutive pieces of |text|, which must be well-formed UTF-8; their
/// concatenation is |text|. The views point into |text|.
std::vector<std::string_view> splitGpt2Pretokens(std::string_view text);

}  // namespace strata::tokenizers

#endif  // STRATA_TOKENIZERS_SRC_GPT2_PRETOKENIZER_H_
