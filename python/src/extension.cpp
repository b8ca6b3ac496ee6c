//===- extension.cpp - The strata._strata extension module ----------------===//
// SPDX-License-Identifier: Apache-2.0
// The runtime, its generator and the tokenizers; the compiler is
// strata._strata_compiler (compiler_extension.cpp), absent from a
// runtime-only build.

#include "runtime_bindings.h"
#include "tensors.h"

NB_MODULE(_strata, m) {
  m.doc() = "Bindings of Strata's C APIs; use the strata package instead.";
  if (!strata::python::importNumpy()) throw nanobind::python_error();
  strata::python::bindRuntime(m);
  strata::python::bindGenerator(m);
  strata::python::bindTokenizer(m);
}
