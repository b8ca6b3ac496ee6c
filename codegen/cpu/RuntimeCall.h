//===- RuntimeCall.h - Calls to a runtime import with a params block -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_CODEGEN_CPU_RUNTIMECALL_H_
#define STRATA_CODEGEN_CPU_RUNTIMECALL_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"

#include <utility>

namespace strata::codegen::cpu {

/// The op of |block| that contains |op| (itself or an ancestor), or null.
mlir::Operation *ancestorIn(mlir::Block *block, mlir::Operation *op);
/// The first func.call at or after |op| in its block, or null: where a
/// value stored into a runtime call's params block is last read.
mlir::Operation *nextCall(mlir::Operation *op);

/// The byte address of element 0 of an fp32 |memref| whose strided
/// metadata is |meta|: the aligned pointer plus the element offset, as the
/// runtime imports' parameter blocks take operand addresses.
mlir::Value f32ElementAddress(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value memref,
                              mlir::memref::ExtractStridedMetadataOp meta);
/// The same for an int64 |memref|.
mlir::Value i64ElementAddress(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value memref,
                              mlir::memref::ExtractStridedMetadataOp meta);
/// The same for elements of |bytesPerElement| bytes.
mlir::Value elementAddress(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value memref,
                           mlir::memref::ExtractStridedMetadataOp meta,
                           int64_t bytesPerElement);

/// The byte address of element 0 of |tensor| read through a read-only
/// contiguous (identity layout) buffer, right before runtime call number
/// |call|: the view is tagged with it (`strata.runtime_call`), so that CSE
/// cannot merge it with another call's identical view of the same tensor
/// (an op between the two calls could overwrite the tensor's buffer in
/// place before the second).
mlir::Value readOnlyContiguousAddress(mlir::OpBuilder &b, mlir::Location loc,
                                      mlir::Value tensor, int64_t call);

/// The private declaration of runtime import |name| (marked
/// kRuntimeImportAttr, which strata-cpu-bind-runtime-imports binds), created
/// at the top of |module| if absent.
mlir::func::FuncOp declareRuntimeImport(mlir::ModuleOp module,
                                        mlir::SymbolTable &symbols,
                                        llvm::StringRef name,
                                        mlir::FunctionType type);

/// Emits calls to one runtime import of kernel ABI v2 that takes a block of
/// int64 parameters (`strata_rt_matmul_f32`, `strata_rt_attention_f32`):
/// one private declaration `(index) -> ()` in the module, one stack buffer
/// of |paramCount| int64s per function (at the top of its entry block,
/// zeroed there, reused by every call there: a field no call stores reads
/// 0).
class RuntimeCall {
public:
  RuntimeCall(mlir::ModuleOp module, mlir::SymbolTable &symbols,
              llvm::StringRef import, int64_t paramCount)
      : module_(module), symbols_(symbols), import_(import),
        paramCount_(paramCount) {}

  /// Stores each (slot, index value) of |fields| as int64 into |func|'s
  /// params buffer, then calls the import with the buffer's address.
  mlir::func::CallOp emit(mlir::OpBuilder &b, mlir::Location loc, mlir::func::FuncOp func,
            llvm::ArrayRef<std::pair<int64_t, mlir::Value>> fields);

private:
  mlir::func::FuncOp declaration();
  mlir::Value paramsBuffer(mlir::func::FuncOp func);

  mlir::ModuleOp module_;
  mlir::SymbolTable &symbols_;
  std::string import_;
  int64_t paramCount_;
  llvm::DenseMap<mlir::Operation *, mlir::Value> params_;
};

} // namespace strata::codegen::cpu

#endif // STRATA_CODEGEN_CPU_RUNTIMECALL_H_
