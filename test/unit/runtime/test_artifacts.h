//===- test_artifacts.h - Builds .strata artifacts for runtime tests ------===//
// SPDX-License-Identifier: Apache-2.0
// The standard test artifact embeds the shared library built from
// testdata/test_kernels.c (path in STRATA_TEST_KERNELS_PATH) with one entry
// per kernel, and 4 bias floats {1, 2, 3, 4} plus a 60-byte pattern as
// weights.

#ifndef STRATA_TEST_UNIT_RUNTIME_TEST_ARTIFACTS_H_
#define STRATA_TEST_UNIT_RUNTIME_TEST_ARTIFACTS_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "codegen/abi/strata_artifact_format.h"
#include "codegen/artifact/ArtifactWriter.h"
#include "codegen/format/ManifestCodec.h"
#include "status_matchers.h"
#include "strata/runtime/api.h"

namespace strata::testing {

/// Reads a whole file ("" content if missing).
inline std::vector<uint8_t> readFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

/// The bytes of the test kernels' shared library.
inline const std::vector<uint8_t>& testKernelBytes() {
  static const std::vector<uint8_t> bytes =
      readFileBytes(STRATA_TEST_KERNELS_PATH);
  return bytes;
}

/// The standard weights: bias {1, 2, 3, 4} then bytes 16..75.
inline const std::vector<uint8_t>& testWeights() {
  static const std::vector<uint8_t> bytes = [] {
    std::vector<uint8_t> w(76);
    const float bias[4] = {1, 2, 3, 4};
    std::memcpy(w.data(), bias, sizeof(bias));
    for (size_t i = 16; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i);
    return w;
  }();
  return bytes;
}

/// A writer holding the standard entries (borrowing static code/weights).
inline codegen::ArtifactWriter standardWriter() {
  using codegen::ArtifactTensor;
  codegen::ArtifactWriter writer;
  int64_t batch = writer.addSymbolicDim("batch", 8);
  int64_t seq = writer.addSymbolicDim("sequence", 16);
  writer.addEntry({"add_bias",
                   "strata_test_add_bias",
                   {{"x", STRATA_DTYPE_F32, {batch, 4}}},
                   {{"y", STRATA_DTYPE_F32, {batch, 4}}}});
  writer.addEntry(
      {"two_outputs",
       "strata_test_two_outputs",
       {{"a", STRATA_DTYPE_F32, {seq, 3}}, {"b", STRATA_DTYPE_I32, {seq}}},
       {{"row_sum", STRATA_DTYPE_F32, {seq}},
        {"present.0/doubled", STRATA_DTYPE_I64, {seq}}}});
  writer.addEntry({"scale",
                   "strata_test_scale",
                   {{"x", STRATA_DTYPE_F32, {}}},
                   {{"y", STRATA_DTYPE_F32, {}}}});
  std::vector<ArtifactTensor> eight;
  for (int i = 0; i < 8; ++i) {
    eight.push_back({"x" + std::to_string(i), STRATA_DTYPE_F32, {4}});
  }
  writer.addEntry(
      {"sum8", "strata_test_sum8", eight, {{"y", STRATA_DTYPE_F32, {4}}}});
  writer.addEntry({"bad_size",
                   "strata_test_bad_size",
                   {{"x", STRATA_DTYPE_F32, {4}}},
                   {{"y", STRATA_DTYPE_F32, {4}}}});
  writer.addEntry({"bad_stride",
                   "strata_test_bad_stride",
                   {{"x", STRATA_DTYPE_F32, {2, 4}}},
                   {{"y", STRATA_DTYPE_F32, {2, 4}}}});
  writer.addEntry({"echo",
                   "strata_test_echo",
                   {{"x", STRATA_DTYPE_F32, {4}}},
                   {{"y", STRATA_DTYPE_F32, {4}}}});
  writer.setWeights(testWeights().data(), testWeights().size());
  writer.setCpuCode(testKernelBytes().data(), testKernelBytes().size());
  return writer;
}

/// Serializes |writer| (empty on failure, which the caller's checks catch).
inline std::vector<uint8_t> writeArtifact(
    const codegen::ArtifactWriter& writer) {
  std::vector<uint8_t> bytes;
  std::string error;
  if (!writer.writeToVector(&bytes, &error)) bytes.clear();
  return bytes;
}

/// A PARALLEL section naming tensor rank |rank| of |ranks| in pipeline
/// stage |stage| of |stages|.
inline strata_parallel_section_t parallelSection(uint32_t rank, uint32_t ranks,
                                                 uint32_t stage = 0,
                                                 uint32_t stages = 1) {
  strata_parallel_section_t s = {};
  s.tensor_rank = rank;
  s.tensor_ranks = ranks;
  s.pipeline_stage = stage;
  s.pipeline_stages = stages;
  return s;
}

/// The standard artifact as tensor rank |rank| of |ranks| in pipeline
/// stage |stage| of |stages|.
inline std::vector<uint8_t> rankArtifact(uint32_t rank, uint32_t ranks,
                                         uint32_t stage = 0,
                                         uint32_t stages = 1) {
  codegen::ArtifactWriter writer = standardWriter();
  writer.setParallel(parallelSection(rank, ranks, stage, stages));
  return writeArtifact(writer);
}

/// The standard artifact's bytes.
inline std::vector<uint8_t> standardArtifact() {
  return writeArtifact(standardWriter());
}

/// A copy of artifact bytes in 64-byte-aligned memory (strata_module_load
/// requires it) that outlives the module loaded from it.
class AlignedBytes {
 public:
  explicit AlignedBytes(const std::vector<uint8_t>& bytes)
      : size_(bytes.size()),
        data_(static_cast<uint8_t*>(
            std::aligned_alloc(64, (bytes.size() + 64) / 64 * 64))) {
    if (!bytes.empty()) std::memcpy(data_, bytes.data(), bytes.size());
  }
  ~AlignedBytes() { std::free(data_); }
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  strata_const_byte_span_t span() const { return {data_, size_}; }

