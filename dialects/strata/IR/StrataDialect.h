//===- StrataDialect.h - The strata dialect ---------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Declares strata::ir::StrataDialect (generated from StrataBase.td).

#ifndef STRATA_DIALECTS_STRATA_IR_STRATADIALECT_H_
#define STRATA_DIALECTS_STRATA_IR_STRATADIALECT_H_

#include "mlir/IR/Dialect.h"

#include "dialects/strata/IR/StrataOpsDialect.h.inc"

#endif // STRATA_DIALECTS_STRATA_IR_STRATADIALECT_H_
