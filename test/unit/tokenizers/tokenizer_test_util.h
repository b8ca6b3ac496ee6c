//===- tokenizer_test_util.h - Helpers shared by the tokenizer tests ------===//
// SPDX-License-Identifier: Apache-2.0
// Encode/decode through the C API into std containers, with the status code
// checked, so each test states only what it is about.

#ifndef TEST_UNIT_TOKENIZERS_TOKENIZER_TEST_UTIL_H_
#define TEST_UNIT_TOKENIZERS_TOKENIZER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "strata/tokenizers/tokenizer.h"

namespace strata::tokenizers::testing {

/// Owns a tokenizer for the length of a test.
struct TokenizerDeleter {
  void operator()(strata_tokenizer_t* tokenizer) const {
    strata_tokenizer_release(tokenizer);
  }
};
using TokenizerPtr = std::unique_ptr<strata_tokenizer_t, TokenizerDeleter>;

/// The code of |status|, which is freed.
inline strata_status_code_t takeCode(strata_status_t status) {
  strata_status_code_t code = strata_status_code(status);
  if (status) ADD_FAILURE() << "status: " << strata_status_message(status);
  strata_status_free(status);
  return code;
}

/// The code of |status|, freed, without reporting it (expected failures).
inline strata_status_code_t expectFailure(strata_status_t status,
                                          std::string* message = nullptr) {
  strata_status_code_t code = strata_status_code(status);
  if (message) *message = strata_status_message(status);
  strata_status_free(status);
  return code;
}

/// A byte-level tokenizer (the creation checked).
inline TokenizerPtr createByte() {
  strata_tokenizer_t* tokenizer = nullptr;
  EXPECT_EQ(takeCode(strata_tokenizer_create_byte(&tokenizer)),
            STRATA_STATUS_OK);
  return TokenizerPtr(tokenizer);
}

/// The ids of |text|, sized by a query first as a caller would.
inline std::vector<int32_t> encode(const strata_tokenizer_t* tokenizer,
                                   const std::string& text) {
  size_t count = 0;
  EXPECT_EQ(takeCode(strata_tokenizer_encode(tokenizer, text.data(),
                                             text.size(), nullptr, 0, &count)),
            STRATA_STATUS_OK);
  std::vector<int32_t> ids(count);
  size_t written = 0;
  EXPECT_EQ(
      takeCode(strata_tokenizer_encode(tokenizer, text.data(), text.size(),
                                       ids.data(), ids.size(), &written)),
      STRATA_STATUS_OK);
  EXPECT_EQ(written, count);
  return ids;
}

/// The text of |ids|.
inline std::string decode(const strata_tokenizer_t* tokenizer,
                          const std::vector<int32_t>& ids) {
  size_t length = 0;
  EXPECT_EQ(takeCode(strata_tokenizer_decode(tokenizer, ids.data(), ids.size(),
                                             nullptr, 0, &length)),
            STRATA_STATUS_OK);
  std::string text(length, '\0');
  size_t written = 0;
  EXPECT_EQ(
      takeCode(strata_tokenizer_decode(tokenizer, ids.data(), ids.size(),
                                       text.data(), text.size(), &written)),
      STRATA_STATUS_OK);
  EXPECT_EQ(written, length);
  return text;
}

}  // namespace strata::tokenizers::testing

#endif  // TEST_UNIT_TOKENIZERS_TOKENIZER_TEST_UTIL_H_
