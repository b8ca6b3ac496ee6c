//===- tokenizer_impl.h - The interface every tokenizer implements --------===//
// SPDX-License-Identifier: Apache-2.0
// The C API (tokenizer.cc) holds one of these behind strata_tokenizer_t and
// does the buffer handling, so each algorithm only maps text <-> ids.

#ifndef STRATA_TOKENIZERS_SRC_TOKENIZER_IMPL_H_
#define STRATA_TOKENIZERS_SRC_TOKENIZER_IMPL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/tokenizers/tokenizer.h"

namespace strata::tokenizers {

/// One tokenization algorithm with its loaded vocabulary; immutable.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  /// The algorithm, as the C API reports it.
  virtual strata_tokenizer_kind_t kind() const = 0;

  /// The number of ids (one more than the largest).
  virtual int32_t vocabSize() const = 0;

  /// Appends the ids of |text| to |ids|; on failure |ids| is unspecified.
  virtual strata_status_t encode(std::string_view text,
                                 std::vector<int32_t>* ids) const = 0;

  /// Appends the bytes of |count| ids to |text|.
  virtual strata_status_t decode(const int32_t* ids, size_t count,
                                 std::string* text) const = 0;
};

/// The byte-level tokenizer (byte_tokenizer.cc).
std::unique_ptr<Tokenizer> createByteTokenizer();

/// GPT-2 byte-level BPE from its two vocabulary files (gpt2_bpe_tokenizer.cc).
strata_status_t createGpt2Tokenizer(const char* vocabJsonPath,
                                    const char* mergesPath,
                                    std::unique_ptr<Tokenizer>* out);

/// SentencePiece from a .model file (sentencepiece_tokenizer.cc, or
/// sentencepiece_unavailable.cc when the library is not there).
strata_status_t createSentencePieceTokenizer(const char* modelPath,
                                             std::unique_ptr<Tokenizer>* out);

}  // namespace strata::tokenizers

#endif  // STRATA_TOKENIZERS_SRC_TOKENIZER_IMPL_H_
