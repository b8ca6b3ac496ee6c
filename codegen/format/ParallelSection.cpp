//===- ParallelSection.cpp - Rules of the PARALLEL section ----------------===//
// SPDX-License-Identifier: Apache-2.0
// A rank past its group or stages, or a section for fewer than 2 processes,
// cannot be run by any runtime: it is corruption whatever the minor. Format
// 2.2 reserved the pipeline fields (stage 0 of 1); 2.3 defines them.
//===----------------------------------------------------------------------===//

#include "codegen/format/ParallelSection.h"

#include <cstring>
#include <string>

namespace strata::format {
namespace {

static_assert(sizeof(strata_parallel_section_t) == 32,
              "the PARALLEL section is 32 bytes");

// The minor that defined pipeline stages.
constexpr uint32_t kPipelineMinor = 3;

bool fail(FormatError *error, const std::string &message) {
  error->kind = FormatErrorKind::Corrupt;
  error->message = message;
  return false;
}

std::string versionText(FormatVersion version) {
  return std::to_string(version.major) + "." + std::to_string(version.minor);
}

} // namespace

bool validateParallelSection(const strata_parallel_section_t &section,
                             FormatVersion version, FormatError *error) {
  const FormatVersion reader;
  const bool newerMinor = version.minor > reader.minor;
  if (section.tensor_ranks == 0)
    return fail(error, "the parallel section has 0 tensor ranks; a stage has "
                       "at least 1");
  if (section.tensor_rank >= section.tensor_ranks)
    return fail(error, "the parallel section's tensor rank " +
                           std::to_string(section.tensor_rank) +
                           " is not below its " +
                           std::to_string(section.tensor_ranks) +
                           " tensor ranks");
  if (section.pipeline_stages == 0)
    return fail(error, "the parallel section has 0 pipeline stages; a model "
                       "has at least 1");
  if (section.pipeline_stage >= section.pipeline_stages)
    return fail(error, "the parallel section's pipeline stage " +
                           std::to_string(section.pipeline_stage) +
                           " is not below its " +
                           std::to_string(section.pipeline_stages) +
                           " pipeline stages");
  if (section.pipeline_stages != 1 && version.minor < kPipelineMinor)
    return fail(error, "the parallel section splits the model into " +
                           std::to_string(section.pipeline_stages) +
                           " pipeline stages, which format " +
                           versionText(version) +
                           " does not define (they came with format " +
                           versionText({version.major, kPipelineMinor}) + ")");
  // Both factors are 32-bit: the product cannot overflow 64 bits.
  const uint64_t world =
      uint64_t{section.tensor_ranks} * uint64_t{section.pipeline_stages};
  const std::string processes =
      "the parallel section's " + std::to_string(section.tensor_ranks) +
      " tensor ranks in " + std::to_string(section.pipeline_stages) +
      " pipeline stages are " + std::to_string(world) + " process" +
      (world == 1 ? "" : "es");
  if (world < 2)
    return fail(error, processes + "; a split model has at least 2");
  if (world > STRATA_ARTIFACT_MAX_PARALLEL_RANKS)
    return fail(error, processes + ", more than " +
                           std::to_string(STRATA_ARTIFACT_MAX_PARALLEL_RANKS));
  if (!newerMinor) {
    for (uint32_t word : section.reserved)
      if (word != 0)
        return fail(error, "the parallel section's reserved words are not "
                           "zero");
  }
  return true;
}

bool decodeParallelSection(const uint8_t *data, size_t size,
                           FormatVersion version,
                           strata_parallel_section_t *out, FormatError *error) {
  if (size != sizeof(strata_parallel_section_t))
    return fail(error, "the parallel section is " + std::to_string(size) +
                           " bytes, expected " +
                           std::to_string(sizeof(strata_parallel_section_t)));
  strata_parallel_section_t section;
  std::memcpy(&section, data, sizeof(section));
  if (!validateParallelSection(section, version, error))
    return false;
  *out = section;
  return true;
}

} // namespace strata::format
