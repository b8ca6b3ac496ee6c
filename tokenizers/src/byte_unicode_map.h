//===- byte_unicode_map.h - GPT-2's byte <-> printable character map ------===//
// SPDX-License-Identifier: Apache-2.0
// GPT-2's vocabulary spells every byte as a printable character so that its
// files hold no control characters or spaces: printable Latin-1 bytes stand
// for themselves, the other 68 bytes for U+0100..U+0143 in byte order.

#ifndef STRATA_TOKENIZERS_SRC_BYTE_UNICODE_MAP_H_
#define STRATA_TOKENIZERS_SRC_BYTE_UNICODE_MAP_H_

#include <cstdint>

namespace strata::tokenizers {

/// The character that spells |byte| in GPT-2's vocabulary files.
uint32_t byteToVocabCodePoint(uint8_t byte);

/// The byte |codePoint| spells, or -1 if it spells none.
int vocabCodePointToByte(uint32_t codePoint);

}  // namespace strata::tokenizers

#endif  // STRATA_TOKENIZERS_SRC_BYTE_UNICODE_MAP_H_
