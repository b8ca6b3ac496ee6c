//===- manifest_test.cc - Manifest decoding rules
//--------------------------===//
// SPDX-License-Identifier: Apache-2.0
// Malformed manifests with valid checksums (ArtifactWriter::assemble lays
// out raw bytes), each rejected with DATA_LOSS naming the defect.

#include <gtest/gtest.h>

#include <string>

#include "status_matchers.h"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

// Little-endian manifest bytes, written field by field.
class ManifestBytes {
 public:
  ManifestBytes& u32(uint32_t v) { return raw(&v, 4); }
  ManifestBytes& i64(int64_t v) { return raw(&v, 8); }
  ManifestBytes& str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    return raw(s.data(), s.size());
  }
  // tensor: name, dtype, dims
  ManifestBytes& tensor(const std::string& name, uint32_t dtype,
                        std::initializer_list<int64_t> dims) {
    str(name).u32(dtype).u32(static_cast<uint32_t>(dims.size()));
    for (int64_t d : dims) i64(d);
    return *this;
  }
  // entry: name, symbol, kind (generic)
  ManifestBytes& entry(const std::string& name, const std::string& symbol) {
    return str(name).str(symbol).u32(STRATA_ENTRY_KIND_GENERIC);
  }
  // No state tensors and the CPU code's target descriptor (section 1,
  // x86-64, no features): what follows the dim table.
  ManifestBytes& statesAndTargets() {
    u32(0);
    return u32(1).u32(1).u32(STRATA_TARGET_CPU).u32(14).str("x86-64").u32(0);
  }
  ManifestBytes& raw(const void* data, size_t size) {
    const auto* b = static_cast<const uint8_t*>(data);
    bytes.insert(bytes.end(), b, b + size);
    return *this;
  }
  std::vector<uint8_t> bytes;
};

// A valid one-entry manifest: add_bias(x: f32[batch, 4]) -> y, batch <= 8.
ManifestBytes validManifest() {
  ManifestBytes m;
  m.u32(1).entry("add_bias", "strata_test_add_bias");
  m.u32(1).tensor("x", STRATA_DTYPE_F32, {-1, 4});
  m.u32(1).tensor("y", STRATA_DTYPE_F32, {-1, 4});
  m.u32(1).str("batch").i64(8);
  m.statesAndTargets().i64(0);
  return m;
}

::testing::AssertionResult rejects(
    const std::vector<uint8_t>& manifest, const std::string& needle,
    strata_status_code_t expected = STRATA_STATUS_DATA_LOSS) {
  auto [code, message] = consumeStatus(tryLoad(withRawManifest(manifest)));
  if (code != expected || message.find(needle) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "got " << strata_status_code_string(code) << " '" << message
           << "', expected '" << needle << "'";
  }
  return ::testing::AssertionSuccess();
}

TEST(ManifestTest, RawValidManifestLoads) {
  STRATA_ASSERT_OK(tryLoad(withRawManifest(validManifest().bytes)));
}

TEST(ManifestTest, TruncatedAtEveryByte) {
  std::vector<uint8_t> full = validManifest().bytes;
  for (size_t size = 0; size < full.size(); ++size) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + size);
    ASSERT_TRUE(rejects(cut, "manifest")) << size;
  }
  std::vector<uint8_t> cut(full.begin(), full.begin() + 30);
  EXPECT_TRUE(rejects(
      cut, "manifest truncated at byte 20 of 30 while reading entry symbol"));
  // A target descriptor is read inside its own byte count: 4 bytes hold
  // the architecture's length but not the architecture. The descriptor's
  // 14 bytes and the workspace's 8 follow its count.
  std::vector<uint8_t> shortTarget = full;
  patch<uint32_t>(&shortTarget, full.size() - 8 - 14 - 4, 4);
  size_t descriptor = full.size() - 8 - 14;
  EXPECT_TRUE(rejects(shortTarget,
                      "manifest truncated at byte " +
                          std::to_string(descriptor + 4) + " of " +
                          std::to_string(descriptor + 4) +
                          " while reading cpu architecture"));
  patch<uint32_t>(&shortTarget, full.size() - 8 - 14 - 4, 13);
  EXPECT_TRUE(rejects(shortTarget, "while reading cpu feature count"));
}

TEST(ManifestTest, TrailingBytes) {
  std::vector<uint8_t> bytes = validManifest().raw("xyz", 3).bytes;
  EXPECT_TRUE(rejects(bytes, "manifest has 3 trailing bytes"));
}

