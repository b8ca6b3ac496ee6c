//===- status_test.cc - strata_status_t behaviour ---------------------------===//
// SPDX-License-Identifier: Apache-2.0

#include "strata/runtime/status.h"

#include <gtest/gtest.h>

#include <string>

#include "status_matchers.h"
#include "strata/runtime/api.h"

namespace {

strata_status_t failIfNegative(int x) {
  if (x < 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "expected x >= 0, got %d", x);
  }
  return strata_ok_status();
}

strata_status_t propagate(int x) {
  STRATA_RETURN_IF_ERROR(failIfNegative(x));
  return strata_ok_status();
}

TEST(StatusTest, OkIsNull) {
  EXPECT_EQ(strata_ok_status(), nullptr);
  EXPECT_EQ(strata_status_code(nullptr), STRATA_STATUS_OK);
  EXPECT_STREQ(strata_status_message(nullptr), "");
  strata_status_free(nullptr);  // allowed
}

TEST(StatusTest, CreateWithOkCodeReturnsNull) {
  EXPECT_EQ(STRATA_MAKE_STATUS(STRATA_STATUS_OK, "ignored"), nullptr);
}

TEST(StatusTest, FailureCarriesCodeAndFormattedMessage) {
  strata_status_t status = failIfNegative(-3);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_INVALID_ARGUMENT);
  std::string message = strata_status_message(status);
  EXPECT_NE(message.find("expected x >= 0, got -3"), std::string::npos)
      << message;
  strata_status_free(status);
}

TEST(StatusTest, ReturnIfErrorPropagates) {
  STRATA_ASSERT_OK(propagate(1));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT, propagate(-1));
}

TEST(StatusTest, AnnotatePrependsContext) {
  strata_status_t status =
      strata_status_create(STRATA_STATUS_DATA_LOSS, nullptr, 0, "bad crc");
  status = strata_status_annotate(status, "loading 'model.strata'");
  EXPECT_STREQ(strata_status_message(status), "loading 'model.strata': bad crc");
  strata_status_free(status);
  EXPECT_EQ(strata_status_annotate(nullptr, "ctx"), nullptr);
}

TEST(StatusTest, CodeNumbersAreStable) {
  // These values are part of the ABI (absl/IREE numbering).
  EXPECT_EQ(STRATA_STATUS_INVALID_ARGUMENT, 3);
  EXPECT_EQ(STRATA_STATUS_RESOURCE_EXHAUSTED, 8);
  EXPECT_EQ(STRATA_STATUS_DATA_LOSS, 15);
  EXPECT_EQ(STRATA_STATUS_INCOMPATIBLE, 18);
  EXPECT_STREQ(strata_status_code_string(STRATA_STATUS_DATA_LOSS), "DATA_LOSS");
  EXPECT_STREQ(strata_status_code_string(STRATA_STATUS_INCOMPATIBLE),
               "INCOMPATIBLE");
  EXPECT_STREQ(strata_status_code_string((strata_status_code_t)99),
               "UNKNOWN_CODE");
}

TEST(StatusTest, LibraryVersionMatchesHeader) {
  EXPECT_EQ(strata_runtime_api_version(), (uint32_t)STRATA_RUNTIME_API_VERSION);
}

}  // namespace
