//===- tensors.h - numpy arrays <-> strata tensors without copies ---------===//
// SPDX-License-Identifier: Apache-2.0
// A run's inputs are numpy arrays the runtime reads in place
// (strata_tensor_wrap); its outputs become numpy arrays over the runtime's
// own memory, released with the last array that views it. Types numpy
// lacks travel as raw bits: bf16 as uint16, fp8 and 4-bit types as uint8.

#ifndef STRATA_PYTHON_SRC_TENSORS_H_
#define STRATA_PYTHON_SRC_TENSORS_H_

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>

#include "strata/runtime/tensor.h"

namespace strata::python {

// Read-only is enough: inputs are only read (and numpy marks some arrays,
// such as np.from_dlpack's, read-only).
using HostArray = nanobind::ndarray<nanobind::ro, nanobind::numpy,
                                    nanobind::c_contig, nanobind::device::cpu>;

/// A tensor of |dtype| over |array|'s memory (borrowed: the array must
/// outlive it). Raises TypeError naming |name| when the element size of
/// |array| is not that of |dtype|.
strata_tensor_t* wrapArray(const HostArray& array, strata_dtype_t dtype,
                           const std::string& name);

/// A numpy array viewing |tensor|'s data; takes ownership of |tensor|.
nanobind::object toNumpy(strata_tensor_t* tensor);

}  // namespace strata::python

#endif  // STRATA_PYTHON_SRC_TENSORS_H_
