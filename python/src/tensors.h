//===- tensors.h - numpy arrays <-> strata tensors without copies ---------===//
// SPDX-License-Identifier: Apache-2.0
// A run's inputs are numpy arrays the runtime reads in place
// (strata_tensor_wrap); its outputs become numpy arrays over the runtime's
// own memory, released with the last array that views it. Types numpy
// lacks travel as raw bits: bf16 as uint16, fp8 and 4-bit types as uint8.
// numpy's C API does both ends: a decode step's few small tensors cost
// well under a microsecond each (docs/python.md, design notes).

#ifndef STRATA_PYTHON_SRC_TENSORS_H_
#define STRATA_PYTHON_SRC_TENSORS_H_

#include <nanobind/nanobind.h>

#include <string>

#include "strata/runtime/tensor.h"

namespace strata::python {

/// Loads numpy's C API; false (with a Python error set) if it fails. The
/// extension's init calls it before anything below.
bool importNumpy();

/// A tensor of |dtype| over the memory of |array|, which must be a
/// C-contiguous, aligned numpy array of |dtype|'s element size (else
/// TypeError naming |name|); borrowed: the array must outlive the tensor.
strata_tensor_t* wrapArray(nanobind::handle array, strata_dtype_t dtype,
                           const std::string& name);

/// A numpy array viewing |tensor|'s data; takes ownership of |tensor|.
nanobind::object toNumpy(strata_tensor_t* tensor);

}  // namespace strata::python

#endif  // STRATA_PYTHON_SRC_TENSORS_H_
