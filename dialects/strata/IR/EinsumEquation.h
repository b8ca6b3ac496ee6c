//===- EinsumEquation.h - Parsed strata.einsum equations -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The explicit form strata.einsum carries ("bij,bjk->bik": one letter per
// dim, no ellipsis, the result spelled out), parsed for the verifier and
// the lowering. The importer produces this form from ONNX's.

#ifndef STRATA_DIALECTS_STRATA_IR_EINSUMEQUATION_H_
#define STRATA_DIALECTS_STRATA_IR_EINSUMEQUATION_H_

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace strata::ir {

struct EinsumEquation {
  llvm::SmallVector<std::string> operands; // letters per operand dim
  std::string result;                      // letters per result dim
  /// Every letter once: the result's in order, then the summed ones in
  /// order of first appearance (the iteration dims of the lowering).
  std::string loopLetters() const;
};

/// Parses |text| into |out|; on failure returns false and says why in
/// |error|.
bool parseEinsumEquation(llvm::StringRef text, EinsumEquation &out,
                         std::string &error);

} // namespace strata::ir

#endif // STRATA_DIALECTS_STRATA_IR_EINSUMEQUATION_H_
