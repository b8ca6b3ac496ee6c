//===- write_test_artifacts.cc - The test artifacts as files --------------===//
// SPDX-License-Identifier: Apache-2.0
// strata_write_test_artifacts DIR writes the runtime tests' artifacts to
// DIR: standard.strata (test_artifacts.h: the test kernels, loadable and
// runnable; the examples test runs it), truncated.strata (its first 300
// bytes, a corrupt file), and minimal.strata, decoder.strata and
// sections.strata, whose manifests or section tables are richer and whose
// code section is a few bytes of filler (valid for every check before code
// loading, not loadable): decoder has entry kinds, state tensors and CPU
// features; sections has optional sections of unknown and CUDA kind and a
// newer format minor; parallel is minimal as rank 1 of a tensor-parallel
// group of 2. standard, minimal, decoder, sections and parallel are the
// loader fuzzer's seeds (test/fuzz/loader-corpus/, docs/testing.md).

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "test_artifacts.h"

namespace {

using strata::codegen::ArtifactTensor;
using strata::codegen::ArtifactWriter;

// Not an ELF object: enough for the validator, which only checksums it.
const std::vector<uint8_t> kFillerCode(64, 0xC3);

bool write(const ArtifactWriter& writer, const std::string& path) {
  std::string error;
  if (!writer.writeToFile(path, &error)) {
    std::fprintf(stderr, "strata_write_test_artifacts: %s: %s\n", path.c_str(),
                 error.c_str());
    return false;
  }
  return true;
}

// One entry, one static input, no weights.
ArtifactWriter minimal() {
  ArtifactWriter writer;
  writer.addEntry({"main",
                   "strata_main",
                   {{"x", STRATA_DTYPE_F32, {4}}},
                   {{"y", STRATA_DTYPE_F32, {4}}}});
  writer.setCpuCode(kFillerCode.data(), kFillerCode.size());
  return writer;
}

// A decoder-like signature: several symbolic dims shared across inputs,
// every rank up to the limit, many dtypes, prefill and decode entries, a
// KV cache declared as state, CPU features and a workspace.
ArtifactWriter decoder() {
  ArtifactWriter writer;
  int64_t batch = writer.addSymbolicDim("batch", 4);
  int64_t seq = writer.addSymbolicDim("sequence", 128);
  int64_t past = writer.addSymbolicDim("past_sequence", 127);
  int64_t total = writer.addSymbolicDim("total_sequence", 128);
  std::vector<ArtifactTensor> inputs = {
      {"input_ids", STRATA_DTYPE_I64, {batch, seq}},
      {"attention_mask", STRATA_DTYPE_I64, {batch, total}},
      {"past_key_values.0.key", STRATA_DTYPE_F32, {batch, 2, past, 8}},
      {"past_key_values.0.value", STRATA_DTYPE_F16, {batch, 2, past, 8}},
      {"flags", STRATA_DTYPE_BOOL, {}},
      {"rank8", STRATA_DTYPE_U8, {1, 2, 1, 2, 1, 2, 1, batch}},
      {"codes", STRATA_DTYPE_I4, {seq}},
  };
  std::vector<ArtifactTensor> outputs = {
      {"logits", STRATA_DTYPE_F32, {batch, seq, 50}},
      {"present.0.key", STRATA_DTYPE_F32, {batch, 2, total, 8}},
      {"present.0.value", STRATA_DTYPE_BF16, {batch, 2, total, 8}},
  };
  writer.addEntry({"decode", "strata_decode", inputs, outputs,
                   STRATA_ENTRY_KIND_DECODE});
  writer.addEntry({"prefill",
                   "strata_prefill",
                   {{"input_ids", STRATA_DTYPE_I32, {1, seq}}},
                   {{"logits", STRATA_DTYPE_F32, {1, seq, 50}}},
                   STRATA_ENTRY_KIND_PREFILL});
  writer.addStateTensor({{"kv.0.key", STRATA_DTYPE_F16, {2, total, 8}},
                         STRATA_STATE_SCOPE_PER_SEQUENCE});
  writer.addStateTensor({{"rope.cache", STRATA_DTYPE_F32, {total, 4}},
                         STRATA_STATE_SCOPE_SHARED});
  writer.setCpuFeatures({"avx2", "bmi2", "fma", "popcnt", "sse4.2"});
  writer.setWorkspaceBytes(1 << 20);
  static const std::vector<uint8_t> weights(200, 0x5A);
  writer.setWeights(weights.data(), weights.size());
  writer.setCpuCode(kFillerCode.data(), kFillerCode.size());
  return writer;
}

// minimal's manifest and code with an optional section of an unknown kind
// and an optional CUDA section before the weights, marked with the format
// minor after this reader's, which it accepts.
std::vector<uint8_t> sections() {
  strata::format::Manifest described = strata::testing::manifestOf(minimal());
  strata::format::ManifestTarget cudaTarget;
  cudaTarget.section = 3;
  cudaTarget.kind = STRATA_TARGET_CUDA;
  cudaTarget.payload = {90, 0, 0, 0};  // undecoded by this runtime
  described.targets.push_back(cudaTarget);
  std::vector<uint8_t> manifest = strata::format::encodeManifest(described);
  static const std::vector<uint8_t> extra(100, 0x11), cuda(40, 0x22);
  std::vector<uint8_t> bytes = strata::testing::assembled(
      {{STRATA_SECTION_MANIFEST, STRATA_SECTION_FLAG_REQUIRED, manifest.data(),
        manifest.size()},
       {STRATA_SECTION_CPU_CODE, STRATA_SECTION_FLAG_REQUIRED,
        kFillerCode.data(), kFillerCode.size()},
       {77, 0, extra.data(), extra.size()},
       {STRATA_SECTION_CUDA_CODE, 0, cuda.data(), cuda.size()},
       {STRATA_SECTION_WEIGHTS, STRATA_SECTION_FLAG_REQUIRED, nullptr, 0}});
  strata::testing::patch<uint32_t>(
      &bytes, offsetof(strata_artifact_header_t, format_minor),
      STRATA_ARTIFACT_FORMAT_MINOR + 1);
  ArtifactWriter::resealHeader(bytes.data());
  return bytes;
}

bool writeBytes(const std::vector<uint8_t>& bytes, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "strata_write_test_artifacts: cannot write %s\n",
                 path.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: strata_write_test_artifacts DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  bool ok = write(strata::testing::standardWriter(), dir + "/standard.strata");
  std::vector<uint8_t> standard = strata::testing::standardArtifact();
  standard.resize(300);
  ok = writeBytes(standard, dir + "/truncated.strata") && ok;
  ok = write(minimal(), dir + "/minimal.strata") && ok;
  ok = write(decoder(), dir + "/decoder.strata") && ok;
  ok = writeBytes(sections(), dir + "/sections.strata") && ok;
  ArtifactWriter rank = minimal();
  strata_parallel_section_t parallel = {};
  parallel.tensor_rank = 1;
  parallel.tensor_ranks = 2;
  parallel.pipeline_stages = 1;
  rank.setParallel(parallel);
  ok = write(rank, dir + "/parallel.strata") && ok;
  return ok ? 0 : 1;
}
