//===- RankPath.h - The file of one rank of a tensor-parallel model -------===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_TOOLS_COMMON_RANKPATH_H_
#define STRATA_TOOLS_COMMON_RANKPATH_H_

#include <string>

namespace strata::tools {

/// Where rank |rank| of a model compiled to |path| lies: `X.strata` (or
/// `X`) gives `X.rank<R>.strata`. strata-compile writes these files and
/// strata-run under an MPI launcher reads them.
inline std::string rankArtifactPath(const std::string &path, int rank) {
  static const std::string suffix = ".strata";
  std::string stem = path;
  if (stem.size() > suffix.size() &&
      stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0)
    stem.resize(stem.size() - suffix.size());
  return stem + ".rank" + std::to_string(rank) + suffix;
}

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_RANKPATH_H_
