//===- format_v2_test.cc - Versions, sections, targets and state ----------===//
// SPDX-License-Identifier: Apache-2.0
// What format 2 added, corrupted: newer minors and majors, optional and
// required sections of unknown kinds, bad CPU target descriptors and bad
// state-tensor declarations. Each case must yield its specific status and
// message and never crash (this binary also runs under ASan+UBSan).

#include <gtest/gtest.h>

#include <string>

#include "status_matchers.h"
#include "strata/runtime/cpu.h"
#include "strata/runtime/runtime.hpp"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

using codegen::ArtifactWriter;

// The standard artifact with |extra| sections between code and weights;
// each CUDA code section among them gets a descriptor.
std::vector<uint8_t> withExtraSections(
    const std::vector<codegen::ArtifactSection>& extra) {
  format::Manifest described = manifestOf(standardWriter());
  for (size_t i = 0; i < extra.size(); ++i) {
    if (extra[i].kind != STRATA_SECTION_CUDA_CODE) continue;
    format::ManifestTarget cuda;
    cuda.section = static_cast<uint32_t>(2 + i);
    cuda.kind = STRATA_TARGET_CUDA;
    cuda.payload = {90, 0, 0, 0};
    described.targets.push_back(cuda);
  }
  std::vector<uint8_t> manifest = format::encodeManifest(described);
  std::vector<codegen::ArtifactSection> sections = standardSections(manifest);
  sections.insert(sections.begin() + 2, extra.begin(), extra.end());
  return assembled(sections);
}

std::vector<uint8_t> withMinor(std::vector<uint8_t> bytes, uint32_t minor) {
  patch<uint32_t>(&bytes, offsetof(strata_artifact_header_t, format_minor),
                  minor);
  ArtifactWriter::resealHeader(bytes.data());
  return bytes;
}

const std::vector<uint8_t> kPayload(100, 0x42);

TEST(FormatV2Test, UnknownOptionalSectionIsSkipped) {
  LoadedModule module(withExtraSections(
      {{77, 0, kPayload.data(), kPayload.size()},
       {STRATA_SECTION_CUDA_CODE, 0, kPayload.data(), kPayload.size()}}));
  STRATA_ASSERT_OK(module.load());
  EXPECT_EQ(strata_module_entry_count(module.get()), 7u);
  STRATA_ASSERT_OK(strata_module_verify_weights(module.get()));
}

TEST(FormatV2Test, CodeSectionsNeedTargetDescriptors) {
  std::vector<uint8_t> manifest = standardWriter().encodeManifest();
  std::vector<codegen::ArtifactSection> sections = standardSections(manifest);
  sections.insert(sections.begin() + 2, {STRATA_SECTION_CUDA_CODE, 0,
                                         kPayload.data(), kPayload.size()});
  EXPECT_TRUE(failsWith(assembled(sections), STRATA_STATUS_DATA_LOSS,
                        "code section 2 has no target descriptor"));
}

TEST(FormatV2Test, UnknownRequiredSectionIsRefusedNamingItsKind) {
  EXPECT_TRUE(failsWith(withExtraSections({{77, STRATA_SECTION_FLAG_REQUIRED,
                                            kPayload.data(), kPayload.size()}}),
                        STRATA_STATUS_INCOMPATIBLE,
                        "section 2 has kind 77, which this runtime does not "
                        "know, and is flagged required"));
}

// Skipped sections are still bounded: inside the file, aligned, apart.
TEST(FormatV2Test, SkippedSectionsAreBoundsChecked) {
  std::vector<uint8_t> bytes =
      withExtraSections({{77, 0, kPayload.data(), kPayload.size()}});
  strata_section_t skipped = sectionAt(bytes, 2);
  skipped.size = bytes.size();
  patchSection(&bytes, 2, skipped);
  EXPECT_TRUE(failsWith(bytes, STRATA_STATUS_DATA_LOSS,
                        "section 2 [offset " + std::to_string(skipped.offset) +
                            ", size " + std::to_string(bytes.size()) +
                            "] extends past end of file"));
  skipped.size = 200;  // into the weights
  patchSection(&bytes, 2, skipped);
  EXPECT_TRUE(failsWith(bytes, STRATA_STATUS_DATA_LOSS, "overlap"));
}

