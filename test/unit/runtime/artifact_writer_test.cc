//===- artifact_writer_test.cc - The .strata writer
//------------------------===//
// SPDX-License-Identifier: Apache-2.0
// Layout, determinism and validation of codegen/artifact's ArtifactWriter.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "codegen/artifact/ArtifactWriter.h"
#include "status_matchers.h"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

using codegen::ArtifactWriter;

TEST(ArtifactWriterTest, LayoutFollowsTheFormat) {
  std::vector<uint8_t> bytes = standardArtifact();
  ASSERT_GE(bytes.size(), 256u);
  auto header = peek<strata_artifact_header_t>(bytes, 0);
  EXPECT_EQ(std::memcmp(header.magic, STRATA_ARTIFACT_MAGIC, 8), 0);
  EXPECT_EQ(header.format_major, STRATA_ARTIFACT_FORMAT_MAJOR);
  EXPECT_EQ(header.format_minor, STRATA_ARTIFACT_FORMAT_MINOR);
  EXPECT_EQ(header.kernel_abi_version, STRATA_KERNEL_ABI_VERSION);
  EXPECT_EQ(header.file_size, bytes.size());
  EXPECT_EQ(header.section_count, 3u);
  EXPECT_EQ(header.section_table_offset, 128u);
  uint64_t end = 0;
  for (uint32_t i = 0; i < 3; ++i) {
    strata_section_t s = sectionAt(bytes, i);
    EXPECT_EQ(s.flags, STRATA_SECTION_FLAG_REQUIRED);
    EXPECT_EQ(s.offset % 64, 0u);
    EXPECT_GE(s.offset, end);
    EXPECT_EQ(s.checksum,
              ArtifactWriter::checksum(bytes.data() + s.offset, s.size));
    end = s.offset + s.size;
  }
  EXPECT_EQ(end, bytes.size());
  strata_section_t weights = sectionOfKind(bytes, STRATA_SECTION_WEIGHTS);
  EXPECT_EQ(std::memcmp(bytes.data() + weights.offset, testWeights().data(),
                        testWeights().size()),
            0);
  // Resealing a sealed header changes nothing.
  std::vector<uint8_t> copy = bytes;
  ArtifactWriter::resealHeader(copy.data());
  EXPECT_EQ(copy, bytes);
}

TEST(ArtifactWriterTest, OutputIsDeterministic) {
  EXPECT_EQ(standardArtifact(), standardArtifact());
}

TEST(ArtifactWriterTest, SymbolicDimsAreSharedByName) {
  ArtifactWriter writer;
  EXPECT_EQ(writer.addSymbolicDim("batch", 4), -1);
  EXPECT_EQ(writer.addSymbolicDim("sequence", 128), -2);
  EXPECT_EQ(writer.addSymbolicDim("batch", 8), -1);
}

TEST(ArtifactWriterTest, WritesFilesThatLoad) {
  std::string path =
      "/tmp/strata_writer_test_" + std::to_string(getpid()) + ".strata";
  std::string error;
  ASSERT_TRUE(standardWriter().writeToFile(path, &error)) << error;
  EXPECT_EQ(readFileBytes(path), standardArtifact());
  strata_module_t* module = nullptr;
  STRATA_ASSERT_OK(strata_module_load_file(path.c_str(),
                                           strata_allocator_system(), &module));
  strata_module_release(module);
  std::remove(path.c_str());
  EXPECT_FALSE(
      standardWriter().writeToFile("/nonexistent-dir/x.strata", &error));
  EXPECT_NE(error.find("/nonexistent-dir/x.strata"), std::string::npos)
      << error;
}

// Writing over an artifact another process has loaded (mapped) replaces the
// file instead of truncating it: the old mapping keeps its bytes and size
// (in place, the loaded module's next page fault past the new end was a
// SIGBUS), and the module still verifies and runs.
TEST(ArtifactWriterTest, RewriteLeavesLoadedArtifactsIntact) {
  std::string path =
      "/tmp/strata_writer_rewrite_" + std::to_string(getpid()) + ".strata";
  std::string error;
  ASSERT_TRUE(standardWriter().writeToFile(path, &error)) << error;
  strata_module_t* module = nullptr;
  STRATA_ASSERT_OK(strata_module_load_file(path.c_str(),
                                           strata_allocator_system(), &module));
  FILE* old = std::fopen(path.c_str(), "rb");
  ASSERT_NE(old, nullptr);
  codegen::ArtifactWriter smaller;
  smaller.addEntry({"e", "strata_test_add_bias", {}, {}});
  smaller.setCpuCode(testKernelBytes().data(), 16);
  ASSERT_TRUE(smaller.writeToFile(path, &error)) << error;
  EXPECT_NE(readFileBytes(path), standardArtifact());
  // The file the module mapped is unchanged.
  std::vector<uint8_t> seen(standardArtifact().size() + 1);
  EXPECT_EQ(std::fread(seen.data(), 1, seen.size(), old),
            standardArtifact().size());
  seen.pop_back();
  EXPECT_EQ(seen, standardArtifact());
  std::fclose(old);
  STRATA_ASSERT_OK(strata_module_verify_weights(module));
  strata_module_release(module);
  std::remove(path.c_str());
}

