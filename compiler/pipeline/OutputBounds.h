//===- OutputBounds.h - Maxima of an entry's dynamic output dims -*- C++
//-*-===//
// SPDX-License-Identifier: Apache-2.0
// After strata-lower-to-linalg (linalg on tensors), each dynamic extent of a
// result is computed from the entry's input dims; this derives it as an
// expression of those dims and its maximum at the input maxima.

#ifndef STRATA_COMPILER_PIPELINE_OUTPUTBOUNDS_H_
#define STRATA_COMPILER_PIPELINE_OUTPUTBOUNDS_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace strata {

/// One dim of one input of an entry.
struct InputDim {
  unsigned input;
  int64_t dim;
  bool operator==(const InputDim &o) const {
    return input == o.input && dim == o.dim;
  }
};

/// What the analysis derived for one dynamic result dim.
struct ResultDimBound {
  /// The largest extent any inputs within their maxima give (inputs' dims
  /// range over [0, max]).
  int64_t max = 0;
  /// The extent is exactly this input dim.
  std::optional<InputDim> sameAs;
  /// The extent as an affine function of input dims (|operands|), when
  /// one was proven; a null map when only an upper bound is known.
  mlir::AffineMap exact;
  mlir::SmallVector<InputDim> operands;
  /// Read from tensor data: no bound in terms of input dims.
  bool fromTensorData = false;

  static ResultDimBound fromData() {
    ResultDimBound b;
    b.fromTensorData = true;
    return b;
  }
  bool isFromData() const { return fromTensorData; }
};

class ExtentEvaluator;

/// Derives the dynamic result dims of one entry function |func| (linalg on
/// tensors, with the input maxima attribute of codegen/cpu/Passes.h).
class OutputBounds {
public:
  explicit OutputBounds(mlir::func::FuncOp func);
  ~OutputBounds();

  /// Dim |dim| of result |result|. Fails when the extent has no bound in
  /// terms of input dims with maxima (a size read from tensor data).
  mlir::FailureOr<ResultDimBound> bound(unsigned result, int64_t dim);

private:
  mlir::func::FuncOp func;
  std::unique_ptr<ExtentEvaluator> evaluator;
};

/// |bound.exact| written with |names| for its operands ("past_sequence +
/// sequence"); empty when |bound| has no exact form.
std::string exactText(const ResultDimBound &bound,
                      llvm::function_ref<std::string(const InputDim &)> names);

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_OUTPUTBOUNDS_H_
