//===- text_stream.h - Generated tokens into text deltas, with stops ------===//
// SPDX-License-Identifier: Apache-2.0
// Streams the text of a growing token sequence in pieces that never end
// inside a UTF-8 character (a byte-level token may carry part of one) and
// never show the start of a stop string before it is known not to be one,
// as OpenAI's streams do.

#ifndef STRATA_SERVE_SRC_TEXT_STREAM_H_
#define STRATA_SERVE_SRC_TEXT_STREAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/tokenizers/tokenizer.h"

namespace strata::serve {

class TextStream {
public:
  /// |tokenizer| is borrowed; null streams no text (token-id clients).
  TextStream(const strata_tokenizer_t* tokenizer,
             std::vector<std::string> stops);

  /// Adds a token and returns the text that may be sent now. Sets
  /// |*stopped| when a stop string appeared: the text ends before it and
  /// nothing more is streamed. An undecodable token sets |*error|.
  std::string push(int64_t token, bool* stopped, std::string* error);

  /// The text held back, at the end of a sequence that did not stop.
  std::string finish();

  /// All the text sent so far.
  const std::string& sent() const { return sentText_; }

private:
  const strata_tokenizer_t* tokenizer_;
  std::vector<std::string> stops_;
  size_t longestStop_ = 0;
  std::vector<int32_t> ids_;
  std::string text_;
  std::string sentText_;
  size_t sentBytes_ = 0;
  bool stopped_ = false;
};

/// The length of the longest prefix of |text| that does not end inside a
/// UTF-8 character (bytes of a cut sequence at the end are held; invalid
/// bytes count as complete).
size_t completeUtf8Prefix(const std::string& text);

}  // namespace strata::serve

#endif  // STRATA_SERVE_SRC_TEXT_STREAM_H_