TEST(ArtifactWriterTest, SinkFailureIsReported) {
  std::string error;
  EXPECT_FALSE(standardWriter().write([](const void*, size_t) { return false; },
                                      &error));
  EXPECT_NE(error.find("sink"), std::string::npos);
}

// Each mutation of a valid writer must be refused with |needle|.
void expectInvalid(void (*mutate)(ArtifactWriter&), const std::string& needle) {
  ArtifactWriter writer = standardWriter();
  mutate(writer);
  std::string error;
  EXPECT_FALSE(writer.validate(&error)) << needle;
  EXPECT_NE(error.find(needle), std::string::npos)
      << "'" << error << "' lacks '" << needle << "'";
  std::vector<uint8_t> bytes;
  EXPECT_FALSE(writer.writeToVector(&bytes, nullptr));
}

TEST(ArtifactWriterTest, ValidationMirrorsTheLoader) {
  EXPECT_FALSE(ArtifactWriter().validate(nullptr));
  expectInvalid([](ArtifactWriter& w) { w.setCpuCode(nullptr, 0); },
                "code section is empty");
  expectInvalid([](ArtifactWriter& w) { w.addSymbolicDim("", 4); },
                "symbolic dim name is empty");
  expectInvalid([](ArtifactWriter& w) { w.addSymbolicDim("neg", -1); },
                "symbolic dim 'neg' has maximum -1");
  // A dim with no maximum (computed from tensor data) is for outputs only.
  expectInvalid(
      [](ArtifactWriter& w) {
        int64_t d = w.addSymbolicDim("repeats", STRATA_DIM_MAX_FROM_DATA);
        w.addEntry({"e", "s", {{"x", STRATA_DTYPE_F32, {d}}}, {}});
      },
      "entry 'e' input 'x' dim 0 refers to 'repeats', which has no maximum");
  {
    ArtifactWriter writer = standardWriter();
    int64_t d = writer.addSymbolicDim("repeats", STRATA_DIM_MAX_FROM_DATA);
    writer.addEntry({"tile", "s", {}, {{"y", STRATA_DTYPE_F32, {d, d}}}});
    std::string error;
    EXPECT_TRUE(writer.validate(&error)) << error;
  }
  expectInvalid(
      [](ArtifactWriter& w) {
        w.addEntry({"add_bias", "s", {}, {}});
      },
      "duplicate entry name 'add_bias'");
  expectInvalid(
      [](ArtifactWriter& w) {
        w.addEntry({"e", "", {}, {}});
      },
      "symbol of entry 'e' is empty");
  expectInvalid(
      [](ArtifactWriter& w) {
        w.addEntry({std::string(5000, 'n'), "s", {}, {}});
      },
      "bytes long, above the limit of 4096");
  expectInvalid(
      [](ArtifactWriter& w) {
        w.addEntry({std::string("a\0b", 3), "s", {}, {}});
      },
      "contains a NUL byte");
  expectInvalid(
      [](ArtifactWriter& w) {
        w.addEntry({"e", "s", {{"x", 99, {1}}}, {}});
      },
      "entry 'e' input 'x' has unknown dtype 99");
  expectInvalid(
      [](ArtifactWriter& w) {
        w.addEntry({"e",
                    "s",
                    {},
                    {{"y", STRATA_DTYPE_F32, {1, 1, 1, 1, 1, 1, 1, 1, 1}}}});
      },
      "entry 'e' output 'y' has rank 9");
  expectInvalid(
      [](ArtifactWriter& w) {
        w.addEntry({"e", "s", {{"x", STRATA_DTYPE_F32, {-7}}}, {}});
      },
      "refers to symbolic dim 6, but the dim table has 2");
  expectInvalid(
      [](ArtifactWriter& w) {
        w.addEntry(
            {"e",
             "s",
             {{"x", STRATA_DTYPE_F32, {1}}, {"x", STRATA_DTYPE_F32, {1}}},
             {}});
      },
      "entry 'e' has two inputs named 'x'");
  expectInvalid(
      [](ArtifactWriter& w) {
        w.addEntry(
            {"e", "s", {{"x", STRATA_DTYPE_F64, {1 << 30, 1 << 30}}}, {}});
      },
      "above the limit of 17592186044416");
  expectInvalid(
      [](ArtifactWriter& w) {
        w.addEntry({"e",
                    "s",
                    {},
                    {{"y", STRATA_DTYPE_F32,
                      {0, int64_t{1} << 40, int64_t{1} << 40}}}});
      },
      "entry 'e' output 'y' has strides that do not fit in 64 bits");
  expectInvalid(
      [](ArtifactWriter& w) {
        std::vector<codegen::ArtifactTensor> inputs;
        for (int i = 0; i < 300; ++i) {
          inputs.push_back({"x" + std::to_string(i), STRATA_DTYPE_F32, {1}});
        }
        w.addEntry({"e", "s", inputs, {}});
      },
      "entry 'e' takes 300 inputs; this runtime calls at most 253");
}

}  // namespace
}  // namespace strata::testing
