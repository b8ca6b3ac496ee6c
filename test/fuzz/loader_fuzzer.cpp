//===- loader_fuzzer.cpp - libFuzzer target for the artifact loader -------===//
// SPDX-License-Identifier: Apache-2.0
// Feeds arbitrary bytes as a .strata artifact to the runtime's validating
// reader (decodeArtifact: header, section table, checksums, manifest) and
// its CPU target check, exactly the checks strata_module_load makes before
// it loads the code. The code is never loaded: a fuzzer that dlopened its
// input would execute arbitrary bytes. Run through scripts/fuzz-loaders.sh
// (docs/testing.md).
//
// Each input is validated as it is, then, if that changes anything, again
// with its checksums and file size recomputed (where the section table lies
// inside the input), so that mutations get past the checksums to the
// section and manifest rules. A decoded manifest must re-encode, through
// the shared codec, to exactly its own bytes; rebuilt through the
// compiler's ArtifactWriter (when it describes what the writer can write)
// it must pass the writer's validation, the same rules; and every
// signature's strides must fit in int64 (the session computes them): a
// violation aborts, as do crashes, sanitizer reports and leaks.

#include "artifact.h"
#include "codegen/abi/strata_artifact_format.h"
#include "codegen/artifact/ArtifactWriter.h"
#include "codegen/format/ManifestCodec.h"
#include "cpu_target.h"
#include "strata/runtime/status.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using strata::codegen::ArtifactTensor;
using strata::codegen::ArtifactWriter;
using strata::runtime::ArtifactView;
using strata::runtime::Manifest;
using strata::runtime::SectionView;

