//===- ParseCount.h - Integer command-line values for the tools ----------===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_TOOLS_COMMON_PARSECOUNT_H_
#define STRATA_TOOLS_COMMON_PARSECOUNT_H_

#include <cerrno>
#include <cstdlib>

namespace strata::tools {

/// Parses all of |text| as a decimal integer in [low, high] into |out|;
/// false (|out| untouched) on anything else.
inline bool parseCount(const char *text, long low, long high, long *out) {
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (errno || end == text || *end || value < low || value > high)
    return false;
  *out = value;
  return true;
}

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_PARSECOUNT_H_
