//===- Activations.h - Activations recognized by their values --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The activation functions strata has one fused op for, and the search that
// finds an elementwise chain computing one of them, whatever its spelling,
// by comparing the chain's values with each function's at sample points.

#ifndef STRATA_PASSES_ACTIVATIONS_H_
#define STRATA_PASSES_ACTIVATIONS_H_

#include "passes/ElementwiseChain.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace strata {

/// An activation with a fused strata op.
enum class Activation {
  /// 0.5 x (1 + erf(x / sqrt(2))): strata.gelu {approximate = "none"}.
  GeluErf,
  /// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): strata.gelu
  /// {approximate = "tanh"}.
  GeluTanh,
  /// x sigmoid(x): strata.silu.
  Silu,
};

/// The name of |kind| in remarks: "gelu", "gelu-tanh" or "silu".
llvm::StringRef activationName(Activation kind);

/// A chain and the activation it computes.
struct ActivationMatch : ElementwiseChain {
  Activation kind;
};

/// The largest single-input chain through |anchor| that computes a known
/// activation within the tolerance of its element type and can be replaced
/// by one op. std::nullopt with |reason| set otherwise: the nearest
/// activation and its error, or why a matching chain cannot be replaced.
std::optional<ActivationMatch> matchActivation(mlir::Operation *anchor,
                                               std::string &reason);

/// matchActivation for a pass that fuses the activations |isFused|
/// accepts: a chain computing another activation is no match and no
/// candidate (|candidate| false: that activation's pass reports it).
std::optional<ActivationMatch>
matchFusedActivation(mlir::Operation *anchor,
                     llvm::function_ref<bool(Activation)> isFused,
                     std::string &reason, bool &candidate);

} // namespace strata

#endif // STRATA_PASSES_ACTIVATIONS_H_
