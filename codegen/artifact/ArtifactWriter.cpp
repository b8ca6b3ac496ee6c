//===- ArtifactWriter.cpp - Serializes a .strata artifact -----------------===//
// SPDX-License-Identifier: Apache-2.0
// Layout: header | section table | manifest | code | [parallel |] weights,
// each section 64-byte aligned and flagged required, weights last so that
// the big mapping starts on its own. The manifest's rules and byte layout are the
// shared ones of codegen/format.
//===----------------------------------------------------------------------===//

#include "codegen/artifact/ArtifactWriter.h"

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

#include "codegen/abi/strata_artifact_format.h"
#include "codegen/abi/strata_kernel_abi.h"
#include "codegen/format/ManifestCodec.h"
#include "codegen/format/ManifestRules.h"
#include "codegen/format/ParallelSection.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

using namespace strata::codegen;
namespace format = strata::format;

static_assert(sizeof(strata_artifact_header_t) == STRATA_ARTIFACT_HEADER_SIZE);
static_assert(sizeof(strata_section_t) == STRATA_ARTIFACT_SECTION_ENTRY_SIZE);

namespace {

uint64_t alignUp(uint64_t value) {
  return (value + STRATA_ARTIFACT_ALIGNMENT - 1) &
         ~uint64_t{STRATA_ARTIFACT_ALIGNMENT - 1};
}

bool fail(std::string *error, const std::string &message) {
  if (error)
    *error = message;
  return false;
}

// Copies |tensor| into the fixed-size model, if its rank fits.
bool toManifestTensor(const ArtifactTensor &tensor, const std::string &where,
                      format::ManifestTensor *out, std::string *error) {
  format::FormatError rankError;
  if (!format::checkRank(tensor.dims.size(), where, &rankError))
    return fail(error, rankError.message);
  out->name = tensor.name;
  out->dtype = tensor.dtype;
  out->rank = static_cast<uint32_t>(tensor.dims.size());
  std::copy(tensor.dims.begin(), tensor.dims.end(), out->dims);
  return true;
}

} // namespace

int64_t ArtifactWriter::addSymbolicDim(const std::string &name, int64_t max) {
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k].name == name) {
      dims[k].max = std::max(dims[k].max, max);
      return -1 - static_cast<int64_t>(k);
    }
  }
  dims.push_back({name, max});
  return -static_cast<int64_t>(dims.size());
}

void ArtifactWriter::addEntry(ArtifactEntry entry) {
  entries.push_back(std::move(entry));
}

void ArtifactWriter::addStateTensor(ArtifactStateTensor state) {
  states.push_back(std::move(state));
}

void ArtifactWriter::setCpuFeatures(std::vector<std::string> features) {
  std::sort(features.begin(), features.end());
  features.erase(std::unique(features.begin(), features.end()),
                 features.end());
  cpuFeatures = std::move(features);
}

void ArtifactWriter::setWeights(const void *data, size_t size) {
  weights = static_cast<const uint8_t *>(data);
  weightsSize = size;
}

void ArtifactWriter::setCpuCode(const void *data, size_t size) {
  code = static_cast<const uint8_t *>(data);
  codeSize = size;
}

