//===- strata_run_test_util.h - Running the built strata-run in tests -----===//
// SPDX-License-Identifier: Apache-2.0
// The tool's tests run the binary (STRATA_RUN_PATH) through the shell and
// check its exit status and what it printed.

#ifndef STRATA_TEST_UNIT_RUNTIME_STRATA_RUN_TEST_UTIL_H_
#define STRATA_TEST_UNIT_RUNTIME_STRATA_RUN_TEST_UTIL_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace strata::testing {

struct Result {
  int exitCode = -1;
  std::string output; // stdout and stderr
};

/// Runs `strata-run ARGS` (|args| is shell text) with |prefix| before it
/// (environment assignments) and collects stdout and stderr together.
inline Result runStrataRun(const std::string &args,
                           const std::string &prefix = "") {
  std::string command =
      prefix + " '" + std::string(STRATA_RUN_PATH) + "' " + args + " 2>&1";
  Result result;
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    result.output.append(buffer, n);
  int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return result;
}

} // namespace strata::testing

#endif // STRATA_TEST_UNIT_RUNTIME_STRATA_RUN_TEST_UTIL_H_
