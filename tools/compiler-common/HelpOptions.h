//===- HelpOptions.h - --help lists a tool's own options --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The LLVM and MLIR libraries register hundreds of command-line options; the
// compiler tools list their own under --help and the rest under --help-hidden.

#ifndef STRATA_TOOLS_COMPILER_COMMON_HELPOPTIONS_H_
#define STRATA_TOOLS_COMPILER_COMMON_HELPOPTIONS_H_

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"

namespace strata::tools {

/// Moves every option registered so far that is in none of |shown| from
/// --help to --help-hidden; each still works. Unlike
/// llvm::cl::HideUnrelatedOptions, which makes them ReallyHidden, this keeps
/// them listed by --help-hidden and --help-list-hidden. LLVM's help and
/// version options stay in --help. Defined in HelpOptions.cpp.
void hideUnrelatedOptionsFromHelp(
    llvm::ArrayRef<llvm::cl::OptionCategory *> shown);

} // namespace strata::tools

#endif // STRATA_TOOLS_COMPILER_COMMON_HELPOPTIONS_H_