bool ArtifactWriter::buildManifest(format::Manifest *out,
                                   std::string *error) const {
  format::Manifest manifest;
  for (const ArtifactEntry &entry : entries) {
    format::ManifestEntry &built = manifest.entries.emplace_back();
    built.name = entry.name;
    built.symbol = entry.symbol;
    built.kind = entry.kind;
    for (const auto *list : {&entry.inputs, &entry.outputs}) {
      bool outputs = list == &entry.outputs;
      auto &into = outputs ? built.outputs : built.inputs;
      for (const ArtifactTensor &tensor : *list) {
        std::string where = "entry '" + entry.name + "' " +
                            (outputs ? "output '" : "input '") + tensor.name +
                            "'";
        if (!toManifestTensor(tensor, where, &into.emplace_back(), error))
          return false;
      }
    }
  }
  for (const SymbolicDim &dim : dims)
    manifest.dims.push_back({dim.name, dim.max});
  for (const ArtifactStateTensor &state : states) {
    format::ManifestState &built = manifest.states.emplace_back();
    built.scope = state.scope;
    if (!toManifestTensor(state.tensor,
                          "state tensor '" + state.tensor.name + "'",
                          &built.tensor, error))
      return false;
  }
  format::ManifestTarget &cpu = manifest.targets.emplace_back();
  cpu.section = kCpuCodeSection;
  cpu.kind = STRATA_TARGET_CPU;
  cpu.cpu.arch = STRATA_TARGET_CPU_ARCH_X86_64;
  cpu.cpu.features = cpuFeatures;
  manifest.workspaceBytes = workspaceBytes;
  *out = std::move(manifest);
  return true;
}

bool ArtifactWriter::validate(std::string *error) const {
  if (!code || codeSize == 0)
    return fail(error, "the CPU code section is empty");
  format::Manifest manifest;
  if (!buildManifest(&manifest, error))
    return false;
  format::ArtifactLayout layout;
  layout.sectionKinds = {STRATA_SECTION_MANIFEST, STRATA_SECTION_CPU_CODE};
  if (parallel)
    layout.sectionKinds.push_back(STRATA_SECTION_PARALLEL);
  layout.sectionKinds.push_back(STRATA_SECTION_WEIGHTS);
  format::FormatError formatError;
  if (!format::validateManifest(manifest, layout, &formatError))
    return fail(error, formatError.message);
  if (parallel && !format::validateParallelSection(*parallel, layout.version,
                                                   &formatError))
    return fail(error, formatError.message);
  return true;
}

std::vector<uint8_t> ArtifactWriter::encodeManifest() const {
  format::Manifest manifest;
  if (!buildManifest(&manifest, nullptr))
    return {};
  return format::encodeManifest(manifest);
}

bool ArtifactWriter::write(const ArtifactSink &sink, std::string *error) const {
  if (!validate(error))
    return false;
  std::vector<uint8_t> manifest = encodeManifest();
  static_assert(kCpuCodeSection == 1, "the code follows the manifest");
  std::vector<ArtifactSection> sections = {
      {STRATA_SECTION_MANIFEST, STRATA_SECTION_FLAG_REQUIRED, manifest.data(),
       manifest.size()},
      {STRATA_SECTION_CPU_CODE, STRATA_SECTION_FLAG_REQUIRED, code, codeSize}};
  // Required: a reader that cannot join a group must not run one rank's
  // share of the weights as if it were the whole model.
  if (parallel)
    sections.push_back({STRATA_SECTION_PARALLEL, STRATA_SECTION_FLAG_REQUIRED,
                        reinterpret_cast<const uint8_t *>(&*parallel),
                        sizeof(*parallel)});
  sections.push_back({STRATA_SECTION_WEIGHTS, STRATA_SECTION_FLAG_REQUIRED,
                      weights, weightsSize});
  return assemble(sections, sink, error);
}

bool ArtifactWriter::writeToVector(std::vector<uint8_t> *out,
                                   std::string *error) const {
  out->clear();
  return write(
      [&](const void *data, size_t size) {
        const auto *bytes = static_cast<const uint8_t *>(data);
        out->insert(out->end(), bytes, bytes + size);
        return true;
      },
      error);
}

