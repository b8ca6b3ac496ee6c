//===- HeldOut.cpp - Held-out sequences strata-bench --accuracy scores ----===//
// SPDX-License-Identifier: Apache-2.0
// Text stretches are placed as test/e2e/check_precision.py places them, so
// the tool and the test score the same bytes.
//===----------------------------------------------------------------------===//

#include "HeldOut.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace strata::tools {
namespace {

// Reads the file at |path| into |out|; false, with |problem| set, if it
// cannot (|what| names the data in the message).
bool readFile(const std::string &path, const char *what, std::string *out,
              std::string *problem) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    *problem = path + ": is a directory, not " + what;
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in)
    text << in.rdbuf();
  if (!in || in.bad()) {
    *problem = path + ": cannot read " + what;
    return false;
  }
  *out = text.str();
  return true;
}

} // namespace

std::string readTextStretches(const std::string &path, int64_t count,
                              int64_t length, std::vector<TokenSequence> *out) {
  std::string text, problem;
  if (!readFile(path, "the text", &text, &problem))
    return problem;
  if (text.empty())
    return path + ": the text is empty";
  int64_t size = static_cast<int64_t>(text.size());
  if (size < length)
    return path + ": the text has " + std::to_string(size) +
           " bytes, fewer than --length " + std::to_string(length);
  int64_t step = (size - length) / count;
  out->assign(count, TokenSequence(length));
  for (int64_t s = 0; s < count; ++s)
    for (int64_t t = 0; t < length; ++t)
      (*out)[s][t] = static_cast<unsigned char>(text[s * step + t]);
  return "";
}

std::string readTokenLines(const std::string &path, int64_t maxLength,
                           std::vector<TokenSequence> *out) {
  std::string text, problem;
  if (!readFile(path, "the token ids", &text, &problem))
    return problem;
  out->clear();
  std::istringstream lines(text);
  std::string line;
  for (int lineNo = 1; std::getline(lines, line); ++lineNo) {
    std::istringstream words(line);
    std::string word;
    TokenSequence sequence;
    while (words >> word) {
      char *end = nullptr;
      errno = 0;
      long long id = std::strtoll(word.c_str(), &end, 10);
      if (errno || *end || id < 0)
        return path + ":" + std::to_string(lineNo) + ": '" + word +
               "' is not a token id (a decimal integer >= 0)";
      if (maxLength == 0 || static_cast<int64_t>(sequence.size()) < maxLength)
        sequence.push_back(id);
    }
    if (sequence.empty())
      continue;
    if (sequence.size() < 2)
      return path + ":" + std::to_string(lineNo) +
             ": a sequence needs at least 2 tokens (one predicts the "
             "next), got 1";
    out->push_back(std::move(sequence));
  }
  if (out->empty())
    return path + ": no token ids (one whitespace-separated sequence per "
                  "line)";
  return "";
}

} // namespace strata::tools
