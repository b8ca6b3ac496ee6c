//===- text_stream.cc - Generated tokens into text deltas, with stops -----===//
// SPDX-License-Identifier: Apache-2.0
// Each push decodes the whole sequence again: decoders that join pieces
// (SentencePiece's leading spaces) give the right text only on the whole,
// and a sequence holds at most the model's context.

#include "text_stream.h"

#include <algorithm>
#include <utility>

namespace strata::serve {

size_t completeUtf8Prefix(const std::string& text) {
  const size_t size = text.size();
  // A character is at most 4 bytes: look at the last 3 for a cut lead byte.
  for (size_t back = 1; back <= 3 && back <= size; ++back) {
    unsigned char byte = static_cast<unsigned char>(text[size - back]);
    if ((byte & 0xC0) == 0x80) continue;  // a continuation byte
    size_t need = (byte & 0xE0) == 0xC0   ? 2
                  : (byte & 0xF0) == 0xE0 ? 3
                  : (byte & 0xF8) == 0xF0 ? 4
                                          : 1;
    return need > back ? size - back : size;
  }
  return size;
}

TextStream::TextStream(const strata_tokenizer_t* tokenizer,
                       std::vector<std::string> stops)
    : tokenizer_(tokenizer), stops_(std::move(stops)) {
  for (const std::string& stop : stops_) {
    longestStop_ = std::max(longestStop_, stop.size());
  }
}

std::string TextStream::push(int64_t token, bool* stopped, std::string* error) {
  *stopped = false;
  if (stopped_ || !tokenizer_) return "";
  ids_.push_back(static_cast<int32_t>(token));
  size_t length = 0;
  strata_status_t status = strata_tokenizer_decode(
      tokenizer_, ids_.data(), ids_.size(), nullptr, 0, &length);
  std::string text(length, '\0');
  if (!status && length) {
    status = strata_tokenizer_decode(tokenizer_, ids_.data(), ids_.size(),
                                     text.data(), length, &length);
  }
  if (status) {
    *error = strata_status_message(status);
    strata_status_free(status);
    ids_.pop_back();
    return "";
  }
  text_ = std::move(text);
  // A stop string may start up to longestStop_ - 1 bytes before the part
  // not yet sent (it was held back).
  const size_t from = sentBytes_ >= longestStop_ ? sentBytes_ - longestStop_ + 1 : 0;
  size_t stopAt = std::string::npos;
  for (const std::string& stop : stops_) {
    stopAt = std::min(stopAt, text_.find(stop, from));
  }
  size_t end;
  if (stopAt != std::string::npos) {
    stopped_ = true;
    *stopped = true;
    end = std::max(stopAt, sentBytes_);
  } else {
    end = completeUtf8Prefix(text_);
    // Hold back what could be the start of a stop string.
    end = longestStop_ ? std::max(sentBytes_, end >= longestStop_ - 1
                                                  ? end - (longestStop_ - 1)
                                                  : 0)
                       : end;
    end = std::max(sentBytes_, completeUtf8Prefix(text_.substr(0, end)));
  }
  std::string delta = text_.substr(sentBytes_, end - sentBytes_);
  sentBytes_ = end;
  sentText_ += delta;
  return delta;
}

std::string TextStream::finish() {
  if (stopped_) return "";
  std::string delta = text_.substr(sentBytes_);
  sentBytes_ = text_.size();
  sentText_ += delta;
  return delta;
}

}  // namespace strata::serve
