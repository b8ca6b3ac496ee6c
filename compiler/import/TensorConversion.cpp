//===- TensorConversion.cpp - ONNX tensors and types to MLIR --------------===//
// SPDX-License-Identifier: Apache-2.0
// Large weights are never copied: a dense resource blob references the
// mapped external file or the protobuf's raw_data when aligned.

#include "compiler/import/TensorConversion.h"

#include "compiler/import/ModelLoader.h"
#include "dialects/strata/IR/ShapeRules.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <onnx/onnx_pb.h>

#include <cstring>

using namespace mlir;

namespace strata::import {

// TensorProto.DataType values added after ONNX 1.12 (onnx.proto, IR 9-10).
enum : int32_t {
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
};

Type convertElementType(int32_t onnxType, MLIRContext *context) {
  Builder b(context);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT: return b.getF32Type();
  case onnx::TensorProto::DOUBLE: return b.getF64Type();
  case onnx::TensorProto::FLOAT16: return b.getF16Type();
  case onnx::TensorProto::BFLOAT16: return b.getBF16Type();
  case onnx::TensorProto::BOOL: return b.getI1Type();
  case onnx::TensorProto::INT8: return b.getIntegerType(8);
  case onnx::TensorProto::INT16: return b.getIntegerType(16);
  case onnx::TensorProto::INT32: return b.getIntegerType(32);
  case onnx::TensorProto::INT64: return b.getIntegerType(64);
  case onnx::TensorProto::UINT8: return b.getIntegerType(8, false);
  case onnx::TensorProto::UINT16: return b.getIntegerType(16, false);
  case onnx::TensorProto::UINT32: return b.getIntegerType(32, false);
  case onnx::TensorProto::UINT64: return b.getIntegerType(64, false);
  // Newer than the ONNX 1.12 protobuf classes, so by number (onnx.proto).
  case kFloat8E4M3FN: return b.getType<Float8E4M3FNType>();
  case kFloat8E4M3FNUZ: return b.getType<Float8E4M3FNUZType>();
  case kFloat8E5M2: return b.getType<Float8E5M2Type>();
  case kFloat8E5M2FNUZ: return b.getType<Float8E5M2FNUZType>();
  case kUint4: return b.getIntegerType(4, false);
  case kInt4: return b.getIntegerType(4);
  case kFloat4E2M1: return b.getType<Float4E2M1FNType>();
  default: return Type();
  }
}

llvm::StringRef onnxDataTypeName(int32_t onnxType) {
  switch (onnxType) {
  case kFloat8E4M3FN: return "FLOAT8E4M3FN";
  case kFloat8E4M3FNUZ: return "FLOAT8E4M3FNUZ";
  case kFloat8E5M2: return "FLOAT8E5M2";
  case kFloat8E5M2FNUZ: return "FLOAT8E5M2FNUZ";
  case kUint4: return "UINT4";
  case kInt4: return "INT4";
  case kFloat4E2M1: return "FLOAT4E2M1";
  default: break;
  }
  if (onnx::TensorProto_DataType_IsValid(onnxType))
    return onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(onnxType));
  return "INVALID";
}

static llvm::Error tensorError(llvm::StringRef name,
                               const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "tensor '" + name + "' " + message);
}

// Copies a repeated proto field into a little-endian buffer of |Dst|.
template <typename Dst, typename Field>
static std::vector<char> packField(const Field &field) {
  std::vector<char> bytes(field.size() * sizeof(Dst));
  for (int i = 0; i < field.size(); ++i) {
    Dst value = static_cast<Dst>(field.Get(i));
    std::memcpy(bytes.data() + i * sizeof(Dst), &value, sizeof(Dst));
  }
  return bytes;
}

// Packs the typed (non-raw) field that ONNX uses for |onnxType|.
static std::vector<char> packTypedData(const onnx::TensorProto &t,
                                       int32_t onnxType, int &fieldSize) {
  using TP = onnx::TensorProto;
  switch (onnxType) {
  case TP::FLOAT:
    fieldSize = t.float_data_size();
    return packField<float>(t.float_data());
  case TP::DOUBLE:
    fieldSize = t.double_data_size();
    return packField<double>(t.double_data());
  case TP::INT64:
    fieldSize = t.int64_data_size();
    return packField<int64_t>(t.int64_data());
  case TP::UINT32:
    fieldSize = t.uint64_data_size();
    return packField<uint32_t>(t.uint64_data());
  case TP::UINT64:
    fieldSize = t.uint64_data_size();
    return packField<uint64_t>(t.uint64_data());
  case TP::INT32:
    fieldSize = t.int32_data_size();
    return packField<int32_t>(t.int32_data());
  // Narrow types (and f16/bf16 bit patterns) are stored widened in int32_data.
  case TP::INT16:
  case TP::UINT16:
  case TP::FLOAT16:
  case TP::BFLOAT16:
    fieldSize = t.int32_data_size();
    return packField<uint16_t>(t.int32_data());
  case TP::INT8:
  case TP::UINT8:
  case TP::BOOL:
  case kFloat8E4M3FN:
  case kFloat8E4M3FNUZ:
  case kFloat8E5M2:
  case kFloat8E5M2FNUZ:
    fieldSize = t.int32_data_size();
    return packField<uint8_t>(t.int32_data());
  default:
    fieldSize = 0;
    return {};
  }
}

