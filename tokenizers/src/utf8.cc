//===- utf8.cc - Strict UTF-8 decoding ------------------------------------===//
// SPDX-License-Identifier: Apache-2.0
// Well-formed UTF-8 as the Unicode standard defines it (table 3-7).

#include "utf8.h"

namespace strata::tokenizers {

size_t decodeUtf8(std::string_view text, size_t offset, uint32_t* codePoint) {
  if (offset >= text.size()) return 0;
  auto byteAt = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  uint8_t lead = byteAt(offset);
  size_t length;
  uint32_t value;
  // The smallest value each length may encode rules out overlong forms.
  uint32_t minimum;
  if (lead < 0x80) {
    *codePoint = lead;
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2, value = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, value = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, value = lead & 0x07, minimum = 0x10000;
  } else {
    return 0;  // a continuation byte or 0xF8..0xFF where a character starts
  }
  if (text.size() - offset < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    uint8_t next = byteAt(offset + i);
    if ((next & 0xC0) != 0x80) return 0;
    value = (value << 6) | (next & 0x3F);
  }
  if (value < minimum || value > 0x10FFFF ||
      (value >= 0xD800 && value <= 0xDFFF))
    return 0;
  *codePoint = value;
  return length;
}

size_t findInvalidUtf8(std::string_view text) {
  size_t offset = 0;
  while (offset < text.size()) {
    uint32_t codePoint;
    size_t length = decodeUtf8(text, offset, &codePoint);
    if (length == 0) return offset;
    offset += length;
  }
  return std::string_view::npos;
}

void appendUtf8(uint32_t codePoint, std::string* out) {
  if (codePoint < 0x80) {
    out->push_back(static_cast<char>(codePoint));
  } else if (codePoint < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (codePoint >> 6)));
    out->push_back(static_cast<char>(0x80 | (codePoint & 0x3F)));
  } else if (codePoint < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (codePoint >> 12)));
    out->push_back(static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (codePoint & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (codePoint >> 18)));
    out->push_back(static_cast<char>(0x80 | ((codePoint >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (codePoint & 0x3F)));
  }
}

}  // namespace strata::tokenizers
