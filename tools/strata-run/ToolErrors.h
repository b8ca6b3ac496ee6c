//===- ToolErrors.h - How strata-run reports an error ---------------------===//
// SPDX-License-Identifier: Apache-2.0
// One line on stderr, "strata-run: error: ...", and exit status 1, for the
// run and generate commands alike.

#ifndef STRATA_TOOLS_STRATA_RUN_TOOLERRORS_H
#define STRATA_TOOLS_STRATA_RUN_TOOLERRORS_H

#include "strata/runtime/api.h"

#include <cstdio>
#include <string>

namespace strata::tools {

/// Prints |message| as the tool's error; returns the exit status.
inline int fail(const std::string &message) {
  std::fprintf(stderr, "strata-run: error: %s\n", message.c_str());
  return 1;
}

/// Prints a failed status after |context| and frees it.
inline int failStatus(const std::string &context, strata_status_t status) {
  std::string message = context + ": " +
                        strata_status_code_string(strata_status_code(status)) +
                        ": " + strata_status_message(status);
  strata_status_free(status);
  return fail(message);
}

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_RUN_TOOLERRORS_H
