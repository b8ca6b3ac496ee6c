//===- Generate.h - strata-run generate: text generation ------------------===//
// SPDX-License-Identifier: Apache-2.0
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_RUN_GENERATE_H_
#define STRATA_TOOLS_STRATA_RUN_GENERATE_H_

namespace strata::tools {

/// Runs `strata-run generate ...`; argv[0] is "generate". Returns the exit
/// status: 0, or 1 after one `strata-run: error: ...` line.
int runGenerate(int argc, char **argv);

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_RUN_GENERATE_H_
