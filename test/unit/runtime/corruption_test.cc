//===- corruption_test.cc - A corpus of corrupted artifacts
//----------------===//
// SPDX-License-Identifier: Apache-2.0
// Truncations at every offset, bit flips in every region, wrong versions and
// malformed section tables. Each case must yield its specific status and
// message and never crash (this binary also runs under ASan+UBSan).

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "status_matchers.h"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

using codegen::ArtifactWriter;

class CorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    good = standardArtifact();
    ASSERT_FALSE(good.empty());
    manifest = sectionOfKind(good, STRATA_SECTION_MANIFEST);
    code = sectionOfKind(good, STRATA_SECTION_CPU_CODE);
    weights = sectionOfKind(good, STRATA_SECTION_WEIGHTS);
  }
  std::vector<uint8_t> good;
  strata_section_t manifest{}, code{}, weights{};
};

TEST_F(CorruptionTest, TheUncorruptedArtifactLoads) {
  STRATA_ASSERT_OK(tryLoad(good));
}

TEST_F(CorruptionTest, TruncationAtEveryOffset) {
  for (size_t size = 0; size < good.size(); ++size) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + size);
    if (size < STRATA_ARTIFACT_HEADER_SIZE) {
      ASSERT_TRUE(failsWith(cut, STRATA_STATUS_DATA_LOSS,
                            "smaller than the 128-byte header"))
          << "size " << size;
    } else {
      ASSERT_TRUE(failsWith(cut, STRATA_STATUS_DATA_LOSS,
                            "but its header records " +
                                std::to_string(good.size()) +
                                " bytes (truncated)"))
          << "size " << size;
    }
  }
}

TEST_F(CorruptionTest, TrailingBytes) {
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_TRUE(failsWith(longer, STRATA_STATUS_DATA_LOSS, "trailing data"));
}

TEST_F(CorruptionTest, BitFlipsInTheHeader) {
  for (size_t byte = 0; byte < STRATA_ARTIFACT_HEADER_SIZE; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bad = good;
      bad[byte] ^= static_cast<uint8_t>(1u << bit);
      if (byte < 8) {
        ASSERT_TRUE(failsWith(bad, STRATA_STATUS_DATA_LOSS, "bad magic"))
            << byte;
      } else if (byte < 12) {
        ASSERT_TRUE(failsWith(bad, STRATA_STATUS_INCOMPATIBLE,
                              "this runtime's format version 2.3"))
            << byte;
      } else {
        ASSERT_TRUE(
            failsWith(bad, STRATA_STATUS_DATA_LOSS, "header checksum mismatch"))
            << byte << ":" << bit;
      }
    }
  }
}

TEST_F(CorruptionTest, BitFlipsInTheSectionTable) {
  for (size_t byte = STRATA_ARTIFACT_HEADER_SIZE;
       byte < STRATA_ARTIFACT_HEADER_SIZE + 3 * sizeof(strata_section_t);
       ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bad = good;
      bad[byte] ^= static_cast<uint8_t>(1u << bit);
      ASSERT_TRUE(failsWith(bad, STRATA_STATUS_DATA_LOSS,
                            "section table checksum mismatch"))
          << byte << ":" << bit;
    }
  }
}

TEST_F(CorruptionTest, BitFlipsInTheManifest) {
  for (size_t byte = 0; byte < manifest.size; ++byte) {
    for (int bit = 0; bit < 8; bit += 3) {
      std::vector<uint8_t> bad = good;
      bad[manifest.offset + byte] ^= static_cast<uint8_t>(1u << bit);
      ASSERT_TRUE(
          failsWith(bad, STRATA_STATUS_DATA_LOSS, "manifest checksum mismatch"))
          << byte << ":" << bit;
    }
  }
}

TEST_F(CorruptionTest, BitFlipsInTheCode) {
  for (size_t byte = 0; byte < code.size; byte += 37) {
    std::vector<uint8_t> bad = good;
    bad[code.offset + byte] ^= static_cast<uint8_t>(1u << (byte % 8));
    ASSERT_TRUE(
        failsWith(bad, STRATA_STATUS_DATA_LOSS, "code checksum mismatch"))
        << byte;
  }
}

