//===- gpt2_bpe_tokenizer.cc - GPT-2 byte-level BPE -----------------------===//
// SPDX-License-Identifier: Apache-2.0
// Each pre-token starts as its bytes' tokens; the adjacent pair with the
// lowest merge rank is merged everywhere in the piece until none is left.

#include "gpt2_pretokenizer.h"
#include "gpt2_vocabulary.h"
#include "tokenizer_impl.h"
#include "utf8.h"

namespace strata::tokenizers {
namespace {

class Gpt2BpeTokenizer final : public Tokenizer {
 public:
  explicit Gpt2BpeTokenizer(Gpt2Vocabulary vocabulary)
      : vocabulary_(std::move(vocabulary)) {}

  strata_tokenizer_kind_t kind() const override {
    return STRATA_TOKENIZER_KIND_GPT2;
  }

  int32_t vocabSize() const override {
    return static_cast<int32_t>(vocabulary_.bytesOfId.size());
  }

  strata_status_t encode(std::string_view text,
                         std::vector<int32_t>* ids) const override {
    size_t bad = findInvalidUtf8(text);
    if (bad != std::string_view::npos)
      return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                                "text is not UTF-8 at byte %zu", bad);
    std::vector<int32_t> symbols;
    for (std::string_view piece : splitGpt2Pretokens(text)) {
      symbols.clear();
      for (char byte : piece)
        symbols.push_back(vocabulary_.idOfByte[static_cast<uint8_t>(byte)]);
      mergeAll(&symbols);
      ids->insert(ids->end(), symbols.begin(), symbols.end());
    }
    return strata_ok_status();
  }

  strata_status_t decode(const int32_t* ids, size_t count,
                         std::string* text) const override {
    for (size_t i = 0; i < count; ++i) {
      int32_t id = ids[i];
      if (id < 0 || id >= vocabSize() || !vocabulary_.hasId[id])
        return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                                  "id %d at position %zu is not in the "
                                  "vocabulary",
                                  id, i);
      text->append(vocabulary_.bytesOfId[id]);
    }
    return strata_ok_status();
  }

 private:
  /// Applies merges to |symbols| by rank until no adjacent pair has one.
  void mergeAll(std::vector<int32_t>* symbols) const {
    while (symbols->size() >= 2) {
      const Gpt2Merge* best = nullptr;
      int32_t bestLeft = 0, bestRight = 0;
      for (size_t i = 0; i + 1 < symbols->size(); ++i) {
        auto found = vocabulary_.merges.find(
            gpt2MergeKey((*symbols)[i], (*symbols)[i + 1]));
        if (found != vocabulary_.merges.end() &&
            (!best || found->second.rank < best->rank)) {
          best = &found->second;
          bestLeft = (*symbols)[i];
          bestRight = (*symbols)[i + 1];
        }
      }
      if (!best) return;
      // Left to right, so "a a a" with the merge "a a" becomes "aa a".
      size_t out = 0;
      for (size_t i = 0; i < symbols->size(); ++out) {
        if (i + 1 < symbols->size() && (*symbols)[i] == bestLeft &&
            (*symbols)[i + 1] == bestRight) {
          (*symbols)[out] = best->result;
          i += 2;
        } else {
          (*symbols)[out] = (*symbols)[i];
          i += 1;
        }
      }
      symbols->resize(out);
    }
  }

  Gpt2Vocabulary vocabulary_;
};

}  // namespace

strata_status_t createGpt2Tokenizer(const char* vocabJsonPath,
                                    const char* mergesPath,
                                    std::unique_ptr<Tokenizer>* out) {
  Gpt2Vocabulary vocabulary;
  STRATA_RETURN_IF_ERROR(
      loadGpt2Vocabulary(vocabJsonPath, mergesPath, &vocabulary));
  *out = std::make_unique<Gpt2BpeTokenizer>(std::move(vocabulary));
  return strata_ok_status();
}

}  // namespace strata::tokenizers
