//===- CompileReport.h - What a compile did, for --report ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The data behind `strata-compile --report` (fusion statistics, every
// candidate that did not fuse, codegen counts, output maxima) and its
// printing, so that every front end prints the same text.

#ifndef STRATA_COMPILER_PIPELINE_COMPILEREPORT_H_
#define STRATA_COMPILER_PIPELINE_COMPILEREPORT_H_

#include "codegen/cpu/CpuCodegen.h"
#include "compiler/pipeline/EntrySignature.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace strata {

/// One remark of a fusion pass: a candidate that did not fuse.
struct MissedFusion {
  std::string location, message;
};

/// What a compile did, filled as far as it got.
struct CompileReport {
  /// Op name -> count, after import and after fusion.
  std::map<std::string, int> importedOps, fusedOps;
  std::vector<MissedFusion> missedFusions;
  bool fusionDone = false;
  /// --calibration-data: the tokens measured, the contractions whose
  /// weights were scaled, the inputs whose 1/s went into a norm and the
  /// explicit multiplies inserted instead.
  int64_t calibrationTokens = 0, scaledContractions = 0, scaleFolds = 0,
          scaleMultiplies = 0;
  /// --attention-window: the attention ops of the entry points that have a
  /// window (the model's own included), of all of them.
  int64_t windowedAttention = 0, attentionOps = 0;
  /// Tensor parallelism: contractions split by columns and by rows, and
  /// the collectives every entry calls (all of them, over all entries).
  int64_t columnParallel = 0, rowParallel = 0, allReduces = 0, allGathers = 0;
  /// Pipeline parallelism: the stage's strata.send and strata.recv ops.
  int64_t stageSends = 0, stageRecvs = 0;
  /// Per-channel scale/shift ops (inference BatchNormalizations) folded
  /// into convolution and linear weights, and the layers that took them;
  /// the convolutions, and those with a bias.
  int64_t foldedChannelOps = 0, foldedLayers = 0, convolutions = 0,
          convolutionsWithBias = 0;

  /// Set once code generation succeeded.
  bool codegenDone = false;
  codegen::cpu::CpuCodegenStats codegen;
  uint64_t weightsBytes = 0, codeBytes = 0;
  /// Every dynamic output dim and its derived maximum.
  std::vector<OutputDimInfo> outputDims;
};

/// Counts ops by name under |module| (not the module and functions).
std::map<std::string, int> countOps(mlir::ModuleOp module);

/// The ONNX node names of |loc| ("a, b" for a fused location), or its
/// printed form when it carries no name.
std::string locationText(mlir::Location loc);

/// The fusion statistics and the unfused candidates.
void printFusionReport(llvm::raw_ostream &os, const CompileReport &report);

/// Op counts before/after fusion, codegen counts, output maxima, sizes.
void printCodegenReport(llvm::raw_ostream &os, const CompileReport &report);

/// |report| as one JSON object (the compiler C API's report callback; the
/// fields are listed in docs/python.md#the-compile-report).
std::string compileReportJson(const CompileReport &report);

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_COMPILEREPORT_H_