TEST_F(CorruptionTest, BitFlipsInTheWeightsAreFoundOnRequest) {
  for (size_t byte = 0; byte < weights.size; ++byte) {
    std::vector<uint8_t> bad = good;
    bad[weights.offset + byte] ^= static_cast<uint8_t>(1u << (byte % 8));
    LoadedModule module(bad);
    STRATA_ASSERT_OK(module.load());  // loading stays fast: not checked
    auto [status, message] =
        consumeStatus(strata_module_verify_weights(module.get()));
    ASSERT_EQ(status, STRATA_STATUS_DATA_LOSS) << byte;
    ASSERT_NE(message.find("weights checksum mismatch"), std::string::npos);
  }
}

TEST_F(CorruptionTest, NewerFormatMajorIsIncompatible) {
  std::vector<uint8_t> bad = good;
  patch<uint32_t>(&bad, offsetof(strata_artifact_header_t, format_major), 3);
  ArtifactWriter::resealHeader(bad.data());
  EXPECT_TRUE(failsWith(bad, STRATA_STATUS_INCOMPATIBLE,
                        "artifact format version 3.x is newer than this "
                        "runtime's format version 2.3"));
}

// Format 1 had no section flags, target descriptors or state: it is
// refused with a request to recompile rather than read half-way.
TEST_F(CorruptionTest, FormatOneAsksForARecompile) {
  std::vector<uint8_t> old = good;
  patch<uint32_t>(&old, offsetof(strata_artifact_header_t, format_major), 1);
  ArtifactWriter::resealHeader(old.data());
  EXPECT_TRUE(failsWith(old, STRATA_STATUS_INCOMPATIBLE,
                        "artifact format version 1 is older than this "
                        "runtime's format version 2.3, which no longer reads "
                        "it; recompile the model"));
}

TEST_F(CorruptionTest, WrongKernelAbiVersionIsIncompatible) {
  std::vector<uint8_t> bad = good;
  patch<uint32_t>(&bad, offsetof(strata_artifact_header_t, kernel_abi_version),
                  7);
  // Unsealed, it is a corrupt header; sealed, a different ABI.
  EXPECT_TRUE(
      failsWith(bad, STRATA_STATUS_DATA_LOSS, "header checksum mismatch"));
  ArtifactWriter::resealHeader(bad.data());
  EXPECT_TRUE(failsWith(bad, STRATA_STATUS_INCOMPATIBLE,
                        "kernel ABI version 7, this runtime implements "
                        "kernel ABI version " +
                            std::to_string(STRATA_KERNEL_ABI_VERSION)));
}

TEST_F(CorruptionTest, SealedHeaderDefects) {
  struct Case {
    size_t offset;
    uint64_t value;
    size_t width;
    const char* message;
  };
  const Case cases[] = {
      {offsetof(strata_artifact_header_t, file_size), good.size() + 64, 8,
       "(truncated)"},
      {offsetof(strata_artifact_header_t, reserved1), 1, 8,
       "reserved header fields are not zero"},
      {offsetof(strata_artifact_header_t, reserved) + 63, 1, 1,
       "reserved header fields are not zero"},
      {offsetof(strata_artifact_header_t, section_table_offset), 192, 8,
       "section table offset 192 is not 128"},
      {offsetof(strata_artifact_header_t, section_count), 2, 4,
       "section count 2 is outside [3, 16]"},
      {offsetof(strata_artifact_header_t, section_count), 17, 4,
       "section count 17 is outside [3, 16]"},
      {offsetof(strata_artifact_header_t, section_count), 4, 4,
       "section table checksum mismatch"},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> bad = good;
    std::memcpy(bad.data() + c.offset, &c.value, c.width);
    ArtifactWriter::resealHeader(bad.data());
    EXPECT_TRUE(failsWith(bad, STRATA_STATUS_DATA_LOSS, c.message))
        << c.message;
  }
}

