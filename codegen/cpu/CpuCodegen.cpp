//===- CpuCodegen.cpp - linalg on tensors -> native shared object ---------===//
// SPDX-License-Identifier: Apache-2.0
// The passes of CpuPipeline.cpp down to the LLVM dialect, then LLVM IR split
// into parts, each optimized (O2) and emitted as an object (TargetMachine)
// on its own thread -> one shared object (lld, in-process).
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
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/Utils/SplitModule.h"
#include "llvm/TargetParser/Host.h"

#include <atomic>
#include <chrono>
#include <thread>

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

FailureOr<std::string>
linkSharedObject(ModuleOp module, llvm::ArrayRef<llvm::SmallString<0>> objects) {
  llvm::SmallString<128> soPath;
  std::vector<llvm::SmallString<128>> objPaths(objects.size());
  llvm::scope_exit cleanup([&] {
    for (const auto &path : objPaths)
      if (!path.empty())
        llvm::sys::fs::remove(path);
    if (!soPath.empty())
      llvm::sys::fs::remove(soPath);
  });
  if (llvm::sys::fs::createTemporaryFile("strata-kernels", "so", soPath))
    return module.emitError() << "cannot create temporary files for linking";
  for (size_t i = 0; i < objects.size(); ++i) {
    if (llvm::sys::fs::createTemporaryFile("strata-kernels", "o", objPaths[i]))
      return module.emitError() << "cannot create temporary files for linking";
    std::error_code ec;
    llvm::raw_fd_ostream os(objPaths[i], ec);
    if (ec)
      return module.emitError() << "cannot write '" << objPaths[i]
                                << "': " << ec.message();
    os << objects[i];
  }
  // Reproducible output: no build id, sorted sections as lld emits them,
  // the objects in the order of their parts.
  std::vector<const char *> args = {
      "ld.lld", "-shared",    "--hash-style=gnu", "--build-id=none",
      "-z",     "noexecstack", "-o",              soPath.c_str()};
  for (auto &path : objPaths)
    args.push_back(path.c_str());
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

// How many parts the module is optimized and emitted as. Fixed, not the
// host's core count: the artifact must not depend on the machine that
// compiled it. LLVM's optimization and code generation are most of a
// compile (docs/design/compile-time.md), and each part runs them on its own
// thread.
constexpr unsigned kObjectParts = 4;

// The LLVM optimization level of the generated code. O2, not O3: the hot
// loops are the runtime's kernels, and on the generated ones (norms,
// elementwise chains, copies) O3 measured no faster while taking 30-55%
// more LLVM time (docs/design/compile-time.md).
constexpr unsigned kOptLevel = 2;

using MachineFactory =
    llvm::function_ref<std::unique_ptr<llvm::TargetMachine>()>;

// The object code of |module| as kObjectParts objects, each optimized and
// emitted on one of up to that many threads. llvm::SplitModule gives every
// function and global to one part, making internal symbols hidden so that
// the parts link into one shared object; each part lives in an LLVMContext
// of its own (a context is single-threaded), reached through bitcode. A
// call into another part is not inlined: the kernels are loop nests called
// once per run, where that costs nothing measurable.
FailureOr<std::vector<llvm::SmallString<0>>>
emitObjectParts(ModuleOp diagnostics, llvm::Module &module,
                MachineFactory makeMachine) {
  std::vector<llvm::SmallString<0>> bitcode;
  llvm::SplitModule(
      module, kObjectParts,
      [&](std::unique_ptr<llvm::Module> part) {
        llvm::raw_svector_ostream os(bitcode.emplace_back());
        llvm::WriteBitcodeToFile(*part, os);
      },
      /*PreserveLocals=*/false);

  std::vector<llvm::SmallString<0>> objects(bitcode.size());
  std::vector<std::string> errors(bitcode.size());
  auto emitPart = [&](size_t i) {
    llvm::LLVMContext context;
    llvm::Expected<std::unique_ptr<llvm::Module>> part =
        llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode[i], "part"),
                               context);
    if (!part) {
      errors[i] = llvm::toString(part.takeError());
      return;
    }
    std::unique_ptr<llvm::TargetMachine> machine = makeMachine();
    if (!machine) {
      errors[i] = "cannot create the target machine";
      return;
    }
    if (llvm::Error err = mlir::makeOptimizingTransformer(
            kOptLevel, 0, machine.get())(part->get())) {
      errors[i] = "LLVM optimization failed: " + llvm::toString(std::move(err));
      return;
    }
    llvm::raw_svector_ostream os(objects[i]);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile)) {
      errors[i] = "the target cannot emit object files";
      return;
    }
    codegen.run(**part);
  };
  unsigned threads = std::min<unsigned>(
      llvm::hardware_concurrency().compute_thread_count(), bitcode.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < bitcode.size();)
      emitPart(i);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &thread : pool)
    thread.join();
  for (const std::string &error : errors)
    if (!error.empty())
      return diagnostics.emitError()
             << "emitting the kernels failed: " << error;
  return objects;
}

// Wall time of each step of code generation, for CpuCode::phaseSeconds.
class StepClock {
public:
  explicit StepClock(std::vector<std::pair<std::string, double>> &steps)
      : steps(steps), start(std::chrono::steady_clock::now()) {}
  void done(llvm::StringRef step) {
    auto now = std::chrono::steady_clock::now();
    steps.emplace_back(step.str(),
                       std::chrono::duration<double>(now - start).count());
    start = now;
  }

private:
  std::vector<std::pair<std::string, double>> &steps;
  std::chrono::steady_clock::time_point start;
};

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
  auto makeMachine = [&] {
    return std::unique_ptr<llvm::TargetMachine>(llvmTarget->createTargetMachine(
        triple, cpu, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
        std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  };
  std::unique_ptr<llvm::TargetMachine> machine = makeMachine();
  if (!machine)
    return module.emitError() << "unknown target CPU '" << cpu << "'";

  CpuCode code;
  StepClock clock(code.phaseSeconds);
  FailureOr<std::vector<char>> weights =
      lowerToLLVMDialect(module, &code.stats);
  if (failed(weights))
    return failure();
  clock.done("mlir");

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "strata_kernels");
  if (!llvmModule)
    return module.emitError() << "translation to LLVM IR failed";
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);
  clock.done("translate");
  code.weights = std::move(*weights);
  code.cpuFeatures = featureNamesOf(*machine);
  if (target.emitAssembly) {
    // One listing of the whole module, optimized as one; no objects.
    if (llvm::Error err =
            makeOptimizingTransformer(kOptLevel, 0, machine.get())(
                llvmModule.get()))
      return module.emitError() << "LLVM optimization failed: "
                                << llvm::toString(std::move(err));
    {
      // The streams flush into code.assembly as they go out of scope, which
      // must happen before code is moved into the result.
      llvm::raw_string_ostream os(code.assembly);
      llvm::buffer_ostream buffered(os);
      llvm::legacy::PassManager codegen;
      if (machine->addPassesToEmitFile(codegen, buffered, nullptr,
                                       llvm::CodeGenFileType::AssemblyFile))
        return module.emitError() << "the target cannot emit assembly";
      codegen.run(*llvmModule);
    }
    return code;
  }

  FailureOr<std::vector<llvm::SmallString<0>>> objects =
      emitObjectParts(module, *llvmModule, makeMachine);
  if (failed(objects))
    return failure();
  clock.done("llvm");
  FailureOr<std::string> so = linkSharedObject(module, *objects);
  if (failed(so))
    return failure();
  clock.done("link");
  code.sharedObject = std::move(*so);
  return code;
}

} // namespace strata::codegen::cpu
