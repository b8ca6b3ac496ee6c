//===- artifact.cc - Validating reader of the .strata byte layout ---------===//
// SPDX-License-Identifier: Apache-2.0
// Every offset, size and count read from the file is bounds-checked before
// use, and nothing is allocated in proportion to an unchecked count, so a
// hostile artifact yields a status, never a crash or a huge allocation.

#include "artifact.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <set>

#include "checksum.h"
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
  }
  return "unknown";
}

bool allZero(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  return std::all_of(bytes, bytes + size, [](uint8_t b) { return b == 0; });
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
  // The rest of the header's layout depends on the format version, so it is
  // checked before the checksum.
  if (header->format_version != STRATA_ARTIFACT_FORMAT_VERSION) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INCOMPATIBLE,
        "artifact format version %" PRIu32
        " is not supported: this runtime reads format version %u",
        header->format_version, STRATA_ARTIFACT_FORMAT_VERSION);
  }
  strata_artifact_header_t zeroed = *header;
  zeroed.header_checksum = 0;
  if (checksum64(&zeroed, sizeof(zeroed)) != header->header_checksum) {
    return DATA_LOSS("header checksum mismatch");
  }
  if (header->kernel_abi_version != STRATA_KERNEL_ABI_VERSION) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INCOMPATIBLE,
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
  if (header->reserved0 != 0 ||
      !allZero(header->reserved, sizeof(header->reserved))) {
    return DATA_LOSS("reserved header fields are not zero");
  }
  if (header->section_table_offset != STRATA_ARTIFACT_HEADER_SIZE) {
    return DATA_LOSS("section table offset %" PRIu64 " is not %u",
                     header->section_table_offset, STRATA_ARTIFACT_HEADER_SIZE);
  }
  if (header->section_count < 3 ||
      header->section_count > STRATA_ARTIFACT_MAX_SECTIONS) {
    return DATA_LOSS("section count %" PRIu32 " is outside [3, %u]",
                     header->section_count, STRATA_ARTIFACT_MAX_SECTIONS);
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
  int counts[5] = {};
  for (uint32_t i = 0; i < header.section_count; ++i) {
    strata_section_t section;
    std::memcpy(&section, table + size_t{i} * sizeof(section), sizeof(section));
    if (section.kind < STRATA_SECTION_MANIFEST ||
        section.kind > STRATA_SECTION_CUDA_CODE) {
      return DATA_LOSS("section %" PRIu32 " has unknown kind %" PRIu32, i,
                       section.kind);
    }
    if (section.flags != 0) {
      return DATA_LOSS("section %" PRIu32 " (%s) has unknown flags 0x%" PRIx32,
                       i, sectionKindName(section.kind), section.flags);
    }
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
    if (++counts[section.kind] > 1) {
      return DATA_LOSS("more than one %s section",
                       sectionKindName(section.kind));
    }
    ranges.push_back({section.offset, section.offset + section.size, i});
    SectionView view{data + section.offset, section.offset, section.size,
                     section.checksum};
    if (section.kind == STRATA_SECTION_MANIFEST) out->manifest = view;
    if (section.kind == STRATA_SECTION_WEIGHTS) out->weights = view;
    if (section.kind == STRATA_SECTION_CPU_CODE) out->cpuCode = view;
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
  return nullptr;
}

// A bounds-checked little-endian cursor over the manifest bytes.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t offset() const { return offset_; }
  size_t remaining() const { return size_ - offset_; }

  strata_status_t u32(const char* what, uint32_t* out) {
    return fixed(what, out, sizeof(*out));
  }
  strata_status_t u64(const char* what, uint64_t* out) {
    return fixed(what, out, sizeof(*out));
  }
  strata_status_t i64(const char* what, int64_t* out) {
    return fixed(what, out, sizeof(*out));
  }

  strata_status_t str(const char* what, std::string* out) {
    uint32_t length = 0;
    STRATA_RETURN_IF_ERROR(u32(what, &length));
    if (length > STRATA_MANIFEST_MAX_STRING) {
      return DATA_LOSS("manifest %s at byte %zu is %" PRIu32
                       " bytes long, above the limit of %u",
                       what, offset_ - 4, length, STRATA_MANIFEST_MAX_STRING);
    }
    if (length == 0) {
      return DATA_LOSS("manifest %s at byte %zu is empty", what, offset_ - 4);
    }
    if (length > remaining()) return truncated(what);
    const char* begin = reinterpret_cast<const char*>(data_ + offset_);
    if (std::memchr(begin, 0, length)) {
      return DATA_LOSS("manifest %s at byte %zu contains a NUL byte", what,
                       offset_ - 4);
    }
    out->assign(begin, length);
    offset_ += length;
    return nullptr;
  }

 private:
  strata_status_t fixed(const char* what, void* out, size_t n) {
    if (n > remaining()) return truncated(what);
    std::memcpy(out, data_ + offset_, n);
    offset_ += n;
    return nullptr;
  }
  strata_status_t truncated(const char* what) {
    return DATA_LOSS("manifest truncated at byte %zu of %zu while reading %s",
                     offset_, size_, what);
  }

  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
};

