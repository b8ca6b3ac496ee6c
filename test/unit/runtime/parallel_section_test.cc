//===- parallel_section_test.cc - The PARALLEL section, written and read --===//
// SPDX-License-Identifier: Apache-2.0
// One rank of a model split into tensor ranks and pipeline stages: the
// writer's section, the module's rank and layout, and every defect of the
// section the loader refuses (this binary also runs under ASan+UBSan).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "status_matchers.h"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

using codegen::ArtifactWriter;

// The standard manifest, code and weights with a PARALLEL section of
// |bytes| (flags |flags|) between code and weights, as raw sections.
std::vector<uint8_t> withParallelBytes(const std::vector<uint8_t>& bytes,
                                       uint32_t flags =
                                           STRATA_SECTION_FLAG_REQUIRED) {
  std::vector<uint8_t> manifest = standardWriter().encodeManifest();
  std::vector<codegen::ArtifactSection> sections = standardSections(manifest);
  sections.insert(sections.begin() + 2, {STRATA_SECTION_PARALLEL, flags,
                                         bytes.data(), bytes.size()});
  return assembled(sections);
}

std::vector<uint8_t> bytesOf(const strata_parallel_section_t& s) {
  const auto* b = reinterpret_cast<const uint8_t*>(&s);
  return std::vector<uint8_t>(b, b + sizeof(s));
}

std::vector<uint8_t> withMinor(std::vector<uint8_t> bytes, uint32_t minor) {
  patch<uint32_t>(&bytes, offsetof(strata_artifact_header_t, format_minor),
                  minor);
  ArtifactWriter::resealHeader(bytes.data());
  return bytes;
}

TEST(ParallelSectionTest, WriterAddsARequiredSectionBeforeTheWeights) {
  std::vector<uint8_t> bytes = rankArtifact(1, 2);
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(
      peek<uint32_t>(bytes, offsetof(strata_artifact_header_t, format_minor)),
      3u);
  const strata_section_t parallel = sectionAt(bytes, 2);
  EXPECT_EQ(parallel.kind, uint32_t{STRATA_SECTION_PARALLEL});
  EXPECT_EQ(parallel.flags, STRATA_SECTION_FLAG_REQUIRED);
  EXPECT_EQ(parallel.size, 32u);
  EXPECT_EQ(sectionAt(bytes, 3).kind, uint32_t{STRATA_SECTION_WEIGHTS});
  const auto stored = peek<strata_parallel_section_t>(bytes, parallel.offset);
  EXPECT_EQ(stored.tensor_rank, 1u);
  EXPECT_EQ(stored.tensor_ranks, 2u);
  EXPECT_EQ(stored.pipeline_stages, 1u);
}

TEST(ParallelSectionTest, ModuleReportsItsRank) {
  LoadedModule rank(rankArtifact(2, 3));
  STRATA_ASSERT_OK(rank.load());
  uint32_t r = 9, n = 9;
  strata_module_parallel(rank.get(), &r, &n);
  EXPECT_EQ(r, 2u);
  EXPECT_EQ(n, 3u);
  strata_module_parallel(rank.get(), nullptr, nullptr);  // allowed
  uint32_t t = 9, tn = 9, s = 9, sn = 9;
  strata_module_parallel_layout(rank.get(), &t, &tn, &s, &sn);
  EXPECT_EQ(t, 2u);
  EXPECT_EQ(tn, 3u);
  EXPECT_EQ(s, 0u);
  EXPECT_EQ(sn, 1u);

  LoadedModule whole(standardArtifact());
  STRATA_ASSERT_OK(whole.load());
  strata_module_parallel(whole.get(), &r, &n);
  EXPECT_EQ(r, 0u);
  EXPECT_EQ(n, 1u);
  strata_module_parallel_layout(whole.get(), &t, &tn, &s, &sn);
  EXPECT_EQ(t, 0u);
  EXPECT_EQ(tn, 1u);
  EXPECT_EQ(s, 0u);
  EXPECT_EQ(sn, 1u);
  strata_module_parallel_layout(whole.get(), nullptr, nullptr, nullptr,
                                nullptr);  // allowed
}

