//===- c_api_test.cc - Buffer sizing and argument checks of the C API -----===//
// SPDX-License-Identifier: Apache-2.0
// The rules of tokenizer.h that hold for every tokenizer: size queries, too
// small buffers, NULL arguments, missing files.

#include <gtest/gtest.h>

#include "tokenizer_test_util.h"

namespace strata::tokenizers::testing {
namespace {

TEST(TokenizerCApi, TooSmallBufferReportsNeededCountAndWritesNothing) {
  TokenizerPtr tokenizer = createByte();
  int32_t ids[2] = {-7, -7};
  size_t count = 0;
  EXPECT_EQ(expectFailure(strata_tokenizer_encode(tokenizer.get(), "abc", 3,
                                                  ids, 2, &count)),
            STRATA_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(count, 3u);
  EXPECT_EQ(ids[0], -7);
  EXPECT_EQ(ids[1], -7);

  int32_t abc[] = {'a', 'b', 'c'};
  char text[2] = {'x', 'x'};
  size_t length = 0;
  EXPECT_EQ(expectFailure(strata_tokenizer_decode(tokenizer.get(), abc, 3, text,
                                                  2, &length)),
            STRATA_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(length, 3u);
  EXPECT_EQ(text[0], 'x');
}

TEST(TokenizerCApi, LargerBufferIsFine) {
  TokenizerPtr tokenizer = createByte();
  int32_t ids[8];
  size_t count = 0;
  EXPECT_EQ(takeCode(strata_tokenizer_encode(tokenizer.get(), "ab", 2, ids, 8,
                                             &count)),
            STRATA_STATUS_OK);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(ids[1], 'b');
}

TEST(TokenizerCApi, NullArgumentsAreInvalid) {
  TokenizerPtr tokenizer = createByte();
  int32_t ids[4];
  size_t count;
  EXPECT_EQ(expectFailure(strata_tokenizer_create_byte(nullptr)),
            STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      expectFailure(strata_tokenizer_encode(nullptr, "a", 1, ids, 4, &count)),
      STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(expectFailure(strata_tokenizer_encode(tokenizer.get(), nullptr, 1,
                                                  ids, 4, &count)),
            STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(expectFailure(strata_tokenizer_encode(tokenizer.get(), "a", 1,
                                                  nullptr, 4, &count)),
            STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(expectFailure(strata_tokenizer_encode(tokenizer.get(), "a", 1, ids,
                                                  4, nullptr)),
            STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(expectFailure(strata_tokenizer_decode(tokenizer.get(), nullptr, 1,
                                                  nullptr, 0, &count)),
            STRATA_STATUS_INVALID_ARGUMENT);
  strata_tokenizer_t* none = nullptr;
  EXPECT_EQ(expectFailure(strata_tokenizer_create_gpt2(nullptr, "m", &none)),
            STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      expectFailure(strata_tokenizer_create_sentencepiece(nullptr, &none)),
      STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(strata_tokenizer_vocab_size(nullptr), 0);
  strata_tokenizer_release(nullptr);
}

TEST(TokenizerCApi, MissingFilesAreNotFound) {
  strata_tokenizer_t* tokenizer = nullptr;
  EXPECT_EQ(
      expectFailure(strata_tokenizer_create_gpt2(
          "/nonexistent/encoder.json", "/nonexistent/vocab.bpe", &tokenizer)),
      STRATA_STATUS_NOT_FOUND);
  strata_status_code_t code =
      expectFailure(strata_tokenizer_create_sentencepiece(
          "/nonexistent/x.model", &tokenizer));
  EXPECT_TRUE(code == STRATA_STATUS_NOT_FOUND ||
              code == STRATA_STATUS_UNAVAILABLE)
      << strata_status_code_string(code);
  EXPECT_EQ(tokenizer, nullptr);
}

}  // namespace
}  // namespace strata::tokenizers::testing
