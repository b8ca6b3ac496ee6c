//===- utf8.h - Strict UTF-8 decoding -------------------------------------===//
// SPDX-License-Identifier: Apache-2.0
// The pre-tokenizer works on code points; text is checked once up front so
// that it can then decode without error paths.

#ifndef STRATA_TOKENIZERS_SRC_UTF8_H_
#define STRATA_TOKENIZERS_SRC_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::tokenizers {

/// Decodes the character at |offset| of |text| into |codePoint| and returns
/// its length in bytes, or 0 if the bytes there are not well-formed UTF-8
/// (truncated, overlong, a surrogate, or above U+10FFFF).
size_t decodeUtf8(std::string_view text, size_t offset, uint32_t* codePoint);

/// The offset of the first byte of |text| that is not well-formed UTF-8, or
/// std::string_view::npos if all of it is.
size_t findInvalidUtf8(std::string_view text);

/// Appends the UTF-8 encoding of |codePoint| (at most U+10FFFF) to |out|.
void appendUtf8(uint32_t codePoint, std::string* out);

}  // namespace strata::tokenizers

#endif  // STRATA_TOKENIZERS_SRC_UTF8_H_
