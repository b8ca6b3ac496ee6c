//===- byte_tokenizer_test.cc - Token id = byte value ---------------------===//
// SPDX-License-Identifier: Apache-2.0
// The bytegpt fixture's tokenizer: every byte, NUL and invalid UTF-8
// included, is its own id.

#include <gtest/gtest.h>

#include "tokenizer_test_util.h"

namespace strata::tokenizers::testing {
namespace {

TEST(ByteTokenizer, IdsAreBytes) {
  TokenizerPtr tokenizer = createByte();
  EXPECT_EQ(strata_tokenizer_kind(tokenizer.get()), STRATA_TOKENIZER_KIND_BYTE);
  EXPECT_EQ(strata_tokenizer_vocab_size(tokenizer.get()), 256);
  std::string text("Hi\xC3\xA9\0\xFF", 6);
  EXPECT_EQ(encode(tokenizer.get(), text),
            (std::vector<int32_t>{'H', 'i', 0xC3, 0xA9, 0, 0xFF}));
}

TEST(ByteTokenizer, EveryByteRoundTrips) {
  TokenizerPtr tokenizer = createByte();
  std::string all;
  for (int byte = 0; byte < 256; ++byte) all.push_back(static_cast<char>(byte));
  std::vector<int32_t> ids = encode(tokenizer.get(), all);
  ASSERT_EQ(ids.size(), 256u);
  for (int byte = 0; byte < 256; ++byte) EXPECT_EQ(ids[byte], byte);
  EXPECT_EQ(decode(tokenizer.get(), ids), all);
}

TEST(ByteTokenizer, IdOutsideByteRangeIsRejected) {
  TokenizerPtr tokenizer = createByte();
  for (int32_t bad : {256, -1}) {
    int32_t ids[] = {'a', bad};
    char text[4];
    size_t length = 0;
    std::string message;
    EXPECT_EQ(expectFailure(strata_tokenizer_decode(tokenizer.get(), ids, 2,
                                                    text, sizeof text, &length),
                            &message),
              STRATA_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(message.find("position 1"), std::string::npos) << message;
  }
}

TEST(ByteTokenizer, EmptyTextHasNoIds) {
  TokenizerPtr tokenizer = createByte();
  size_t count = 7;
  EXPECT_EQ(takeCode(strata_tokenizer_encode(tokenizer.get(), nullptr, 0,
                                             nullptr, 0, &count)),
            STRATA_STATUS_OK);
  EXPECT_EQ(count, 0u);
}

}  // namespace
}  // namespace strata::tokenizers::testing
