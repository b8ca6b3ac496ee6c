//===- EntrySignature.cpp - Signatures of a module's entries --------------===//
// SPDX-License-Identifier: Apache-2.0
// Names and dims come from the importer's argument and result attributes:
// strata.name (the ONNX graph name) and strata.dims (per dim, the ONNX
// dim_param; "" for a static dim, "?" for an unnamed dynamic one).

#include "compiler/pipeline/EntrySignature.h"

#include "codegen/abi/strata_artifact_format.h"
#include "codegen/abi/strata_kernel_abi.h"
#include "codegen/cpu/Passes.h"
#include "compiler/pipeline/OutputBounds.h"
#include "compiler/pipeline/StateTensors.h"
#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace strata {
namespace {

/// strata_dtype_t of a tensor element type, 0 if the runtime has none.
// clang-format off
uint32_t dtypeOf(Type t) {
  if (t.isF32()) return STRATA_DTYPE_F32;
  if (t.isF16()) return STRATA_DTYPE_F16;
  if (t.isBF16()) return STRATA_DTYPE_BF16;
  if (t.isF64()) return STRATA_DTYPE_F64;
  if (t.isInteger(1)) return STRATA_DTYPE_BOOL;
  if (t.isSignlessInteger(8)) return STRATA_DTYPE_I8;
  if (t.isSignlessInteger(16)) return STRATA_DTYPE_I16;
  if (t.isSignlessInteger(32)) return STRATA_DTYPE_I32;
  if (t.isSignlessInteger(64)) return STRATA_DTYPE_I64;
  if (t.isUnsignedInteger(8)) return STRATA_DTYPE_U8;
  if (t.isUnsignedInteger(16)) return STRATA_DTYPE_U16;
  if (t.isUnsignedInteger(32)) return STRATA_DTYPE_U32;
  if (t.isUnsignedInteger(64)) return STRATA_DTYPE_U64;
  // fp8 and the 4-bit types travel one element per byte: LLVM stores an
  // i8/i4 memref element (MLIR's fp8/fp4 lower to i8/i4) in one byte.
  if (isa<Float8E4M3FNType>(t)) return STRATA_DTYPE_F8E4M3FN;
  if (isa<Float8E4M3FNUZType>(t)) return STRATA_DTYPE_F8E4M3FNUZ;
  if (isa<Float8E5M2Type>(t)) return STRATA_DTYPE_F8E5M2;
  if (isa<Float8E5M2FNUZType>(t)) return STRATA_DTYPE_F8E5M2FNUZ;
  if (isa<Float4E2M1FNType>(t)) return STRATA_DTYPE_F4E2M1;
  if (t.isSignlessInteger(4)) return STRATA_DTYPE_I4;
  if (t.isUnsignedInteger(4)) return STRATA_DTYPE_U4;
  return 0;
}
// clang-format on

/// The ONNX dim_param of dim |d| of a rank-|rank| tensor in |attrs|'
/// strata.dims, "" if none (or if the declared rank differs).
std::string onnxDimName(DictionaryAttr attrs, int64_t rank, int64_t d) {
  auto names = attrs ? attrs.getAs<ArrayAttr>("strata.dims") : ArrayAttr();
  if (!names || int64_t(names.size()) != rank || d >= rank)
    return "";
  auto name = dyn_cast<StringAttr>(names[d]);
  if (!name || name.getValue() == "?")
    return "";
  return name.str();
}

std::string tensorName(DictionaryAttr attrs, const char *prefix,
                       unsigned index) {
  auto name = attrs ? attrs.getAs<StringAttr>("strata.name") : StringAttr();
  return name ? name.str() : prefix + std::to_string(index);
}

} // namespace

bool isEntryFunction(func::FuncOp func) {
  return !func.isPrivate() && !func.isExternal();
}

int64_t EntrySignatures::claim(const std::string &name, int64_t max,
                               const std::string &key) {
  for (size_t k = 0; k < dims_.size(); ++k) {
    if (dims_[k].name != name)
      continue;
    bool same = !key.empty() && dims_[k].key == key && dims_[k].max == max;
    return same ? -1 - int64_t(k) : 0;
  }
  dims_.push_back({name, max, key});
  return -int64_t(dims_.size());
}

