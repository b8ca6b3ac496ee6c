//===- ExternalizeWeights.cpp - Weights out of the code -------------------===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-externalize-weights). The layout attribute
// references the weights' resource blobs instead of copying them: the image
// is assembled once, when the artifact is written.

#include "codegen/cpu/Passes.h"

#include "codegen/abi/strata_artifact_format.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_EXTERNALIZEWEIGHTSPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

int64_t alignUp(int64_t n) {
  return (n + STRATA_ARTIFACT_ALIGNMENT - 1) / STRATA_ARTIFACT_ALIGNMENT *
         STRATA_ARTIFACT_ALIGNMENT;
}

struct ExternalizeWeightsPass
    : impl::ExternalizeWeightsPassBase<ExternalizeWeightsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    llvm::StringMap<int64_t> offsets;
    SmallVector<memref::GlobalOp> globals;
    SmallVector<Attribute> layout;
    int64_t end = 0;
    for (auto global : module.getOps<memref::GlobalOp>()) {
      auto init = dyn_cast_if_present<DenseResourceElementsAttr>(
          global.getInitialValue().value_or(Attribute()));
      if (!init)
        continue;
      AsmResourceBlob *blob = init.getRawHandle().getBlob();
      if (!blob) {
        global.emitError() << "weight '" << global.getSymName()
                           << "' has no data";
        return signalPassFailure();
      }
      int64_t offset = alignUp(end);
      end = offset + static_cast<int64_t>(blob->getData().size());
      offsets[global.getSymName()] = offset;
      globals.push_back(global);
      layout.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("offset", b.getI64IntegerAttr(offset)),
           b.getNamedAttr("data", init)}));
    }
    auto bytesType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(index, bytesType, {}, func.getLoc())))
        return signalPassFailure();
      Value weights = func.getArgument(index);
      SmallVector<memref::GetGlobalOp> uses;
      func.walk([&](memref::GetGlobalOp get) {
        if (offsets.count(get.getName()))
          uses.push_back(get);
      });
      for (memref::GetGlobalOp get : uses) {
        OpBuilder gb(get);
        Value offset = arith::ConstantIndexOp::create(
            gb, get.getLoc(), offsets.lookup(get.getName()));
        auto type = cast<MemRefType>(get.getType());
        Value view = memref::ViewOp::create(gb, get.getLoc(), type, weights,
                                            offset, ValueRange{});
        get.replaceAllUsesWith(view);
        get.erase();
      }
    }
    for (memref::GlobalOp global : globals)
      global.erase();
    module->setAttr(kWeightsAttr, b.getArrayAttr(layout));
  }
};

} // namespace

FailureOr<std::vector<char>> takeWeightsImage(ModuleOp module) {
  std::vector<char> image;
  auto layout = module->getAttrOfType<ArrayAttr>(kWeightsAttr);
  if (!layout)
    return image;
  for (Attribute entry : layout) {
    auto dict = dyn_cast<DictionaryAttr>(entry);
    auto offset = dict ? dict.getAs<IntegerAttr>("offset") : IntegerAttr();
    auto data = dict ? dict.getAs<DenseResourceElementsAttr>("data")
                     : DenseResourceElementsAttr();
    AsmResourceBlob *blob = data ? data.getRawHandle().getBlob() : nullptr;
    if (!offset || !blob || offset.getInt() < static_cast<int64_t>(image.size()))
      return module.emitError() << "malformed " << kWeightsAttr << " layout";
    ArrayRef<char> bytes = blob->getData();
    image.resize(offset.getInt());
    image.insert(image.end(), bytes.begin(), bytes.end());
  }
  module->removeAttr(kWeightsAttr);
  return image;
}

} // namespace strata::codegen::cpu