TEST(FormatV2Test, NewerMinorIsAccepted) {
  std::vector<uint8_t> newer =
      withMinor(standardArtifact(), STRATA_ARTIFACT_FORMAT_MINOR + 1);
  STRATA_ASSERT_OK(tryLoad(newer));
  // A newer minor may use reserved fields and flag bits; this reader
  // ignores them there, and only there.
  patch<uint8_t>(&newer, offsetof(strata_artifact_header_t, reserved) + 5, 9);
  ArtifactWriter::resealHeader(newer.data());
  STRATA_ASSERT_OK(tryLoad(newer));
  EXPECT_TRUE(failsWith(withMinor(newer, 0), STRATA_STATUS_DATA_LOSS,
                        "reserved header fields are not zero"));
  std::vector<uint8_t> flagged = withMinor(standardArtifact(), 7);
  strata_section_t weights = sectionAt(flagged, 2);
  weights.flags |= 0x80;
  patchSection(&flagged, 2, weights);
  STRATA_ASSERT_OK(tryLoad(flagged));
  EXPECT_TRUE(failsWith(withMinor(flagged, 0), STRATA_STATUS_DATA_LOSS,
                        "section 2 (weights) has unknown flags 0x81"));
}

TEST(FormatV2Test, NewerMajorIsRefusedNamingBothVersions) {
  std::vector<uint8_t> bytes = standardArtifact();
  patch<uint32_t>(&bytes, offsetof(strata_artifact_header_t, format_major),
                  7);
  ArtifactWriter::resealHeader(bytes.data());
  EXPECT_TRUE(failsWith(bytes, STRATA_STATUS_INCOMPATIBLE,
                        "artifact format version 7.x is newer than this "
                        "runtime's format version 2.3"));
}

// A value only a newer minor defines is an incompatibility there and
// corruption in an artifact of this reader's minor.
TEST(FormatV2Test, UnknownValuesDependOnTheMinor) {
  format::Manifest manifest = manifestOf(standardWriter());
  manifest.entries[0].inputs[0].dtype = 40;
  std::vector<uint8_t> bytes = withManifest(manifest);
  EXPECT_TRUE(failsWith(bytes, STRATA_STATUS_DATA_LOSS,
                        "entry 'add_bias' input 'x' has unknown dtype 40"));
  EXPECT_TRUE(failsWith(withMinor(bytes, 4), STRATA_STATUS_INCOMPATIBLE,
                        "has unknown dtype 40 (artifact format 2.4 is newer "
                        "than this reader's 2.3)"));
  manifest = manifestOf(standardWriter());
  manifest.entries[1].kind = 9;
  EXPECT_TRUE(failsWith(withManifest(manifest), STRATA_STATUS_DATA_LOSS,
                        "entry 'two_outputs' has unknown kind 9"));
  manifest.entries[1].kind = 0;
  EXPECT_TRUE(failsWith(withManifest(manifest), STRATA_STATUS_DATA_LOSS,
                        "entry 'two_outputs' has unknown kind 0"));
}

TEST(FormatV2Test, BadTargetDescriptors) {
  struct Case {
    void (*mutate)(format::Manifest&);
    strata_status_code_t code;
    const char* message;
  };
  const Case cases[] = {
      {[](format::Manifest& m) { m.targets.clear(); },
       STRATA_STATUS_DATA_LOSS, "code section 1 has no target descriptor"},
      {[](format::Manifest& m) { m.targets.push_back(m.targets[0]); },
       STRATA_STATUS_DATA_LOSS, "section 1 has two target descriptors"},
      {[](format::Manifest& m) { m.targets[0].section = 2; },
       STRATA_STATUS_DATA_LOSS,
       "target descriptor of section 2, which holds no code"},
      {[](format::Manifest& m) { m.targets[0].section = 3; },
       STRATA_STATUS_DATA_LOSS,
       "target descriptor of section 3, but the section table has 3"},
      {[](format::Manifest& m) { m.targets[0].kind = STRATA_TARGET_CUDA; },
       STRATA_STATUS_DATA_LOSS,
       "target descriptor of section 1 has target kind 2, expected 1"},
      {[](format::Manifest& m) { m.targets[0].cpu.arch = ""; },
       STRATA_STATUS_DATA_LOSS,
       "target descriptor of section 1 architecture is empty"},
      {[](format::Manifest& m) { m.targets[0].cpu.arch = "aarch64"; },
       STRATA_STATUS_INCOMPATIBLE,
       "compiled for CPU architecture 'aarch64'; this runtime runs 'x86-64'"},
      {[](format::Manifest& m) { m.targets[0].cpu.features = {"sse3", "avx"}; },
       STRATA_STATUS_DATA_LOSS,
       "CPU features are not sorted and unique at 'avx'"},
      {[](format::Manifest& m) { m.targets[0].cpu.features = {"avx", "avx"}; },
       STRATA_STATUS_DATA_LOSS,
       "CPU features are not sorted and unique at 'avx'"},
      {[](format::Manifest& m) { m.targets[0].cpu.features = {"AVX2"}; },
       STRATA_STATUS_DATA_LOSS,
       "CPU feature 'AVX2' has a character outside [a-z0-9._-]"},
      // Too short to be a feature: refused by the decoder's count bound.
      {[](format::Manifest& m) { m.targets[0].cpu.features = {""}; },
       STRATA_STATUS_DATA_LOSS, "cpu feature count 1 at byte"},
      {[](format::Manifest& m) {
         m.targets[0].cpu.features.clear();
         for (int i = 0; i < 300; ++i) {
           m.targets[0].cpu.features.push_back("f" + std::to_string(1000 + i));
         }
       },
       STRATA_STATUS_DATA_LOSS, "lists 300 CPU features, above the limit of 256"},
      {[](format::Manifest& m) {
         m.targets[0].cpu.features = {"avx10.9", "zz-new"};
       },
       STRATA_STATUS_INCOMPATIBLE,
       "this runtime cannot detect: 'avx10.9', 'zz-new'"},
  };
  for (const Case& c : cases) {
    format::Manifest manifest = manifestOf(standardWriter());
    c.mutate(manifest);
    EXPECT_TRUE(failsWith(withManifest(manifest), c.code, c.message))
        << c.message;
  }
}

