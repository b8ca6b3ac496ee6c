//===- CpuCodegen.cpp - linalg on tensors -> native shared object ---------===//
// SPDX-License-Identifier: Apache-2.0
// Pipeline: one-shot bufferization -> contractions become calls to the
// runtime's matmul (weights packed) -> weights moved into a separate image
// -> loops -> LLVM dialect -> LLVM IR -> O3 -> object (TargetMachine) ->
// shared object (lld, in-process). docs/architecture.md has the whole
// picture, docs/design/cpu-matmul.md why matmuls call the runtime.

#include "codegen/cpu/CpuCodegen.h"

#include "codegen/abi/strata_artifact_format.h"
#include "codegen/cpu/CheckToRuntime.h"
#include "codegen/cpu/EarlyDealloc.h"
#include "codegen/cpu/MatmulToRuntime.h"
#include "codegen/cpu/MemoryPlan.h"
#include "codegen/cpu/OutlineKernels.h"
#include "codegen/cpu/ParallelKernels.h"
#include "codegen/cpu/RuntimeImports.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "lld/Common/Driver.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/TargetParser/Host.h"

LLD_HAS_DRIVER(elf)

using namespace mlir;

namespace strata::codegen::cpu {
namespace {

// Pipelines are nested in the module pass manager (no builtin.module
// anchor). Bufferization; the deallocation pipeline frees intermediates at
// the end of the function (EarlyDealloc.cpp then moves each free to the
// buffer's last use); results are returned (kernel ABI: the caller frees
// them).
constexpr llvm::StringLiteral kCleanupPipeline = "canonicalize,cse";
constexpr llvm::StringLiteral kBufferizePipeline =
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "canonicalize,buffer-deallocation-pipeline,"
    "convert-bufferization-to-memref";

// Loops and everything down to the LLVM dialect.
constexpr llvm::StringLiteral kLoweringPipeline =
    "convert-linalg-to-loops,"
    "convert-math-to-llvm,convert-math-to-libm,"
    "expand-strided-metadata,lower-affine,convert-scf-to-cf,canonicalize,"
    "finalize-memref-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,"
    "convert-cf-to-llvm,convert-func-to-llvm,convert-ub-to-llvm,"
    "reconcile-unrealized-casts";

LogicalResult runPipeline(ModuleOp module, llvm::StringRef pipeline) {
  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (failed(parsePassPipeline(pipeline, pm, errorStream)))
    return module.emitError() << "invalid codegen pipeline: " << error;
  return pm.run(module);
}

// Replaces every memref.global holding a dense_resource (a weight) by a
// view into a trailing `memref<?xi8>` argument of each public function, and
// appends its bytes, 64-byte aligned, to |image|.
LogicalResult externalizeWeights(ModuleOp module, std::vector<char> &image) {
  llvm::StringMap<int64_t> offsets;
  SmallVector<memref::GlobalOp> globals;
  for (auto global : module.getOps<memref::GlobalOp>()) {
    auto init = dyn_cast_if_present<DenseResourceElementsAttr>(
        global.getInitialValue().value_or(Attribute()));
    if (!init)
      continue;
    AsmResourceBlob *blob = init.getRawHandle().getBlob();
    if (!blob)
      return global.emitError() << "weight '" << global.getSymName()
                                << "' has no data";
    ArrayRef<char> data = blob->getData();
    size_t offset = (image.size() + STRATA_ARTIFACT_ALIGNMENT - 1) /
                    STRATA_ARTIFACT_ALIGNMENT * STRATA_ARTIFACT_ALIGNMENT;
    image.resize(offset);
    image.insert(image.end(), data.begin(), data.end());
    offsets[global.getSymName()] = offset;
    globals.push_back(global);
  }
  auto i8 = IntegerType::get(module.getContext(), 8);
  auto bytesType = MemRefType::get({ShapedType::kDynamic}, i8);
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(index, bytesType, {}, func.getLoc())))
      return failure();
    Value weights = func.getArgument(index);
    SmallVector<memref::GetGlobalOp> uses;
    func.walk([&](memref::GetGlobalOp get) {
      if (offsets.count(get.getName()))
        uses.push_back(get);
    });
    for (memref::GetGlobalOp get : uses) {
      OpBuilder b(get);
      Value offset =
          arith::ConstantIndexOp::create(b, get.getLoc(),
                                         offsets.lookup(get.getName()));
      auto type = cast<MemRefType>(get.getType());
      Value view = memref::ViewOp::create(b, get.getLoc(), type, weights,
                                          offset, ValueRange{});
      get.replaceAllUsesWith(view);
      get.erase();
    }
  }
  for (memref::GlobalOp global : globals)
    global.erase();
  return success();
}

