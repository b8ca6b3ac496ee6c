//===- TestPasses.h - Passes that expose analyses to lit -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Declarations and registration of the test passes (TestPasses.td), which
// strata-opt registers and no pipeline runs.

#ifndef STRATA_PASSES_TESTPASSES_H_
#define STRATA_PASSES_TESTPASSES_H_

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"

namespace strata {

#define GEN_PASS_DECL
#include "passes/TestPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/TestPasses.h.inc"

} // namespace strata

#endif // STRATA_PASSES_TESTPASSES_H_
