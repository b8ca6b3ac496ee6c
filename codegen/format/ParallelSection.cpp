//===- ParallelSection.cpp - Rules of the PARALLEL section ----------------===//
// SPDX-License-Identifier: Apache-2.0
// A rank of one, or a rank past the group, cannot be run by any runtime: it
// is corruption whatever the minor. Pipeline stages are a layout format 2.2
// reserves (stage 0 of 1) for a later minor to define.
//===----------------------------------------------------------------------===//

#include "codegen/format/ParallelSection.h"

#include <cstring>
#include <string>

namespace strata::format {
namespace {

static_assert(sizeof(strata_parallel_section_t) == 32,
              "the PARALLEL section is 32 bytes");

bool fail(FormatError *error, const std::string &message,
          FormatErrorKind kind = FormatErrorKind::Corrupt) {
  error->kind = kind;
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
  if (section.tensor_ranks < 2)
    return fail(error, "the parallel section has " +
                           std::to_string(section.tensor_ranks) +
                           " tensor ranks; a tensor-parallel group has at "
                           "least 2");
  if (section.tensor_rank >= section.tensor_ranks)
    return fail(error, "the parallel section's tensor rank " +
                           std::to_string(section.tensor_rank) +
                           " is not below its " +
                           std::to_string(section.tensor_ranks) +
                           " tensor ranks");
  if (section.pipeline_stages == 0 ||
      section.pipeline_stage >= section.pipeline_stages)
    return fail(error, "the parallel section's pipeline stage " +
                           std::to_string(section.pipeline_stage) +
                           " is not below its " +
                           std::to_string(section.pipeline_stages) +
                           " pipeline stages");
  if (section.pipeline_stages != 1) {
    std::string message = "the parallel section splits the model into " +
                          std::to_string(section.pipeline_stages) +
                          " pipeline stages, which format " +
                          versionText(reader) + " does not define";
    if (!newerMinor)
      return fail(error, message);
    return fail(error,
                message + " (artifact format " + versionText(version) +
                    " is newer than this reader's " + versionText(reader) +
                    ")",
                FormatErrorKind::Incompatible);
  }
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
