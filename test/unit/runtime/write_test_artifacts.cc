//===- write_test_artifacts.cc - The test artifacts as files --------------===//
// SPDX-License-Identifier: Apache-2.0
// strata_write_test_artifacts DIR writes the runtime tests' artifacts to
// DIR: standard.strata (test_artifacts.h: the test kernels, loadable and
// runnable; the examples test runs it), truncated.strata (its first 300
// bytes, a corrupt file), and minimal.strata and decoder.strata, whose
// manifests are richer and whose code section is a few bytes of filler
// (valid for every check before code loading, not loadable). standard,
// minimal and decoder are the loader fuzzer's seeds
// (test/fuzz/loader-corpus/, docs/testing.md).

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
// every rank up to the limit, many dtypes, CPU features and a workspace.
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
  writer.addEntry({"decode", "strata_decode", inputs, outputs});
  writer.addEntry({"prefill",
                   "strata_prefill",
                   {{"input_ids", STRATA_DTYPE_I32, {1, seq}}},
                   {{"logits", STRATA_DTYPE_F32, {1, seq, 50}}}});
  writer.setCpuFeatures(STRATA_CPU_FEATURE_AVX2 | STRATA_CPU_FEATURE_FMA);
  writer.setWorkspaceBytes(1 << 20);
  static const std::vector<uint8_t> weights(200, 0x5A);
  writer.setWeights(weights.data(), weights.size());
  writer.setCpuCode(kFillerCode.data(), kFillerCode.size());
  return writer;
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
  std::ofstream truncated(dir + "/truncated.strata", std::ios::binary);
  truncated.write(reinterpret_cast<const char*>(standard.data()),
                  static_cast<std::streamsize>(standard.size()));
  truncated.close();
  if (!truncated) {
    std::fprintf(stderr, "strata_write_test_artifacts: cannot write %s\n",
                 (dir + "/truncated.strata").c_str());
    ok = false;
  }
  ok = write(minimal(), dir + "/minimal.strata") && ok;
  ok = write(decoder(), dir + "/decoder.strata") && ok;
  return ok ? 0 : 1;
}
