//===- gpt2_vocabulary.cc - GPT-2's encoder.json and vocab.bpe, loaded ----===//
// SPDX-License-Identifier: Apache-2.0
// Every field of both files is checked, since they come from the caller:
// a malformed file gives DATA_LOSS, never a crash or an unbounded table.

#include "gpt2_vocabulary.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "byte_unicode_map.h"
#include "utf8.h"

namespace strata::tokenizers {
namespace {

// Far above any real BPE vocabulary (GPT-2: 50257), low enough that a hostile
// id cannot make the id table huge.
constexpr int64_t kMaxTokenId = (1 << 24) - 1;

strata_status_t readFile(const char* path, std::string* out) {
  std::FILE* file = std::fopen(path, "rb");
  if (!file)
    return STRATA_MAKE_STATUS(STRATA_STATUS_NOT_FOUND, "cannot open '%s': %s",
                              path, std::strerror(errno));
  char buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0)
    out->append(buffer, got);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed)
    return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS, "cannot read '%s'",
                              path);
  return strata_ok_status();
}

/// The raw bytes a token spelled through the byte map stands for; false if
/// it is not UTF-8 or holds a character the map does not produce.
bool unmapToken(std::string_view spelled, std::string* bytes) {
  for (size_t offset = 0; offset < spelled.size();) {
    uint32_t c;
    size_t length = decodeUtf8(spelled, offset, &c);
    if (length == 0) return false;
    int byte = vocabCodePointToByte(c);
    if (byte < 0) return false;
    bytes->push_back(static_cast<char>(byte));
    offset += length;
  }
  return !bytes->empty();
}

strata_status_t loadTokens(
    const char* path, Gpt2Vocabulary* vocabulary,
    std::unordered_map<std::string, int32_t>* idOfBytes) {
  std::string text;
  STRATA_RETURN_IF_ERROR(readFile(path, &text));
  nlohmann::json json =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS,
                              "'%s' is not a JSON object of token ids", path);
  for (auto& [spelled, value] : json.items()) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
        value.get<int64_t>() > kMaxTokenId)
      return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS,
                                "'%s': token '%s' has no id in 0..%lld", path,
                                spelled.c_str(), (long long)kMaxTokenId);
    std::string bytes;
    if (!unmapToken(spelled, &bytes))
      return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS,
                                "'%s': token '%s' is not spelled in GPT-2's "
                                "byte characters",
                                path, spelled.c_str());
    auto id = static_cast<int32_t>(value.get<int64_t>());
    if (size_t(id) >= vocabulary->bytesOfId.size()) {
      vocabulary->bytesOfId.resize(size_t(id) + 1);
      vocabulary->hasId.resize(size_t(id) + 1, false);
    }
    if (vocabulary->hasId[id])
      return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS,
                                "'%s': id %d is given twice", path, id);
    vocabulary->hasId[id] = true;
    vocabulary->bytesOfId[id] = bytes;
    idOfBytes->emplace(std::move(bytes), id);
  }
  for (int byte = 0; byte < 256; ++byte) {
    auto found = idOfBytes->find(std::string(1, static_cast<char>(byte)));
    if (found == idOfBytes->end())
      return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS,
                                "'%s' has no token for byte 0x%02x", path,
                                byte);
    vocabulary->idOfByte[byte] = found->second;
  }
  return strata_ok_status();
}

strata_status_t loadMerges(
    const char* path, const std::unordered_map<std::string, int32_t>& idOfBytes,
    Gpt2Vocabulary* vocabulary) {
  std::string text;
  STRATA_RETURN_IF_ERROR(readFile(path, &text));
  std::string_view rest(text);
  int32_t rank = 0;
  for (size_t lineNumber = 1; !rest.empty(); ++lineNumber) {
    size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view()
                                             : rest.substr(newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // The first line may carry a format version; blank lines say nothing.
    if (line.empty() || (lineNumber == 1 && line.rfind("#version", 0) == 0))
      continue;
    size_t space = line.find(' ');
    std::string left, right;
    if (space == std::string_view::npos ||
        line.find(' ', space + 1) != std::string_view::npos ||
        !unmapToken(line.substr(0, space), &left) ||
        !unmapToken(line.substr(space + 1), &right))
      return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS,
                                "'%s':%zu: not two tokens in GPT-2's byte "
                                "characters separated by one space",
                                path, lineNumber);
    auto leftId = idOfBytes.find(left);
    auto rightId = idOfBytes.find(right);
    auto resultId = idOfBytes.find(left + right);
    if (leftId == idOfBytes.end() || rightId == idOfBytes.end() ||
        resultId == idOfBytes.end())
      return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS,
                                "'%s':%zu: the merge names or makes a token "
                                "the vocabulary lacks",
                                path, lineNumber);
    // A repeated merge keeps its first, higher priority.
    vocabulary->merges.emplace(gpt2MergeKey(leftId->second, rightId->second),
                               Gpt2Merge{rank++, resultId->second});
  }
  return strata_ok_status();
}

}  // namespace

strata_status_t loadGpt2Vocabulary(const char* vocabJsonPath,
                                   const char* mergesPath,
                                   Gpt2Vocabulary* out) {
  std::unordered_map<std::string, int32_t> idOfBytes;
  STRATA_RETURN_IF_ERROR(loadTokens(vocabJsonPath, out, &idOfBytes));
  return loadMerges(mergesPath, idOfBytes, out);
}

}  // namespace strata::tokenizers
