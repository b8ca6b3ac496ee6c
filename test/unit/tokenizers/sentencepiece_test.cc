//===- sentencepiece_test.cc - SentencePiece through libsentencepiece -----===//
// SPDX-License-Identifier: Apache-2.0
// On a model spm_train makes from the bytegpt fixture's held-out text when
// the tests run (tokenizers.train_sentencepiece); skips without it.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tokenizer_test_util.h"

namespace strata::tokenizers::testing {
namespace {

const std::string kModelPath = STRATA_SENTENCEPIECE_MODEL;
const std::string kHeldoutPath = STRATA_BYTEGPT_HELDOUT;

class SentencePiece : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!STRATA_HAVE_SENTENCEPIECE)
      GTEST_SKIP() << "built without SentencePiece";
    if (!std::ifstream(kModelPath).good())
      GTEST_SKIP() << "no trained model at " << kModelPath
                   << " (ctest runs tokenizers.train_sentencepiece first)";
    strata_tokenizer_t* tokenizer = nullptr;
    ASSERT_EQ(takeCode(strata_tokenizer_create_sentencepiece(kModelPath.c_str(),
                                                             &tokenizer)),
              STRATA_STATUS_OK);
    tokenizer_.reset(tokenizer);
  }

  TokenizerPtr tokenizer_;
};

TEST_F(SentencePiece, ModelHasTheTrainedVocabulary) {
  EXPECT_EQ(strata_tokenizer_kind(tokenizer_.get()),
            STRATA_TOKENIZER_KIND_SENTENCEPIECE);
  EXPECT_EQ(strata_tokenizer_vocab_size(tokenizer_.get()), 500);
}

TEST_F(SentencePiece, HeldoutLinesRoundTrip) {
  std::ifstream heldout(kHeldoutPath);
  std::string line;
  int checked = 0;
  size_t idCount = 0, byteCount = 0;
  while (checked < 200 && std::getline(heldout, line)) {
    if (line.empty()) continue;
    std::vector<int32_t> ids = encode(tokenizer_.get(), line);
    EXPECT_EQ(decode(tokenizer_.get(), ids), line);
    idCount += ids.size();
    byteCount += line.size();
    ++checked;
  }
  EXPECT_EQ(checked, 200);
  // Subwords: on the text it was trained on, clearly fewer ids than bytes
  // (byte fallback takes 256 of the 500 pieces).
  EXPECT_LT(idCount * 4, byteCount * 3)
      << idCount << " ids for " << byteCount << " bytes";
}

TEST_F(SentencePiece, UnseenCharactersRoundTripThroughByteFallback) {
  const std::string texts[] = {"caf\u00e9 \u65e5\u672c\u8a9e \U0001F600",
                               "two  spaces and\ttab"};
  for (const std::string& text : texts)
    EXPECT_EQ(decode(tokenizer_.get(), encode(tokenizer_.get(), text)), text);
}

TEST_F(SentencePiece, BadInputIsRejected) {
  int32_t ids[16];
  size_t count = 0;
  EXPECT_EQ(expectFailure(strata_tokenizer_encode(tokenizer_.get(), "a\xFF", 2,
                                                  ids, 16, &count)),
            STRATA_STATUS_INVALID_ARGUMENT);
  int32_t unknown[] = {5, 500};
  char text[16];
  EXPECT_EQ(expectFailure(strata_tokenizer_decode(tokenizer_.get(), unknown, 2,
                                                  text, sizeof text, &count)),
            STRATA_STATUS_INVALID_ARGUMENT);
}

TEST(SentencePieceFiles, CorruptModelIsDataLoss) {
  if (!STRATA_HAVE_SENTENCEPIECE) GTEST_SKIP() << "built without SentencePiece";
  std::ofstream("corrupt.model", std::ios::binary) << "not a model proto";
  strata_tokenizer_t* tokenizer = nullptr;
  EXPECT_EQ(expectFailure(strata_tokenizer_create_sentencepiece("corrupt.model",
                                                                &tokenizer)),
            STRATA_STATUS_DATA_LOSS);
  EXPECT_EQ(tokenizer, nullptr);
}

}  // namespace
}  // namespace strata::tokenizers::testing
