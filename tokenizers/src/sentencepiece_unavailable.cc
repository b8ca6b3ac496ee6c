//===- sentencepiece_unavailable.cc - SentencePiece when it is not built --===//
// SPDX-License-Identifier: Apache-2.0
// Built instead of sentencepiece_tokenizer.cc when the configure step finds
// no libsentencepiece, so the C API stays the same everywhere.

#include "tokenizer_impl.h"

namespace strata::tokenizers {

strata_status_t createSentencePieceTokenizer(const char* modelPath,
                                             std::unique_ptr<Tokenizer>* out) {
  (void)out;
  return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                            "cannot load '%s': strata_tokenizers was built "
                            "without SentencePiece (libsentencepiece-dev)",
                            modelPath);
}

}  // namespace strata::tokenizers