TEST(ManifestTest, StringLimits) {
  ManifestBytes longName;
  longName.u32(1).entry(std::string(4097, 'a'), "s").u32(0).u32(0).u32(0);
  longName.statesAndTargets().i64(0);
  EXPECT_TRUE(rejects(longName.bytes, "is 4097 bytes long, above the limit"));
  ManifestBytes huge;
  huge.u32(1).u32(0xFFFFFFFFu).raw(std::string(20, '\0').data(), 20);
  EXPECT_TRUE(rejects(huge.bytes, "while reading entry name"));
  ManifestBytes empty;
  empty.u32(1).entry("", "sym").u32(0).u32(0).u32(0);
  empty.statesAndTargets().i64(0);
  EXPECT_TRUE(rejects(empty.bytes, "entry name is empty"));
  ManifestBytes nul;
  nul.u32(1).entry(std::string("a\0b", 3), "s").u32(0).u32(0).u32(0);
  nul.statesAndTargets().i64(0);
  EXPECT_TRUE(rejects(nul.bytes, "contains a NUL byte"));
}

TEST(ManifestTest, CountsAreBoundedByTheBytes) {
  ManifestBytes none;
  none.u32(0).u32(0).statesAndTargets().i64(0);
  EXPECT_TRUE(rejects(none.bytes, "manifest has no entry points"));
  ManifestBytes entries;
  entries.u32(0x7FFFFFFF).i64(0);
  EXPECT_TRUE(rejects(entries.bytes, "entry count 2147483647 at byte 0 exceeds"));
  ManifestBytes inputs;
  inputs.u32(1).entry("e", "s").u32(1000000).i64(0);
  EXPECT_TRUE(rejects(inputs.bytes, "input count 1000000"));
  ManifestBytes dims;
  dims.u32(1).entry("e", "s").u32(0).u32(0).u32(5000).i64(0);
  EXPECT_TRUE(rejects(dims.bytes, "dim count 5000"));
  ManifestBytes states;
  states.u32(1).entry("e", "s").u32(0).u32(0).u32(0).u32(100000).i64(0);
  EXPECT_TRUE(rejects(states.bytes, "state count 100000"));
  ManifestBytes targets;
  targets.u32(1).entry("e", "s").u32(0).u32(0).u32(0).u32(0).u32(9999);
  EXPECT_TRUE(rejects(targets.i64(0).bytes, "target count 9999"));
}

TEST(ManifestTest, TensorRules) {
  auto entryWith = [](uint32_t dtype, std::initializer_list<int64_t> dims) {
    ManifestBytes m;
    m.u32(1).entry("e", "strata_test_add_bias");
    m.u32(1).tensor("x", dtype, dims);
    m.u32(0).u32(1).str("batch").i64(8).statesAndTargets().i64(0);
    return m.bytes;
  };
  EXPECT_TRUE(rejects(entryWith(99, {4}),
                      "entry 'e' input 'x' has unknown dtype 99"));
  EXPECT_TRUE(rejects(entryWith(0, {4}), "unknown dtype 0"));
  EXPECT_TRUE(rejects(entryWith(STRATA_DTYPE_F32, {1, 1, 1, 1, 1, 1, 1, 1, 1}),
                      "manifest tensor 'x' has rank 9, above the limit of 8"));
  EXPECT_TRUE(rejects(entryWith(STRATA_DTYPE_F32, {-6}),
                      "entry 'e' input 'x' dim 0 refers to symbolic dim 5, "
                      "but the dim table has 1"));
  EXPECT_TRUE(rejects(entryWith(STRATA_DTYPE_F32, {INT64_MIN}),
                      "refers to symbolic dim"));
  EXPECT_TRUE(rejects(entryWith(STRATA_DTYPE_F32, {1 << 30, 1 << 30, -1}),
                      "above the limit of"));
  STRATA_ASSERT_OK(tryLoad(withRawManifest(entryWith(STRATA_DTYPE_F32, {0}))));
  // Every assigned dtype loads, the fp8 and 4-bit ones included; the next
  // value does not.
  for (uint32_t dtype = STRATA_DTYPE_F32; dtype <= STRATA_DTYPE_F4E2M1;
       ++dtype)
    STRATA_ASSERT_OK(tryLoad(withRawManifest(entryWith(dtype, {4}))));
  EXPECT_TRUE(rejects(entryWith(21, {4}), "input 'x' has unknown dtype 21"));
}