strata_status_t readTensor(Reader& reader, ManifestTensor* tensor) {
  STRATA_RETURN_IF_ERROR(reader.str("tensor name", &tensor->name));
  STRATA_RETURN_IF_ERROR(reader.u32("tensor dtype", &tensor->dtype));
  if (strata_dtype_size(tensor->dtype) == 0) {
    return DATA_LOSS("tensor '%s' has unknown dtype %" PRIu32,
                     tensor->name.c_str(), tensor->dtype);
  }
  STRATA_RETURN_IF_ERROR(reader.u32("tensor rank", &tensor->rank));
  if (tensor->rank > STRATA_MAX_RANK) {
    return DATA_LOSS("tensor '%s' has rank %" PRIu32 ", above the limit of %d",
                     tensor->name.c_str(), tensor->rank, STRATA_MAX_RANK);
  }
  for (uint32_t d = 0; d < tensor->rank; ++d) {
    STRATA_RETURN_IF_ERROR(reader.i64("tensor dim", &tensor->dims[d]));
  }
  return nullptr;
}

strata_status_t readTensors(Reader& reader, const char* what,
                            std::vector<ManifestTensor>* tensors) {
  uint32_t count = 0;
  STRATA_RETURN_IF_ERROR(reader.u32(what, &count));
  // Each tensor takes at least 13 bytes, which bounds |count| before any
  // allocation is made for it.
  if (count > reader.remaining() / 13) {
    return DATA_LOSS("manifest %s %" PRIu32
                     " at byte %zu exceeds what the "
                     "remaining %zu bytes can hold",
                     what, count, reader.offset() - 4, reader.remaining());
  }
  tensors->resize(count);
  for (auto& tensor : *tensors) {
    STRATA_RETURN_IF_ERROR(readTensor(reader, &tensor));
  }
  return nullptr;
}

// Checks dim references, uniqueness and size limits once the dim table is
// known (it follows the entries in the byte stream).
strata_status_t checkEntries(const Manifest& manifest) {
  std::set<std::string> entryNames;
  for (const ManifestEntry& entry : manifest.entries) {
    if (!entryNames.insert(entry.name).second) {
      return DATA_LOSS("duplicate entry name '%s'", entry.name.c_str());
    }
    if (entry.inputs.size() > STRATA_MAX_ENTRY_INPUTS) {
      return STRATA_MAKE_STATUS(
          STRATA_STATUS_UNIMPLEMENTED,
          "entry '%s' takes %zu inputs; this runtime calls at most %d",
          entry.name.c_str(), entry.inputs.size(), STRATA_MAX_ENTRY_INPUTS);
    }
    for (const auto* list : {&entry.inputs, &entry.outputs}) {
      const char* role = list == &entry.inputs ? "input" : "output";
      std::set<std::string> names;
      for (const ManifestTensor& tensor : *list) {
        if (!names.insert(tensor.name).second) {
          return DATA_LOSS("entry '%s' has two %ss named '%s'",
                           entry.name.c_str(), role, tensor.name.c_str());
        }
        // The largest size of the tensor, maxima substituted; the bound keeps
        // every later size computation far from overflow.
        long double bytes = strata_dtype_size(tensor.dtype);
        for (uint32_t d = 0; d < tensor.rank; ++d) {
          int64_t dim = tensor.dims[d];
          if (dim < 0) {
            uint64_t k = static_cast<uint64_t>(-(dim + 1));
            if (k >= manifest.dims.size()) {
              return DATA_LOSS("entry '%s' %s '%s' dim %" PRIu32
                               " refers to symbolic dim %" PRIu64
                               ", but the dim table has %zu",
                               entry.name.c_str(), role, tensor.name.c_str(), d,
                               k, manifest.dims.size());
            }
            if (list == &entry.inputs &&
                manifest.dims[k].max == STRATA_DIM_MAX_FROM_DATA) {
              return DATA_LOSS("entry '%s' input '%s' dim %" PRIu32
                               " refers to '%s', which has no maximum (only "
                               "outputs may)",
                               entry.name.c_str(), tensor.name.c_str(), d,
                               manifest.dims[k].name.c_str());
            }
            bytes *= manifest.dims[k].sizingMax();
          } else {
            bytes *= dim;
          }
        }
        if (bytes >
            static_cast<long double>(STRATA_MANIFEST_MAX_TENSOR_BYTES)) {
          return DATA_LOSS(
              "entry '%s' %s '%s' can be %.0Lf bytes, above the "
              "limit of %llu",
              entry.name.c_str(), role, tensor.name.c_str(), bytes,
              STRATA_MANIFEST_MAX_TENSOR_BYTES);
        }
        // A run describes the tensor by its strides, the suffix products of
        // its dims, as int64. A zero dim bounds the size above but not the
        // strides: [0, 2^40, 2^40] is 0 bytes with a stride of 2^80.
        int64_t stride = 1;
        for (uint32_t d = tensor.rank; d-- > 0;) {
          int64_t dim = tensor.dims[d];
          int64_t extent =
              dim >= 0 ? dim : manifest.dims[-(dim + 1)].sizingMax();
          if (__builtin_mul_overflow(stride, extent, &stride)) {
            return DATA_LOSS(
                "entry '%s' %s '%s' has strides that do not fit in 64 bits "
                "(its dims from dim %" PRIu32
                " on, maxima substituted, multiply past 2^63)",
                entry.name.c_str(), role, tensor.name.c_str(), d);
          }
        }
      }
    }
  }
  return nullptr;
}

}  // namespace

