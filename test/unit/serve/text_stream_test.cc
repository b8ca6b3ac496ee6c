//===- text_stream_test.cc - Token deltas, UTF-8 and stop strings ---------===//
// SPDX-License-Identifier: Apache-2.0

#include "text_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::serve {
namespace {

class TextStreamTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_EQ(strata_tokenizer_create_byte(&tokenizer), nullptr); }
  void TearDown() override { strata_tokenizer_release(tokenizer); }

  // Streams |text| byte by byte (byte tokenizer: id = byte); the deltas
  // joined, and whether a stop string ended it.
  std::string stream(const std::string& text, std::vector<std::string> stops,
                     bool* stopped, std::vector<std::string>* deltas = nullptr) {
    TextStream stream(tokenizer, std::move(stops));
    std::string out;
    *stopped = false;
    for (unsigned char byte : text) {
      std::string error;
      std::string delta = stream.push(byte, stopped, &error);
      EXPECT_TRUE(error.empty());
      if (deltas && !delta.empty()) deltas->push_back(delta);
      out += delta;
      if (*stopped) break;
    }
    if (!*stopped) out += stream.finish();
    EXPECT_EQ(out, stream.sent());
    return out;
  }

  strata_tokenizer_t* tokenizer = nullptr;
};

TEST_F(TextStreamTest, DeltasNeverSplitACharacter) {
  bool stopped = false;
  std::vector<std::string> deltas;
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z";  // a é € 😀 z
  EXPECT_EQ(stream(text, {}, &stopped, &deltas), text);
  EXPECT_EQ(deltas, (std::vector<std::string>{"a", "\xC3\xA9", "\xE2\x82\xAC",
                                              "\xF0\x9F\x98\x80", "z"}));
}

TEST_F(TextStreamTest, StopStringsEndTheTextBeforeThem) {
  bool stopped = false;
  std::vector<std::string> deltas;
  EXPECT_EQ(stream("Hello END world", {"END", "xyz"}, &stopped, &deltas),
            "Hello ");
  EXPECT_TRUE(stopped);
  // No delta ever showed a stop string's first bytes.
  for (const std::string& delta : deltas) EXPECT_EQ(delta.find('E'), std::string::npos);
  EXPECT_EQ(stream("abcEN", {"END"}, &stopped), "abcEN");
  EXPECT_FALSE(stopped);
  EXPECT_EQ(stream("\n\nrest", {"\n\n"}, &stopped), "");
  EXPECT_TRUE(stopped);
}

TEST_F(TextStreamTest, CompleteUtf8PrefixHoldsOnlyACutCharacter) {
  EXPECT_EQ(completeUtf8Prefix(""), 0u);
  EXPECT_EQ(completeUtf8Prefix("ab"), 2u);
  EXPECT_EQ(completeUtf8Prefix("a\xC3"), 1u);
  EXPECT_EQ(completeUtf8Prefix("a\xE2\x82"), 1u);
  EXPECT_EQ(completeUtf8Prefix("a\xF0\x9F\x98"), 1u);
  EXPECT_EQ(completeUtf8Prefix("a\xF0\x9F\x98\x80"), 5u);
  // Invalid bytes are not waited for.
  EXPECT_EQ(completeUtf8Prefix("a\x80\x80\x80\x80"), 5u);
  EXPECT_EQ(completeUtf8Prefix("a\xFF"), 2u);
}

}  // namespace
}  // namespace strata::serve
