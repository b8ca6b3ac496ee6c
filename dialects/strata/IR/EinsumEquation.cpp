//===- EinsumEquation.cpp - Parsed strata.einsum equations -----------------===//
// SPDX-License-Identifier: Apache-2.0

#include "dialects/strata/IR/EinsumEquation.h"

#include "llvm/ADT/StringExtras.h"

namespace strata::ir {

std::string EinsumEquation::loopLetters() const {
  std::string letters = result;
  for (const std::string &operand : operands)
    for (char c : operand)
      if (letters.find(c) == std::string::npos)
        letters.push_back(c);
  return letters;
}

bool parseEinsumEquation(llvm::StringRef text, EinsumEquation &out,
                         std::string &error) {
  out = EinsumEquation();
  auto [lhs, rhs] = text.split("->");
  if (lhs.size() == text.size()) {
    error = "expected an explicit '->' result";
    return false;
  }
  auto letters = [&](llvm::StringRef part, std::string &into) {
    for (char c : part) {
      if (c == ' ')
        continue;
      if (!llvm::isAlpha(c)) {
        error = std::string("unexpected character '") + c + "'";
        return false;
      }
      into.push_back(c);
    }
    return true;
  };
  llvm::SmallVector<llvm::StringRef> parts;
  lhs.split(parts, ',');
  for (llvm::StringRef part : parts) {
    out.operands.emplace_back();
    if (!letters(part, out.operands.back()))
      return false;
  }
  if (!letters(rhs, out.result))
    return false;
  for (size_t i = 0; i < out.result.size(); ++i) {
    char c = out.result[i];
    if (out.result.find(c, i + 1) != std::string::npos) {
      error = std::string("result letter '") + c + "' repeats";
      return false;
    }
    bool used = false;
    for (const std::string &operand : out.operands)
      used |= operand.find(c) != std::string::npos;
    if (!used) {
      error = std::string("result letter '") + c + "' names no operand dim";
      return false;
    }
  }
  return true;
}

} // namespace strata::ir