// CSE merges identical fills (a zero init per matmul) into one tensor with
// several destructive users; bufferization then keeps the fill once and
// copies it into a fresh buffer per user, which also hides the fill from
// MatmulToRuntime (which drops a zero fill right before the call). One fill
// per user, cloned right before it, bufferizes to one buffer each, whose
// lifetime starts at its user.
void unshareFills(ModuleOp module) {
  SmallVector<linalg::FillOp> fills;
  module.walk([&](linalg::FillOp fill) {
    if (fill.hasPureTensorSemantics() && !fill->getResult(0).hasOneUse())
      fills.push_back(fill);
  });
  for (linalg::FillOp fill : fills) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : fill->getResult(0).getUses())
      uses.push_back(&use);
    for (OpOperand *use : uses) {
      OpBuilder b(use->getOwner());
      Operation *init = fill.getDpsInits()[0].getDefiningOp();
      IRMapping mapping;
      if (init && isa<tensor::EmptyOp>(init))
        mapping.map(init->getResult(0), b.clone(*init)->getResult(0));
      use->set(b.clone(*fill, mapping)->getResult(0));
    }
    Operation *init = fill.getDpsInits()[0].getDefiningOp();
    fill.erase();
    if (init && isa<tensor::EmptyOp>(init) && init->use_empty())
      init->erase();
  }
}

// memref.copy of strided views lowers to a call into MLIR's C runner
// library, which generated code must not depend on; linalg.copy becomes
// plain loops instead.
void copiesToLinalg(ModuleOp module) {
  SmallVector<memref::CopyOp> copies;
  module.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    OpBuilder b(copy);
    linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    copy.erase();
  }
}

// exp, tanh, erf and log as inline polynomials instead of libm calls: the
// elementwise loops around them (softmax, GELU) then vectorize. MLIR's
// approximations are within a few ulp in fp32 and keep inf/NaN behaviour
// (checked by the e2e fixtures and the ONNX node tests of each op).
LogicalResult approximateMathFunctions(ModuleOp module) {
  RewritePatternSet patterns(module.getContext());
  populateMathPolynomialApproximationPatterns(
      patterns, [](llvm::StringRef name) {
        return name == "math.tanh" || name == "math.erf" ||
               name == "math.exp" || name == "math.expm1" ||
               name == "math.log" || name == "math.log1p" ||
               name == "math.log2";
      });
  return applyPatternsGreedily(module, std::move(patterns));
}

// STRATA_CPU_FEATURE_* bits of every feature |machine| may generate code
// for, whatever named the CPU (native, a micro-architecture level or a CPU
// name such as skylake-avx512): the runtime refuses the artifact on a host
// that lacks any of them.
uint64_t featureBitsOf(const llvm::TargetMachine &machine) {
  static constexpr std::pair<const char *, uint64_t> kBits[] = {
      {"+avx2", STRATA_CPU_FEATURE_AVX2},
      {"+fma", STRATA_CPU_FEATURE_FMA},
      {"+avx512f", STRATA_CPU_FEATURE_AVX512F},
      {"+avx512bw", STRATA_CPU_FEATURE_AVX512BW},
      {"+avx512vl", STRATA_CPU_FEATURE_AVX512VL},
      {"+avx512dq", STRATA_CPU_FEATURE_AVX512DQ},
      {"+avx512vnni", STRATA_CPU_FEATURE_AVX512VNNI},
      {"+avx512bf16", STRATA_CPU_FEATURE_AVX512BF16},
      {"+f16c", STRATA_CPU_FEATURE_F16C}};
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  uint64_t bits = 0;
  for (auto [name, bit] : kBits)
    if (info->checkFeatures(name))
      bits |= bit;
  return bits;
}

