//===- status_matchers.h - GoogleTest helpers for strata_status_t ---------===//
// SPDX-License-Identifier: Apache-2.0
// STRATA_ASSERT_OK / STRATA_EXPECT_STATUS_IS free the status they inspect,
// so tests never leak failure records.

#ifndef STRATA_TEST_UNIT_RUNTIME_STATUS_MATCHERS_H_
#define STRATA_TEST_UNIT_RUNTIME_STATUS_MATCHERS_H_

#include <gtest/gtest.h>

#include <string>

#include "strata/runtime/status.h"

namespace strata::testing {

/// Takes ownership of |status| and returns its code and message.
inline std::pair<strata_status_code_t, std::string> consumeStatus(
    strata_status_t status) {
  std::pair<strata_status_code_t, std::string> result{
      strata_status_code(status), strata_status_message(status)};
  strata_status_free(status);
  return result;
}

}  // namespace strata::testing

#define STRATA_ASSERT_OK(expr)                                          \
  do {                                                                  \
    auto strata_result__ = ::strata::testing::consumeStatus(expr);      \
    ASSERT_EQ(strata_result__.first, STRATA_STATUS_OK)                  \
        << strata_result__.second;                                      \
  } while (0)

#define STRATA_EXPECT_STATUS_IS(code, expr)                             \
  do {                                                                  \
    auto strata_result__ = ::strata::testing::consumeStatus(expr);      \
    EXPECT_EQ(strata_result__.first, (code)) << strata_result__.second; \
  } while (0)

#endif  // STRATA_TEST_UNIT_RUNTIME_STATUS_MATCHERS_H_
