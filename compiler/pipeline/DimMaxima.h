//===- DimMaxima.h - The compiled maximum of a symbolic dim ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The one rule (docs/shapes.md) that gives each symbolic ONNX input dim the
// maximum the memory plan sizes buffers for and the runtime checks inputs
// against: an explicit --dim, else an exporter's batch or sequence name.

#ifndef STRATA_COMPILER_PIPELINE_DIMMAXIMA_H_
#define STRATA_COMPILER_PIPELINE_DIMMAXIMA_H_

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace strata {

/// What binds symbolic dims to maxima.
struct DimMaximaOptions {
  /// `--dim NAME=MAX`: exact (case-sensitive) dim names.
  std::map<std::string, int64_t> explicitMaxima;
  /// `--max-batch`: the dims named as in batchDimNames().
  int64_t maxBatch = 8;
  /// `--max-seq`: the dims named as in sequenceDimNames(), and sums of them.
  int64_t maxSeq = 1024;
};

/// Which part of the rule bound a dim.
enum class DimBindingSource { Explicit, Batch, Sequence };

struct DimBinding {
  int64_t max;
  DimBindingSource source;
};

/// The maximum of the dim named |name| (never empty), or nullopt when no
/// part of the rule binds it. In order: an exact `--dim` entry; a batch
/// name (case-insensitive) gets maxBatch; a sequence name, or a sum of
/// sequence names and integers such as "past_sequence_length + 1" (an
/// exporter's name for a total length), gets maxSeq.
std::optional<DimBinding> bindDim(llvm::StringRef name,
                                  const DimMaximaOptions &options);

/// The batch dim names exporters write (lowercase).
llvm::ArrayRef<llvm::StringLiteral> batchDimNames();

/// The sequence-length dim names exporters write (lowercase): new, past and
/// total token counts.
llvm::ArrayRef<llvm::StringLiteral> sequenceDimNames();

/// "NAME=MAX" with MAX >= 1 into |*name| and |*max|; false if malformed.
bool parseDimSpec(llvm::StringRef spec, std::string *name, int64_t *max);

/// The rule in one paragraph wrapped at 79 columns, for --help.
std::string describeDimRule();

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_DIMMAXIMA_H_