strata_status_t validateArtifact(const uint8_t* data, size_t size,
                                 ArtifactView* out) {
  strata_artifact_header_t header;
  STRATA_RETURN_IF_ERROR(validateHeader(data, size, &header));
  ArtifactView view;
  view.formatVersion = header.format_version;
  view.kernelAbiVersion = header.kernel_abi_version;
  view.cpuFeatures = header.cpu_features;
  STRATA_RETURN_IF_ERROR(validateSections(data, size, header, &view));
  *out = view;
  return nullptr;
}

strata_status_t parseManifest(const uint8_t* data, size_t size, Manifest* out) {
  Reader reader(data, size);
  Manifest manifest;
  uint32_t entryCount = 0;
  STRATA_RETURN_IF_ERROR(reader.u32("entry count", &entryCount));
  if (entryCount == 0) return DATA_LOSS("manifest has no entry points");
  // An entry takes at least 18 bytes (two 1-byte strings, two counts).
  if (entryCount > reader.remaining() / 18) {
    return DATA_LOSS("manifest entry count %" PRIu32
                     " exceeds what %zu bytes can hold",
                     entryCount, size);
  }
  manifest.entries.resize(entryCount);
  for (ManifestEntry& entry : manifest.entries) {
    STRATA_RETURN_IF_ERROR(reader.str("entry name", &entry.name));
    STRATA_RETURN_IF_ERROR(reader.str("entry symbol", &entry.symbol));
    STRATA_RETURN_IF_ERROR(readTensors(reader, "input count", &entry.inputs));
    STRATA_RETURN_IF_ERROR(readTensors(reader, "output count", &entry.outputs));
  }
  uint32_t dimCount = 0;
  STRATA_RETURN_IF_ERROR(reader.u32("dim count", &dimCount));
  if (dimCount > reader.remaining() / 13) {
    return DATA_LOSS("manifest dim count %" PRIu32
                     " exceeds what the remaining %zu bytes can hold",
                     dimCount, reader.remaining());
  }
  manifest.dims.resize(dimCount);
  std::set<std::string> dimNames;
  for (ManifestDim& dim : manifest.dims) {
    STRATA_RETURN_IF_ERROR(reader.str("dim name", &dim.name));
    STRATA_RETURN_IF_ERROR(reader.i64("dim max", &dim.max));
    if (dim.max < 1 && dim.max != STRATA_DIM_MAX_FROM_DATA) {
      return DATA_LOSS("symbolic dim '%s' has maximum %" PRId64
                       ", expected at least 1 (or 0: from data)",
                       dim.name.c_str(), dim.max);
    }
    if (!dimNames.insert(dim.name).second) {
      return DATA_LOSS("duplicate symbolic dim name '%s'", dim.name.c_str());
    }
  }
  STRATA_RETURN_IF_ERROR(
      reader.u64("workspace bytes", &manifest.workspaceBytes));
  if (reader.remaining() != 0) {
    return DATA_LOSS("manifest has %zu trailing bytes after byte %zu",
                     reader.remaining(), reader.offset());
  }
  STRATA_RETURN_IF_ERROR(checkEntries(manifest));
  *out = std::move(manifest);
  return nullptr;
}

strata_status_t decodeArtifact(const uint8_t* data, size_t size,
                               ArtifactView* view, Manifest* manifest) {
  ArtifactView checked;
  STRATA_RETURN_IF_ERROR(validateArtifact(data, size, &checked));
  STRATA_RETURN_IF_ERROR(
      parseManifest(checked.manifest.data, checked.manifest.size, manifest));
  *view = checked;
  return nullptr;
}

}  // namespace strata::runtime
