//===- StateTensors.cpp - State tensors an entry declares -----------------===//
// SPDX-License-Identifier: Apache-2.0

#include "compiler/pipeline/StateTensors.h"

#include "codegen/abi/strata_artifact_format.h"
#include "codegen/cpu/Passes.h"
#include "compiler/pipeline/EntrySignature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using strata::codegen::cpu::kStateAttr;
using strata::codegen::cpu::kStateScopeAttr;

namespace strata {
namespace {

// The state's declaration as argument |index| of |func| declares it.
FailureOr<StateTensor> declaredState(func::FuncOp func, unsigned index) {
  StateTensor state;
  state.name = func.getArgAttrOfType<StringAttr>(index, kStateAttr).str();
  auto type = dyn_cast<RankedTensorType>(func.getArgument(index).getType());
  if (!type || !type.hasStaticShape())
    return func.emitError() << "state '" << state.name << "' of entry '"
                            << func.getSymName()
                            << "' must be a tensor of static shape (the "
                               "runtime allocates it at its full extent)";
  state.type = type;
  auto scope = func.getArgAttrOfType<StringAttr>(index, kStateScopeAttr);
  if (!scope || scope.getValue() == "per_sequence")
    state.scope = STRATA_STATE_SCOPE_PER_SEQUENCE;
  else if (scope.getValue() == "shared")
    state.scope = STRATA_STATE_SCOPE_SHARED;
  else
    return func.emitError() << "state '" << state.name << "' has scope '"
                            << scope.getValue()
                            << "'; expected per_sequence or shared";
  if (state.scope == STRATA_STATE_SCOPE_PER_SEQUENCE && type.getRank() == 0)
    return func.emitError() << "per-sequence state '" << state.name
                            << "' needs a dim 0 to count sequence slots";
  state.dimNames.assign(type.getRank(), "");
  if (auto names = func.getArgAttrOfType<ArrayAttr>(index, "strata.dims")) {
    if (int64_t(names.size()) != type.getRank())
      return func.emitError() << "state '" << state.name << "' names "
                              << names.size() << " dims but has rank "
                              << type.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (auto name = dyn_cast<StringAttr>(names[d]);
          name && name.getValue() != "?")
        state.dimNames[d] = name.str();
  }
  return state;
}

bool sameState(const StateTensor &a, const StateTensor &b) {
  return a.type == b.type && a.scope == b.scope && a.dimNames == b.dimNames;
}

// Checks that states follow the inputs and state results the outputs, and
// that each state result has its argument; returns the entry's states.
FailureOr<std::vector<StateTensor>> entryStates(func::FuncOp func) {
  std::vector<StateTensor> states;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (!isStateArgument(func, i)) {
      if (!states.empty())
        return func.emitError()
               << "input " << i << " of entry '" << func.getSymName()
               << "' follows state '" << states.back().name
               << "': states come after the inputs";
      continue;
    }
    FailureOr<StateTensor> state = declaredState(func, i);
    if (failed(state))
      return failure();
    for (const StateTensor &seen : states)
      if (seen.name == state->name)
        return func.emitError() << "entry '" << func.getSymName()
                                << "' takes state '" << seen.name << "' twice";
    states.push_back(std::move(*state));
  }
  bool inStates = false;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    if (!isStateResult(func, i)) {
      if (inStates)
        return func.emitError()
               << "output " << i << " of entry '" << func.getSymName()
               << "' follows a state result: states come after the outputs";
      continue;
    }
    inStates = true;
    auto name = func.getResultAttrOfType<StringAttr>(i, kStateAttr).str();
    auto it = llvm::find_if(states, [&](const StateTensor &s) {
      return s.name == name;
    });
    if (it == states.end())
      return func.emitError() << "entry '" << func.getSymName()
                              << "' returns state '" << name
                              << "' but takes no argument for it";
    if (func.getResultTypes()[i] != it->type)
      return func.emitError() << "state '" << name << "' of entry '"
                              << func.getSymName()
                              << "' is returned with another type";
  }
  return states;
}

} // namespace

bool isStateArgument(func::FuncOp func, unsigned index) {
  return func.getArgAttr(index, kStateAttr) != nullptr;
}

bool isStateResult(func::FuncOp func, unsigned index) {
  return func.getResultAttr(index, kStateAttr) != nullptr;
}

FailureOr<std::vector<StateTensor>> prepareStateTensors(ModuleOp module) {
  std::vector<StateTensor> all;
  SmallVector<std::pair<func::FuncOp, std::vector<StateTensor>>> entries;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!isEntryFunction(func))
      continue;
    FailureOr<std::vector<StateTensor>> states = entryStates(func);
    if (failed(states))
      return failure();
    // Each entry's states in the module's order (first appearance).
    size_t next = 0;
    for (const StateTensor &state : *states) {
      auto it = llvm::find_if(all, [&](const StateTensor &s) {
        return s.name == state.name;
      });
      if (it == all.end()) {
        all.push_back(state);
        next = all.size();
        continue;
      }
      if (!sameState(*it, state))
        return func.emitError() << "state '" << state.name
                                << "' has another type, scope or dim names "
                                   "than in an earlier entry";
      if (size_t(it - all.begin()) < next)
        return func.emitError()
               << "entry '" << func.getSymName() << "' takes state '"
               << state.name
               << "' out of the order earlier entries declare the states in";
      next = it - all.begin() + 1;
    }
    entries.push_back({func, std::move(*states)});
  }
  // Every entry takes every state: the runtime passes them all.
  MLIRContext *context = module.getContext();
  for (auto &[func, states] : entries) {
    unsigned inputs = func.getNumArguments() - states.size();
    for (size_t k = 0; k < all.size(); ++k) {
      unsigned index = inputs + k;
      if (index < func.getNumArguments() && isStateArgument(func, index) &&
          func.getArgAttrOfType<StringAttr>(index, kStateAttr).getValue() ==
              all[k].name)
        continue;
      SmallVector<NamedAttribute> attrs = {
          NamedAttribute(StringAttr::get(context, kStateAttr),
                         StringAttr::get(context, all[k].name)),
          NamedAttribute(
              StringAttr::get(context, kStateScopeAttr),
              StringAttr::get(context,
                              all[k].scope == STRATA_STATE_SCOPE_SHARED
                                  ? "shared"
                                  : "per_sequence"))};
      SmallVector<Attribute> names;
      for (const std::string &name : all[k].dimNames)
        names.push_back(StringAttr::get(context, name));
      attrs.push_back(NamedAttribute(StringAttr::get(context, "strata.dims"),
                                     ArrayAttr::get(context, names)));
      if (failed(func.insertArgument(index, all[k].type,
                                     DictionaryAttr::get(context, attrs),
                                     func.getLoc())))
        return failure();
    }
  }
  return all;
}

} // namespace strata
