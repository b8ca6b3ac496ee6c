//===- AccuracyCommand.h - The --accuracy mode of strata-bench --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Command line and report of `strata-bench --accuracy`: which artifacts and
// held-out data, and the table or JSON object of their scores.
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_BENCH_ACCURACYCOMMAND_H_
#define STRATA_TOOLS_STRATA_BENCH_ACCURACYCOMMAND_H_

namespace strata::tools {

/// The usage text of the --accuracy mode.
extern const char kAccuracyUsage[];

/// Whether the command line asks for the --accuracy mode.
bool wantsAccuracy(int argc, char **argv);

/// Runs `strata-bench --accuracy ...`: parses |argv|, scores and prints.
/// Returns the process exit status (0, or 1 after one error line).
int runAccuracyCommand(int argc, char **argv);

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_BENCH_ACCURACYCOMMAND_H_
