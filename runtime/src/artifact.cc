//===- artifact.cc - Validating reader of the .strata byte layout ---------===//
// SPDX-License-Identifier: Apache-2.0
// Every offset, size and count read from the file is bounds-checked before
// use, and nothing is allocated in proportion to an unchecked count, so a
// hostile artifact yields a status, never a crash or a huge allocation. The
// manifest's layout and rules are the writer's own (codegen/format).

#include "artifact.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>

#include "checksum.h"
#include "codegen/format/ManifestCodec.h"
#include "codegen/format/ManifestRules.h"
#include "codegen/format/ParallelSection.h"
#include "strata_artifact_format.h"
#include "strata_kernel_abi.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the artifact format is little-endian; so is this reader");
static_assert(sizeof(strata_artifact_header_t) == STRATA_ARTIFACT_HEADER_SIZE,
              "header layout");
static_assert(sizeof(strata_section_t) == STRATA_ARTIFACT_SECTION_ENTRY_SIZE,
              "section table entry layout");

namespace strata::runtime {
namespace {

#define DATA_LOSS(...) STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS, __VA_ARGS__)
#define INCOMPATIBLE(...) \
  STRATA_MAKE_STATUS(STRATA_STATUS_INCOMPATIBLE, __VA_ARGS__)

const char* sectionKindName(uint32_t kind) {
  switch (kind) {
    case STRATA_SECTION_MANIFEST:
      return "manifest";
    case STRATA_SECTION_WEIGHTS:
      return "weights";
    case STRATA_SECTION_CPU_CODE:
      return "code";
    case STRATA_SECTION_CUDA_CODE:
      return "cuda code";
    case STRATA_SECTION_PARALLEL:
      return "parallel";
  }
  return "unknown";
}

bool allZero(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  return std::all_of(bytes, bytes + size, [](uint8_t b) { return b == 0; });
}

// Reserved fields and flag bits must be zero unless the artifact's minor is
// newer than this reader's, which may have given them a meaning that is
// safe to ignore.
bool reservedMustBeZero(const strata_artifact_header_t& header) {
  return header.format_minor <= STRATA_ARTIFACT_FORMAT_MINOR;
}

strata_status_t checkFormatMajor(uint32_t major) {
  if (major == STRATA_ARTIFACT_FORMAT_MAJOR) return nullptr;
  if (major < STRATA_ARTIFACT_FORMAT_MAJOR) {
    return INCOMPATIBLE("artifact format version %" PRIu32
                        " is older than this runtime's format version %u.%u, "
                        "which no longer reads it; recompile the model with "
                        "a current strata-compile",
                        major, STRATA_ARTIFACT_FORMAT_MAJOR,
                        STRATA_ARTIFACT_FORMAT_MINOR);
  }
  // Only the major is known to sit at this offset in a newer format.
  return INCOMPATIBLE("artifact format version %" PRIu32
                      ".x is newer than this runtime's format version %u.%u; "
                      "load it with a newer runtime",
                      major, STRATA_ARTIFACT_FORMAT_MAJOR,
                      STRATA_ARTIFACT_FORMAT_MINOR);
}

strata_status_t validateHeader(const uint8_t* data, size_t size,
                               strata_artifact_header_t* header) {
  if (size < STRATA_ARTIFACT_HEADER_SIZE) {
    return DATA_LOSS(
        "artifact is %zu bytes, smaller than the %u-byte header (truncated?)",
        size, STRATA_ARTIFACT_HEADER_SIZE);
  }
  std::memcpy(header, data, sizeof(*header));
  if (std::memcmp(header->magic, STRATA_ARTIFACT_MAGIC, 8) != 0) {
    return DATA_LOSS("bad magic: not a .strata artifact");
  }
  // The rest of the header's layout depends on the major version, so it is
  // checked before the checksum.
  STRATA_RETURN_IF_ERROR(checkFormatMajor(header->format_major));
  strata_artifact_header_t zeroed = *header;
  zeroed.header_checksum = 0;
  if (checksum64(&zeroed, sizeof(zeroed)) != header->header_checksum) {
    return DATA_LOSS("header checksum mismatch");
  }
  if (header->kernel_abi_version != STRATA_KERNEL_ABI_VERSION) {
    return INCOMPATIBLE(
        "artifact code uses kernel ABI version %" PRIu32
        ", this runtime implements kernel ABI version %u; recompile the model",
        header->kernel_abi_version, STRATA_KERNEL_ABI_VERSION);
  }
  if (header->file_size != size) {
    return DATA_LOSS("artifact is %zu bytes but its header records %" PRIu64
                     " bytes (%s)",
                     size, header->file_size,
                     size < header->file_size ? "truncated" : "trailing data");
  }
  if (reservedMustBeZero(*header) &&
      (header->reserved1 != 0 ||
       !allZero(header->reserved, sizeof(header->reserved)))) {
    return DATA_LOSS("reserved header fields are not zero");
  }
  if (header->section_table_offset != STRATA_ARTIFACT_HEADER_SIZE) {
    return DATA_LOSS("section table offset %" PRIu64 " is not %u",
                     header->section_table_offset, STRATA_ARTIFACT_HEADER_SIZE);
  }
  if (header->section_count < STRATA_ARTIFACT_MIN_SECTIONS ||
      header->section_count > STRATA_ARTIFACT_MAX_SECTIONS) {
    return DATA_LOSS("section count %" PRIu32 " is outside [%u, %u]",
                     header->section_count, STRATA_ARTIFACT_MIN_SECTIONS,
                     STRATA_ARTIFACT_MAX_SECTIONS);
  }
  uint64_t tableEnd =
      STRATA_ARTIFACT_HEADER_SIZE +
      uint64_t{header->section_count} * STRATA_ARTIFACT_SECTION_ENTRY_SIZE;
  if (tableEnd > size) {
    return DATA_LOSS("section table [offset %u, size %" PRIu64
                     "] extends past end of file (%zu bytes)",
                     STRATA_ARTIFACT_HEADER_SIZE,
                     tableEnd - STRATA_ARTIFACT_HEADER_SIZE, size);
  }
  return nullptr;
}

strata_status_t statusOf(const format::FormatError& error) {
  strata_status_code_t code = STRATA_STATUS_DATA_LOSS;
  if (error.kind == format::FormatErrorKind::Incompatible) {
    code = STRATA_STATUS_INCOMPATIBLE;
  } else if (error.kind == format::FormatErrorKind::Unimplemented) {
    code = STRATA_STATUS_UNIMPLEMENTED;
  }
  return STRATA_MAKE_STATUS(code, "%s", error.message.c_str());
}

// Known kinds are handled by their rules whatever the flag says, except
// that the three every artifact has, and PARALLEL, must carry it; an
// unknown kind is skipped when optional and refused when required.
strata_status_t checkSectionKind(uint32_t index,
                                 const strata_section_t& section) {
  const bool required = section.flags & STRATA_SECTION_FLAG_REQUIRED;
  switch (section.kind) {
    case STRATA_SECTION_MANIFEST:
    case STRATA_SECTION_WEIGHTS:
    case STRATA_SECTION_CPU_CODE:
    // An older reader must refuse a rank rather than run its share of the
    // weights as a whole model.
    case STRATA_SECTION_PARALLEL:
      if (!required) {
        return DATA_LOSS("section %" PRIu32 " (%s) is not flagged required",
                         index, sectionKindName(section.kind));
      }
      return nullptr;
    case STRATA_SECTION_CUDA_CODE:
      if (required) {
        return INCOMPATIBLE("section %" PRIu32
                            " (cuda code) is required, but this runtime runs "
                            "no CUDA code",
                            index);
      }
      return nullptr;
  }
  if (required) {
    return INCOMPATIBLE("section %" PRIu32 " has kind %" PRIu32
                        ", which this runtime does not know, and is flagged "
                        "required (built by a newer compiler?)",
                        index, section.kind);
  }
  return nullptr;
}

strata_status_t validateSections(const uint8_t* data, size_t size,
                                 const strata_artifact_header_t& header,
                                 ArtifactView* out) {
  const uint8_t* table = data + STRATA_ARTIFACT_HEADER_SIZE;
  size_t tableSize =
      size_t{header.section_count} * STRATA_ARTIFACT_SECTION_ENTRY_SIZE;
  if (checksum64(table, tableSize) != header.section_table_checksum) {
    return DATA_LOSS("section table checksum mismatch");
  }
  uint64_t tableEnd = STRATA_ARTIFACT_HEADER_SIZE + tableSize;
  struct Range {
    uint64_t begin, end;
    uint32_t index;
  };
  std::vector<Range> ranges;
  int counts[STRATA_SECTION_PARALLEL + 1] = {};
  SectionView parallel;
  for (uint32_t i = 0; i < header.section_count; ++i) {
    strata_section_t section;
    std::memcpy(&section, table + size_t{i} * sizeof(section), sizeof(section));
    out->sectionKinds.push_back(section.kind);
    if (section.kind == 0) {
      return DATA_LOSS("section %" PRIu32 " has kind 0", i);
    }
    if (reservedMustBeZero(header) &&
        (section.flags & ~STRATA_SECTION_KNOWN_FLAGS) != 0) {
      return DATA_LOSS("section %" PRIu32 " (%s) has unknown flags 0x%" PRIx32,
                       i, sectionKindName(section.kind), section.flags);
    }
    STRATA_RETURN_IF_ERROR(checkSectionKind(i, section));
    if (section.offset % STRATA_ARTIFACT_ALIGNMENT != 0) {
      return DATA_LOSS("section %" PRIu32 " (%s) offset %" PRIu64
                       " is not %u-byte aligned",
                       i, sectionKindName(section.kind), section.offset,
                       STRATA_ARTIFACT_ALIGNMENT);
    }
    if (section.offset > size || section.size > size - section.offset) {
      return DATA_LOSS("section %" PRIu32 " [offset %" PRIu64 ", size %" PRIu64
                       "] extends past end of file (%zu bytes)",
                       i, section.offset, section.size, size);
    }
    if (section.offset < tableEnd) {
      return DATA_LOSS("section %" PRIu32 " [offset %" PRIu64
                       "] overlaps the header or section table (%" PRIu64
                       " bytes)",
                       i, section.offset, tableEnd);
    }
    ranges.push_back({section.offset, section.offset + section.size, i});
    if (section.kind > STRATA_SECTION_PARALLEL) continue;  // skipped
    if (++counts[section.kind] > 1) {
      return DATA_LOSS("more than one %s section",
                       sectionKindName(section.kind));
    }
    SectionView view{data + section.offset, section.offset, section.size,
                     section.checksum};
    if (section.kind == STRATA_SECTION_MANIFEST) out->manifest = view;
    if (section.kind == STRATA_SECTION_WEIGHTS) out->weights = view;
    if (section.kind == STRATA_SECTION_CPU_CODE) {
      out->cpuCode = view;
      out->cpuCodeIndex = i;
    }
    if (section.kind == STRATA_SECTION_PARALLEL) parallel = view;
  }
  for (uint32_t kind : {STRATA_SECTION_MANIFEST, STRATA_SECTION_WEIGHTS,
                        STRATA_SECTION_CPU_CODE}) {
    if (counts[kind] != 1) {
      return DATA_LOSS("no %s section", sectionKindName(kind));
    }
  }
  std::stable_sort(
      ranges.begin(), ranges.end(),
      [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].begin < ranges[i - 1].end) {
      return DATA_LOSS("sections %" PRIu32 " and %" PRIu32 " overlap",
                       ranges[i - 1].index, ranges[i].index);
    }
  }
  if (out->cpuCode.size == 0) return DATA_LOSS("code section is empty");
  if (checksum64(out->manifest.data, out->manifest.size) !=
      out->manifest.checksum) {
    return DATA_LOSS("manifest checksum mismatch");
  }
  if (checksum64(out->cpuCode.data, out->cpuCode.size) !=
      out->cpuCode.checksum) {
    return DATA_LOSS("code checksum mismatch");
  }
  if (counts[STRATA_SECTION_PARALLEL] == 1) {
    if (checksum64(parallel.data, parallel.size) != parallel.checksum) {
      return DATA_LOSS("parallel section checksum mismatch");
    }
    format::FormatError error;
    if (!format::decodeParallelSection(
            parallel.data, static_cast<size_t>(parallel.size),
            {header.format_major, header.format_minor}, &out->parallel,
            &error)) {
      return statusOf(error);
    }
    out->isParallel = true;
  }
  return nullptr;
}


}  // namespace

