//===- gpt2_pretokenizer_test.cc - GPT-2's regex split, by hand -----------===//
// SPDX-License-Identifier: Apache-2.0
// Splits checked against what GPT-2's regular expression gives, plus the
// Unicode classes and the strict UTF-8 decoder it relies on.

#include "gpt2_pretokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "byte_unicode_map.h"
#include "unicode_classes.h"
#include "utf8.h"

namespace strata::tokenizers {
namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> pieces;
  for (std::string_view piece : splitGpt2Pretokens(text))
    pieces.emplace_back(piece);
  return pieces;
}

using Pieces = std::vector<std::string>;

TEST(Gpt2Pretokenizer, WordsTakeTheirLeadingSpace) {
  EXPECT_EQ(split("Hello world"), (Pieces{"Hello", " world"}));
  EXPECT_EQ(split("caf\u00e9 na\u00efve"),
            (Pieces{"caf\u00e9", " na\u00efve"}));
}

TEST(Gpt2Pretokenizer, Contractions) {
  EXPECT_EQ(split("it's we'll you'd"),
            (Pieces{"it", "'s", " we", "'ll", " you", "'d"}));
  // Upper case is no contraction; after a space the apostrophe is punctuation.
  EXPECT_EQ(split("'S 'sup"), (Pieces{"'", "S", " '", "sup"}));
}

TEST(Gpt2Pretokenizer, LettersNumbersAndOthersSplit) {
  EXPECT_EQ(split("123 4567 x2"), (Pieces{"123", " 4567", " x", "2"}));
  EXPECT_EQ(split("re-do."), (Pieces{"re", "-", "do", "."}));
  EXPECT_EQ(split("emoji \U0001F600\U0001F44D!"),
            (Pieces{"emoji", " \U0001F600\U0001F44D!"}));
  EXPECT_EQ(split("\u65e5\u672c\u8a9e\u306e"),
            (Pieces{"\u65e5\u672c\u8a9e\u306e"}));
}

TEST(Gpt2Pretokenizer, WhitespaceRunsLeaveTheLastSpaceForTheNextWord) {
  EXPECT_EQ(
      split("a  b\t\tc\n\n\nd   "),
      (Pieces{"a", " ", " b", "\t", "\t", "c", "\n\n", "\n", "d", "   "}));
  EXPECT_EQ(split(" "), (Pieces{" "}));
  EXPECT_EQ(split("\n"), (Pieces{"\n"}));
}

TEST(Gpt2Pretokenizer, PiecesCoverTheText) {
  std::string text =
      "  Mixed\u00a0text: \u0391\u03b8\u03ae\u03bd\u03b1, 42\u00b2!  ";
  std::string joined;
  for (const std::string& piece : split(text)) joined += piece;
  EXPECT_EQ(joined, text);
}

TEST(UnicodeClasses, AsciiLatin1AndCommonScripts) {
  EXPECT_TRUE(isUnicodeLetter('a'));
  EXPECT_TRUE(isUnicodeLetter(0x00E9));    // é
  EXPECT_FALSE(isUnicodeLetter(0x00D7));   // ×
  EXPECT_TRUE(isUnicodeLetter(0x03B1));    // α
  EXPECT_TRUE(isUnicodeLetter(0x0436));    // ж
  EXPECT_TRUE(isUnicodeLetter(0x65E5));    // 日
  EXPECT_TRUE(isUnicodeLetter(0xAC00));    // 가
  EXPECT_FALSE(isUnicodeLetter(0x1F600));  // 😀
  EXPECT_TRUE(isUnicodeNumber('7'));
  EXPECT_TRUE(isUnicodeNumber(0x00B2));  // ²
  EXPECT_TRUE(isUnicodeNumber(0x0663));  // Arabic-Indic three
  EXPECT_FALSE(isUnicodeNumber('x'));
  EXPECT_TRUE(isUnicodeWhitespace(' '));
  EXPECT_TRUE(isUnicodeWhitespace(0x00A0));
  EXPECT_TRUE(isUnicodeWhitespace(0x3000));
  EXPECT_FALSE(isUnicodeWhitespace(0x200B));  // zero width space is not \s
}

TEST(Utf8, RejectsMalformedSequences) {
  EXPECT_EQ(findInvalidUtf8("plain \u00e9\U0001F600"), std::string_view::npos);
  EXPECT_EQ(findInvalidUtf8("ab\x80"), 2u);            // lone continuation
  EXPECT_EQ(findInvalidUtf8("a\xC3"), 1u);             // truncated
  EXPECT_EQ(findInvalidUtf8("\xC0\xAF"), 0u);          // overlong
  EXPECT_EQ(findInvalidUtf8("x\xED\xA0\x80"), 1u);     // surrogate
  EXPECT_EQ(findInvalidUtf8("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(findInvalidUtf8("\xFF"), 0u);
}

TEST(ByteUnicodeMap, IsABijectionOntoPrintableCharacters) {
  for (int byte = 0; byte < 256; ++byte) {
    uint32_t c = byteToVocabCodePoint(static_cast<uint8_t>(byte));
    EXPECT_EQ(vocabCodePointToByte(c), byte);
    EXPECT_FALSE(isUnicodeWhitespace(c)) << byte;
  }
  EXPECT_EQ(byteToVocabCodePoint(' '), 0x120u);   // Ġ
  EXPECT_EQ(byteToVocabCodePoint('\n'), 0x10Au);  // Ċ
  EXPECT_EQ(byteToVocabCodePoint('A'), uint32_t('A'));
  EXPECT_EQ(vocabCodePointToByte(0x144), -1);
  EXPECT_EQ(vocabCodePointToByte(' '), -1);
}

}  // namespace
}  // namespace strata::tokenizers
