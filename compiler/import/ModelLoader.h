//===- ModelLoader.h - Read ONNX models and their external data -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Parses binary (.onnx) or textual (.onnxtext) models and maps external
// weight files read-only, refusing any location outside the model's folder.

#ifndef STRATA_COMPILER_IMPORT_MODELLOADER_H_
#define STRATA_COMPILER_IMPORT_MODELLOADER_H_

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace onnx {
class ModelProto;
class TensorProto;
} // namespace onnx

namespace strata::import {

/// Everything the weights of an imported module point into: the parsed
/// protobuf (inline raw_data) and the mapped external files. It must outlive
/// the MLIR module, whose dense resource blobs reference this memory without
/// copying it.
class ModelStorage {
public:
  ModelStorage();
  ~ModelStorage();

  /// Parses |path|: binary protobuf, or ONNX text syntax when the name ends
  /// in ".onnxtext". On failure returns an error naming the problem.
  llvm::Error load(llvm::StringRef path);

  /// Returns the bytes of |tensor|'s external data (location/offset/length),
  /// mapped read-only. The location must be a relative path that stays
  /// inside the model's folder after resolving symlinks.
  llvm::Expected<llvm::ArrayRef<char>>
  externalData(const onnx::TensorProto &tensor);

  /// Freezes graph input |name| to the tensor serialized (as an ONNX
  /// TensorProto) in |tensorFile|: the input becomes an initializer, so
  /// values the compiler needs at compile time (axes, split sizes, flags)
  /// can be bound by the user. The tensor's type must match the input's.
  llvm::Error bindInput(llvm::StringRef name, llvm::StringRef tensorFile);

  const onnx::ModelProto &model() const { return *model_; }
  llvm::StringRef path() const { return path_; }

private:
  std::unique_ptr<onnx::ModelProto> model_;
  std::string path_;
  std::string realDir_; // symlink-free folder of the model
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> mappedFiles_;
};

} // namespace strata::import

#endif // STRATA_COMPILER_IMPORT_MODELLOADER_H_
