//===- tensors.cpp - numpy arrays <-> strata tensors without copies -------===//
// SPDX-License-Identifier: Apache-2.0

#include "tensors.h"

#include <vector>

#include "status.h"

namespace nb = nanobind;

namespace strata::python {
namespace {

// The numpy element type an output of |dtype| is returned as.
nb::dlpack::dtype numpyType(strata_dtype_t dtype) {
  using Code = nb::dlpack::dtype_code;
  const auto make = [](Code code, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(code),
                             static_cast<uint8_t>(bits), 1};
  };
  switch (dtype) {
    case STRATA_DTYPE_F32: return make(Code::Float, 32);
    case STRATA_DTYPE_F16: return make(Code::Float, 16);
    case STRATA_DTYPE_F64: return make(Code::Float, 64);
    case STRATA_DTYPE_I8: return make(Code::Int, 8);
    case STRATA_DTYPE_I16: return make(Code::Int, 16);
    case STRATA_DTYPE_I32: return make(Code::Int, 32);
    case STRATA_DTYPE_I64: return make(Code::Int, 64);
    case STRATA_DTYPE_U16:
    case STRATA_DTYPE_BF16: return make(Code::UInt, 16);
    case STRATA_DTYPE_U32: return make(Code::UInt, 32);
    case STRATA_DTYPE_U64: return make(Code::UInt, 64);
    case STRATA_DTYPE_BOOL: return make(Code::Bool, 8);
    default: return make(Code::UInt, 8);  // u8, fp8, 4-bit: one byte each
  }
}

}  // namespace

strata_tensor_t* wrapArray(const HostArray& array, strata_dtype_t dtype,
                           const std::string& name) {
  const size_t elementBytes = strata_dtype_size(dtype);
  if (elementBytes == 0 || array.itemsize() != elementBytes) {
    PyErr_Format(PyExc_TypeError,
                 "input '%s': a %s tensor cannot be read from an array of "
                 "%zu-byte elements",
                 name.c_str(), strata_dtype_name(dtype), array.itemsize());
    throw nb::python_error();
  }
  std::vector<int64_t> dims(array.ndim());
  for (size_t d = 0; d < array.ndim(); ++d) dims[d] = array.shape(d);
  strata_tensor_t* tensor = nullptr;
  throwIfFailed(
      strata_tensor_wrap(dtype, static_cast<uint32_t>(dims.size()),
                         dims.data(), const_cast<void*>(array.data()),
                         array.nbytes(), nullptr, nullptr,
                         strata_allocator_system(), &tensor),
      "input '" + name + "'");
  return tensor;
}

nb::object toNumpy(strata_tensor_t* tensor) {
  // The capsule owns the tensor from here on (and releases it if making the
  // capsule itself fails).
  nb::object owner;
  try {
    owner = nb::capsule(tensor, [](void* p) noexcept {
      strata_tensor_release(static_cast<strata_tensor_t*>(p));
    });
  } catch (...) {
    strata_tensor_release(tensor);
    throw;
  }
  const uint32_t rank = strata_tensor_rank(tensor);
  std::vector<size_t> shape(rank);
  const int64_t* dims = strata_tensor_dims(tensor);
  for (uint32_t d = 0; d < rank; ++d) shape[d] = static_cast<size_t>(dims[d]);
  return nb::cast(nb::ndarray<nb::numpy>(
      strata_tensor_data(tensor), rank, shape.data(), owner, nullptr,
      numpyType(strata_tensor_dtype(tensor))));
}

}  // namespace strata::python
