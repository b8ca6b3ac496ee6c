//===- SharedWeights.cpp - One copy of weights several graphs hold --------===//
// SPDX-License-Identifier: Apache-2.0

#include "compiler/pipeline/SharedWeights.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"

#include <cstring>
#include <vector>

using namespace mlir;

namespace strata {

size_t shareIdenticalWeights(ModuleOp module) {
  // Candidates by type and a hash of the bytes; equal bytes confirmed.
  llvm::DenseMap<std::pair<Type, llvm::hash_code>,
                 std::vector<DenseResourceElementsAttr>>
      seen;
  size_t saved = 0;
  module.walk([&](ir::ConstantOp op) {
    auto attr = dyn_cast<DenseResourceElementsAttr>(op.getValue());
    AsmResourceBlob *blob = attr ? attr.getRawHandle().getBlob() : nullptr;
    if (!blob)
      return;
    ArrayRef<char> bytes = blob->getData();
    auto key = std::make_pair(
        attr.getType(), llvm::hash_combine_range(bytes.begin(), bytes.end()));
    std::vector<DenseResourceElementsAttr> &same = seen[key];
    for (DenseResourceElementsAttr earlier : same) {
      if (earlier == attr)
        return;
      ArrayRef<char> other = earlier.getRawHandle().getBlob()->getData();
      if (other.size() == bytes.size() &&
          std::memcmp(other.data(), bytes.data(), bytes.size()) == 0) {
        op.setValueAttr(earlier);
        saved += bytes.size();
        return;
      }
    }
    same.push_back(attr);
  });
  return saved;
}

} // namespace strata
