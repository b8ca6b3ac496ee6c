//===- module_test.cc - Loading and inspecting modules
//---------------------===//
// SPDX-License-Identifier: Apache-2.0
// Happy-path loading from memory and from a file, inspection, weight
// verification, and every load error that is not byte corruption
// (corruption_test.cc covers that).

#include "strata/runtime/module.h"

#include <gtest/gtest.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <string>

#include "status_matchers.h"
#include "strata/runtime/cpu.h"
#include "strata_x86_features.h"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

using codegen::ArtifactWriter;

std::string tempPath(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/strata_module_test_" +
         std::to_string(getpid()) + "_" + name;
}

void writeFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  if (!bytes.empty()) {
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), file), bytes.size());
  }
  std::fclose(file);
}

TEST(ModuleTest, KernelLibraryWasBuilt) {
  ASSERT_GT(testKernelBytes().size(), 64u) << STRATA_TEST_KERNELS_PATH;
  ASSERT_FALSE(standardArtifact().empty());
}

TEST(ModuleTest, LoadsAndInspectsSignatures) {
  LoadedModule module(standardArtifact());
  STRATA_ASSERT_OK(module.load());
  strata_module_t* m = module.get();
  ASSERT_EQ(strata_module_entry_count(m), 7u);
  EXPECT_EQ(strata_module_entry(m, 7), nullptr);
  const strata_entry_signature_t* entry = strata_module_entry(m, 1);
  ASSERT_NE(entry, nullptr);
  EXPECT_STREQ(entry->name, "two_outputs");
  EXPECT_STREQ(entry->symbol, "strata_test_two_outputs");
  ASSERT_EQ(entry->input_count, 2u);
  EXPECT_STREQ(entry->inputs[0].name, "a");
  EXPECT_EQ(entry->inputs[0].dtype, STRATA_DTYPE_F32);
  ASSERT_EQ(entry->inputs[0].rank, 2u);
  EXPECT_EQ(entry->inputs[0].dims[0].extent, -1);
  EXPECT_STREQ(entry->inputs[0].dims[0].symbol, "sequence");
  EXPECT_EQ(entry->inputs[0].dims[0].max, 16);
  EXPECT_EQ(entry->inputs[0].dims[1].extent, 3);
  EXPECT_EQ(entry->inputs[0].dims[1].symbol, nullptr);
  EXPECT_EQ(entry->inputs[0].dims[1].max, 3);
  EXPECT_EQ(entry->inputs[1].dtype, STRATA_DTYPE_I32);
  ASSERT_EQ(entry->output_count, 2u);
  EXPECT_STREQ(entry->outputs[1].name, "present.0/doubled");
  EXPECT_EQ(entry->outputs[1].dtype, STRATA_DTYPE_I64);
  const strata_entry_signature_t* scale = nullptr;
  STRATA_ASSERT_OK(strata_module_find_entry(m, "scale", &scale));
  EXPECT_EQ(scale->inputs[0].rank, 0u);

  ASSERT_EQ(strata_module_symbolic_dim_count(m), 2u);
  EXPECT_STREQ(strata_module_symbolic_dim(m, 0)->name, "batch");
  EXPECT_EQ(strata_module_symbolic_dim(m, 1)->max, 16);
  EXPECT_EQ(strata_module_symbolic_dim(m, 2), nullptr);
  EXPECT_EQ(strata_module_weights_size(m), testWeights().size());
  EXPECT_EQ(strata_module_cpu_features(m), 0u);
  EXPECT_EQ(strata_module_workspace_bytes(m), 0u);
  STRATA_ASSERT_OK(strata_module_verify_weights(m));
}

TEST(ModuleTest, FindEntryListsTheEntriesWhenMissing) {
  LoadedModule module(standardArtifact());
  STRATA_ASSERT_OK(module.load());
  const strata_entry_signature_t* entry = nullptr;
  auto [code, message] =
      consumeStatus(strata_module_find_entry(module.get(), "decode", &entry));
  EXPECT_EQ(code, STRATA_STATUS_NOT_FOUND);
  EXPECT_NE(message.find("no entry 'decode'"), std::string::npos) << message;
  EXPECT_NE(message.find("'add_bias', 'two_outputs'"), std::string::npos)
      << message;
  EXPECT_EQ(entry, nullptr);
}

