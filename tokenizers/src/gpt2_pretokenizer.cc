//===- gpt2_pretokenizer.cc - GPT-2's split of text before BPE ------------===//
// SPDX-License-Identifier: Apache-2.0
// At each position the expression's alternatives are tried in order, and the
// first that matches wins, as a backtracking regex engine does.

#include "gpt2_pretokenizer.h"

#include <cstdint>

#include "unicode_classes.h"
#include "utf8.h"

namespace strata::tokenizers {
namespace {

bool isOther(uint32_t c) {
  return !isUnicodeWhitespace(c) && !isUnicodeLetter(c) && !isUnicodeNumber(c);
}

class Matcher {
 public:
  explicit Matcher(const std::vector<uint32_t>& chars) : chars_(chars) {}

  /// The end (exclusive) of the piece that starts at character |i|.
  size_t pieceEnd(size_t i) const {
    if (size_t end = contractionEnd(i)) return end;
    // " ?X+": the optional space only when X follows it; a space alone is
    // no letter, number or other character, so it falls to the whitespace
    // alternatives below.
    size_t body = chars_[i] == ' ' ? i + 1 : i;
    if (body < chars_.size()) {
      uint32_t c = chars_[body];
      if (isUnicodeLetter(c)) return runEnd(body, isUnicodeLetter);
      if (isUnicodeNumber(c)) return runEnd(body, isUnicodeNumber);
      if (isOther(c)) return runEnd(body, isOther);
    }
    // "\s+(?!\S)" keeps the last space of a run for the word after it;
    // "\s+" takes a single space before a word that " ?X+" did not take.
    size_t end = runEnd(i, isUnicodeWhitespace);
    if (end < chars_.size() && end - i >= 2) return end - 1;
    return end > i ? end : i + 1;
  }

 private:
  /// The end of 's 't 're 've 'm 'll 'd at |i| (lower case only, as in
  /// GPT-2), or 0.
  size_t contractionEnd(size_t i) const {
    if (chars_[i] != '\'' || i + 1 >= chars_.size()) return 0;
    uint32_t first = chars_[i + 1];
    if (first == 's' || first == 't' || first == 'm' || first == 'd')
      return i + 2;
    if (i + 2 >= chars_.size()) return 0;
    uint32_t second = chars_[i + 2];
    if ((first == 'r' && second == 'e') || (first == 'v' && second == 'e') ||
        (first == 'l' && second == 'l'))
      return i + 3;
    return 0;
  }

  size_t runEnd(size_t i, bool (*inClass)(uint32_t)) const {
    while (i < chars_.size() && inClass(chars_[i])) ++i;
    return i;
  }

  const std::vector<uint32_t>& chars_;
};

}  // namespace

std::vector<std::string_view> splitGpt2Pretokens(std::string_view text) {
  std::vector<uint32_t> chars;
  std::vector<size_t> offsets;  // byte offset of each character, then the end
  for (size_t offset = 0; offset < text.size();) {
    uint32_t c;
    size_t length = decodeUtf8(text, offset, &c);
    if (length == 0) length = 1, c = 0xFFFD;  // callers validate; stay safe
    chars.push_back(c);
    offsets.push_back(offset);
    offset += length;
  }
  offsets.push_back(text.size());

  std::vector<std::string_view> pieces;
  Matcher matcher(chars);
  for (size_t i = 0; i < chars.size();) {
    size_t end = matcher.pieceEnd(i);
    pieces.push_back(text.substr(offsets[i], offsets[end] - offsets[i]));
    i = end;
  }
  return pieces;
}

}  // namespace strata::tokenizers
