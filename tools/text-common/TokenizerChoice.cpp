//===- TokenizerChoice.cpp - The tokenizer that --tokenizer names ---------===//
// SPDX-License-Identifier: Apache-2.0
//===----------------------------------------------------------------------===//

#include "TokenizerChoice.h"

#include <limits.h>
#include <unistd.h>

#include <cstdlib>

namespace strata::tools {
namespace {

// Takes the message of a failed status and frees it.
std::string statusText(strata_status_t status) {
  std::string text =
      std::string(strata_status_code_string(strata_status_code(status))) +
      ": " + strata_status_message(status);
  strata_status_free(status);
  return text;
}

bool hasEncoderJson(const std::string &dir) {
  return access((dir + "/encoder.json").c_str(), R_OK) == 0;
}

// The folder of the running executable; empty if the system does not say.
std::string executableDirectory() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0)
    return "";
  std::string exe(path, static_cast<size_t>(n));
  size_t slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

} // namespace

std::string gpt2BpeDirectory(std::string *tried) {
  const char *env = std::getenv("STRATA_GPT2_BPE_DIR");
  if (env && *env) {
    // An explicit choice is never second-guessed by the fallbacks.
    *tried = std::string(env) + " ($STRATA_GPT2_BPE_DIR)";
    return hasEncoderJson(env) ? env : "";
  }
  std::vector<std::string> candidates;
  std::string exeDir = executableDirectory();
  if (!exeDir.empty())
    candidates.push_back(exeDir + "/../share/strata/gpt2-bpe");
  candidates.push_back("../shared/data/gpt2-bpe");
  tried->clear();
  for (const std::string &dir : candidates) {
    if (hasEncoderJson(dir))
      return dir;
    *tried += (tried->empty() ? "" : ", ") + dir;
  }
  return "";
}

std::string openTokenizer(const std::string &choice, strata_tokenizer_t **out) {
  strata_status_t status = nullptr;
  if (choice == "byte") {
    status = strata_tokenizer_create_byte(out);
  } else if (choice == "gpt2") {
    std::string tried;
    std::string dir = gpt2BpeDirectory(&tried);
    if (dir.empty())
      return "--tokenizer gpt2: no encoder.json in " + tried +
             " (set STRATA_GPT2_BPE_DIR to the folder of encoder.json and "
             "vocab.bpe)";
    status = strata_tokenizer_create_gpt2((dir + "/encoder.json").c_str(),
                                          (dir + "/vocab.bpe").c_str(), out);
  } else {
    status = strata_tokenizer_create_sentencepiece(choice.c_str(), out);
  }
  if (status)
    return "--tokenizer " + choice + ": " + statusText(status);
  return "";
}

std::string encodeText(const strata_tokenizer_t *tokenizer,
                       const std::string &text, std::vector<int64_t> *ids) {
  size_t count = 0;
  strata_status_t status = strata_tokenizer_encode(
      tokenizer, text.data(), text.size(), nullptr, 0, &count);
  std::vector<int32_t> encoded(count);
  if (!status)
    status = strata_tokenizer_encode(tokenizer, text.data(), text.size(),
                                     encoded.data(), count, &count);
  if (status)
    return "cannot encode the prompt: " + statusText(status);
  ids->assign(encoded.begin(), encoded.end());
  return "";
}

std::string decodeIds(const strata_tokenizer_t *tokenizer,
                      const std::vector<int64_t> &ids, std::string *text) {
  std::vector<int32_t> narrow;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] > INT32_MAX)
      return "cannot decode token " + std::to_string(ids[i]) + " at position " +
             std::to_string(i);
    narrow.push_back(static_cast<int32_t>(ids[i]));
  }
  size_t length = 0;
  strata_status_t status = strata_tokenizer_decode(
      tokenizer, narrow.data(), narrow.size(), nullptr, 0, &length);
  std::string decoded(length, '\0');
  if (!status)
    status = strata_tokenizer_decode(tokenizer, narrow.data(), narrow.size(),
                                     decoded.data(), length, &length);
  if (status)
    return "cannot decode the tokens: " + statusText(status);
  *text = decoded;
  return "";
}

} // namespace strata::tools
