//===- ExtentEvaluator.h - Extents as functions of input dims --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// A forward pass over an entry function in linalg on tensors that gives
// every tensor extent, index value and small integer tensor (the ONNX shape
// vectors Shape/Gather/Concat build) as an affine function of the entry's
// input dims where it can, and an interval at the input maxima always.

#ifndef STRATA_COMPILER_PIPELINE_EXTENTEVALUATOR_H_
#define STRATA_COMPILER_PIPELINE_EXTENTEVALUATOR_H_

#include "compiler/pipeline/OutputBounds.h"
#include "compiler/analysis/SymbolicInt.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace strata {

/// Evaluates |func| (one block, linalg on tensors, with codegen's input
/// maxima attribute) once on construction. Input dims range over
/// [1, max]: the derivations hold for non-empty inputs (an empty one gives
/// empty outputs, which the runtime checks against the same maxima).
class ExtentEvaluator {
public:
  explicit ExtentEvaluator(mlir::func::FuncOp func);

  /// Dim |d| of tensor or memref |v|, if known.
  std::optional<SymbolicInt> dim(mlir::Value v, int64_t d) const;

  /// The input dim of each symbol s<k> of the expressions.
  llvm::ArrayRef<InputDim> symbols() const { return symbols_; }

private:
  using Elements = llvm::SmallVector<std::optional<SymbolicInt>>;

  void visit(mlir::Operation *op);
  void visitShapes(mlir::Operation *op);
  void visitElements(mlir::Operation *op);
  std::optional<Elements> evaluateLinalg(mlir::Operation *op);
  std::optional<SymbolicInt> scalar(mlir::Value v) const;
  std::optional<SymbolicInt> checked(mlir::Value cond, mlir::Value v,
                                     bool whenTrue) const;
  const Elements *elements(mlir::Value v) const;
  std::optional<SymbolicInt> constant(int64_t value) const;
  std::optional<SymbolicInt> inputDim(unsigned arg, int64_t d);

  mlir::func::FuncOp func_;
  mlir::MLIRContext *ctx_;
  llvm::SmallVector<InputDim> symbols_;
  /// Each symbol's range: [1, its input maximum].
  llvm::SmallVector<std::pair<int64_t, int64_t>> ranges_;
  llvm::DenseMap<mlir::Value, llvm::SmallVector<std::optional<SymbolicInt>>>
      dims_;
  llvm::DenseMap<mlir::Value, SymbolicInt> scalars_;
  llvm::DenseMap<mlir::Value, Elements> elements_;
};

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_EXTENTEVALUATOR_H_
