//===- ModelLoader.cpp - Read ONNX models and their external data ---------===//
// SPDX-License-Identifier: Apache-2.0
// A hostile model must never make the importer read another file: external
// locations are checked lexically (relative, no "..") and again after
// resolving symlinks.

#include "compiler/import/ModelLoader.h"

#include "compiler/import/OnnxTextParser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <onnx/onnx_pb.h>

using llvm::Error;
using llvm::StringRef;

namespace strata::import {

static Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

ModelStorage::ModelStorage() : model_(std::make_unique<onnx::ModelProto>()) {}
ModelStorage::~ModelStorage() = default;

Error ModelStorage::load(StringRef path) {
  path_ = path.str();
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read '" + path + "': " +
                     buffer.getError().message());
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  llvm::SmallString<256> realDir;
  if (std::error_code ec = llvm::sys::fs::real_path(dir, realDir))
    return makeError("cannot resolve the folder of '" + path +
                     "': " + ec.message());
  realDir_ = realDir.str().str();

  StringRef bytes = (*buffer)->getBuffer();
  if (path.ends_with(".onnxtext")) {
    std::string error;
    if (!parseOnnxText(bytes, *model_, error))
      return makeError("'" + path + "' is not valid ONNX text: " + error);
    return Error::success();
  }
  if (bytes.empty())
    return makeError("'" + path + "' is empty, not an ONNX model");
  if (bytes.size() > static_cast<size_t>(INT32_MAX))
    return makeError("'" + path +
                     "' is over 2 GB: store weights as external data");
  if (!model_->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return makeError("'" + path +
                     "' is not a valid ONNX protobuf (truncated or corrupt)");
  return Error::success();
}

// Returns true if |location| is a plain relative path with no "..", "." or
// empty component that could walk out of the model folder.
static bool isSafeRelativeLocation(StringRef location) {
  if (location.empty() || llvm::sys::path::is_absolute(location) ||
      location.starts_with("/") || location.starts_with("\\") ||
      location.contains('\0') || location.contains(':'))
    return false;
  for (StringRef component : llvm::make_range(
           llvm::sys::path::begin(location), llvm::sys::path::end(location))) {
    if (component == ".." || component == ".")
      return false;
  }
  return true;
}

llvm::Expected<llvm::ArrayRef<char>>
ModelStorage::externalData(const onnx::TensorProto &tensor) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    auto parseInt = [&](int64_t &out) -> bool {
      return !StringRef(entry.value()).getAsInteger(10, out) && out >= 0;
    };
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      if (!parseInt(offset))
        return makeError("external data of '" + tensor.name() +
                         "' has an invalid offset '" + entry.value() + "'");
    } else if (entry.key() == "length") {
      if (!parseInt(length))
        return makeError("external data of '" + tensor.name() +
                         "' has an invalid length '" + entry.value() + "'");
    }
  }
  if (!isSafeRelativeLocation(location))
    return makeError("external data location '" + location + "' of '" +
                     tensor.name() +
                     "' must be a relative path inside the model's folder");

  auto it = mappedFiles_.find(location);
  if (it == mappedFiles_.end()) {
    llvm::SmallString<256> full(realDir_);
    llvm::sys::path::append(full, location);
    llvm::SmallString<256> real;
    if (std::error_code ec = llvm::sys::fs::real_path(full, real))
      return makeError("cannot open external data '" + location + "' of '" +
                       tensor.name() + "': " + ec.message());
    // Symlinks may point anywhere: the resolved path must stay inside.
    StringRef realRef = real.str();
    if (!realRef.starts_with(realDir_ + "/"))
      return makeError("external data location '" + location + "' of '" +
                       tensor.name() + "' resolves outside the model's folder");
    if (!llvm::sys::fs::is_regular_file(real))
      return makeError("external data '" + location + "' of '" +
                       tensor.name() + "' is not a regular file");
    auto buffer = llvm::MemoryBuffer::getFile(real, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      return makeError("cannot read external data '" + location + "': " +
                       buffer.getError().message());
    it = mappedFiles_.try_emplace(location, std::move(*buffer)).first;
  }
  StringRef file = it->second->getBuffer();
  uint64_t size = file.size();
  if (static_cast<uint64_t>(offset) > size)
    return makeError("external data of '" + tensor.name() + "' starts at " +
                     llvm::Twine(offset) + ", past the end of '" + location +
                     "' (" + llvm::Twine(size) + " bytes)");
  if (length < 0)
    length = static_cast<int64_t>(size - offset);
  if (static_cast<uint64_t>(length) > size - offset)
    return makeError("external data of '" + tensor.name() + "' (offset " +
                     llvm::Twine(offset) + ", length " + llvm::Twine(length) +
                     ") runs past the end of '" + location + "' (" +
                     llvm::Twine(size) + " bytes)");
  return llvm::ArrayRef<char>(file.data() + offset, length);
}

Error ModelStorage::bindInput(StringRef name, StringRef tensorFile) {
  onnx::GraphProto *graph = model_->mutable_graph();
  int index = -1;
  for (int i = 0; i < graph->input_size(); ++i)
    if (graph->input(i).name() == name)
      index = i;
  if (index < 0)
    return makeError("cannot bind '" + name + "': not a graph input");
  auto buffer = llvm::MemoryBuffer::getFile(tensorFile, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read '" + tensorFile +
                     "': " + buffer.getError().message());
  StringRef bytes = (*buffer)->getBuffer();
  onnx::TensorProto tensor;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return makeError("'" + tensorFile + "' is not a serialized ONNX tensor");
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return makeError("'" + tensorFile + "' must hold its data inline");
  const onnx::TypeProto::Tensor &declared = graph->input(index).type().tensor_type();
  if (declared.elem_type() != tensor.data_type())
    return makeError("cannot bind '" + name + "': the tensor in '" +
                     tensorFile + "' has another element type");
  if (declared.has_shape()) {
    bool rankOk = declared.shape().dim_size() == tensor.dims_size();
    for (int d = 0; rankOk && d < tensor.dims_size(); ++d) {
      const auto &dim = declared.shape().dim(d);
      rankOk = !dim.has_dim_value() || dim.dim_value() == tensor.dims(d);
    }
    if (!rankOk)
      return makeError("cannot bind '" + name + "': the tensor in '" +
                       tensorFile + "' does not have the input's shape");
  }
  tensor.set_name(name.str());
  *graph->add_initializer() = std::move(tensor);
  graph->mutable_input()->DeleteSubrange(index, 1);
  return Error::success();
}

} // namespace strata::import
