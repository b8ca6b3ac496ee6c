//===- Calibration.h - Activation statistics from sample tokens -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// --calibration-data: the token sequences of a file, and the statistics a
// compiled calibration variant of the model (strata-add-activation-
// statistics on its prefill entry) measures on them with the runtime.

#ifndef STRATA_COMPILER_PIPELINE_CALIBRATION_H_
#define STRATA_COMPILER_PIPELINE_CALIBRATION_H_

#include "passes/ActivationStatistics.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

/// How a calibration file holds its tokens.
enum class CalibrationFormat {
  /// One sequence a line, token ids separated by whitespace.
  Ids,
  /// Raw text for a byte-level model: each byte is its token id, the file
  /// cut into sequences of |bytesPerSequence| (the last may be shorter).
  Bytes,
};

/// The sequences of |path|. Errors (an unreadable or empty file, a token
/// that is not an integer in [0, vocab), a sequence longer than |context|)
/// are reported at |loc| with the line and token.
mlir::FailureOr<std::vector<std::vector<int64_t>>>
readCalibrationSequences(const std::string &path, CalibrationFormat format,
                         int64_t vocab, int64_t context, mlir::Location loc);

/// Loads the artifact |bytes| with the runtime, prefills each of
/// |sequences| into slot 0 of a fresh cache and sums the outputs
/// calibration.<i>.sum_sq / max_abs over all of them; |names| names
/// contraction i. Runtime failures are reported at |loc|.
mlir::FailureOr<ActivationStatistics> measureActivations(
    const std::vector<uint8_t> &bytes, llvm::ArrayRef<std::string> names,
    const std::vector<std::vector<int64_t>> &sequences, mlir::Location loc);

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_CALIBRATION_H_
