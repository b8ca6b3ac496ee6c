//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Declarations generated from Passes.td, the attributes by which the passes
// find the functions they made, and what code generation counts for
// `strata-compile --report`.

#ifndef STRATA_CODEGEN_CPU_PASSES_H_
#define STRATA_CODEGEN_CPU_PASSES_H_

#include "compiler/dispatch/DispatchRegions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace strata::codegen::cpu {

/// Function attributes set and read by the passes.
/// A private function holding one outlined loop nest.
inline constexpr llvm::StringLiteral kKernelAttr = "strata.kernel";
/// A kernel that takes (begin, end, work) first and runs a slice of its
/// first loop.
inline constexpr llvm::StringLiteral kParallelKernelAttr =
    "strata.parallel_kernel";
/// On a parallel kernel: it takes (begin0, end0, begin1, end1, work) first
/// and runs a slice of each of its first two loops.
inline constexpr llvm::StringLiteral kParallelKernel2DAttr =
    "strata.parallel_kernel_2d";
/// An entry argument holding a state tensor the session owns (its value is
/// the name), and the entry result carrying its updated value; both after
/// the entry's inputs and outputs (kernel ABI: states follow the inputs).
inline constexpr llvm::StringLiteral kStateAttr = "strata.state";
/// On an entry from strata-cpu-entry-abi on: how many of its results (the
/// last ones) are states' updated values.
inline constexpr llvm::StringLiteral kStateResultsAttr = "strata.state_results";
/// On a state argument: "per_sequence" (the default: dim 0 counts sequence
/// slots) or "shared".
inline constexpr llvm::StringLiteral kStateScopeAttr = "strata.state_scope";
/// A public function the runtime calls: an entry point (kernel ABI).
inline constexpr llvm::StringLiteral kEntryAttr = "strata.entry";
/// A function the runtime calls for a slice of a parallel loop, with the
/// run context first (strata-cpu-dispatch-parallel-kernels).
inline constexpr llvm::StringLiteral kParallelTaskAttr = "strata.parallel_task";
/// A declaration of a function the runtime provides (kernel ABI imports).
inline constexpr llvm::StringLiteral kRuntimeImportAttr =
    "strata.runtime_import";
/// Per argument of an entry, the maximum of each dim (an array of
/// DenseI64ArrayAttr; -1 where the dim is static or has no maximum). Set
/// from the manifest's symbolic dims before code generation.
inline constexpr llvm::StringLiteral kInputMaximaAttr = "strata.input_maxima";
/// Module attribute: the weights image's layout, an array of
/// `{offset, data}` dictionaries (strata-cpu-externalize-weights).
inline constexpr llvm::StringLiteral kWeightsAttr = "strata.weights";

/// What code generation made, for `strata-compile --report`.
struct CpuCodegenStats {
  unsigned attentionCalls = 0;   // attention ops calling the runtime kernel
  unsigned convCalls = 0;        // convolutions calling the runtime kernel
  unsigned convReluCalls = 0;    // of which absorb a ReLU
  unsigned convResidualCalls = 0;  // of which absorb a residual add
  unsigned convInPlaceCalls = 0;   // of those, write over the residual
  unsigned convWinogradCalls = 0;  // of the calls, Winograd's F(2x2, 3x3)
  unsigned kernels = 0;          // generated loop-nest functions
  unsigned checks = 0;           // run-time checks on input values
  unsigned matmulCalls = 0;      // contractions calling the runtime matmul
  unsigned packedMatmulCalls = 0;
  unsigned packedWeights = 0;
  unsigned int8MatmulCalls = 0;  // of which weight-only int8
  unsigned int4MatmulCalls = 0;  // of which int4
  unsigned w8a8MatmulCalls = 0;  // of which int8 weights and activations
  unsigned bf16MatmulCalls = 0;  // of which bf16
  unsigned earlyFrees = 0;       // buffers freed right after their last use
  unsigned plannedBuffers = 0;   // intermediates at fixed arena offsets
  unsigned unplannedBuffers = 0; // data-dependent sizes: run-time allocations
  uint64_t arenaBytes = 0;       // the arena at the compile-time maxima
  uint64_t plannedBytes = 0;     // the planned buffers' sizes, summed
  /// Dispatch regions per entry, as the CPU launches them (kernels and
  /// runtime calls), counted before outlining.
  std::vector<dispatch::EntryDispatches> dispatches;
};

#define GEN_PASS_DECL
#include "codegen/cpu/Passes.h.inc"

/// The passes that count something for the report, adding into |stats|
/// (which must outlive the pass manager). The registered forms (no
/// argument) count only into the passes' statistics.
std::unique_ptr<mlir::Pass> createAttentionToRuntimePass(CpuCodegenStats *stats);
std::unique_ptr<mlir::Pass> createConvToRuntimePass(CpuCodegenStats *stats,
                                                    bool winograd = true);
std::unique_ptr<mlir::Pass> createEarlyDeallocPass(CpuCodegenStats *stats);
std::unique_ptr<mlir::Pass> createMemoryPlanPass(CpuCodegenStats *stats);
std::unique_ptr<mlir::Pass> createMatmulToRuntimePass(CpuCodegenStats *stats);
std::unique_ptr<mlir::Pass> createOutlineKernelsPass(CpuCodegenStats *stats);
std::unique_ptr<mlir::Pass> createChecksToRuntimePass(CpuCodegenStats *stats);

/// The weights image strata-cpu-externalize-weights laid out in |module|
/// (empty if none), assembled from the blobs; removes the layout attribute.
mlir::FailureOr<std::vector<char>> takeWeightsImage(mlir::ModuleOp module);

#define GEN_PASS_REGISTRATION
#include "codegen/cpu/Passes.h.inc"

} // namespace strata::codegen::cpu

#endif // STRATA_CODEGEN_CPU_PASSES_H_
