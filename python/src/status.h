//===- status.h - Runtime statuses raised as Python exceptions ------------===//
// SPDX-License-Identifier: Apache-2.0
// Every failing strata_status_t becomes the exception class of its code in
// strata.errors (InvalidArgumentError, NotFoundError, ...), with the
// runtime's message; the status is freed either way.

#ifndef STRATA_PYTHON_SRC_STATUS_H_
#define STRATA_PYTHON_SRC_STATUS_H_

#include <string>

#include "strata/runtime/status.h"

namespace strata::python {

/// Raises (as a C++ nanobind::python_error) the exception of a failed
/// |status|, prefixed with "|context|: " when |context| is not empty;
/// returns for OK.
void throwIfFailed(strata_status_t status, const std::string& context = "");

/// Raises the exception class of |code| with |message|.
[[noreturn]] void throwStatus(int code, const std::string& message);

}  // namespace strata::python

#endif  // STRATA_PYTHON_SRC_STATUS_H_