bool ArtifactWriter::writeToFile(const std::string &path,
                                 std::string *error) const {
  if (!validate(error))
    return false;
  // A new file renamed over |path|: a process that has the old artifact
  // mapped keeps reading the old file, where writing in place would
  // truncate it under that process (SIGBUS on its next page fault).
  std::string temporary = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(temporary.data());
  if (fd < 0)
    return fail(error, "cannot create a temporary file next to '" + path +
                           "': " + std::strerror(errno));
  FILE *file = ::fdopen(fd, "wb");
  if (!file) {
    ::close(fd);
    std::remove(temporary.c_str());
    return fail(error, "cannot write '" + temporary + "'");
  }
  bool ok = write(
      [&](const void *data, size_t size) {
        return std::fwrite(data, 1, size, file) == size;
      },
      error);
  // mkstemp creates the file 0600; an artifact gets the usual 0644 less the
  // umask.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ok = ::fchmod(fd, 0644 & ~mask) == 0 && ok;
  ok = (std::fclose(file) == 0) && ok;
  if (ok && std::rename(temporary.c_str(), path.c_str()) != 0) {
    ok = false;
    if (error && error->empty())
      *error = "cannot rename '" + temporary + "' to '" + path +
               "': " + std::strerror(errno);
  }
  if (!ok) {
    std::remove(temporary.c_str());
    if (error && error->empty())
      *error = "cannot write '" + path + "'";
  }
  return ok;
}

bool ArtifactWriter::assemble(const std::vector<ArtifactSection> &sections,
                              const ArtifactSink &sink, std::string *error) {
  if (sections.size() > STRATA_ARTIFACT_MAX_SECTIONS)
    return fail(error, "an artifact has at most " +
                           std::to_string(STRATA_ARTIFACT_MAX_SECTIONS) +
                           " sections");
  const size_t count = sections.size();
  std::vector<strata_section_t> table(count);
  uint64_t offset = alignUp(STRATA_ARTIFACT_HEADER_SIZE +
                            count * uint64_t{STRATA_ARTIFACT_SECTION_ENTRY_SIZE});
  uint64_t fileSize = offset;
  for (size_t i = 0; i < count; ++i) {
    table[i].kind = sections[i].kind;
    table[i].flags = sections[i].flags;
    table[i].offset = offset;
    table[i].size = sections[i].size;
    table[i].checksum = checksum(sections[i].data, sections[i].size);
    fileSize = offset + sections[i].size;
    offset = alignUp(fileSize);
  }
  strata_artifact_header_t header = {};
  std::memcpy(header.magic, STRATA_ARTIFACT_MAGIC, 8);
  header.format_major = STRATA_ARTIFACT_FORMAT_MAJOR;
  header.format_minor = STRATA_ARTIFACT_FORMAT_MINOR;
  header.kernel_abi_version = STRATA_KERNEL_ABI_VERSION;
  header.file_size = fileSize;
  header.section_count = static_cast<uint32_t>(count);
  header.section_table_offset = STRATA_ARTIFACT_HEADER_SIZE;
  header.section_table_checksum =
      checksum(table.data(), count * sizeof(strata_section_t));
  header.header_checksum = checksum(&header, sizeof(header));

  static const uint8_t kZeros[STRATA_ARTIFACT_ALIGNMENT] = {};
  uint64_t written = 0;
  auto emit = [&](const void *data, size_t size) {
    written += size;
    return size == 0 || sink(data, size);
  };
  // Padding up to the next section, less than the alignment.
  auto pad = [&](uint64_t to) { return emit(kZeros, to - written); };
  bool ok = emit(&header, sizeof(header)) &&
            emit(table.data(), count * sizeof(strata_section_t));
  for (size_t i = 0; ok && i < count; ++i)
    ok = pad(table[i].offset) && emit(sections[i].data, sections[i].size);
  if (!ok)
    return fail(error, "the artifact sink refused the bytes");
  return true;
}

uint64_t ArtifactWriter::checksum(const void *data, size_t size) {
  return XXH64(size ? data : "", size, 0);
}

void ArtifactWriter::resealHeader(uint8_t *bytes) {
  strata_artifact_header_t header;
  std::memcpy(&header, bytes, sizeof(header));
  header.header_checksum = 0;
  header.header_checksum = checksum(&header, sizeof(header));
  std::memcpy(bytes, &header, sizeof(header));
}