 private:
  size_t size_;
  uint8_t* data_;
};

/// Loads |bytes| from an aligned copy and returns the status; on success
/// the module is released again at once.
inline strata_status_t tryLoad(const std::vector<uint8_t>& bytes) {
  AlignedBytes aligned(bytes);
  strata_module_t* module = nullptr;
  strata_status_t status =
      strata_module_load(aligned.span(), strata_allocator_system(), &module);
  strata_module_release(module);
  return status;
}

/// Elements of the loops entry's x and y.
constexpr int64_t kLoopsElements = 1024;

/// The standard artifact plus "loops" (strata_test_loops: y = x + n, as n
/// parallel loops that each add one; |hook| holds a function and its
/// context that run before each loop, 0 for none).
inline std::vector<uint8_t> loopsArtifact() {
  codegen::ArtifactWriter writer = standardWriter();
  writer.addEntry({"loops",
                   "strata_test_loops",
                   {{"x", STRATA_DTYPE_F32, {kLoopsElements}},
                    {"n", STRATA_DTYPE_I64, {}},
                    {"hook", STRATA_DTYPE_I64, {2}}},
                   {{"y", STRATA_DTYPE_F32, {kLoopsElements}}}});
  return writeArtifact(writer);
}

/// Loads |bytes| and checks the code and that the message contains |needle|.
inline ::testing::AssertionResult failsWith(const std::vector<uint8_t>& bytes,
                                     strata_status_code_t expected,
                                     const std::string& needle) {
  auto [code, message] = consumeStatus(tryLoad(bytes));
  if (code != expected || message.find(needle) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "got " << strata_status_code_string(code) << " '" << message
           << "', expected " << strata_status_code_string(expected)
           << " containing '" << needle << "'";
  }
  return ::testing::AssertionSuccess();
}

/// A module loaded from memory together with the bytes it borrows.
class LoadedModule {
 public:
  explicit LoadedModule(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
  ~LoadedModule() { strata_module_release(module_); }
  strata_status_t load() {
    return strata_module_load(bytes_.span(), strata_allocator_system(),
                              &module_);
  }
  strata_module_t* get() const { return module_; }

 private:
  AlignedBytes bytes_;
  strata_module_t* module_ = nullptr;
};

/// Overwrites the |T| at |offset| in |bytes|.
template <typename T>
void patch(std::vector<uint8_t>* bytes, size_t offset, T value) {
  std::memcpy(bytes->data() + offset, &value, sizeof(T));
}

/// Reads the |T| at |offset|.
template <typename T>
T peek(const std::vector<uint8_t>& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

/// The section table entry |index| of an artifact.
inline strata_section_t sectionAt(const std::vector<uint8_t>& bytes,
                                  uint32_t index) {
  return peek<strata_section_t>(
      bytes, STRATA_ARTIFACT_HEADER_SIZE + index * sizeof(strata_section_t));
}

/// The first section of |kind|.
inline strata_section_t sectionOfKind(const std::vector<uint8_t>& bytes,
                                      uint32_t kind) {
  uint32_t count =
      peek<uint32_t>(bytes, offsetof(strata_artifact_header_t, section_count));
  for (uint32_t i = 0; i < count && i < STRATA_ARTIFACT_MAX_SECTIONS; ++i) {
    if (sectionAt(bytes, i).kind == kind) return sectionAt(bytes, i);
  }
  return {};
}

/// Rewrites section table entry |index| and fixes both checksums, so only
/// the semantic defect under test remains.
inline void patchSection(std::vector<uint8_t>* bytes, uint32_t index,
                         const strata_section_t& section) {
  size_t table = STRATA_ARTIFACT_HEADER_SIZE;
  patch(bytes, table + index * sizeof(strata_section_t), section);
  uint32_t count =
      peek<uint32_t>(*bytes, offsetof(strata_artifact_header_t, section_count));
  patch(bytes, offsetof(strata_artifact_header_t, section_table_checksum),
        codegen::ArtifactWriter::checksum(bytes->data() + table,
                                          count * sizeof(strata_section_t)));
  codegen::ArtifactWriter::resealHeader(bytes->data());
}

/// An artifact of raw sections (ArtifactWriter::assemble), empty on failure.
inline std::vector<uint8_t> assembled(
    const std::vector<codegen::ArtifactSection>& sections) {
  std::vector<uint8_t> bytes;
  std::string error;
  bool ok = codegen::ArtifactWriter::assemble(
      sections,
      [&](const void* data, size_t size) {
        const auto* b = static_cast<const uint8_t*>(data);
        bytes.insert(bytes.end(), b, b + size);
        return true;
      },
      &error);
  if (!ok) bytes.clear();
  return bytes;
}

/// The writer's three sections: |manifest| bytes, the standard code (at
/// index 1, which a manifest's target descriptor names) and weights.
inline std::vector<codegen::ArtifactSection> standardSections(
    const std::vector<uint8_t>& manifest) {
  return {{STRATA_SECTION_MANIFEST, STRATA_SECTION_FLAG_REQUIRED,
           manifest.data(), manifest.size()},
          {STRATA_SECTION_CPU_CODE, STRATA_SECTION_FLAG_REQUIRED,
           testKernelBytes().data(), testKernelBytes().size()},
          {STRATA_SECTION_WEIGHTS, STRATA_SECTION_FLAG_REQUIRED,
           testWeights().data(), testWeights().size()}};
}

/// An artifact with raw |manifest| bytes and the standard code and weights.
inline std::vector<uint8_t> withRawManifest(
    const std::vector<uint8_t>& manifest) {
  return assembled(standardSections(manifest));
}

/// The manifest |writer| would write, to be mutated past its validation.
inline format::Manifest manifestOf(const codegen::ArtifactWriter& writer) {
  format::Manifest manifest;
  writer.buildManifest(&manifest, nullptr);
  return manifest;
}

/// An artifact with |manifest| encoded as is and the standard code and
/// weights.
inline std::vector<uint8_t> withManifest(const format::Manifest& manifest) {
  return withRawManifest(format::encodeManifest(manifest));
}

}  // namespace strata::testing

#endif  // STRATA_TEST_UNIT_RUNTIME_TEST_ARTIFACTS_H_
