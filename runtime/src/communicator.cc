//===- communicator.cc - The communicator struct's initializer ------------===//
// SPDX-License-Identifier: Apache-2.0
// Beside the collectives in the kernels' library, so that their tests
// build communicators without the whole runtime.

#include "strata/runtime/communicator.h"

#include <cstring>

extern "C" void strata_communicator_init(strata_communicator_t* communicator) {
  if (!communicator) return;
  std::memset(communicator, 0, sizeof(*communicator));
  communicator->struct_size = sizeof(*communicator);
  communicator->size = 1;
}
