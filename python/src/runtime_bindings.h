//===- runtime_bindings.h - The parts of the extension module -------------===//
// SPDX-License-Identifier: Apache-2.0
// Each binds one C API to the `strata._strata` extension; the Python
// package (python/strata/) builds the public API on them.

#ifndef STRATA_PYTHON_SRC_RUNTIME_BINDINGS_H_
#define STRATA_PYTHON_SRC_RUNTIME_BINDINGS_H_

#include <nanobind/nanobind.h>

#include <mutex>

namespace strata::python {

/// |call|() without the GIL, holding |turn| (a session's lock: the runtime
/// runs one call of a session at a time); returns what it returns.
template <typename Call>
auto inTurn(std::mutex& turn, Call call) {
  nanobind::gil_scoped_release unlocked;
  std::lock_guard<std::mutex> held(turn);
  return call();
}

/// Module (a loaded artifact) and Session (runs of its entries).
void bindRuntime(nanobind::module_& m);
/// Generator (prefill/decode generation over a Session).
void bindGenerator(nanobind::module_& m);
/// Tokenizer (byte, GPT-2 BPE, SentencePiece).
void bindTokenizer(nanobind::module_& m);

}  // namespace strata::python

#endif  // STRATA_PYTHON_SRC_RUNTIME_BINDINGS_H_
