//===- OnnxTextParser.cpp - ONNX text syntax front end --------------------===//
// SPDX-License-Identifier: Apache-2.0
// Built with -fexceptions (see CMakeLists.txt): onnx's parser may throw on
// malformed numbers, and an exception must become an error, not a crash.

#include "compiler/import/OnnxTextParser.h"

#include <onnx/defs/parser.h>

#include <exception>
#include <string>

namespace strata::import {

bool parseOnnxText(llvm::StringRef text, onnx::ModelProto &model,
                   std::string &error) {
  std::string input = text.str(); // the parser wants a NUL-terminated string
  try {
    onnx::Status status = onnx::OnnxParser::Parse(model, input.c_str());
    if (!status.IsOK()) {
      error = status.ErrorMessage();
      return false;
    }
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  return true;
}

} // namespace strata::import
