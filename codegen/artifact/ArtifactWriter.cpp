//===- ArtifactWriter.cpp - Serializes a .strata artifact -----------------===//
// SPDX-License-Identifier: Apache-2.0
// Layout: header | section table | manifest | code | weights, each section
// 64-byte aligned, weights last so that the big mapping starts on its own.
//===----------------------------------------------------------------------===//

#include "codegen/artifact/ArtifactWriter.h"

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include <sys/stat.h>
#include <unistd.h>

#include "codegen/abi/strata_artifact_format.h"
#include "codegen/abi/strata_kernel_abi.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

using namespace strata::codegen;

static_assert(sizeof(strata_artifact_header_t) == STRATA_ARTIFACT_HEADER_SIZE);
static_assert(sizeof(strata_section_t) == STRATA_ARTIFACT_SECTION_ENTRY_SIZE);

namespace {

void putU32(std::vector<uint8_t> &out, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void putU64(std::vector<uint8_t> &out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void putString(std::vector<uint8_t> &out, const std::string &value) {
  putU32(out, static_cast<uint32_t>(value.size()));
  out.insert(out.end(), value.begin(), value.end());
}

void putTensor(std::vector<uint8_t> &out, const ArtifactTensor &tensor) {
  putString(out, tensor.name);
  putU32(out, tensor.dtype);
  putU32(out, static_cast<uint32_t>(tensor.dims.size()));
  for (int64_t dim : tensor.dims)
    putU64(out, static_cast<uint64_t>(dim));
}

uint64_t alignUp(uint64_t value) {
  return (value + STRATA_ARTIFACT_ALIGNMENT - 1) &
         ~uint64_t{STRATA_ARTIFACT_ALIGNMENT - 1};
}

bool fail(std::string *error, const std::string &message) {
  if (error)
    *error = message;
  return false;
}

// Name rules shared by every string of the manifest.
bool checkName(const std::string &what, const std::string &name,
               std::string *error) {
  if (name.empty())
    return fail(error, what + " is empty");
  if (name.size() > STRATA_MANIFEST_MAX_STRING)
    return fail(error,
                what + " '" + name.substr(0, 32) + "...' is longer than " +
                    std::to_string(STRATA_MANIFEST_MAX_STRING) + " bytes");
  if (name.find('\0') != std::string::npos)
    return fail(error, what + " contains a NUL byte");
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

void ArtifactWriter::setWeights(const void *data, size_t size) {
  weights = static_cast<const uint8_t *>(data);
  weightsSize = size;
}

void ArtifactWriter::setCpuCode(const void *data, size_t size) {
  code = static_cast<const uint8_t *>(data);
  codeSize = size;
}

bool ArtifactWriter::validate(std::string *error) const {
  if (entries.empty())
    return fail(error, "an artifact needs at least one entry point");
  if (!code || codeSize == 0)
    return fail(error, "the CPU code section is empty");
  std::set<std::string> dimNames;
  for (const SymbolicDim &dim : dims) {
    if (!checkName("symbolic dim name", dim.name, error))
      return false;
    if (dim.max < 1 && dim.max != STRATA_DIM_MAX_FROM_DATA)
      return fail(error, "symbolic dim '" + dim.name + "' has maximum " +
                             std::to_string(dim.max) +
                             ", expected >= 1 (or 0: from data)");
    if (!dimNames.insert(dim.name).second)
      return fail(error, "duplicate symbolic dim '" + dim.name + "'");
  }
  std::set<std::string> entryNames;
  for (const ArtifactEntry &entry : entries) {
    if (!checkName("entry name", entry.name, error) ||
        !checkName("symbol of entry '" + entry.name + "'", entry.symbol, error))
      return false;
    if (!entryNames.insert(entry.name).second)
      return fail(error, "duplicate entry '" + entry.name + "'");
    if (entry.inputs.size() > STRATA_MAX_ENTRY_INPUTS)
      return fail(error, "entry '" + entry.name + "' has " +
                             std::to_string(entry.inputs.size()) +
                             " inputs, above the limit of " +
                             std::to_string(STRATA_MAX_ENTRY_INPUTS));
    for (const auto *list : {&entry.inputs, &entry.outputs}) {
      std::string role = list == &entry.inputs ? "input" : "output";
      std::set<std::string> names;
      for (const ArtifactTensor &tensor : *list) {
        std::string where = "entry '" + entry.name + "' " + role;
        if (!checkName(where + " name", tensor.name, error))
          return false;
        where += " '" + tensor.name + "'";
        if (!names.insert(tensor.name).second)
          return fail(error, "duplicate " + where);
        if (strata_dtype_size(tensor.dtype) == 0)
          return fail(error, where + " has unknown dtype " +
                                 std::to_string(tensor.dtype));
        if (tensor.dims.size() > STRATA_MAX_RANK)
          return fail(error, where + " has rank " +
                                 std::to_string(tensor.dims.size()) +
                                 ", above " + std::to_string(STRATA_MAX_RANK));
        long double bytes = strata_dtype_size(tensor.dtype);
        for (int64_t dim : tensor.dims) {
          if (dim >= 0) {
            bytes *= dim;
            continue;
          }
          uint64_t k = static_cast<uint64_t>(-(dim + 1));
          if (k >= dims.size())
            return fail(error, where + " refers to symbolic dim " +
                                   std::to_string(k) + " of " +
                                   std::to_string(dims.size()));
          if (list == &entry.inputs && dims[k].max == STRATA_DIM_MAX_FROM_DATA)
            return fail(error, where + " refers to '" + dims[k].name +
                                   "', which has no maximum (only outputs "
                                   "may)");
          bytes *= std::max<int64_t>(dims[k].max, 1);
        }
        if (bytes > static_cast<long double>(STRATA_MANIFEST_MAX_TENSOR_BYTES))
          return fail(error, where + " is larger than the format allows");
        // The runtime passes strides (suffix products of the dims) as int64;
        // a zero dim bounds the size, not the strides.
        int64_t stride = 1;
        for (size_t d = tensor.dims.size(); d-- > 0;) {
          int64_t dim = tensor.dims[d];
          int64_t extent =
              dim >= 0 ? dim : std::max<int64_t>(dims[-(dim + 1)].max, 1);
          if (__builtin_mul_overflow(stride, extent, &stride))
            return fail(error,
                        where + " has strides that do not fit in 64 bits");
        }
      }
    }
  }
  return true;
}

std::vector<uint8_t> ArtifactWriter::encodeManifest() const {
  std::vector<uint8_t> out;
  putU32(out, static_cast<uint32_t>(entries.size()));
  for (const ArtifactEntry &entry : entries) {
    putString(out, entry.name);
    putString(out, entry.symbol);
    putU32(out, static_cast<uint32_t>(entry.inputs.size()));
    for (const ArtifactTensor &tensor : entry.inputs)
      putTensor(out, tensor);
    putU32(out, static_cast<uint32_t>(entry.outputs.size()));
    for (const ArtifactTensor &tensor : entry.outputs)
      putTensor(out, tensor);
  }
  putU32(out, static_cast<uint32_t>(dims.size()));
  for (const SymbolicDim &dim : dims) {
    putString(out, dim.name);
    putU64(out, static_cast<uint64_t>(dim.max));
  }
  putU64(out, workspaceBytes);
  return out;
}

bool ArtifactWriter::write(const ArtifactSink &sink, std::string *error) const {
  if (!validate(error))
    return false;
  std::vector<uint8_t> manifest = encodeManifest();
  return assemble(manifest.data(), manifest.size(), code, codeSize, weights,
                  weightsSize, cpuFeatures, sink, error);
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

bool ArtifactWriter::assemble(const uint8_t *manifest, size_t manifestSize,
                              const uint8_t *code, size_t codeSize,
                              const uint8_t *weights, size_t weightsSize,
                              uint64_t cpuFeatures, const ArtifactSink &sink,
                              std::string *error) {
  constexpr uint32_t kSections = 3;
  strata_section_t sections[kSections] = {};
  const uint8_t *payloads[kSections] = {manifest, code, weights};
  uint64_t offset =
      alignUp(STRATA_ARTIFACT_HEADER_SIZE +
              kSections * uint64_t{STRATA_ARTIFACT_SECTION_ENTRY_SIZE});
  const uint32_t kinds[kSections] = {
      STRATA_SECTION_MANIFEST, STRATA_SECTION_CPU_CODE, STRATA_SECTION_WEIGHTS};
  const size_t sizes[kSections] = {manifestSize, codeSize, weightsSize};
  uint64_t fileSize = 0;
  for (uint32_t i = 0; i < kSections; ++i) {
    sections[i].kind = kinds[i];
    sections[i].offset = offset;
    sections[i].size = sizes[i];
    sections[i].checksum = checksum(payloads[i], sizes[i]);
    fileSize = offset + sizes[i];
    offset = alignUp(fileSize);
  }
  strata_artifact_header_t header = {};
  std::memcpy(header.magic, STRATA_ARTIFACT_MAGIC, 8);
  header.format_version = STRATA_ARTIFACT_FORMAT_VERSION;
  header.kernel_abi_version = STRATA_KERNEL_ABI_VERSION;
  header.file_size = fileSize;
  header.cpu_features = cpuFeatures;
  header.section_count = kSections;
  header.section_table_offset = STRATA_ARTIFACT_HEADER_SIZE;
  header.section_table_checksum = checksum(sections, sizeof(sections));
  header.header_checksum = checksum(&header, sizeof(header));

  static const uint8_t kZeros[STRATA_ARTIFACT_ALIGNMENT] = {};
  uint64_t written = 0;
  auto emit = [&](const void *data, size_t size) {
    written += size;
    return size == 0 || sink(data, size);
  };
  auto pad = [&](uint64_t to) { return emit(kZeros, to - written); };
  bool ok = emit(&header, sizeof(header)) && emit(sections, sizeof(sections));
  for (uint32_t i = 0; ok && i < kSections; ++i)
    ok = pad(sections[i].offset) && emit(payloads[i], sizes[i]);
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
