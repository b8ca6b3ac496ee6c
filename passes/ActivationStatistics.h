//===- ActivationStatistics.h - Per-channel input statistics ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// What calibration measures at the input of each weight contraction (the
// sum of x^2 and the largest |x| per input channel over the calibration
// tokens), how contractions are named so the statistics of one function
// find the same contraction in its clones, and the JSON form of both.

#ifndef STRATA_PASSES_ACTIVATIONSTATISTICS_H_
#define STRATA_PASSES_ACTIVATIONSTATISTICS_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata {

/// The statistics of one contraction's input over the calibration tokens.
struct ChannelStatistics {
  /// Rows (tokens) the sums are over.
  int64_t tokens = 0;
  /// Per input channel: the sum of x^2 and the largest |x|.
  std::vector<double> sumSq, maxAbs;
};

/// Contraction name -> its statistics.
using ActivationStatistics = std::map<std::string, ChannelStatistics>;

/// The contractions of |func| that calibration measures and scaling may
/// rewrite (weightContractions() with the LM head), in order.
llvm::SmallVector<mlir::Operation *>
calibratedContractions(mlir::func::FuncOp func);

/// A name for each of |ops| that a clone of their function gives its copies
/// too: the ONNX node names of the location ("a, b" for a fused one), with
/// "#2", "#3"... appended to a name taken by an earlier op of |ops|.
std::vector<std::string>
contractionNames(llvm::ArrayRef<mlir::Operation *> ops);

/// Parses statistics in their JSON form:
/// {"contractions": [{"name": N, "tokens": T, "sum_sq": [...],
/// "max_abs": [...]}]}. Errors are reported at |loc|.
mlir::FailureOr<ActivationStatistics>
parseActivationStatistics(llvm::StringRef json, mlir::Location loc);

/// The JSON form parseActivationStatistics reads.
std::string printActivationStatistics(const ActivationStatistics &stats);

/// How scales are chosen (docs/design/precision.md, "Calibration").
struct ActivationScaleOptions {
  /// The functions whose contractions are scaled.
  std::vector<std::string> functions;
  /// "awq": s = rms(x)^alpha, alpha searched per input for the smallest
  /// output-error proxy of the weights quantized with |bits|/|groupSize|;
  /// "smooth": s = max|x|^alpha / max|w|^(1 - alpha) (SmoothQuant).
  std::string method = "awq";
  int64_t bits = 4, groupSize = 32;
  /// SmoothQuant's migration strength.
  double smoothAlpha = 0.5;
  /// Leaves the LM head (a contraction whose result is returned) alone, as
  /// the quantization that follows does.
  bool keepFp32LmHead = false;
};

/// What applyActivationScales changed.
struct ActivationScaleCounts {
  /// Contractions whose weights were scaled; scaled inputs whose 1/s went
  /// into a norm's scale (and bias); explicit multiplies inserted.
  int64_t scaled = 0, folded = 0, multiplies = 0;
};

/// Scales the contractions of |options.functions| in |module| by |stats|:
/// weight rows times s, the input divided by s (folded into the producing
/// layer/RMS norm when it feeds only contractions sharing s, else an
/// explicit multiply). Statistics that name no contraction, or whose
/// channel count differs from it, are errors.
mlir::LogicalResult applyActivationScales(mlir::ModuleOp module,
                                          const ActivationStatistics &stats,
                                          const ActivationScaleOptions &options,
                                          ActivationScaleCounts *counts);

} // namespace strata

#endif // STRATA_PASSES_ACTIVATIONSTATISTICS_H_