TEST(ModuleTest, LoadsFromFileAndOutlivesTheFile) {
  std::string path = tempPath("ok.strata");
  writeFile(path, standardArtifact());
  strata_module_t* module = nullptr;
  STRATA_ASSERT_OK(strata_module_load_file(path.c_str(),
                                           strata_allocator_system(), &module));
  std::remove(path.c_str());  // the mapping keeps the bytes alive
  STRATA_ASSERT_OK(strata_module_verify_weights(module));
  EXPECT_EQ(strata_module_entry_count(module), 7u);
  strata_module_release(module);
}

// STRATA_CODE_DIR (a profiling aid): the code section is written to a file
// of its own there and loaded from it, and the file stays for the
// profiler; a directory it cannot write to fails the load, naming it.
TEST(ModuleTest, CodeDirKeepsTheCodeForProfilers) {
  const std::string dir = tempPath("code_dir");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(setenv("STRATA_CODE_DIR", dir.c_str(), 1), 0);
  {
    LoadedModule module(standardArtifact());
    auto [code, message] = consumeStatus(module.load());
    EXPECT_EQ(code, STRATA_STATUS_OK) << message;
    const strata_entry_signature_t* scale = nullptr;
    if (code == STRATA_STATUS_OK)
      EXPECT_EQ(consumeStatus(strata_module_find_entry(module.get(), "scale",
                                                       &scale))
                    .first,
                STRATA_STATUS_OK);
  }
  const std::string missing = dir + "/missing";
  ASSERT_EQ(setenv("STRATA_CODE_DIR", missing.c_str(), 1), 0);
  {
    LoadedModule module(standardArtifact());
    auto [code, message] = consumeStatus(module.load());
    EXPECT_EQ(code, STRATA_STATUS_UNAVAILABLE);
    EXPECT_NE(message.find("STRATA_CODE_DIR"), std::string::npos) << message;
  }
  unsetenv("STRATA_CODE_DIR");
  std::vector<std::string> kept;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (std::strncmp(e->d_name, "strata-code-", 12) == 0)
        kept.push_back(e->d_name);
    closedir(d);
  }
  ASSERT_EQ(kept.size(), 1u);
  const std::string prefix = "strata-code-" + std::to_string(getpid()) + "-";
  EXPECT_EQ(kept[0].rfind(prefix, 0), 0u) << kept[0];
  for (const std::string& name : kept) std::remove((dir + "/" + name).c_str());
  rmdir(dir.c_str());
}

TEST(ModuleTest, RetainKeepsTheModuleAlive) {
  LoadedModule loaded(standardArtifact());
  STRATA_ASSERT_OK(loaded.load());
  strata_module_retain(loaded.get());
  strata_module_release(loaded.get());
  EXPECT_EQ(strata_module_entry_count(loaded.get()), 7u);
  strata_module_release(nullptr);  // allowed
}

TEST(ModuleTest, TwoModulesLoadSideBySide) {
  LoadedModule a(standardArtifact());
  LoadedModule b(standardArtifact());
  STRATA_ASSERT_OK(a.load());
  STRATA_ASSERT_OK(b.load());
  EXPECT_NE(a.get(), b.get());
}

TEST(ModuleTest, LoadFileErrors) {
  strata_module_t* module = nullptr;
  strata_allocator_t allocator = strata_allocator_system();
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_NOT_FOUND,
      strata_module_load_file(tempPath("missing").c_str(), allocator, &module));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_module_load_file("/", allocator, &module));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_module_load_file(nullptr, allocator, &module));
  std::string empty = tempPath("empty.strata");
  writeFile(empty, {});
  auto [code, message] =
      consumeStatus(strata_module_load_file(empty.c_str(), allocator, &module));
  EXPECT_EQ(code, STRATA_STATUS_DATA_LOSS);
  EXPECT_NE(message.find("0 bytes"), std::string::npos) << message;
  std::remove(empty.c_str());
  std::string corrupt = tempPath("corrupt.strata");
  std::vector<uint8_t> bytes = standardArtifact();
  bytes[bytes.size() - 1] ^= 1;  // weights: not checked at load
  bytes[300] ^= 1;               // manifest: checked
  writeFile(corrupt, bytes);
  auto [code2, message2] = consumeStatus(
      strata_module_load_file(corrupt.c_str(), allocator, &module));
  EXPECT_EQ(code2, STRATA_STATUS_DATA_LOSS);
  EXPECT_NE(message2.find(corrupt), std::string::npos) << message2;
  std::remove(corrupt.c_str());
  EXPECT_EQ(module, nullptr);
}