// A descriptor of a section this reader does not know is skipped with it.
TEST(FormatV2Test, DescriptorOfAnUnknownSectionIsSkipped) {
  format::Manifest manifest = manifestOf(standardWriter());
  format::ManifestTarget future;
  future.section = 2;
  future.kind = 9;
  future.payload = {1, 2, 3};
  manifest.targets.push_back(future);
  std::vector<uint8_t> encoded = format::encodeManifest(manifest);
  std::vector<codegen::ArtifactSection> sections = standardSections(encoded);
  sections.insert(sections.begin() + 2,
                  {77, 0, kPayload.data(), kPayload.size()});
  STRATA_ASSERT_OK(tryLoad(assembled(sections)));
}

TEST(FormatV2Test, BadStateTensorDeclarations) {
  struct Case {
    void (*mutate)(format::ManifestState&);
    const char* message;
  };
  const Case cases[] = {
      {[](format::ManifestState& s) { s.tensor.dtype = 99; },
       "state tensor 'kv' has unknown dtype 99"},
      {[](format::ManifestState& s) { s.scope = 0; },
       "state tensor 'kv' has unknown scope 0"},
      {[](format::ManifestState& s) { s.scope = 3; },
       "state tensor 'kv' has unknown scope 3"},
      {[](format::ManifestState& s) { s.tensor.dims[0] = -9; },
       "state tensor 'kv' dim 0 refers to symbolic dim 8, but the dim table "
       "has 3"},
      {[](format::ManifestState& s) { s.tensor.dims[0] = INT64_MIN; },
       "state tensor 'kv' dim 0 refers to symbolic dim"},
      {[](format::ManifestState& s) { s.tensor.dims[0] = -3; },
       "state tensor 'kv' dim 0 refers to 'repeats', which has no maximum"},
      {[](format::ManifestState& s) {
         s.tensor.dims[0] = int64_t{1} << 40;
         s.tensor.dims[1] = 64;
       },
       "state tensor 'kv' can be 140737488355328 bytes, above the limit"},
      {[](format::ManifestState& s) {
         s.tensor.rank = 3;
         s.tensor.dims[0] = 0;
         s.tensor.dims[1] = int64_t{1} << 40;
         s.tensor.dims[2] = int64_t{1} << 40;
       },
       "state tensor 'kv' has strides that do not fit in 64 bits"},
      {[](format::ManifestState& s) { s.tensor.name = ""; },
       "state tensor name is empty"},
      {[](format::ManifestState& s) { s.tensor.name = std::string("k\0v", 3); },
       "state tensor name contains a NUL byte"},
  };
  for (const Case& c : cases) {
    ArtifactWriter writer = standardWriter();
    writer.addSymbolicDim("repeats", STRATA_DIM_MAX_FROM_DATA);
    writer.addStateTensor({{"kv", STRATA_DTYPE_F16, {-2, 4}}});
    format::Manifest manifest = manifestOf(writer);
    STRATA_ASSERT_OK(tryLoad(withManifest(manifest)));
    c.mutate(manifest.states[0]);
    EXPECT_TRUE(
        failsWith(withManifest(manifest), STRATA_STATUS_DATA_LOSS, c.message))
        << c.message;
    // The writer refuses the same declaration with the same words.
    std::string error;
    format::ManifestState& s = manifest.states[0];
    ArtifactWriter same = standardWriter();
    same.addSymbolicDim("repeats", STRATA_DIM_MAX_FROM_DATA);
    same.addStateTensor(
        {{s.tensor.name, s.tensor.dtype,
          std::vector<int64_t>(s.tensor.dims, s.tensor.dims + s.tensor.rank)},
         s.scope});
    EXPECT_FALSE(same.validate(&error));
    EXPECT_NE(error.find(c.message), std::string::npos) << error;
  }
  ArtifactWriter twice = standardWriter();
  twice.addStateTensor({{"kv", STRATA_DTYPE_F16, {4}}});
  twice.addStateTensor({{"kv", STRATA_DTYPE_F32, {4}}});
  format::Manifest manifest = manifestOf(twice);
  EXPECT_TRUE(failsWith(withManifest(manifest), STRATA_STATUS_DATA_LOSS,
                        "duplicate state tensor 'kv'"));
  ArtifactWriter deep = standardWriter();
  deep.addStateTensor({{"kv", STRATA_DTYPE_F16, {1, 1, 1, 1, 1, 1, 1, 1, 1}}});
  std::string error;
  EXPECT_FALSE(deep.validate(&error));
  EXPECT_NE(error.find("state tensor 'kv' has rank 9, above the limit of 8"),
            std::string::npos)
      << error;
}

