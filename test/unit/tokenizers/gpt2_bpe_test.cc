//===- gpt2_bpe_test.cc - GPT-2 byte-level BPE on GPT-2's own vocabulary --===//
// SPDX-License-Identifier: Apache-2.0
// Ids as GPT-2's reference encoder gives them, round trips of hard text, and
// the errors for bad input and malformed vocabulary files. Skips when the
// vocabulary files are not next to the checkout.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tokenizer_test_util.h"

namespace strata::tokenizers::testing {
namespace {

const std::string kBpeDir = STRATA_GPT2_BPE_DIR;

bool bpeFilesPresent() {
  return std::ifstream(kBpeDir + "/encoder.json").good() &&
         std::ifstream(kBpeDir + "/vocab.bpe").good();
}

class Gpt2Bpe : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!bpeFilesPresent())
      GTEST_SKIP() << "no GPT-2 vocabulary at " << kBpeDir;
    strata_tokenizer_t* tokenizer = nullptr;
    ASSERT_EQ(takeCode(strata_tokenizer_create_gpt2(
                  (kBpeDir + "/encoder.json").c_str(),
                  (kBpeDir + "/vocab.bpe").c_str(), &tokenizer)),
              STRATA_STATUS_OK);
    tokenizer_.reset(tokenizer);
  }

  TokenizerPtr tokenizer_;
};

TEST_F(Gpt2Bpe, HelloWorld) {
  EXPECT_EQ(strata_tokenizer_kind(tokenizer_.get()),
            STRATA_TOKENIZER_KIND_GPT2);
  EXPECT_EQ(strata_tokenizer_vocab_size(tokenizer_.get()), 50257);
  EXPECT_EQ(encode(tokenizer_.get(), "Hello world"),
            (std::vector<int32_t>{15496, 995}));
}

// Expected ids from GPT-2's published encoder on the same files.
TEST_F(Gpt2Bpe, MatchesReferenceIds) {
  struct Case {
    std::string text;
    std::vector<int32_t> ids;
  };
  const Case cases[] = {
      {"I'm sure they'll say it's fine, we've done what you'd re-do.",
       {40,  1101, 1654, 484, 1183, 910,  340, 338, 3734, 11,
        356, 1053, 1760, 644, 345,  1549, 302, 12,  4598, 13}},
      {"caf\u00e9 na\u00efve", {66, 1878, 2634, 41492}},
      {"\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8",
       {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302}},
      {"emoji \U0001F600\U0001F44D!", {368, 31370, 30325, 222, 41840, 235, 0}},
      {"a  b\t\tc\n\n\nd   ",
       {64, 220, 275, 197, 197, 66, 628, 198, 67, 220, 220, 220}},
      {"123 4567 x2", {10163, 4153, 3134, 2124, 17}},
      {"'S 'sup DON'T", {6, 50, 705, 37330, 23917, 6, 51}},
      {" leading and trailing  ", {3756, 290, 25462, 220, 220}},
  };
  for (const Case& c : cases)
    EXPECT_EQ(encode(tokenizer_.get(), c.text), c.ids) << c.text;
}

TEST_F(Gpt2Bpe, DecodeInvertsEncode) {
  const std::string texts[] = {
      "Hello world",
      "",
      "r\u00e9sum\u00e9 \u00e9t\u00e9 \u00c9cole",
      "\u65e5\u672c\u8a9e \u4e2d\u6587 \ud55c\uad6d\uc5b4",
      "\U0001F600 \U0001F468\u200D\U0001F469\u200D\U0001F467 \u2764\uFE0F",
      "tabs\t\tand\r\nnewlines\n\n\n  and   spaces    ",
      "don't won't I'd we'll they've you're she's 'quoted'",
      "\u0645\u0631\u062d\u0628\u0627 \u0928\u092e\u0938\u094d\u0924\u0947",
      std::string("nul\0byte and \x7f del", 18),
      "<|endoftext|> is text here",
  };
  for (const std::string& text : texts)
    EXPECT_EQ(decode(tokenizer_.get(), encode(tokenizer_.get(), text)), text)
        << text;
}