// A FIFO is refused at once: opening it for reading must not wait for a
// writer (it did before the open was non-blocking).
TEST(ModuleTest, FifoIsRefusedWithoutBlocking) {
  std::string path = tempPath("fifo.strata");
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  strata_module_t* module = nullptr;
  auto [code, message] = consumeStatus(
      strata_module_load_file(path.c_str(), strata_allocator_system(), &module));
  EXPECT_EQ(code, STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("not a regular file"), std::string::npos) << message;
  EXPECT_EQ(module, nullptr);
  std::remove(path.c_str());
}

TEST(ModuleTest, LoadRejectsUnalignedAndNullData) {
  std::vector<uint8_t> bytes = standardArtifact();
  std::vector<uint8_t> shifted(bytes.size() + 64);
  uint8_t* base = shifted.data();
  while (reinterpret_cast<uintptr_t>(base) % 64 != 1) ++base;
  std::memcpy(base, bytes.data(), bytes.size());
  strata_module_t* module = nullptr;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_module_load({base, bytes.size()}, strata_allocator_system(),
                         &module));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_module_load({nullptr, 10}, strata_allocator_system(), &module));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_module_load({base, bytes.size()}, strata_allocator_system(),
                         nullptr));
}

TEST(ModuleTest, MissingSymbolIsDataLoss) {
  ArtifactWriter writer = standardWriter();
  writer.addEntry({"ghost",
                   "strata_test_ghost",
                   {{"x", STRATA_DTYPE_F32, {4}}},
                   {{"y", STRATA_DTYPE_F32, {4}}}});
  auto [code, message] = consumeStatus(tryLoad(writeArtifact(writer)));
  EXPECT_EQ(code, STRATA_STATUS_DATA_LOSS);
  EXPECT_NE(message.find("entry 'ghost': symbol 'strata_test_ghost' not found"),
            std::string::npos)
      << message;
}

TEST(ModuleTest, CodeThatIsNotASharedObjectIsDataLoss) {
  ArtifactWriter writer = standardWriter();
  static const char kNotElf[] = "this is not an ELF file, just text";
  writer.setCpuCode(kNotElf, sizeof(kNotElf));
  auto [code, message] = consumeStatus(tryLoad(writeArtifact(writer)));
  EXPECT_EQ(code, STRATA_STATUS_DATA_LOSS);
  EXPECT_NE(message.find("not a loadable shared object"), std::string::npos)
      << message;
}

// The names of strata_x86_features.h, in table order.
std::vector<std::string> allCpuFeatureNames() {
#define STRATA_TEST_FEATURE_NAME(name, ...) name,
  return {STRATA_X86_FEATURES(STRATA_TEST_FEATURE_NAME)};
#undef STRATA_TEST_FEATURE_NAME
}

TEST(ModuleTest, UnknownCpuFeatureIsIncompatible) {
  ArtifactWriter writer = standardWriter();
  writer.setCpuFeatures({"avx10.9", "sse3"});
  auto [code, message] = consumeStatus(tryLoad(writeArtifact(writer)));
  EXPECT_EQ(code, STRATA_STATUS_INCOMPATIBLE);
  EXPECT_NE(message.find("this runtime cannot detect: 'avx10.9'"),
            std::string::npos)
      << message;
}

TEST(ModuleTest, HostFeaturesAreAccepted) {
  std::vector<std::string> host;
  for (const std::string& name : allCpuFeatureNames()) {
    if (strata_cpu_host_supports(name.c_str())) host.push_back(name);
  }
  ArtifactWriter writer = standardWriter();
  writer.setCpuFeatures(host);
  LoadedModule module(writeArtifact(writer));
  STRATA_ASSERT_OK(module.load());
  EXPECT_EQ(strata_module_cpu_features(module.get()),
            strata_cpu_features_host());
  ASSERT_EQ(strata_module_cpu_feature_count(module.get()), host.size());
  std::sort(host.begin(), host.end());
  for (size_t i = 0; i < host.size(); ++i) {
    EXPECT_EQ(strata_module_cpu_feature(module.get(), i), host[i]);
  }
  EXPECT_EQ(strata_module_cpu_feature(module.get(), host.size()), nullptr);
}

