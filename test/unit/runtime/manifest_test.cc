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
  m.u32(1).str("add_bias").str("strata_test_add_bias");
  m.u32(1).tensor("x", STRATA_DTYPE_F32, {-1, 4});
  m.u32(1).tensor("y", STRATA_DTYPE_F32, {-1, 4});
  m.u32(1).str("batch").i64(8);
  m.i64(0);
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
}

TEST(ManifestTest, TrailingBytes) {
  std::vector<uint8_t> bytes = validManifest().raw("xyz", 3).bytes;
  EXPECT_TRUE(rejects(bytes, "manifest has 3 trailing bytes"));
}

TEST(ManifestTest, StringLimits) {
  ManifestBytes longName;
  longName.u32(1).str(std::string(4097, 'a'));
  EXPECT_TRUE(rejects(longName.bytes, "is 4097 bytes long, above the limit"));
  ManifestBytes huge;
  huge.u32(1).u32(0xFFFFFFFFu).raw(std::string(20, '\0').data(), 20);
  EXPECT_TRUE(rejects(huge.bytes, "above the limit of 4096"));
  ManifestBytes empty;
  empty.u32(1).str("").str("sym").u32(0).u32(0).u32(0).i64(0);
  EXPECT_TRUE(rejects(empty.bytes, "entry name at byte 4 is empty"));
  ManifestBytes nul;
  nul.u32(1).str(std::string("a\0b", 3)).str("s").u32(0).u32(0).u32(0).i64(0);
  EXPECT_TRUE(rejects(nul.bytes, "contains a NUL byte"));
}

TEST(ManifestTest, CountsAreBoundedByTheBytes) {
  ManifestBytes none;
  none.u32(0).u32(0).i64(0);
  EXPECT_TRUE(rejects(none.bytes, "manifest has no entry points"));
  ManifestBytes entries;
  entries.u32(0x7FFFFFFF).i64(0);
  EXPECT_TRUE(rejects(entries.bytes, "entry count 2147483647 exceeds"));
  ManifestBytes inputs;
  inputs.u32(1).str("e").str("s").u32(1000000).i64(0);
  EXPECT_TRUE(rejects(inputs.bytes, "input count 1000000"));
  ManifestBytes dims;
  dims.u32(1).str("e").str("s").u32(0).u32(0).u32(5000).i64(0);
  EXPECT_TRUE(rejects(dims.bytes, "dim count 5000"));
}

TEST(ManifestTest, TensorRules) {
  auto entryWith = [](uint32_t dtype, std::initializer_list<int64_t> dims) {
    ManifestBytes m;
    m.u32(1).str("e").str("strata_test_add_bias");
    m.u32(1).tensor("x", dtype, dims);
    m.u32(0).u32(1).str("batch").i64(8).i64(0);
    return m.bytes;
  };
  EXPECT_TRUE(rejects(entryWith(99, {4}), "tensor 'x' has unknown dtype 99"));
  EXPECT_TRUE(rejects(entryWith(0, {4}), "unknown dtype 0"));
  EXPECT_TRUE(rejects(entryWith(STRATA_DTYPE_F32, {1, 1, 1, 1, 1, 1, 1, 1, 1}),
                      "tensor 'x' has rank 9, above the limit of 8"));
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
  EXPECT_TRUE(rejects(entryWith(21, {4}), "tensor 'x' has unknown dtype 21"));
}

// A zero dim makes a tensor empty, so its size passes the limit, but a run
// still describes it by int64 strides (suffix products of the dims), which
// for [0, 2^40, 2^40] overflowed (undefined behaviour in the session's
// descriptor code). The loader fuzzer checks the same invariant on all it
// accepts (test/fuzz/loader_fuzzer.cpp).
TEST(ManifestTest, StridesMustFitIn64Bits) {
  auto entryWith = [](std::initializer_list<int64_t> dims) {
    ManifestBytes m;
    m.u32(1).str("e").str("strata_test_add_bias");
    m.u32(1).tensor("x", STRATA_DTYPE_F32, dims);
    m.u32(0).u32(1).str("batch").i64(int64_t{1} << 62).i64(0);
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
  negativeMax.u32(1).str("e").str("strata_test_add_bias").u32(0).u32(0);
  negativeMax.u32(1).str("batch").i64(-2).i64(0);
  EXPECT_TRUE(rejects(negativeMax.bytes,
                      "symbolic dim 'batch' has maximum -2, expected at least"));
  // Maximum 0: an extent computed from tensor data, for outputs only.
  ManifestBytes fromDataInput;
  fromDataInput.u32(1).str("e").str("strata_test_add_bias");
  fromDataInput.u32(1).tensor("x", STRATA_DTYPE_F32, {-1, 4}).u32(0);
  fromDataInput.u32(1).str("repeats").i64(STRATA_DIM_MAX_FROM_DATA).i64(0);
  EXPECT_TRUE(rejects(fromDataInput.bytes,
                      "entry 'e' input 'x' dim 0 refers to 'repeats', which "
                      "has no maximum"));
  ManifestBytes fromDataOutput;
  fromDataOutput.u32(1).str("e").str("strata_test_add_bias").u32(0);
  fromDataOutput.u32(1).tensor("y", STRATA_DTYPE_F32, {-1, -1, 4});
  fromDataOutput.u32(1).str("repeats").i64(STRATA_DIM_MAX_FROM_DATA).i64(0);
  STRATA_ASSERT_OK(tryLoad(withRawManifest(fromDataOutput.bytes)));
  ManifestBytes duplicate;
  duplicate.u32(1).str("e").str("strata_test_add_bias").u32(0).u32(0);
  duplicate.u32(2).str("b").i64(1).str("b").i64(2).i64(0);
  EXPECT_TRUE(rejects(duplicate.bytes, "duplicate symbolic dim name 'b'"));
}

TEST(ManifestTest, NamesAreUnique) {
  ManifestBytes entries;
  entries.u32(2);
  for (int i = 0; i < 2; ++i) {
    entries.str("e").str("strata_test_add_bias").u32(0).u32(0);
  }
  entries.u32(0).i64(0);
  EXPECT_TRUE(rejects(entries.bytes, "duplicate entry name 'e'"));
  ManifestBytes inputs;
  inputs.u32(1).str("e").str("strata_test_add_bias").u32(2);
  inputs.tensor("x", STRATA_DTYPE_F32, {}).tensor("x", STRATA_DTYPE_F32, {});
  inputs.u32(0).u32(0).i64(0);
  EXPECT_TRUE(rejects(inputs.bytes, "entry 'e' has two inputs named 'x'"));
}

}  // namespace
}  // namespace strata::testing