/// A finding: print and abort, so libFuzzer saves the input.
[[noreturn]] void finding(const char *what, const std::string &detail) {
  std::fprintf(stderr, "strata-loader-fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

/// 64-byte-aligned storage, as strata_module_load requires of its input.
struct AlignedBuffer {
  explicit AlignedBuffer(const std::vector<uint8_t> &bytes)
      : size(bytes.size()), data(static_cast<uint8_t *>(std::aligned_alloc(
                                64, (bytes.size() / 64 + 1) * 64))) {
    if (size)
      std::memcpy(data, bytes.data(), size);
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  size_t size;
  uint8_t *data;
};

/// |manifest| must encode exactly to the manifest section of |view|; if it
/// has the writer's layout (one target, the CPU code at section 1), the
/// writer must rebuild it and accept it.
void checkRoundTrip(const Manifest &manifest, const ArtifactView &view) {
  std::vector<uint8_t> encoded = strata::format::encodeManifest(manifest);
  const SectionView &original = view.manifest;
  if (encoded.size() != original.size ||
      std::memcmp(encoded.data(), original.data, original.size) != 0) {
    finding("a decoded manifest does not re-encode to its own bytes",
            std::to_string(original.size) + " bytes in, " +
                std::to_string(encoded.size()) + " bytes out");
  }
  if (manifest.targets.size() != 1 ||
      view.cpuCodeIndex != ArtifactWriter::kCpuCodeSection ||
      view.sectionKinds.size() != 3)
    return;
  ArtifactWriter writer;
  for (const auto &dim : manifest.dims)
    writer.addSymbolicDim(dim.name, dim.max);
  auto copyOf = [](const strata::runtime::ManifestTensor &tensor) {
    return ArtifactTensor{
        tensor.name, tensor.dtype,
        std::vector<int64_t>(tensor.dims, tensor.dims + tensor.rank)};
  };
  for (const auto &entry : manifest.entries) {
    strata::codegen::ArtifactEntry copy{entry.name, entry.symbol, {}, {},
                                        entry.kind};
    for (const auto &tensor : entry.inputs)
      copy.inputs.push_back(copyOf(tensor));
    for (const auto &tensor : entry.outputs)
      copy.outputs.push_back(copyOf(tensor));
    writer.addEntry(std::move(copy));
  }
  for (const auto &state : manifest.states)
    writer.addStateTensor({copyOf(state.tensor), state.scope});
  writer.setCpuFeatures(manifest.targets[0].cpu.features);
  writer.setWorkspaceBytes(manifest.workspaceBytes);
  writer.setCpuCode(view.cpuCode.data, view.cpuCode.size);
  std::string error;
  if (!writer.validate(&error))
    finding("the loader accepted a manifest the writer refuses", error);
  // The writer records only x86-64 targets.
  if (manifest.targets[0].cpu.arch == STRATA_TARGET_CPU_ARCH_X86_64 &&
      writer.encodeManifest() != encoded)
    finding("the writer encodes an accepted manifest differently", "");
}

/// The session describes every tensor by its strides, the suffix products
/// of its dims (int64), maxima substituted for symbolic dims; accepting a
/// signature whose strides overflow would make that undefined.
void checkStrides(const Manifest &manifest) {
  auto check = [&](const strata::runtime::ManifestTensor &tensor) {
    int64_t stride = 1;
    for (uint32_t d = tensor.rank; d-- > 0;) {
      int64_t dim = tensor.dims[d];
      int64_t extent =
          dim >= 0 ? dim : manifest.dims[static_cast<size_t>(-(dim + 1))].max;
      if (__builtin_mul_overflow(stride, extent, &stride))
        finding("a signature's strides overflow int64",
                "tensor '" + tensor.name + "'");
    }
  };
  for (const auto &entry : manifest.entries) {
    for (const auto &tensor : entry.inputs)
      check(tensor);
    for (const auto &tensor : entry.outputs)
      check(tensor);
  }
  for (const auto &state : manifest.states)
    check(state.tensor);
}

/// Runs the loader's checks on |bytes|. A status is the expected outcome
/// of bad bytes; only its code is checked.
void validate(const std::vector<uint8_t> &bytes) {
  AlignedBuffer buffer(bytes);
  ArtifactView view;
  Manifest manifest;
  strata_status_t status = strata::runtime::decodeArtifact(
      buffer.data, buffer.size, &view, &manifest);
  const bool decoded = status == nullptr;
  if (decoded) {
    const strata::format::CpuTarget *target =
        strata::runtime::cpuTargetOf(manifest, view);
    if (!target)
      finding("an accepted artifact has no CPU target descriptor", "");
    status = strata::runtime::checkCpuTarget(*target);
  }
  strata_status_code_t code = strata_status_code(status);
  std::string message = strata_status_message(status);
  strata_status_free(status);
  if (code != STRATA_STATUS_OK && code != STRATA_STATUS_DATA_LOSS &&
      code != STRATA_STATUS_INCOMPATIBLE &&
      code != STRATA_STATUS_UNIMPLEMENTED) {
    finding("unexpected status",
            std::string(strata_status_code_string(code)) + ": " + message);
  }
  if (!decoded)
    return;
  // Every section view lies inside the input.
  for (const auto *section : {&view.manifest, &view.weights, &view.cpuCode}) {
    if (section->offset > buffer.size ||
        section->size > buffer.size - section->offset ||
        section->data != buffer.data + section->offset)
      finding("a section view leaves the input", message);
  }
  checkStrides(manifest);
  checkRoundTrip(manifest, view);
}

/// Recomputes what a checksum or the file size protects, where the header
/// and section table are inside |bytes|. Returns false if nothing changed.
bool reseal(std::vector<uint8_t> *bytes) {
  if (bytes->size() < STRATA_ARTIFACT_HEADER_SIZE)
    return false;
  const std::vector<uint8_t> before = *bytes;
  strata_artifact_header_t header;
  std::memcpy(&header, bytes->data(), sizeof(header));
  header.file_size = bytes->size();
  uint64_t count = header.section_count;
  if (count <= STRATA_ARTIFACT_MAX_SECTIONS &&
      STRATA_ARTIFACT_HEADER_SIZE +
              count * STRATA_ARTIFACT_SECTION_ENTRY_SIZE <=
          bytes->size()) {
    uint8_t *table = bytes->data() + STRATA_ARTIFACT_HEADER_SIZE;
    for (uint64_t i = 0; i < count; ++i) {
      strata_section_t section;
      std::memcpy(&section, table + i * sizeof(section), sizeof(section));
      if (section.offset <= bytes->size() &&
          section.size <= bytes->size() - section.offset) {
        section.checksum = ArtifactWriter::checksum(
            bytes->data() + section.offset, section.size);
        std::memcpy(table + i * sizeof(section), &section, sizeof(section));
      }
    }
    header.section_table_checksum =
        ArtifactWriter::checksum(table, count * sizeof(strata_section_t));
  }
  std::memcpy(bytes->data(), &header, sizeof(header));
  ArtifactWriter::resealHeader(bytes->data());
  return *bytes != before;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  validate(bytes);
  if (reseal(&bytes))
    validate(bytes);
  return 0;
}
