//===- Passes.h - Strata passes ---------------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Pass declarations and registration generated from Passes.td, plus the
// pattern-population entry points other passes and pipelines reuse.

#ifndef STRATA_PASSES_PASSES_H_
#define STRATA_PASSES_PASSES_H_

#include "dialects/strata/IR/StrataDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"

namespace strata {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Adds the matmul/softmax/matmul fusion pattern of strata-fuse-attention to
/// |patterns|.
void populateFuseAttentionPatterns(mlir::RewritePatternSet &patterns);

/// Adds the GELU fusion patterns of strata-fuse-gelu (chains recognized by
/// their values) to |patterns|.
void populateFuseGeluPatterns(mlir::RewritePatternSet &patterns);

/// Adds the decomposed layer-norm fusion patterns of strata-fuse-layer-norm
/// to |patterns|.
void populateFuseLayerNormPatterns(mlir::RewritePatternSet &patterns);

/// Adds the decomposed RMS-norm fusion patterns of strata-fuse-rms-norm to
/// |patterns|.
void populateFuseRmsNormPatterns(mlir::RewritePatternSet &patterns);

/// Adds the SiLU fusion patterns of strata-fuse-silu (chains recognized by
/// their values) to |patterns|.
void populateFuseSiluPatterns(mlir::RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace strata

#endif // STRATA_PASSES_PASSES_H_