// A zero dim makes a tensor empty, so its size passes the limit, but a run
// still describes it by int64 strides (suffix products of the dims), which
// for [0, 2^40, 2^40] overflowed (undefined behaviour in the session's
// descriptor code). The loader fuzzer checks the same invariant on all it
// accepts (test/fuzz/loader_fuzzer.cpp).
TEST(ManifestTest, StridesMustFitIn64Bits) {
  auto entryWith = [](std::initializer_list<int64_t> dims) {
    ManifestBytes m;
    m.u32(1).entry("e", "strata_test_add_bias");
    m.u32(1).tensor("x", STRATA_DTYPE_F32, dims);
    m.u32(0).u32(1).str("batch").i64(int64_t{1} << 62);
    m.statesAndTargets().i64(0);
    return m.bytes;
  };
  EXPECT_TRUE(rejects(entryWith({0, int64_t{1} << 40, int64_t{1} << 40}),
                      "entry 'e' input 'x' has strides that do not fit in 64 "
                      "bits (its dims from dim 1 on"));
  EXPECT_TRUE(rejects(entryWith({0, -1, 4}), "from dim 1 on"));
  EXPECT_TRUE(rejects(entryWith({0, 2, -1, 2}), "from dim 2 on"));
  // The last dims first: a trailing zero keeps every stride 0.
  STRATA_ASSERT_OK(tryLoad(withRawManifest(
      entryWith({int64_t{1} << 40, int64_t{1} << 40, 0}))));
  STRATA_ASSERT_OK(tryLoad(withRawManifest(entryWith({0, 1 << 20, 1 << 20}))));
}

TEST(ManifestTest, DimTableRules) {
  ManifestBytes negativeMax;
  negativeMax.u32(1).entry("e", "strata_test_add_bias").u32(0).u32(0);
  negativeMax.u32(1).str("batch").i64(-2).statesAndTargets().i64(0);
  EXPECT_TRUE(rejects(negativeMax.bytes,
                      "symbolic dim 'batch' has maximum -2, expected at least"));
  // Maximum 0: an extent computed from tensor data, for outputs only.
  ManifestBytes fromDataInput;
  fromDataInput.u32(1).entry("e", "strata_test_add_bias");
  fromDataInput.u32(1).tensor("x", STRATA_DTYPE_F32, {-1, 4}).u32(0);
  fromDataInput.u32(1).str("repeats").i64(STRATA_DIM_MAX_FROM_DATA);
  fromDataInput.statesAndTargets().i64(0);
  EXPECT_TRUE(rejects(fromDataInput.bytes,
                      "entry 'e' input 'x' dim 0 refers to 'repeats', which "
                      "has no maximum"));
  ManifestBytes fromDataOutput;
  fromDataOutput.u32(1).entry("e", "strata_test_add_bias").u32(0);
  fromDataOutput.u32(1).tensor("y", STRATA_DTYPE_F32, {-1, -1, 4});
  fromDataOutput.u32(1).str("repeats").i64(STRATA_DIM_MAX_FROM_DATA);
  fromDataOutput.statesAndTargets().i64(0);
  STRATA_ASSERT_OK(tryLoad(withRawManifest(fromDataOutput.bytes)));
  ManifestBytes duplicate;
  duplicate.u32(1).entry("e", "strata_test_add_bias").u32(0).u32(0);
  duplicate.u32(2).str("b").i64(1).str("b").i64(2).statesAndTargets().i64(0);
  EXPECT_TRUE(rejects(duplicate.bytes, "duplicate symbolic dim name 'b'"));
}

TEST(ManifestTest, NamesAreUnique) {
  ManifestBytes entries;
  entries.u32(2);
  for (int i = 0; i < 2; ++i) {
    entries.entry("e", "strata_test_add_bias").u32(0).u32(0);
  }
  entries.u32(0).statesAndTargets().i64(0);
  EXPECT_TRUE(rejects(entries.bytes, "duplicate entry name 'e'"));
  ManifestBytes inputs;
  inputs.u32(1).entry("e", "strata_test_add_bias").u32(2);
  inputs.tensor("x", STRATA_DTYPE_F32, {}).tensor("x", STRATA_DTYPE_F32, {});
  inputs.u32(0).u32(0).statesAndTargets().i64(0);
  EXPECT_TRUE(rejects(inputs.bytes, "entry 'e' has two inputs named 'x'"));
}

}  // namespace
}  // namespace strata::testing