TEST_F(CorruptionTest, SealedSectionTableDefects) {
  size_t size = good.size();
  auto withSection = [&](uint32_t index, strata_section_t section) {
    std::vector<uint8_t> bad = good;
    patchSection(&bad, index, section);
    return bad;
  };
  // Section 2 is the weights (writer order: manifest, code, weights).
  strata_section_t s = sectionAt(good, 2);
  ASSERT_EQ(s.kind, static_cast<uint32_t>(STRATA_SECTION_WEIGHTS));
  strata_section_t past = s;
  past.size = size;
  EXPECT_TRUE(failsWith(withSection(2, past), STRATA_STATUS_DATA_LOSS,
                        "section 2 [offset " + std::to_string(s.offset) +
                            ", size " + std::to_string(size) +
                            "] extends past end of file (" +
                            std::to_string(size) + " bytes)"));
  strata_section_t wrap = s;
  wrap.size = ~uint64_t{0} - 8;  // offset + size overflows
  EXPECT_TRUE(failsWith(withSection(2, wrap), STRATA_STATUS_DATA_LOSS,
                        "extends past end of file"));
  strata_section_t beyond = s;
  beyond.offset = (size + 64) / 64 * 64 + 64;
  beyond.size = 0;
  EXPECT_TRUE(failsWith(withSection(2, beyond), STRATA_STATUS_DATA_LOSS,
                        "extends past end of file"));
  strata_section_t unaligned = s;
  unaligned.offset += 8;
  unaligned.size -= 8;
  EXPECT_TRUE(failsWith(withSection(2, unaligned), STRATA_STATUS_DATA_LOSS,
                        "is not 64-byte aligned"));
  strata_section_t inHeader = s;
  inHeader.offset = 64;
  inHeader.size = 16;
  EXPECT_TRUE(failsWith(withSection(2, inHeader), STRATA_STATUS_DATA_LOSS,
                        "overlaps the header or section table"));
  strata_section_t overlap = s;
  overlap.offset = code.offset;
  overlap.size = 64;
  EXPECT_TRUE(failsWith(withSection(2, overlap), STRATA_STATUS_DATA_LOSS,
                        "sections 1 and 2 overlap"));
  strata_section_t unknownKind = s;
  unknownKind.kind = 9;
  EXPECT_TRUE(failsWith(withSection(2, unknownKind), STRATA_STATUS_INCOMPATIBLE,
                        "section 2 has kind 9, which this runtime does not "
                        "know, and is flagged required"));
  unknownKind.flags = 0;  // skipped, so the weights are missing
  EXPECT_TRUE(failsWith(withSection(2, unknownKind), STRATA_STATUS_DATA_LOSS,
                        "no weights section"));
  strata_section_t kindZero = s;
  kindZero.kind = 0;
  EXPECT_TRUE(failsWith(withSection(2, kindZero), STRATA_STATUS_DATA_LOSS,
                        "section 2 has kind 0"));
  strata_section_t optional = s;
  optional.flags = 0;
  EXPECT_TRUE(failsWith(withSection(2, optional), STRATA_STATUS_DATA_LOSS,
                        "section 2 (weights) is not flagged required"));
  strata_section_t flags = s;
  flags.flags = 4;
  EXPECT_TRUE(failsWith(withSection(2, flags), STRATA_STATUS_DATA_LOSS,
                        "section 2 (weights) has unknown flags 0x4"));
  strata_section_t twoManifests = s;
  twoManifests.kind = STRATA_SECTION_MANIFEST;
  EXPECT_TRUE(failsWith(withSection(2, twoManifests), STRATA_STATUS_DATA_LOSS,
                        "more than one manifest section"));
  strata_section_t cuda = s;
  cuda.kind = STRATA_SECTION_CUDA_CODE;
  EXPECT_TRUE(failsWith(withSection(2, cuda), STRATA_STATUS_INCOMPATIBLE,
                        "section 2 (cuda code) is required, but this runtime "
                        "runs no CUDA code"));
  strata_section_t emptyCode = sectionAt(good, 1);
  emptyCode.size = 0;
  EXPECT_TRUE(failsWith(withSection(1, emptyCode), STRATA_STATUS_DATA_LOSS,
                        "code section is empty"));
}

}  // namespace
}  // namespace strata::testing
