//===- status.cpp - Runtime statuses raised as Python exceptions ----------===//
// SPDX-License-Identifier: Apache-2.0

#include "status.h"

#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace strata::python {

[[noreturn]] void throwStatus(int code, const std::string& message) {
  // strata.errors maps every code to its class (StrataError for one it does
  // not know); imported on first use, after the package itself.
  nb::object errors = nb::module_::import_("strata.errors");
  nb::object cls = errors.attr("error_class")(code);
  PyErr_SetObject(cls.ptr(),
                  cls(nb::str(message.c_str(), message.size()), code).ptr());
  throw nb::python_error();
}

void throwIfFailed(strata_status_t status, const std::string& context) {
  if (status == nullptr) return;
  const int code = strata_status_code(status);
  std::string message = strata_status_message(status);
  strata_status_free(status);
  if (!context.empty()) message = context + ": " + message;
  throwStatus(code, message);
}

}  // namespace strata::python
