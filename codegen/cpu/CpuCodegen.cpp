//===- CpuCodegen.cpp - linalg on tensors -> native shared object ---------===//
// SPDX-License-Identifier: Apache-2.0
// The passes of CpuPipeline.cpp down to the LLVM dialect, then LLVM IR ->
// O3 -> object (TargetMachine) -> shared object (lld, in-process).
// docs/architecture.md has the whole picture.

#include "codegen/cpu/CpuCodegen.h"

#include "codegen/abi/strata_x86_features.h"
#include "codegen/cpu/CpuPipeline.h"

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

// Every strata_x86_features.h feature |machine| may generate code for,
// whatever named the CPU (native, a micro-architecture level or a CPU name
// such as skylake-avx512): the runtime refuses the artifact on a host that
// lacks any of them.
std::vector<std::string> featureNamesOf(const llvm::TargetMachine &machine) {
#define STRATA_FEATURE_NAME(name, ...) name,
  static constexpr const char *kNames[] = {
      STRATA_X86_FEATURES(STRATA_FEATURE_NAME)};
#undef STRATA_FEATURE_NAME
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  std::vector<std::string> names;
  for (const char *name : kNames)
    if (info->checkFeatures(std::string("+") + name))
      names.push_back(name);
  return names;
}

// CPU name and feature string for |target|. For native, every feature the
// host reports is switched on or off explicitly: the host's CPU name alone
// implies features a virtual machine or the OS may withhold (AMX tiles
// whose register state XCR0 does not enable, ENQCMD, UINTR), which would be
// recorded and make the artifact refuse to load on the very host that
// compiled it.
std::pair<std::string, std::string> resolveTarget(const CpuTarget &target) {
  if (target.cpu != "native")
    return {target.cpu, ""};
  std::string features;
  for (const auto &f : llvm::sys::getHostCPUFeatures())
    features += std::string(features.empty() ? "" : ",") +
                (f.getValue() ? "+" : "-") + f.getKey().str();
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

} // namespace

FailureOr<std::vector<char>> lowerToLLVMDialect(ModuleOp module,
                                                CpuCodegenStats *stats) {
  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  CpuPipelineOptions options;
  options.stats = stats;
  buildCpuLLVMPipeline(pm, options);
  if (failed(pm.run(module)))
    return failure();
  return takeWeightsImage(module);
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
  code.cpuFeatures = featureNamesOf(*machine);
  code.stats = stats;
  code.assembly = std::move(assembly);
  return code;
}

} // namespace strata::codegen::cpu
