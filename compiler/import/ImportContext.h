//===- ImportContext.h - State shared by the ONNX op converters -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The value map, the node being converted, attribute access with type
// checks, node-named diagnostics, and the compile-time integer tracking that
// folds exporters' Shape/Gather/Concat/Reshape arithmetic.

#ifndef STRATA_COMPILER_IMPORT_IMPORTCONTEXT_H_
#define STRATA_COMPILER_IMPORT_IMPORTCONTEXT_H_

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>

namespace onnx {
class NodeProto;
class AttributeProto;
class GraphProto;
} // namespace onnx

namespace strata::import {

class ModelStorage;

/// Integer contents known at compile time, element by element
/// (std::nullopt: known only at run time). Tracked for small 0-D/1-D integer
/// tensors, which is what exporters' shape arithmetic produces.
using KnownInts = llvm::SmallVector<std::optional<int64_t>>;

/// Largest integer tensor whose elements are tracked.
constexpr int64_t kKnownIntsLimit = 64;

/// What the importer knows about one ONNX value.
struct ImportedValue {
  mlir::Value value;
  std::optional<KnownInts> known;
};

/// One output dim of a shape built at run time: a constant extent, or the
/// extent of dim `inputDim` of some tensor.
struct DimSource {
  int64_t constant = 0;
  int64_t inputDim = -1; // >= 0: copy that dim of the source tensor
  static DimSource fixed(int64_t c) { return {c, -1}; }
  static DimSource fromInput(int64_t d) { return {0, d}; }
};

class ImportContext {
public:
  ImportContext(mlir::OpBuilder &builder, ModelStorage &storage)
      : builder_(builder), storage_(storage) {}

  //===--- the node being converted ---===//
  void beginNode(const onnx::NodeProto &node, mlir::Location loc,
                 int64_t opset);
  const onnx::NodeProto &node() const { return *node_; }
  mlir::Location loc() const { return loc_; }
  int64_t opset() const { return opset_; }
  mlir::OpBuilder &b() { return builder_; }
  mlir::MLIRContext *context() { return builder_.getContext(); }
  ModelStorage &storage() { return storage_; }

  /// Starts an error at the node's location; the message is prefixed with
  /// the node name and op type.
  mlir::InFlightDiagnostic error();

  //===--- inputs and outputs ---===//
  /// True if positional input |i| exists and is not the empty name.
  bool hasInput(unsigned i) const;
  /// The value of input |i|, or null when absent.
  mlir::Value input(unsigned i) const;
  mlir::RankedTensorType inputType(unsigned i) const;
  /// Known integer contents of input |i|, if tracked.
  const std::optional<KnownInts> &inputKnown(unsigned i) const;
  /// Input |i| as fully known integers, or std::nullopt.
  std::optional<llvm::SmallVector<int64_t>> inputConstInts(unsigned i) const;
  /// Input |i|, a float tensor, as the scalar constant every element holds
  /// (ir::evaluateScalarConstant), or std::nullopt.
  std::optional<double> inputConstFloat(unsigned i) const;
  /// Requires |count| leading inputs; emits an error and fails otherwise.
  mlir::LogicalResult requireInputs(unsigned count);

  /// True if output |i| is named and consumed by a node or a graph output.
  bool outputUsed(unsigned i) const;
  /// Binds output |i|. A fully known integer result is replaced by a
  /// constant so later shape arithmetic folds.
  void setOutput(unsigned i, mlir::Value value,
                 std::optional<KnownInts> known = std::nullopt);
  /// Binds an ONNX value name directly (graph inputs, initializers).
  void bind(llvm::StringRef name, ImportedValue value) {
    values_[name] = std::move(value);
  }
  bool isBound(llvm::StringRef name) const { return values_.count(name); }
  const ImportedValue *lookup(llvm::StringRef name) const;
  void markUsed(llvm::StringRef name) { used_.insert(name); }

  //===--- attributes (type-checked) ---===//
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  mlir::FailureOr<int64_t> intAttr(llvm::StringRef name, int64_t dflt);
  mlir::FailureOr<float> floatAttr(llvm::StringRef name, float dflt);
  mlir::FailureOr<std::string> stringAttr(llvm::StringRef name,
                                          llvm::StringRef dflt);
  /// Returns std::nullopt in the value when the attribute is absent.
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  intsAttr(llvm::StringRef name);
  /// An int list ONNX moved from attribute |name| to constant input 1 at
  /// |inputOpset| (Squeeze/Unsqueeze and Reduce axes, Split's split):
  /// std::nullopt in the value when neither is given; an error when the
  /// input is not a constant.
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  intsAttrOrInput(llvm::StringRef name, int64_t inputOpset);
  mlir::FailureOr<const onnx::GraphProto *> graphAttr(llvm::StringRef name);

  //===--- building helpers ---===//
  /// A strata.constant i64 tensor: 1-D, or 0-D when |scalar|.
  mlir::Value constI64(llvm::ArrayRef<int64_t> values, bool scalar = false);
  /// A 0-D strata.constant of |elementType| holding |value|.
  mlir::Value constScalar(mlir::Type elementType, double value);
  /// A strata.constant of float |elementType| and |shape| holding |values|
  /// (row-major), each rounded to nearest even.
  mlir::Value constFloats(mlir::Type elementType, llvm::ArrayRef<int64_t> shape,
                          llvm::ArrayRef<double> values);
  /// |axes| with negative entries counted from the back of a rank-|rank|
  /// tensor, in their order; an error naming the first invalid or repeated
  /// one.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  normalizedAxes(llvm::ArrayRef<int64_t> axes, int64_t rank);
  /// The int attribute |name| (|dflt| when absent) as an axis of a
  /// rank-|rank| tensor, negative values counted from the back; an error
  /// when out of range.
  mlir::FailureOr<int64_t> axisAttr(llvm::StringRef name, int64_t dflt,
                                    int64_t rank);
  /// A 1-D i64 shape tensor for |dims|, reading dynamic extents of |source|
  /// at run time (strata.shape + slices + concat) only where needed.
  mlir::Value buildShape(mlir::Value source, llvm::ArrayRef<DimSource> dims);
  /// |value| as a 1-D i64 tensor (casting i32, reshaping 0-D).
  mlir::Value asI64Vector(mlir::Value value);
  /// Reshape to a static shape or, when |dims| has dynamic entries, to the
  /// run-time shape described by |sources| (same length as |dims|).
  mlir::Value reshapeTo(mlir::Value input, llvm::ArrayRef<int64_t> dims,
                        llvm::ArrayRef<DimSource> sources);

private:
  mlir::OpBuilder &builder_;
  ModelStorage &storage_;
  llvm::StringMap<ImportedValue> values_;
  llvm::StringSet<> used_;
  const onnx::NodeProto *node_ = nullptr;
  mlir::Location loc_ = mlir::UnknownLoc::get(builder_.getContext());
  int64_t opset_ = 0;
};

} // namespace strata::import

#endif // STRATA_COMPILER_IMPORT_IMPORTCONTEXT_H_
