//===- TokenizerChoice.h - The tokenizer that --tokenizer names -----------===//
// SPDX-License-Identifier: Apache-2.0
// The --tokenizer option of strata-run generate and strata-serve: byte, gpt2
// or a SentencePiece .model.
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_RUN_TOKENIZERCHOICE_H_
#define STRATA_TOOLS_STRATA_RUN_TOKENIZERCHOICE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/tokenizers/tokenizer.h"

namespace strata::tools {

/// The folder of GPT-2's encoder.json and vocab.bpe: $STRATA_GPT2_BPE_DIR
/// when it is set (and not empty); else the first of
/// <folder of the running executable>/../share/strata/gpt2-bpe and
/// ../shared/data/gpt2-bpe (from the current directory) that holds an
/// encoder.json. Returns an empty string if none does, with the folders
/// tried in |tried|.
std::string gpt2BpeDirectory(std::string *tried);

/// Opens the tokenizer |choice| names: "byte", "gpt2" (from
/// gpt2BpeDirectory) or else the path of a SentencePiece model. Returns an
/// empty string on success, else the problem.
std::string openTokenizer(const std::string &choice, strata_tokenizer_t **out);

/// Encodes |text| into |ids|; returns an empty string or the problem.
std::string encodeText(const strata_tokenizer_t *tokenizer,
                       const std::string &text, std::vector<int64_t> *ids);

/// Decodes |ids| into |text|; returns an empty string or the problem.
std::string decodeIds(const strata_tokenizer_t *tokenizer,
                      const std::vector<int64_t> &ids, std::string *text);

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_RUN_TOKENIZERCHOICE_H_
