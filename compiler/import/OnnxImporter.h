//===- OnnxImporter.h - ONNX model -> strata dialect ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Entry point of the importer: validates the graph, reports every
// unsupported op at once, and converts the rest node by node.

#ifndef STRATA_COMPILER_IMPORT_ONNXIMPORTER_H_
#define STRATA_COMPILER_IMPORT_ONNXIMPORTER_H_

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace strata::import {

class ModelStorage;

/// Imports the model held by |storage| into a module with one function,
/// @main, whose arguments are the graph inputs (attributes `strata.name`
/// and `strata.dims` keep the ONNX names and symbolic dim names) and whose
/// results are the graph outputs (`strata.name`). Every problem is reported
/// through |context|'s diagnostic engine at the ONNX node's location;
/// returns null on failure. Weights reference |storage|, which must outlive
/// the module.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxModel(mlir::MLIRContext &context,
                                                  ModelStorage &storage);

/// Reports every op of the model that has no converter (one error each)
/// without importing. Returns failure if there was at least one.
mlir::LogicalResult checkSupportedOps(mlir::MLIRContext &context,
                                      ModelStorage &storage);

} // namespace strata::import

#endif // STRATA_COMPILER_IMPORT_ONNXIMPORTER_H_
