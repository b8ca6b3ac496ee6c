//===- runtime_bindings.h - The parts of the extension module -------------===//
// SPDX-License-Identifier: Apache-2.0
// Each binds one C API to the `strata._strata` extension; the Python
// package (python/strata/) builds the public API on them.

#ifndef STRATA_PYTHON_SRC_RUNTIME_BINDINGS_H_
#define STRATA_PYTHON_SRC_RUNTIME_BINDINGS_H_

#include <nanobind/nanobind.h>

namespace strata::python {

/// Module (a loaded artifact) and Session (runs of its entries).
void bindRuntime(nanobind::module_& m);
/// Generator (prefill/decode generation over a Session).
void bindGenerator(nanobind::module_& m);
/// Tokenizer (byte, GPT-2 BPE, SentencePiece).
void bindTokenizer(nanobind::module_& m);

}  // namespace strata::python

#endif  // STRATA_PYTHON_SRC_RUNTIME_BINDINGS_H_
