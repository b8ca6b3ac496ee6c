//===- byte_unicode_map.cc - GPT-2's byte <-> printable character map -----===//
// SPDX-License-Identifier: Apache-2.0
// The bytes without a printable self are 0x00..0x20 (33), 0x7F..0xA0 (34)
// and 0xAD (soft hyphen); they take U+0100 onwards in that order.

#include "byte_unicode_map.h"

namespace strata::tokenizers {
namespace {
constexpr uint32_t kFirstStandIn = 0x100;
constexpr uint32_t kLowCount = 33;   // 0x00..0x20
constexpr uint32_t kHighCount = 34;  // 0x7F..0xA0
constexpr uint8_t kSoftHyphen = 0xAD;

bool isPrintableSelf(uint32_t value) {
  return (value >= 0x21 && value <= 0x7E) ||
         (value >= 0xA1 && value <= 0xFF && value != kSoftHyphen);
}
}  // namespace

uint32_t byteToVocabCodePoint(uint8_t byte) {
  if (isPrintableSelf(byte)) return byte;
  if (byte <= 0x20) return kFirstStandIn + byte;
  if (byte >= 0x7F && byte <= 0xA0)
    return kFirstStandIn + kLowCount + (byte - 0x7F);
  return kFirstStandIn + kLowCount + kHighCount;  // the soft hyphen
}

int vocabCodePointToByte(uint32_t codePoint) {
  if (codePoint < kFirstStandIn)
    return isPrintableSelf(codePoint) ? int(codePoint) : -1;
  uint32_t index = codePoint - kFirstStandIn;
  if (index < kLowCount) return int(index);
  if (index < kLowCount + kHighCount) return int(0x7F + index - kLowCount);
  if (index == kLowCount + kHighCount) return kSoftHyphen;
  return -1;
}

}  // namespace strata::tokenizers