// Entry kinds and state tensors, read back through the C API and the C++
// wrapper.
TEST(FormatV2Test, EntryKindsAndStateAreExposed) {
  ArtifactWriter writer = standardWriter();
  int64_t seq = writer.addSymbolicDim("sequence", 16);
  writer.addEntry({"prefill", "strata_test_echo",
                   {{"x", STRATA_DTYPE_F32, {4}}},
                   {{"y", STRATA_DTYPE_F32, {4}}},
                   STRATA_ENTRY_KIND_PREFILL});
  writer.addEntry({"decode", "strata_test_echo",
                   {{"x", STRATA_DTYPE_F32, {4}}},
                   {{"y", STRATA_DTYPE_F32, {4}}},
                   STRATA_ENTRY_KIND_DECODE});
  writer.addStateTensor({{"kv.0", STRATA_DTYPE_BF16, {2, seq, 8}},
                         STRATA_STATE_SCOPE_PER_SEQUENCE});
  writer.addStateTensor({{"table", STRATA_DTYPE_I32, {}},
                         STRATA_STATE_SCOPE_SHARED});
  std::vector<uint8_t> bytes = writeArtifact(writer);
  AlignedBytes aligned(bytes);
  strata::Module module;
  STRATA_ASSERT_OK(strata::Module::load(aligned.span(), &module).release());
  const strata_entry_signature_t* entry = nullptr;
  STRATA_ASSERT_OK(strata_module_find_entry(module.get(), "add_bias", &entry));
  EXPECT_EQ(entry->kind, STRATA_ENTRY_KIND_GENERIC);
  STRATA_ASSERT_OK(strata_module_find_entry(module.get(), "prefill", &entry));
  EXPECT_EQ(entry->kind, STRATA_ENTRY_KIND_PREFILL);
  STRATA_ASSERT_OK(strata_module_find_entry(module.get(), "decode", &entry));
  EXPECT_EQ(entry->kind, STRATA_ENTRY_KIND_DECODE);

  ASSERT_EQ(module.stateCount(), 2u);
  const strata_state_signature_t* kv = module.state(0);
  EXPECT_STREQ(kv->name, "kv.0");
  EXPECT_EQ(kv->dtype, STRATA_DTYPE_BF16);
  EXPECT_EQ(kv->scope, STRATA_STATE_SCOPE_PER_SEQUENCE);
  ASSERT_EQ(kv->rank, 3u);
  EXPECT_EQ(kv->dims[0].extent, 2);
  EXPECT_EQ(kv->dims[1].extent, -1);
  EXPECT_STREQ(kv->dims[1].symbol, "sequence");
  EXPECT_EQ(kv->dims[1].max, 16);
  const strata_state_signature_t* table = strata_module_state(module.get(), 1);
  EXPECT_EQ(table->scope, STRATA_STATE_SCOPE_SHARED);
  EXPECT_EQ(table->rank, 0u);
  EXPECT_EQ(module.state(2), nullptr);
  EXPECT_EQ(module.cpuFeatureCount(), 0u);
  EXPECT_EQ(module.cpuFeature(0), nullptr);
}

}  // namespace
}  // namespace strata::testing