LogicalResult EntrySignatures::describeInputs(ModuleOp module,
                                              const DimMaximaOptions &options) {
  // First, so that every entry has its state arguments when its maxima are
  // recorded.
  FailureOr<std::vector<StateTensor>> states = prepareStateTensors(module);
  if (failed(states))
    return failure();
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!isEntryFunction(func))
      continue;
    codegen::ArtifactEntry entry;
    entry.name = func.getSymName().str();
    entry.symbol = "_mlir_ciface_" + entry.name;
    if (auto kind = func->getAttrOfType<StringAttr>("strata.entry_kind")) {
      if (kind.getValue() == "prefill")
        entry.kind = STRATA_ENTRY_KIND_PREFILL;
      else if (kind.getValue() == "decode")
        entry.kind = STRATA_ENTRY_KIND_DECODE;
      else if (kind.getValue() == "verify")
        entry.kind = STRATA_ENTRY_KIND_VERIFY;
      else
        return func.emitError() << "unknown strata.entry_kind '"
                                << kind.getValue()
                                << "' (expected prefill, decode or verify)";
    }
    // Per input, the maximum of each dim (-1 if static): bounds the memory
    // plan.
    SmallVector<Attribute> maximaAttrs;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
      DictionaryAttr attrs = func.getArgAttrDict(i);
      // States are static and not part of the signature (addTo).
      if (isStateArgument(func, i)) {
        maximaAttrs.push_back(DenseI64ArrayAttr::get(
            func.getContext(), SmallVector<int64_t>(type.getRank(), -1)));
        continue;
      }
      codegen::ArtifactTensor t;
      t.name = tensorName(attrs, "input", i);
      if (!type)
        return func.emitError() << "input '" << t.name << "' of '" << entry.name
                                << "' is not a ranked tensor";
      t.dtype = dtypeOf(type.getElementType());
      if (!t.dtype)
        return func.emitError() << "input '" << t.name << "' has element type "
                                << type.getElementType()
                                << ", which the runtime does not support yet";
      SmallVector<int64_t> maxima(type.getRank(), -1);
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d)) {
          t.dims.push_back(type.getDimSize(d));
          continue;
        }
        std::string onnxName = onnxDimName(attrs, type.getRank(), d);
        // An unnamed dim is spelled INPUT.INDEX, so --dim can still bind it.
        std::string name =
            onnxName.empty() ? t.name + "." + std::to_string(d) : onnxName;
        std::optional<DimBinding> binding = bindDim(name, options);
        if (!binding) {
          InFlightDiagnostic diag = func.emitError();
          diag << "input '" << t.name << "' dim " << d;
          if (onnxName.empty())
            diag << " is dynamic and unnamed";
          else
            diag << " ('" << onnxName << "') is not a batch or sequence name";
          return diag << ": give its maximum with --dim " << name << "=MAX";
        }
        t.dims.push_back(claim(name, binding->max, "input"));
        if (t.dims.back() == 0)
          return func.emitError() << "dim name '" << name << "' of input '"
                                  << t.name << "' has two maxima";
        maxima[d] = binding->max;
      }
      entry.inputs.push_back(std::move(t));
      maximaAttrs.push_back(DenseI64ArrayAttr::get(func.getContext(), maxima));
    }
    func->setAttr(codegen::cpu::kInputMaximaAttr,
                  ArrayAttr::get(func.getContext(), maximaAttrs));
    entries_.push_back(std::move(entry));
  }
  if (entries_.empty())
    return module.emitError() << "the module has no public function to "
                                 "compile as an entry point";
  if (failed(describeStates(module, *states)))
    return failure();
  // The generation contract's context, which no state has as its extent
  // when every KV cache is a ring.
  if (auto context =
          module->getAttrOfType<IntegerAttr>(ir::kGenerationContextAttr))
    if (!claim("context", context.getInt(), "input"))
      return module.emitError() << "dim 'context' has two maxima";
  // And its slots, when this pipeline stage holds no state.
  if (auto slots = module->getAttrOfType<IntegerAttr>(ir::kGenerationSlotsAttr))
    if (!claim("slots", slots.getInt(), "input"))
      return module.emitError() << "dim 'slots' has two maxima";
  return success();
}

LogicalResult
EntrySignatures::describeStates(ModuleOp module,
                                const std::vector<StateTensor> &states) {
  for (const StateTensor &state : states) {
    codegen::ArtifactStateTensor s;
    s.tensor.name = state.name;
    s.tensor.dtype = dtypeOf(state.type.getElementType());
    s.scope = state.scope;
    if (!s.tensor.dtype)
      return module.emitError() << "state '" << state.name
                                << "' has element type "
                                << state.type.getElementType()
                                << ", which the runtime does not support yet";
    for (int64_t d = 0; d < state.type.getRank(); ++d) {
      const int64_t extent = state.type.getDimSize(d);
      const std::string &name = state.dimNames[d];
      // A named dim is the maximum of that symbolic dim, shared with
      // inputs of the same name (the sequence slots, the context).
      int64_t code = name.empty() ? extent : claim(name, extent, "input");
      if (code == 0)
        return module.emitError() << "dim '" << name << "' of state '"
                                  << state.name << "' is " << extent
                                  << ", but an input gives '" << name
                                  << "' another maximum";
      s.tensor.dims.push_back(code);
    }
    states_.push_back(std::move(s));
  }
  return success();
}