strata_status_t validateArtifact(const uint8_t* data, size_t size,
                                 ArtifactView* out) {
  strata_artifact_header_t header;
  STRATA_RETURN_IF_ERROR(validateHeader(data, size, &header));
  ArtifactView view;
  view.version = {header.format_major, header.format_minor};
  view.kernelAbiVersion = header.kernel_abi_version;
  STRATA_RETURN_IF_ERROR(validateSections(data, size, header, &view));
  *out = std::move(view);
  return nullptr;
}

strata_status_t parseManifest(const ArtifactView& view, Manifest* out) {
  Manifest manifest;
  format::FormatError error;
  if (!format::decodeManifest(view.manifest.data, view.manifest.size,
                              &manifest, &error)) {
    return statusOf(error);
  }
  format::ArtifactLayout layout{view.version, view.sectionKinds};
  if (!format::validateManifest(manifest, layout, &error)) {
    return statusOf(error);
  }
  *out = std::move(manifest);
  return nullptr;
}

strata_status_t decodeArtifact(const uint8_t* data, size_t size,
                               ArtifactView* view, Manifest* manifest) {
  ArtifactView checked;
  STRATA_RETURN_IF_ERROR(validateArtifact(data, size, &checked));
  STRATA_RETURN_IF_ERROR(parseManifest(checked, manifest));
  *view = std::move(checked);
  return nullptr;
}

const format::CpuTarget* cpuTargetOf(const Manifest& manifest,
                                     const ArtifactView& view) {
  for (const ManifestTarget& target : manifest.targets) {
    if (target.section == view.cpuCodeIndex) return &target.cpu;
  }
  return nullptr;
}

}  // namespace strata::runtime