// Stage s, tensor rank t of S stages of T ranks is world rank s * T + t of
// T * S; a stage may have one tensor rank.
TEST(ParallelSectionTest, PipelineStagesMakeTheWorldRank) {
  struct Case {
    uint32_t t, tn, s, sn, rank, ranks;
  };
  const Case cases[] = {{1, 2, 2, 3, 5, 6},
                        {0, 2, 1, 2, 2, 4},
                        {0, 1, 1, 2, 1, 2},
                        {0, 1, 0, 4, 0, 4}};
  for (const Case& c : cases) {
    LoadedModule module(rankArtifact(c.t, c.tn, c.s, c.sn));
    STRATA_ASSERT_OK(module.load());
    uint32_t r = 99, n = 99;
    strata_module_parallel(module.get(), &r, &n);
    EXPECT_EQ(r, c.rank);
    EXPECT_EQ(n, c.ranks);
    uint32_t t = 99, tn = 99, s = 99, sn = 99;
    strata_module_parallel_layout(module.get(), &t, &tn, &s, &sn);
    EXPECT_EQ(t, c.t);
    EXPECT_EQ(tn, c.tn);
    EXPECT_EQ(s, c.s);
    EXPECT_EQ(sn, c.sn);
  }
}

TEST(ParallelSectionTest, WriterRefusesWhatTheLoaderWouldRefuse) {
  struct Case {
    strata_parallel_section_t section;
    const char* message;
  };
  strata_parallel_section_t reserved = parallelSection(0, 2);
  reserved.reserved[3] = 1;
  const Case cases[] = {
      {parallelSection(0, 1),
       "the parallel section's 1 tensor ranks in 1 pipeline stages are 1 "
       "process; a split model has at least 2"},
      {parallelSection(2, 2),
       "the parallel section's tensor rank 2 is not below its 2 tensor "
       "ranks"},
      {parallelSection(0, 2, 2, 2),
       "the parallel section's pipeline stage 2 is not below its 2 pipeline "
       "stages"},
      {parallelSection(0, 256, 0, 257),
       "the parallel section's 256 tensor ranks in 257 pipeline stages are "
       "65792 processes, more than 65536"},
      {reserved, "the parallel section's reserved words are not zero"},
  };
  for (const Case& c : cases) {
    ArtifactWriter writer = standardWriter();
    writer.setParallel(c.section);
    std::vector<uint8_t> bytes;
    std::string error;
    EXPECT_FALSE(writer.writeToVector(&bytes, &error));
    EXPECT_EQ(error, c.message);
  }
}

TEST(ParallelSectionTest, RankValuesOfNoGroupAreCorrupt) {
  EXPECT_TRUE(failsWith(withParallelBytes(bytesOf(parallelSection(0, 0))),
                        STRATA_STATUS_DATA_LOSS,
                        "the parallel section has 0 tensor ranks; a stage "
                        "has at least 1"));
  EXPECT_TRUE(failsWith(withParallelBytes(bytesOf(parallelSection(0, 1))),
                        STRATA_STATUS_DATA_LOSS,
                        "are 1 process; a split model has at least 2"));
  EXPECT_TRUE(failsWith(withParallelBytes(bytesOf(parallelSection(5, 4))),
                        STRATA_STATUS_DATA_LOSS,
                        "tensor rank 5 is not below its 4 tensor ranks"));
  EXPECT_TRUE(failsWith(withParallelBytes(bytesOf(parallelSection(0, 2, 1))),
                        STRATA_STATUS_DATA_LOSS,
                        "pipeline stage 1 is not below its 1 pipeline stages"));
  EXPECT_TRUE(failsWith(
      withParallelBytes(bytesOf(parallelSection(0, 2, 0, 0))),
      STRATA_STATUS_DATA_LOSS,
      "the parallel section has 0 pipeline stages; a model has at least 1"));
  EXPECT_TRUE(failsWith(withParallelBytes(bytesOf(parallelSection(1, 1, 0, 1))),
                        STRATA_STATUS_DATA_LOSS,
                        "tensor rank 1 is not below its 1 tensor ranks"));
  // 2^16 x 2^16 is 0 in 32 bits: the product must not wrap.
  EXPECT_TRUE(failsWith(
      withParallelBytes(bytesOf(parallelSection(0, 65536, 0, 65536))),
      STRATA_STATUS_DATA_LOSS,
      "the parallel section's 65536 tensor ranks in 65536 pipeline stages are "
      "4294967296 processes, more than 65536"));
  STRATA_ASSERT_OK(
      tryLoad(withParallelBytes(bytesOf(parallelSection(0, 1, 0, 65536)))));
}