// CPU name and feature string for |target|.
std::pair<std::string, std::string> resolveTarget(const CpuTarget &target) {
  if (target.cpu != "native")
    return {target.cpu, ""};
  std::string features;
  for (const auto &f : llvm::sys::getHostCPUFeatures())
    if (f.getValue())
      features += (features.empty() ? "+" : ",+") + f.getKey().str();
  return {llvm::sys::getHostCPUName().str(), features};
}

FailureOr<std::string> linkSharedObject(ModuleOp module,
                                        llvm::StringRef object) {
  llvm::SmallString<128> objPath, soPath;
  if (llvm::sys::fs::createTemporaryFile("strata-kernels", "o", objPath) ||
      llvm::sys::fs::createTemporaryFile("strata-kernels", "so", soPath))
    return module.emitError() << "cannot create temporary files for linking";
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(objPath);
    llvm::sys::fs::remove(soPath);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objPath, ec);
    if (ec)
      return module.emitError() << "cannot write '" << objPath
                                << "': " << ec.message();
    os << object;
  }
  // Reproducible output: no build id, sorted sections as lld emits them.
  const char *args[] = {"ld.lld",          "-shared",       "--hash-style=gnu",
                        "--build-id=none", "-z",            "noexecstack",
                        "-o",              soPath.c_str(),  objPath.c_str()};
  std::string log;
  llvm::raw_string_ostream logStream(log);
  lld::Result result =
      lld::lldMain(args, logStream, logStream, {{lld::Gnu, &lld::elf::link}});
  if (result.retCode != 0)
    return module.emitError() << "linking the kernels failed: " << log;
  auto buffer = llvm::MemoryBuffer::getFile(soPath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return module.emitError() << "cannot read the linked kernels";
  return (*buffer)->getBuffer().str();
}

// The kernel ABI: every result must be a fresh buffer the caller frees. A
// result that bufferizes to a view of an input, a constant or another
// buffer is copied into a fresh tensor first (at tensor level, so the
// deallocation pass sees the copy).
void copyAliasingResults(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    func.walk([&](func::ReturnOp ret) {
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        Operation *def = v.getDefiningOp();
        bool aliases = !def || isa<arith::ConstantOp, tensor::ReshapeOp,
                                   tensor::ExpandShapeOp,
                                   tensor::CollapseShapeOp,
                                   tensor::ExtractSliceOp, tensor::CastOp,
                                   tensor::EmptyOp>(def);
        if (!aliases)
          continue;
        auto type = cast<RankedTensorType>(v.getType());
        SmallVector<Value> dynamic;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            dynamic.push_back(tensor::DimOp::create(b, ret.getLoc(), v, d));
        Value empty = tensor::EmptyOp::create(b, ret.getLoc(), type.getShape(),
                                              type.getElementType(), dynamic);
        operand.set(linalg::CopyOp::create(b, ret.getLoc(), v, empty)
                        .getResult(0));
      }
    });
  }
}

} // namespace

