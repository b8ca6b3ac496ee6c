//===- HelpOptions.cpp - --help lists a tool's own options ----------------===//
// SPDX-License-Identifier: Apache-2.0
// Its own file so that sanitizer builds can leave out UBSan's vptr check
// here: LLVM is built without RTTI, so the check cannot see the dynamic type
// of LLVM's option objects and reports every access to them.

#include "tools/compiler-common/HelpOptions.h"

#include "llvm/ADT/STLExtras.h"

namespace strata::tools {

void hideUnrelatedOptionsFromHelp(
    llvm::ArrayRef<llvm::cl::OptionCategory *> shown) {
  auto &options = llvm::cl::getRegisteredOptions();
  // LLVM does not export its category of --help, --version and friends;
  // --help itself is always in it.
  llvm::cl::OptionCategory *generic = options.at("help")->Categories.front();
  for (auto &entry : options) {
    llvm::cl::Option *option = entry.second;
    if (option->getOptionHiddenFlag() != llvm::cl::NotHidden)
      continue;
    bool related = llvm::any_of(
        option->Categories, [&](llvm::cl::OptionCategory *category) {
          return category == generic || llvm::is_contained(shown, category);
        });
    if (!related)
      option->setHiddenFlag(llvm::cl::Hidden);
  }
}

} // namespace strata::tools
