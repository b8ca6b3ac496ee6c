//===- OnnxTextParser.h - ONNX text syntax front end ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Wraps onnx's own C++ parser (onnx/defs/parser.h) for .onnxtext inputs,
// which lit tests use to write small models by hand.

#ifndef STRATA_COMPILER_IMPORT_ONNXTEXTPARSER_H_
#define STRATA_COMPILER_IMPORT_ONNXTEXTPARSER_H_

#include "llvm/ADT/StringRef.h"

#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace strata::import {

/// Parses ONNX text syntax into |model|. Returns false and sets |error| on a
/// syntax error; never throws.
bool parseOnnxText(llvm::StringRef text, onnx::ModelProto &model,
                   std::string &error);

} // namespace strata::import

#endif // STRATA_COMPILER_IMPORT_ONNXTEXTPARSER_H_
