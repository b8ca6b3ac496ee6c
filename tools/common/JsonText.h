//===- JsonText.h - JSON string literals for the tools' --json output ----===//
// SPDX-License-Identifier: Apache-2.0
// Shared by strata-run and strata-bench (runtime-only tools: no JSON library
// for one escaping function).

#ifndef STRATA_TOOLS_COMMON_JSONTEXT_H_
#define STRATA_TOOLS_COMMON_JSONTEXT_H_

#include <cstdio>
#include <string>

namespace strata::tools {

/// |text| as a JSON string literal, quotes included.
inline std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_JSONTEXT_H_
