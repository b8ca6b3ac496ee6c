//===- TensorConversion.h - ONNX tensors and types to MLIR ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Element-type mapping and TensorProto -> ElementsAttr conversion. Weights
// become dense resource blobs that point into the model's memory.

#ifndef STRATA_COMPILER_IMPORT_TENSORCONVERSION_H_
#define STRATA_COMPILER_IMPORT_TENSORCONVERSION_H_

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

namespace onnx {
class TensorProto;
} // namespace onnx

namespace strata::import {

class ModelStorage;

/// MLIR element type of ONNX TensorProto data type |onnxType|, or a null
/// Type when Strata does not support it (string, complex, float8, ...).
mlir::Type convertElementType(int32_t onnxType, mlir::MLIRContext *context);

/// Human-readable name of an ONNX data type, e.g. "FLOAT16" or "STRING".
llvm::StringRef onnxDataTypeName(int32_t onnxType);

/// Tensors with at most this many elements (and every integer or bool
/// tensor) become plain dense attributes so import-time folding sees them;
/// larger float tensors become dense resource blobs.
constexpr int64_t kInlineElementLimit = 16;

/// Converts |tensor|'s data (inline fields, raw_data or external data) into
/// an attribute of its declared type. Checks dims, sizes and bounds and
/// returns a one-line error naming the tensor on any inconsistency.
/// |name| replaces the tensor's own name (e.g. for unnamed Constant-node
/// values). The result may point into |tensor|'s raw_data, which must live
/// as long as the module (an initializer or attribute of the stored model,
/// never a copy).
llvm::Expected<mlir::ElementsAttr>
convertTensor(const onnx::TensorProto &tensor, ModelStorage &storage,
              mlir::MLIRContext *context, llvm::StringRef name = {});

} // namespace strata::import

#endif // STRATA_COMPILER_IMPORT_TENSORCONVERSION_H_
