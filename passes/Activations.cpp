//===- Activations.cpp - Activations recognized by their values -----------===//
// SPDX-License-Identifier: Apache-2.0
// See Activations.h. The method and its tolerances:
// docs/design/fusion-by-meaning.md.

#include "passes/Activations.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cmath>
#include <limits>

using namespace mlir;

namespace strata {

namespace {

constexpr std::array<Activation, 3> kActivations = {
    Activation::GeluErf, Activation::GeluTanh, Activation::Silu};

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// |kind| at |x|, in double precision.
double reference(Activation kind, double x) {
  switch (kind) {
  case Activation::GeluErf:
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  case Activation::GeluTanh:
    return 0.5 * x *
           (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  case Activation::Silu:
    return x * sigmoid(x);
  }
  return NAN;
}

/// Where the chains are compared: 24 points across [-5.7, 5.8], where the
/// activations bend (offset from the integers, where different functions
/// are likelier to agree by accident), and four in the tails, where GELU
/// and SiLU approach relu and a chain that only looks alike near 0 parts.
std::array<double, 28> samplePoints() {
  std::array<double, 28> points{};
  for (int i = 0; i < 24; ++i)
    points[i] = (i - 11.5) * 0.5 + 0.0731;
  points[24] = -30.0;
  points[25] = -10.0;
  points[26] = 10.0;
  points[27] = 30.0;
  return points;
}

/// The largest of |chain - reference| / max(1, |reference|) over the
/// sample points: absolute near 0, relative in the tails. Infinite when the
/// chain is not finite where the reference is.
double maxError(ArrayRef<double> values, ArrayRef<double> points,
                Activation kind) {
  double worst = 0.0;
  for (auto [x, y] : llvm::zip(points, values)) {
    double want = reference(kind, x);
    double err = std::fabs(y - want) / std::max(1.0, std::fabs(want));
    if (!std::isfinite(y) || std::isnan(err))
      return std::numeric_limits<double>::infinity();
    worst = std::max(worst, err);
  }
  return worst;
}

/// How far a chain of element type |type| may be from an activation and
/// still compute it. The erf and tanh GELUs differ by at most 4.7e-4 (at
/// x = -2.7), SiLU and the GELUs by 0.19 and quick-GELU (x sigmoid(1.702 x),
/// no fused op) by 2e-2 from both GELUs. Exporters write the constants
/// (1/sqrt(2), sqrt(2/pi), 0.044715) to 4-17 digits, and a relative change
/// d in one moves GELU by about 0.3 d: f32 chains land within 1e-5 of their
/// function (0.044715 written 0.0447 is 8.5e-6 away), 47x closer than to
/// the other GELU. f16 rounds constants to 11 bits, 3.1e-5 at most: 1e-4.
/// bf16 rounding moves tanh-GELU by 3.4e-4, nearly the distance between the
/// GELUs: 1e-3, and the margin rule in matchActivation decides.
std::optional<double> toleranceFor(Type elementType) {
  if (elementType.isF32() || elementType.isF64())
    return 1e-5;
  if (elementType.isF16())
    return 1e-4;
  if (elementType.isBF16())
    return 1e-3;
  return std::nullopt;
}

} // namespace

StringRef activationName(Activation kind) {
  switch (kind) {
  case Activation::GeluErf:
    return "gelu";
  case Activation::GeluTanh:
    return "gelu-tanh";
  case Activation::Silu:
    return "silu";
  }
  return "unknown";
}

std::optional<ActivationMatch> matchActivation(Operation *anchor,
                                               std::string &reason) {
  SmallVector<ElementwiseChain> chains = chainsThrough(anchor);
  if (chains.empty()) {
    reason = "it is in no chain of elementwise ops with one non-constant "
             "input";
    return std::nullopt;
  }
  std::array<double, 28> points = samplePoints();
  double nearestError = std::numeric_limits<double>::infinity();
  Activation nearest = Activation::GeluErf;
  std::string obstacle;
  for (const ElementwiseChain &chain : chains) {
    auto type = cast<RankedTensorType>(chain.root->getResult(0).getType());
    std::optional<double> tolerance = toleranceFor(type.getElementType());
    if (!tolerance)
      continue;
    SmallVector<double> values = evaluateChain(chain, points);
    // The best and second-best activations for this chain.
    double best = std::numeric_limits<double>::infinity();
    double second = best;
    Activation kind = Activation::GeluErf;
    for (Activation candidate : kActivations) {
      double err = maxError(values, points, candidate);
      if (err < best) {
        second = best;
        best = err;
        kind = candidate;
      } else if (err < second) {
        second = err;
      }
    }
    if (best < nearestError) {
      nearestError = best;
      nearest = kind;
    }
    // Within tolerance, and clearly nearer this activation than any other.
    if (best > *tolerance || !(2.0 * best < second))
      continue;
    if (std::optional<std::string> why = replacementObstacle(chain)) {
      if (obstacle.empty())
        obstacle = *why + " (it computes " + activationName(kind).str() + ")";
      continue;
    }
    return ActivationMatch{chain, kind};
  }
  if (!obstacle.empty()) {
    reason = obstacle;
    return std::nullopt;
  }
  llvm::raw_string_ostream os(reason);
  os << "no chain through it computes gelu, gelu-tanh or silu (nearest: "
     << activationName(nearest) << ", error "
     << llvm::format("%.1e", nearestError) << ")";
  return std::nullopt;
}

std::optional<ActivationMatch>
matchFusedActivation(Operation *anchor,
                     llvm::function_ref<bool(Activation)> isFused,
                     std::string &reason, bool &candidate) {
  std::optional<ActivationMatch> match = matchActivation(anchor, reason);
  candidate = !match || isFused(match->kind);
  if (match && !candidate) {
    reason = ("its chain computes " + activationName(match->kind)).str();
    return std::nullopt;
  }
  return match;
}

} // namespace strata