// Makes a resource-blob key from a tensor name: resource keys are printed
// bare, so keep to identifier characters.
static std::string blobKey(llvm::StringRef name) {
  std::string key = name.empty() ? std::string("tensor") : name.str();
  for (char &c : key)
    if (!llvm::isAlnum(c) && c != '_' && c != '.')
      c = '_';
  if (llvm::isDigit(key[0]))
    key.insert(0, "w");
  return key;
}

llvm::Expected<ElementsAttr> convertTensor(const onnx::TensorProto &tensor,
                                           ModelStorage &storage,
                                           MLIRContext *context,
                                           llvm::StringRef name) {
  if (name.empty())
    name = tensor.name();
  int32_t onnxType = tensor.data_type();
  Type elementType = convertElementType(onnxType, context);
  if (!elementType)
    return tensorError(name, "has unsupported data type " +
                                   onnxDataTypeName(onnxType));
  llvm::SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  std::optional<int64_t> count = ir::staticElementCount(dims);
  // Refuse absurd sizes before anything is allocated (1 TiB of elements).
  if (!count || *count > (int64_t{1} << 40))
    return tensorError(name, "has invalid dims [" + ir::formatShape(dims) +
                                   "] (dims must be non-negative with at "
                                   "most 2^40 elements in all)");
  if (!elementType.isInteger(1) && elementType.getIntOrFloatBitWidth() % 8)
    return tensorError(name, "has " + onnxDataTypeName(onnxType) +
                                   " data; constants of sub-byte types are "
                                   "not supported yet");
  auto type = RankedTensorType::get(dims, elementType);
  size_t elementBytes = elementType.isInteger(1)
                            ? 1
                            : elementType.getIntOrFloatBitWidth() / 8;
  size_t expectedBytes = static_cast<size_t>(*count) * elementBytes;

  // Locate the bytes: external file, raw_data, or a typed repeated field.
  llvm::ArrayRef<char> bytes;
  std::vector<char> packed;
  bool borrowed = true; // bytes point into memory that outlives the module
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    llvm::Expected<llvm::ArrayRef<char>> data = storage.externalData(tensor);
    if (!data)
      return data.takeError();
    bytes = *data;
  } else if (tensor.has_raw_data()) {
    bytes = llvm::ArrayRef<char>(tensor.raw_data().data(),
                                 tensor.raw_data().size());
  } else {
    int fieldSize = 0;
    packed = packTypedData(tensor, onnxType, fieldSize);
    if (fieldSize != *count)
      return tensorError(name, "has " + llvm::Twine(fieldSize) +
                                     " values, expected " +
                                     llvm::Twine(*count) + " for shape [" +
                                     ir::formatShape(dims) + "]");
    bytes = packed;
    borrowed = false;
  }
  if (bytes.size() != expectedBytes)
    return tensorError(name, "has " + llvm::Twine(bytes.size()) +
                                   " bytes of data, expected " +
                                   llvm::Twine(expectedBytes) + " for " +
                                   onnxDataTypeName(onnxType) + " [" +
                                   ir::formatShape(dims) + "]");

  if (elementType.isInteger(1)) {
    llvm::SmallVector<bool> values;
    values.reserve(bytes.size());
    for (char c : bytes)
      values.push_back(c != 0);
    return cast<ElementsAttr>(DenseElementsAttr::get(type, values));
  }
  bool inlineTensor = *count <= kInlineElementLimit ||
                      isa<IntegerType>(elementType);
  if (inlineTensor)
    return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(type, bytes));

  // A weight: reference the bytes in place when they are aligned for the
  // element type, otherwise make one aligned copy.
  size_t align = elementBytes;
  AsmResourceBlob blob =
      borrowed && reinterpret_cast<uintptr_t>(bytes.data()) % align == 0
          ? UnmanagedAsmResourceBlob::allocateWithAlign(bytes, align)
          : HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, align,
                                                          false);
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, blobKey(name),
                                     std::move(blob)));
}

} // namespace strata::import
