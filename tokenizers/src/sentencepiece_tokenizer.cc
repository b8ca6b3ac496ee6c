//===- sentencepiece_tokenizer.cc - SentencePiece through -----------------===//
// SPDX-License-Identifier: Apache-2.0
// A thin adapter: the library does the work; this checks the input so that
// every failure is a status with a clear message.

#include <sentencepiece_processor.h>

#include "tokenizer_impl.h"
#include "utf8.h"

namespace strata::tokenizers {
namespace {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(
      std::unique_ptr<sentencepiece::SentencePieceProcessor> processor)
      : processor_(std::move(processor)) {}

  strata_tokenizer_kind_t kind() const override {
    return STRATA_TOKENIZER_KIND_SENTENCEPIECE;
  }

  int32_t vocabSize() const override { return processor_->GetPieceSize(); }

  strata_status_t encode(std::string_view text,
                         std::vector<int32_t>* ids) const override {
    // The library would silently replace bad bytes; say where they are.
    size_t bad = findInvalidUtf8(text);
    if (bad != std::string_view::npos)
      return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                                "text is not UTF-8 at byte %zu", bad);
    std::vector<int> pieces;
    sentencepiece::util::Status status = processor_->Encode(
        absl::string_view(text.data(), text.size()), &pieces);
    if (!status.ok())
      return STRATA_MAKE_STATUS(STRATA_STATUS_INTERNAL,
                                "SentencePiece cannot encode: %s",
                                status.message());
    ids->insert(ids->end(), pieces.begin(), pieces.end());
    return strata_ok_status();
  }

  strata_status_t decode(const int32_t* ids, size_t count,
                         std::string* text) const override {
    std::vector<int> pieces(ids, ids + count);
    for (size_t i = 0; i < count; ++i) {
      if (pieces[i] < 0 || pieces[i] >= vocabSize())
        return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                                  "id %d at position %zu is not in the "
                                  "vocabulary",
                                  pieces[i], i);
    }
    std::string decoded;
    sentencepiece::util::Status status = processor_->Decode(pieces, &decoded);
    if (!status.ok())
      return STRATA_MAKE_STATUS(STRATA_STATUS_INTERNAL,
                                "SentencePiece cannot decode: %s",
                                status.message());
    text->append(decoded);
    return strata_ok_status();
  }

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

}  // namespace

strata_status_t createSentencePieceTokenizer(const char* modelPath,
                                             std::unique_ptr<Tokenizer>* out) {
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  sentencepiece::util::Status status = processor->Load(modelPath);
  if (!status.ok()) {
    strata_status_code_t code =
        status.code() == sentencepiece::util::StatusCode::kNotFound
            ? STRATA_STATUS_NOT_FOUND
            : STRATA_STATUS_DATA_LOSS;
    return STRATA_MAKE_STATUS(code, "cannot load SentencePiece model '%s': %s",
                              modelPath, status.message());
  }
  *out = std::make_unique<SentencePieceTokenizer>(std::move(processor));
  return strata_ok_status();
}

}  // namespace strata::tokenizers
