//===- gpt2_vocabulary.h - GPT-2's encoder.json and vocab.bpe, loaded -----===//
// SPDX-License-Identifier: Apache-2.0
// Both files spell tokens through the byte <-> character map; they are
// loaded into raw bytes and ids here so that BPE works on ids alone.

#ifndef STRATA_TOKENIZERS_SRC_GPT2_VOCABULARY_H_
#define STRATA_TOKENIZERS_SRC_GPT2_VOCABULARY_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "strata/runtime/status.h"

namespace strata::tokenizers {

/// A merge of two adjacent tokens: its priority and the token it makes.
struct Gpt2Merge {
  int32_t rank;  // lower merges first: the line number in vocab.bpe
  int32_t result;
};

/// The token table and merge list of a GPT-2 style BPE.
struct Gpt2Vocabulary {
  /// The raw bytes of each id; empty where the file names no such id.
  std::vector<std::string> bytesOfId;
  /// Whether each id is in the file (a token is never empty, but be explicit).
  std::vector<bool> hasId;
  /// The id of each single byte.
  int32_t idOfByte[256];
  /// The merges by (left id << 32 | right id).
  std::unordered_map<uint64_t, Gpt2Merge> merges;
};

/// The key of the merge of |left| then |right| in Gpt2Vocabulary::merges.
inline uint64_t gpt2MergeKey(int32_t left, int32_t right) {
  return (uint64_t(uint32_t(left)) << 32) | uint32_t(right);
}

/// Loads encoder.json and vocab.bpe. NOT_FOUND if a file cannot be read;
/// DATA_LOSS, naming the file and place, if either is malformed, a byte has
/// no token, or a merge names or makes a token the vocabulary lacks.
strata_status_t loadGpt2Vocabulary(const char* vocabJsonPath,
                                   const char* mergesPath, Gpt2Vocabulary* out);

}  // namespace strata::tokenizers

#endif  // STRATA_TOKENIZERS_SRC_GPT2_VOCABULARY_H_
