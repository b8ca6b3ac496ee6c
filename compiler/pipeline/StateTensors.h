//===- StateTensors.h - State tensors an entry declares ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// An entry argument marked strata.state = NAME is memory the session owns
// across calls (the KV cache): the runtime passes every state the module
// declares to every entry, after the inputs, at its full extent (kernel ABI
// v3). A result marked with the same name is the state's updated value,
// written back in place.

#ifndef STRATA_COMPILER_PIPELINE_STATETENSORS_H_
#define STRATA_COMPILER_PIPELINE_STATETENSORS_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace strata {

/// One state tensor of the module.
struct StateTensor {
  std::string name;
  /// Static: the runtime passes the state at its full extent.
  mlir::RankedTensorType type;
  /// Per dim, the symbolic dim it is the maximum of ("" for a plain
  /// extent), from the argument's strata.dims.
  std::vector<std::string> dimNames;
  /// A strata_state_scope_t value.
  uint32_t scope;
};

/// Collects the states the entries of |module| declare, in the order they
/// first appear, and gives every entry an argument for each, in that
/// order, after its inputs (an entry that does not use a state gets an
/// unused argument: the ABI passes them all). Errors name the entry and
/// the state: a state argument before an input, a state result before an
/// output, a state result without its argument, a type that is not a
/// static tensor of a supported element type, one name with two types or
/// scopes, or the states of an entry in another order than the module's.
mlir::FailureOr<std::vector<StateTensor>>
prepareStateTensors(mlir::ModuleOp module);

/// Whether argument |index| of |func| is a state.
bool isStateArgument(mlir::func::FuncOp func, unsigned index);
/// Whether result |index| of |func| is a state's updated value.
bool isStateResult(mlir::func::FuncOp func, unsigned index);

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_STATETENSORS_H_