// The test kernels import no runtime kernel (only the allocator and the
// thread pool): the list is empty and its accessor says why not. The
// e2e precision check lists real ones (test/e2e/check_precision.py).
TEST(ModuleTest, KernelListOfCodeWithoutKernelImports) {
  LoadedModule module(writeArtifact(standardWriter()));
  STRATA_ASSERT_OK(module.load());
  EXPECT_EQ(strata_module_kernel_count(module.get()), 0u);
  const char *import = nullptr, *set = nullptr;
  auto [code, message] =
      consumeStatus(strata_module_kernel(module.get(), 0, &import, &set));
  EXPECT_EQ(code, STRATA_STATUS_OUT_OF_RANGE);
  EXPECT_NE(message.find("0 kernels"), std::string::npos) << message;
  auto [nullCode, nullMessage] =
      consumeStatus(strata_module_kernel(module.get(), 0, nullptr, &set));
  EXPECT_EQ(nullCode, STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(strata_module_kernel_count(nullptr), 0u);
}

// Every feature the host lacks is named, not only the first.
TEST(ModuleTest, MissingCpuFeaturesAreIncompatibleOnThisHost) {
  std::vector<std::string> lacking;
  for (const std::string& name : allCpuFeatureNames()) {
    if (!strata_cpu_host_supports(name.c_str())) lacking.push_back(name);
  }
  if (lacking.size() < 2) GTEST_SKIP() << "this CPU has almost every feature";
  ArtifactWriter writer = standardWriter();
  writer.setCpuFeatures({lacking[0], lacking[1]});
  auto [code, message] = consumeStatus(tryLoad(writeArtifact(writer)));
  EXPECT_EQ(code, STRATA_STATUS_INCOMPATIBLE);
  std::string first = lacking[0] < lacking[1] ? lacking[0] : lacking[1];
  std::string second = lacking[0] < lacking[1] ? lacking[1] : lacking[0];
  EXPECT_NE(message.find("this CPU lacks: '" + first + "', '" + second + "'"),
            std::string::npos)
      << message;
}

// The CPUID table against the compiler's own detection, where it has one.
TEST(CpuTest, DetectionAgreesWithTheCompiler) {
#if defined(__x86_64__)
  __builtin_cpu_init();
#define STRATA_EXPECT_SAME_DETECTION(name) \
  EXPECT_EQ(strata_cpu_host_supports(name), __builtin_cpu_supports(name) ? 1 : 0) \
      << name
  STRATA_EXPECT_SAME_DETECTION("sse3");
  STRATA_EXPECT_SAME_DETECTION("ssse3");
  STRATA_EXPECT_SAME_DETECTION("sse4.1");
  STRATA_EXPECT_SAME_DETECTION("sse4.2");
  STRATA_EXPECT_SAME_DETECTION("popcnt");
  STRATA_EXPECT_SAME_DETECTION("avx");
  STRATA_EXPECT_SAME_DETECTION("avx2");
  STRATA_EXPECT_SAME_DETECTION("fma");
  STRATA_EXPECT_SAME_DETECTION("bmi");
  STRATA_EXPECT_SAME_DETECTION("bmi2");
  STRATA_EXPECT_SAME_DETECTION("aes");
  STRATA_EXPECT_SAME_DETECTION("pclmul");
  STRATA_EXPECT_SAME_DETECTION("avx512f");
  STRATA_EXPECT_SAME_DETECTION("avx512bw");
  STRATA_EXPECT_SAME_DETECTION("avx512dq");
  STRATA_EXPECT_SAME_DETECTION("avx512vl");
  STRATA_EXPECT_SAME_DETECTION("avx512cd");
  STRATA_EXPECT_SAME_DETECTION("avx512vnni");
#undef STRATA_EXPECT_SAME_DETECTION
#endif
  EXPECT_EQ(strata_cpu_host_supports("no-such-feature"), 0);
  EXPECT_EQ(strata_cpu_host_supports(nullptr), 0);
}

// The kernels' ISA follows the host's features (AMX where Linux grants the
// tiles) and can be capped below them, never raised above.
TEST(CpuTest, KernelIsaCap) {
  const bool amx = strata_cpu_amx_status() == nullptr;
  const bool avx512 = strata_cpu_host_supports("avx512f");
  const bool avx2 = strata_cpu_host_supports("avx2") &&
                    strata_cpu_host_supports("fma");
  const std::string best =
      amx ? "amx" : avx512 ? "avx512" : avx2 ? "avx2" : "scalar";
  if (!amx) {
    EXPECT_NE(std::string(strata_cpu_amx_status()), "");
  }
  EXPECT_EQ(std::string(strata_cpu_kernel_isa()), best);
  EXPECT_EQ(strata_cpu_cap_kernel_isa("avx2"), nullptr);
  EXPECT_EQ(std::string(strata_cpu_kernel_isa()), avx2 ? "avx2" : "scalar");
  EXPECT_EQ(strata_cpu_cap_kernel_isa("scalar"), nullptr);
  EXPECT_EQ(std::string(strata_cpu_kernel_isa()), "scalar");
  strata_status_t status = strata_cpu_cap_kernel_isa("avx10");
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(strata_status_code(status), STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(strata_status_message(status)).find("'avx10'"),
            std::string::npos);
  strata_status_free(status);
  status = strata_cpu_cap_kernel_isa(nullptr);
  EXPECT_NE(status, nullptr);
  strata_status_free(status);
  EXPECT_EQ(std::string(strata_cpu_kernel_isa()), "scalar");
  EXPECT_EQ(strata_cpu_cap_kernel_isa("avx512"), nullptr);
  EXPECT_EQ(std::string(strata_cpu_kernel_isa()), amx ? "avx512" : best);
  if (amx) {
    EXPECT_NE(strata_cpu_amx_status(), nullptr);  // says it is capped
  }
  EXPECT_EQ(strata_cpu_cap_kernel_isa("amx"), nullptr);
  EXPECT_EQ(std::string(strata_cpu_kernel_isa()), best);
}

TEST(CpuTest, CheckNamesTheMissingFeature) {
  STRATA_ASSERT_OK(strata_cpu_features_check(0, 0));
  STRATA_ASSERT_OK(strata_cpu_features_check(
      STRATA_CPU_FEATURE_AVX2,
      STRATA_CPU_FEATURE_AVX2 | STRATA_CPU_FEATURE_FMA));
  auto [code, message] = consumeStatus(strata_cpu_features_check(
      STRATA_CPU_FEATURE_AVX2 | STRATA_CPU_FEATURE_AVX512BF16,
      STRATA_CPU_FEATURE_AVX2));
  EXPECT_EQ(code, STRATA_STATUS_INCOMPATIBLE);
  EXPECT_NE(message.find("'avx512bf16'"), std::string::npos) << message;
  EXPECT_STREQ(strata_cpu_feature_name(STRATA_CPU_FEATURE_FMA), "fma");
  EXPECT_EQ(strata_cpu_feature_name(uint64_t{1} << 63), nullptr);
}

TEST(ModuleTest, ManifestEntryLimitIsUnimplementedBeyondTheCallLimit) {
  // Built raw: the writer refuses more than STRATA_MAX_ENTRY_INPUTS inputs.
  ArtifactWriter big;
  std::vector<codegen::ArtifactTensor> inputs;
  for (int i = 0; i <= STRATA_MAX_ENTRY_INPUTS; ++i) {
    inputs.push_back({"x" + std::to_string(i), STRATA_DTYPE_F32, {1}});
  }
  big.addEntry(
      {"wide", "strata_test_wide", inputs, {{"y", STRATA_DTYPE_F32, {1}}}});
  std::string error;
  big.setCpuCode(testKernelBytes().data(), testKernelBytes().size());
  EXPECT_FALSE(big.validate(&error));
  auto [code, message] =
      consumeStatus(tryLoad(withRawManifest(big.encodeManifest())));
  EXPECT_EQ(code, STRATA_STATUS_UNIMPLEMENTED);
  EXPECT_NE(message.find("254 inputs; this runtime calls at most 253"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace strata::testing
