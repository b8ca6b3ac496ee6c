//===- unicode_classes.h - \p{L}, \p{N} and \s for the pre-tokenizer ------===//
// SPDX-License-Identifier: Apache-2.0
// Exact for ASCII and Latin-1; elsewhere a compact range table of the common
// scripts (docs/tokenizers.md#limits lists what it misses).

#ifndef STRATA_TOKENIZERS_SRC_UNICODE_CLASSES_H_
#define STRATA_TOKENIZERS_SRC_UNICODE_CLASSES_H_

#include <cstdint>

namespace strata::tokenizers {

/// Whether |codePoint| is a letter (general category L*).
bool isUnicodeLetter(uint32_t codePoint);

/// Whether |codePoint| is a number (general category N*).
bool isUnicodeNumber(uint32_t codePoint);

/// Whether |codePoint| is whitespace as regular expressions' \s means it
/// (White_Space, plus the ASCII separators U+001C..U+001F).
bool isUnicodeWhitespace(uint32_t codePoint);

}  // namespace strata::tokenizers

#endif  // STRATA_TOKENIZERS_SRC_UNICODE_CLASSES_H_
