//===- strata-opt.cpp - Strata's mlir-opt -----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// MlirOptMain with the strata dialect, the upstream dialects the pipeline
// lowers through, and every strata pass and pipeline (codegen included).

#include "codegen/cpu/CpuPipeline.h"
#include "compiler/pipeline/Pipelines.h"
#include "dialects/strata/IR/StrataDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses(); // canonicalize, cse, ...
  strata::registerStrataPasses();
  strata::registerPipelines();
  strata::codegen::cpu::registerCpuCodegenPasses();

  mlir::DialectRegistry registry;
  registry.insert<strata::ir::StrataDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::linalg::LinalgDialect, mlir::scf::SCFDialect,
                  mlir::memref::MemRefDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::vector::VectorDialect, mlir::math::MathDialect,
                  mlir::cf::ControlFlowDialect, mlir::LLVM::LLVMDialect>();
  // Bufferization and LLVM-conversion interfaces of the upstream dialects,
  // for the codegen passes.
  mlir::registerAllExtensions(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Strata optimizer driver\n", registry));
}