TEST(ParallelSectionTest, SizeAndFlagAreChecked) {
  std::vector<uint8_t> bytes = bytesOf(parallelSection(0, 2));
  std::vector<uint8_t> shorter(bytes.begin(), bytes.end() - 1);
  EXPECT_TRUE(failsWith(withParallelBytes(shorter), STRATA_STATUS_DATA_LOSS,
                        "the parallel section is 31 bytes, expected 32"));
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_TRUE(failsWith(withParallelBytes(longer), STRATA_STATUS_DATA_LOSS,
                        "the parallel section is 33 bytes, expected 32"));
  EXPECT_TRUE(failsWith(withParallelBytes({}), STRATA_STATUS_DATA_LOSS,
                        "the parallel section is 0 bytes, expected 32"));
  EXPECT_TRUE(failsWith(withParallelBytes(bytes, 0), STRATA_STATUS_DATA_LOSS,
                        "section 2 (parallel) is not flagged required"));
  STRATA_ASSERT_OK(tryLoad(withParallelBytes(bytes)));
}

TEST(ParallelSectionTest, AtMostOneSectionAndItsChecksum) {
  std::vector<uint8_t> one = bytesOf(parallelSection(0, 2));
  std::vector<uint8_t> manifest = standardWriter().encodeManifest();
  std::vector<codegen::ArtifactSection> sections = standardSections(manifest);
  sections.insert(sections.begin() + 2,
                  {{STRATA_SECTION_PARALLEL, STRATA_SECTION_FLAG_REQUIRED,
                    one.data(), one.size()},
                   {STRATA_SECTION_PARALLEL, STRATA_SECTION_FLAG_REQUIRED,
                    one.data(), one.size()}});
  EXPECT_TRUE(failsWith(assembled(sections), STRATA_STATUS_DATA_LOSS,
                        "more than one parallel section"));

  std::vector<uint8_t> flipped = rankArtifact(0, 2);
  const strata_section_t parallel = sectionAt(flipped, 2);
  flipped[parallel.offset + 4] ^= 0x40;  // tensor_ranks 2 -> 66
  EXPECT_TRUE(failsWith(flipped, STRATA_STATUS_DATA_LOSS,
                        "parallel section checksum mismatch"));
}

// Format 2.3 defined pipeline stages: an older artifact with stages is
// corrupt, a newer one reads as this one.
TEST(ParallelSectionTest, PipelineStagesCameWithMinor3) {
  std::vector<uint8_t> bytes =
      withParallelBytes(bytesOf(parallelSection(1, 2, 1, 4)));
  STRATA_ASSERT_OK(tryLoad(bytes));
  EXPECT_TRUE(failsWith(withMinor(bytes, 2), STRATA_STATUS_DATA_LOSS,
                        "the parallel section splits the model into 4 "
                        "pipeline stages, which format 2.2 does not define "
                        "(they came with format 2.3)"));
  STRATA_ASSERT_OK(tryLoad(withMinor(bytes, STRATA_ARTIFACT_FORMAT_MINOR + 1)));
  // One stage reads as before in a 2.2 artifact.
  STRATA_ASSERT_OK(
      tryLoad(withMinor(withParallelBytes(bytesOf(parallelSection(1, 2))), 2)));
}

// Reserved words are what a later minor may define.
TEST(ParallelSectionTest, NewerMinorsMayUseReservedWords) {
  strata_parallel_section_t reserved = parallelSection(1, 2);
  reserved.reserved[0] = 7;
  std::vector<uint8_t> bytes = withParallelBytes(bytesOf(reserved));
  EXPECT_TRUE(failsWith(bytes, STRATA_STATUS_DATA_LOSS,
                        "the parallel section's reserved words are not zero"));
  STRATA_ASSERT_OK(tryLoad(withMinor(bytes, STRATA_ARTIFACT_FORMAT_MINOR + 1)));
}

// The section holds no code, so no target descriptor may name it.
TEST(ParallelSectionTest, TargetDescriptorsCannotNameIt) {
  format::Manifest manifest = manifestOf(standardWriter());
  format::ManifestTarget target;
  target.section = 2;
  target.kind = STRATA_TARGET_CPU;
  target.cpu.arch = STRATA_TARGET_CPU_ARCH_X86_64;
  manifest.targets.push_back(target);
  std::vector<uint8_t> encoded = format::encodeManifest(manifest);
  std::vector<codegen::ArtifactSection> sections = standardSections(encoded);
  std::vector<uint8_t> one = bytesOf(parallelSection(0, 2));
  sections.insert(sections.begin() + 2, {STRATA_SECTION_PARALLEL,
                                         STRATA_SECTION_FLAG_REQUIRED,
                                         one.data(), one.size()});
  EXPECT_TRUE(failsWith(assembled(sections), STRATA_STATUS_DATA_LOSS,
                        "target descriptor of section 2, which holds no "
                        "code"));
}

}  // namespace
}  // namespace strata::testing
