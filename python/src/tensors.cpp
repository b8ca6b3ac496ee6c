//===- tensors.cpp - numpy arrays <-> strata tensors without copies -------===//
// SPDX-License-Identifier: Apache-2.0

#include "tensors.h"

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include "status.h"

namespace nb = nanobind;

namespace strata::python {
namespace {

// The numpy type an output of |dtype| is returned as.
int numpyType(strata_dtype_t dtype) {
  switch (dtype) {
    case STRATA_DTYPE_F32: return NPY_FLOAT32;
    case STRATA_DTYPE_F16: return NPY_FLOAT16;
    case STRATA_DTYPE_F64: return NPY_FLOAT64;
    case STRATA_DTYPE_I8: return NPY_INT8;
    case STRATA_DTYPE_I16: return NPY_INT16;
    case STRATA_DTYPE_I32: return NPY_INT32;
    case STRATA_DTYPE_I64: return NPY_INT64;
    case STRATA_DTYPE_U16:
    case STRATA_DTYPE_BF16: return NPY_UINT16;
    case STRATA_DTYPE_U32: return NPY_UINT32;
    case STRATA_DTYPE_U64: return NPY_UINT64;
    case STRATA_DTYPE_BOOL: return NPY_BOOL;
    default: return NPY_UINT8;  // u8, fp8, 4-bit: one byte each
  }
}

[[noreturn]] void typeError(const std::string& message) {
  PyErr_SetString(PyExc_TypeError, message.c_str());
  throw nb::python_error();
}

}  // namespace

bool importNumpy() { return _import_array() >= 0; }

strata_tensor_t* wrapArray(nb::handle object, strata_dtype_t dtype,
                           const std::string& name) {
  if (!PyArray_Check(object.ptr()))
    typeError("input '" + name + "' is not a numpy array");
  auto* array = reinterpret_cast<PyArrayObject*>(object.ptr());
  const size_t elementBytes = strata_dtype_size(dtype);
  if (elementBytes == 0 ||
      static_cast<size_t>(PyArray_ITEMSIZE(array)) != elementBytes)
    typeError("input '" + name + "': a " + strata_dtype_name(dtype) +
              " tensor cannot be read from an array of " +
              std::to_string(PyArray_ITEMSIZE(array)) + "-byte elements");
  if (!PyArray_ISCARRAY_RO(array))
    typeError("input '" + name + "' is not C-contiguous and aligned");
  const int rank = PyArray_NDIM(array);
  int64_t dims[NPY_MAXDIMS];
  for (int d = 0; d < rank; ++d) dims[d] = PyArray_DIM(array, d);
  strata_tensor_t* tensor = nullptr;
  throwIfFailed(
      strata_tensor_wrap(dtype, static_cast<uint32_t>(rank), dims,
                         PyArray_DATA(array),
                         static_cast<size_t>(PyArray_NBYTES(array)), nullptr,
                         nullptr, strata_allocator_system(), &tensor),
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
  npy_intp shape[STRATA_MAX_RANK];
  const int64_t* dims = strata_tensor_dims(tensor);
  for (uint32_t d = 0; d < rank; ++d) shape[d] = static_cast<npy_intp>(dims[d]);
  PyObject* array = PyArray_SimpleNewFromData(
      static_cast<int>(rank), shape, numpyType(strata_tensor_dtype(tensor)),
      strata_tensor_data(tensor));
  if (!array) throw nb::python_error();
  // The array keeps the capsule (and so the tensor) alive; SetBaseObject
  // takes the reference.
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array),
                            owner.release().ptr()) < 0) {
    Py_DECREF(array);
    throw nb::python_error();
  }
  return nb::steal(array);
}

}  // namespace strata::python