LogicalResult EntrySignatures::describeOutputs(ModuleOp module) {
  size_t index = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!isEntryFunction(func))
      continue;
    if (index >= entries_.size() || entries_[index].name != func.getSymName())
      return func.emitError()
             << "entry '" << func.getSymName() << "' changed during lowering";
    codegen::ArtifactEntry &entry = entries_[index++];
    entry.outputs.clear();
    auto inputDimName = [&](const InputDim &in) {
      int64_t code = entry.inputs[in.input].dims[in.dim];
      return code < 0 ? dims_[-1 - code].name : std::to_string(code);
    };
    OutputBounds bounds(func);
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      if (isStateResult(func, i))
        continue; // written in place, not an output
      auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[i]);
      DictionaryAttr attrs = func.getResultAttrDict(i);
      codegen::ArtifactTensor t;
      t.name = tensorName(attrs, "output", i);
      if (!type)
        return func.emitError() << "output '" << t.name << "' of '"
                                << entry.name << "' is not a ranked tensor";
      t.dtype = dtypeOf(type.getElementType());
      if (!t.dtype)
        return func.emitError() << "output '" << t.name << "' has element type "
                                << type.getElementType()
                                << ", which the runtime does not support yet";
      // Every dim's bound first. An extent with no bound in input dims, or
      // bounds that multiply past the format's tensor limit, is read from
      // tensor data: recorded as such (only the run-time checks bound it).
      SmallVector<ResultDimBound> dimBounds(type.getRank());
      auto sizeAtMaxima = [&] {
        long double bytes = (type.getElementTypeBitWidth() + 7) / 8;
        for (int64_t d = 0; d < type.getRank(); ++d)
          bytes *= type.isDynamicDim(d)
                       ? std::max<int64_t>(dimBounds[d].max, 1)
                       : type.getDimSize(d);
        return bytes;
      };
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d))
          continue;
        FailureOr<ResultDimBound> bound = bounds.bound(i, d);
        dimBounds[d] = succeeded(bound) ? *bound : ResultDimBound::fromData();
      }
      if (sizeAtMaxima() > (long double)STRATA_MANIFEST_MAX_TENSOR_BYTES)
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d) && !dimBounds[d].exact)
            dimBounds[d] = ResultDimBound::fromData();
      if (sizeAtMaxima() > (long double)STRATA_MANIFEST_MAX_TENSOR_BYTES)
        return func.emitError()
               << "output '" << t.name
               << "' can be larger than the format's tensor limit at the "
                  "input maxima: lower the maxima (--dim, --max-batch, "
                  "--max-seq)";
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d)) {
          t.dims.push_back(type.getDimSize(d));
          continue;
        }
        const ResultDimBound *bound = &dimBounds[d];
        // A proven constant is a static extent the runtime checks exactly.
        if (bound->exact)
          if (auto c = dyn_cast<AffineConstantExpr>(bound->exact.getResult(0));
              c && c.getValue() >= 0) {
            t.dims.push_back(c.getValue());
            continue;
          }
        // A symbolic dim's maximum is at least 1 (an extent always 0 too).
        int64_t max = bound->isFromData() ? STRATA_DIM_MAX_FROM_DATA
                                          : std::max<int64_t>(bound->max, 1);
        std::string exact = exactText(*bound, inputDimName);
        OutputDimInfo info{entry.name, t.name, d, "", max, exact};
        int64_t code = 0;
        if (bound->sameAs) {
          code = entry.inputs[bound->sameAs->input].dims[bound->sameAs->dim];
        } else {
          // Name candidates, most telling first; the last is unique.
          std::string output = t.name + "." + std::to_string(d);
          std::string candidates[] = {onnxDimName(attrs, type.getRank(), d),
                                      exact, output, entry.name + ":" + output};
          for (const std::string &name : candidates) {
            if (name.empty())
              continue;
            if ((code = claim(name, max, exact)))
              break;
          }
          if (!code)
            return func.emitError() << "output '" << t.name << "' dim " << d
                                    << " has no free name";
        }
        t.dims.push_back(code);
        if (code >= 0) // an input dim that is static after all
          continue;
        info.name = dims_[-1 - code].name;
        info.max = dims_[-1 - code].max;
        outputDims_.push_back(std::move(info));
      }
      entry.outputs.push_back(std::move(t));
    }
  }
  return success();
}

void EntrySignatures::addTo(codegen::ArtifactWriter &writer) const {
  // The writer numbers dims in the order they are added, as claim() did.
  for (const Dim &dim : dims_)
    writer.addSymbolicDim(dim.name, dim.max);
  for (const codegen::ArtifactEntry &entry : entries_)
    writer.addEntry(entry);
  for (const codegen::ArtifactStateTensor &state : states_)
    writer.addStateTensor(state);
}

} // namespace strata