TEST_F(Gpt2Bpe, InvalidUtf8IsRejectedWithOffset) {
  int32_t ids[16];
  size_t count = 0;
  std::string message;
  EXPECT_EQ(expectFailure(strata_tokenizer_encode(tokenizer_.get(), "ok \xC3(",
                                                  5, ids, 16, &count),
                          &message),
            STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("byte 3"), std::string::npos) << message;
}

TEST_F(Gpt2Bpe, UnknownIdIsRejected) {
  int32_t ids[] = {15496, 50257};
  char text[32];
  size_t length = 0;
  EXPECT_EQ(expectFailure(strata_tokenizer_decode(tokenizer_.get(), ids, 2,
                                                  text, sizeof text, &length)),
            STRATA_STATUS_INVALID_ARGUMENT);
}

/// Writes |contents| to a file in the test's working folder; returns its path.
std::string writeFile(const std::string& name, const std::string& contents) {
  std::ofstream(name, std::ios::binary) << contents;
  return name;
}

TEST(Gpt2BpeFiles, MalformedFilesAreDataLoss) {
  std::string allBytes = "{";
  // A valid vocabulary of the 256 byte tokens, spelled as GPT-2 spells them.
  for (int byte = 0; byte < 256; ++byte) {
    unsigned spelled =
        (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte != 0xAD) ? byte
                                                                         : 0;
    if (!spelled) {
      int index = byte <= 0x20 ? byte : byte <= 0xA0 ? 33 + byte - 0x7F : 67;
      spelled = 0x100 + index;
    }
    char entry[32];
    std::snprintf(entry, sizeof entry, "%s\"\\u%04x\": %d", byte ? ", " : "",
                  spelled, byte);
    allBytes += entry;
  }
  std::string goodVocab = writeFile("bytes.json", allBytes + "}");
  std::string goodMerges = writeFile("empty.bpe", "#version: 0.2\n");

  strata_tokenizer_t* tokenizer = nullptr;
  ASSERT_EQ(takeCode(strata_tokenizer_create_gpt2(
                goodVocab.c_str(), goodMerges.c_str(), &tokenizer)),
            STRATA_STATUS_OK);
  // Without merges every byte is a token of its own.
  EXPECT_EQ(encode(tokenizer, "hi"), (std::vector<int32_t>{'h', 'i'}));
  strata_tokenizer_release(tokenizer);

  const std::pair<std::string, std::string> badFiles[] = {
      {"{\"a\": 1", "#version: 0.2\n"},                    // truncated JSON
      {"[1, 2]", "#version: 0.2\n"},                       // not an object
      {allBytes + ", \"ab\": \"x\"}", "#version: 0.2\n"},  // id not a number
      {allBytes + ", \"ab\": -4}", "#version: 0.2\n"},     // negative id
      {allBytes + ", \"ab\": 99999999999}", "#version: 0.2\n"},  // huge id
      {allBytes + ", \"a b\": 300}", "#version: 0.2\n"},  // unmapped character
      {allBytes + ", \"ab\": 7}", "#version: 0.2\n"},     // id given twice
      {"{\"a\": 0}", "#version: 0.2\n"},                  // bytes missing
      {allBytes + "}", "#version: 0.2\na\n"},             // one token
      {allBytes + "}", "#version: 0.2\na b c\n"},         // three tokens
      {allBytes + "}", "#version: 0.2\na b\n"},  // result not in vocabulary
  };
  for (const auto& [vocab, merges] : badFiles) {
    std::string vocabPath = writeFile("bad.json", vocab);
    std::string mergesPath = writeFile("bad.bpe", merges);
    std::string message;
    EXPECT_EQ(
        expectFailure(strata_tokenizer_create_gpt2(
                          vocabPath.c_str(), mergesPath.c_str(), &tokenizer),
                      &message),
        STRATA_STATUS_DATA_LOSS)
        << vocab.substr(vocab.size() > 40 ? vocab.size() - 40 : 0) << " / "
        << merges;
    EXPECT_FALSE(message.empty());
  }
}

}  // namespace
}  // namespace strata::tokenizers::testing
