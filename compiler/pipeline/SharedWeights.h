//===- SharedWeights.h - One copy of weights several graphs hold -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Two exports of one model (a decoder and its with-past twin) imported into
// one module carry the same weights under different resource names; the
// artifact should hold them once.

#ifndef STRATA_COMPILER_PIPELINE_SHAREDWEIGHTS_H_
#define STRATA_COMPILER_PIPELINE_SHAREDWEIGHTS_H_

#include "mlir/IR/BuiltinOps.h"

namespace strata {

/// Makes every strata.constant of a resource blob whose type and bytes
/// equal an earlier one's (module order) refer to that earlier blob, so
/// that the weights image holds the bytes once. Returns the bytes saved.
size_t shareIdenticalWeights(mlir::ModuleOp module);

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_SHAREDWEIGHTS_H_
