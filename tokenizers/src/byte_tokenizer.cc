//===- byte_tokenizer.cc - Token id = byte value --------------------------===//
// SPDX-License-Identifier: Apache-2.0
// The tokenizer of byte-level models such as the bytegpt fixture: 256 ids,
// no special tokens, any byte sequence encodes.

#include "tokenizer_impl.h"

namespace strata::tokenizers {
namespace {

constexpr int32_t kByteVocabSize = 256;

class ByteTokenizer final : public Tokenizer {
 public:
  strata_tokenizer_kind_t kind() const override {
    return STRATA_TOKENIZER_KIND_BYTE;
  }

  int32_t vocabSize() const override { return kByteVocabSize; }

  strata_status_t encode(std::string_view text,
                         std::vector<int32_t>* ids) const override {
    for (char byte : text) ids->push_back(static_cast<uint8_t>(byte));
    return strata_ok_status();
  }

  strata_status_t decode(const int32_t* ids, size_t count,
                         std::string* text) const override {
    for (size_t i = 0; i < count; ++i) {
      if (ids[i] < 0 || ids[i] >= kByteVocabSize)
        return STRATA_MAKE_STATUS(
            STRATA_STATUS_INVALID_ARGUMENT,
            "id %d at position %zu is not a byte (0..255)", ids[i], i);
      text->push_back(static_cast<char>(ids[i]));
    }
    return strata_ok_status();
  }
};

}  // namespace

std::unique_ptr<Tokenizer> createByteTokenizer() {
  return std::make_unique<ByteTokenizer>();
}

}  // namespace strata::tokenizers