FailureOr<std::vector<char>> lowerToLLVMDialect(ModuleOp module,
                                                CpuCodegenStats *stats) {
  // Every public function gets MLIR's C interface (kernel ABI v2).
  // Argument/result attributes (ONNX names, dim names) were read into the
  // manifest already and mean nothing to LLVM.
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    func->setAttr("llvm.emit_c_interface", UnitAttr::get(module.getContext()));
    func.removeArgAttrsAttr();
    func.removeResAttrsAttr();
  }
  copyAliasingResults(module);
  if (failed(runPipeline(module, kCleanupPipeline)))
    return failure();
  unshareFills(module);
  if (failed(runPipeline(module, kBufferizePipeline)))
    return failure();
  copiesToLinalg(module);
  unsigned earlyFrees = freeBuffersEarly(module);
  MemoryPlanStats plan = planMemory(module);
  FailureOr<MatmulLoweringStats> matmuls = lowerMatmulsToRuntime(module);
  if (failed(matmuls))
    return failure();
  if (failed(approximateMathFunctions(module)))
    return module.emitError() << "math approximation did not converge";
  std::vector<char> weights;
  if (failed(externalizeWeights(module, weights)))
    return failure();
  unsigned kernels = outlineKernels(module);
  unsigned checks = lowerChecksToRuntime(module);
  if (stats) {
    stats->kernels = kernels;
    stats->checks = checks;
    stats->earlyFrees = earlyFrees;
    stats->plannedBuffers = plan.planned;
    stats->unplannedBuffers = plan.unplanned;
    stats->arenaBytes = plan.arenaBytes;
    stats->plannedBytes = plan.plannedBytes;
    stats->matmulCalls = matmuls->calls;
    stats->packedMatmulCalls = matmuls->packedCalls;
    stats->packedWeights = matmuls->packedWeights;
  }
  if (failed(runPipeline(module, kLoweringPipeline)))
    return failure();
  return weights;
}

FailureOr<CpuCode> generateCpuCode(ModuleOp module, const CpuTarget &target) {
  // The target first: a CPU name LLVM does not know is an error before any
  // work, not a warning and generic code.
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto [cpu, features] = resolveTarget(target);
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return module.emitError() << "no LLVM target for " << triple.str() << ": "
                              << error;
  std::unique_ptr<llvm::MCSubtargetInfo> probe(
      llvmTarget->createMCSubtargetInfo(triple, "", ""));
  if (!probe || !probe->isCPUStringValid(cpu))
    return module.emitError()
           << "unknown target CPU '" << cpu
           << "': use native, x86-64-v3, x86-64-v4 or an LLVM CPU name such "
              "as skylake-avx512";
  std::unique_ptr<llvm::TargetMachine> machine(
      llvmTarget->createTargetMachine(triple, cpu, features,
                                      llvm::TargetOptions(), llvm::Reloc::PIC_,
                                      std::nullopt,
                                      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return module.emitError() << "unknown target CPU '" << cpu << "'";

  CpuCodegenStats stats;
  FailureOr<std::vector<char>> weights = lowerToLLVMDialect(module, &stats);
  if (failed(weights))
    return failure();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "strata_kernels");
  if (!llvmModule)
    return module.emitError() << "translation to LLVM IR failed";
  dispatchParallelKernels(*llvmModule);
  bindRuntimeImports(*llvmModule);
  // Kept out of line: see OutlineKernels.h.
  for (llvm::Function &f : *llvmModule)
    if (f.getName().starts_with(kKernelPrefix) ||
        (f.getName().starts_with(kParallelKernelPrefix) &&
         !f.getName().ends_with(".task")))
      f.addFnAttr(llvm::Attribute::NoInline);

  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);
  if (llvm::Error err =
          makeOptimizingTransformer(3, 0, machine.get())(llvmModule.get()))
    return module.emitError() << "LLVM optimization failed: "
                              << llvm::toString(std::move(err));

  std::string assembly;
  if (target.emitAssembly) {
    // A clone: emitting runs codegen passes that the object pass must
    // repeat on pristine IR.
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*llvmModule);
    llvm::raw_string_ostream os(assembly);
    llvm::buffer_ostream buffered(os);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, buffered, nullptr,
                                     llvm::CodeGenFileType::AssemblyFile))
      return module.emitError() << "the target cannot emit assembly";
    codegen.run(*copy);
  }

  llvm::SmallString<0> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return module.emitError() << "the target cannot emit object files";
    codegen.run(*llvmModule);
  }
  FailureOr<std::string> so = linkSharedObject(module, object.str());
  if (failed(so))
    return failure();
  CpuCode code;
  code.sharedObject = std::move(*so);
  code.weights = std::move(*weights);
  code.cpuFeatures = featureBitsOf(*machine);
  code.stats = stats;
  code.assembly = std::move(assembly);
  return code;
}

} // namespace strata::codegen::cpu
