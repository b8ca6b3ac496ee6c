//===- npy_test.cc - strata-run's .npy reader and writer
//-------------------===//
// SPDX-License-Identifier: Apache-2.0
// Round trips, and a corpus of malformed files that must fail cleanly.

#include "Npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "strata_kernel_abi.h"

namespace strata::tools {
namespace {

std::vector<uint8_t> npyWithHeader(const std::string& header,
                                   size_t dataBytes) {
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  bytes.push_back(static_cast<uint8_t>(header.size() & 0xFF));
  bytes.push_back(static_cast<uint8_t>(header.size() >> 8));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.resize(bytes.size() + dataBytes, 0);
  return bytes;
}

TEST(NpyTest, RoundTrip) {
  const int64_t shape[2] = {2, 3};
  const float values[6] = {1, 2, 3, 4, 5, 6};
  std::vector<uint8_t> bytes =
      encodeNpy(STRATA_DTYPE_F32, shape, 2, values, sizeof(values));
  EXPECT_EQ((bytes.size() - sizeof(values)) % 64, 0u);
  NpyArray array;
  std::string error;
  ASSERT_TRUE(parseNpy(bytes.data(), bytes.size(), &array, &error)) << error;
  EXPECT_EQ(array.dtype, static_cast<uint32_t>(STRATA_DTYPE_F32));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(array.data.size(), sizeof(values));
  EXPECT_EQ(std::memcmp(array.data.data(), values, sizeof(values)), 0);
}

TEST(NpyTest, ScalarsAndOneDimAndEveryDtype) {
  for (uint32_t dtype = STRATA_DTYPE_F32; dtype <= STRATA_DTYPE_BOOL; ++dtype) {
    uint8_t data[8] = {1};
    std::vector<uint8_t> scalar =
        encodeNpy(dtype, nullptr, 0, data, strata_dtype_size(dtype));
    NpyArray array;
    std::string error;
    ASSERT_TRUE(parseNpy(scalar.data(), scalar.size(), &array, &error))
        << dtype << ": " << error;
    EXPECT_TRUE(array.shape.empty());
    // bf16 travels as u16.
    EXPECT_EQ(array.dtype,
              dtype == STRATA_DTYPE_BF16 ? uint32_t{STRATA_DTYPE_U16} : dtype);
  }
  const int64_t five[1] = {5};
  int32_t values[5] = {};
  std::vector<uint8_t> vec =
      encodeNpy(STRATA_DTYPE_I32, five, 1, values, sizeof(values));
  NpyArray array;
  ASSERT_TRUE(parseNpy(vec.data(), vec.size(), &array, nullptr));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{5}));
}

TEST(NpyTest, AcceptsNumpySpellings) {
  NpyArray array;
  std::string error;
  auto bytes = npyWithHeader(
      "{'descr': '<i8', 'fortran_order': False, 'shape': (2L, 1), }\n", 16);
  EXPECT_TRUE(parseNpy(bytes.data(), bytes.size(), &array, &error)) << error;
  bytes = npyWithHeader(
      "{\"shape\": (3,), \"fortran_order\": True, \"descr\": \"|b1\"}", 3);
  EXPECT_TRUE(parseNpy(bytes.data(), bytes.size(), &array, &error)) << error;
  EXPECT_EQ(array.dtype, static_cast<uint32_t>(STRATA_DTYPE_BOOL));
}

TEST(NpyTest, MalformedFilesFailCleanly) {
  struct Case {
    std::vector<uint8_t> bytes;
    const char* needle;
  };
  std::vector<Case> cases = {
      {{}, "bad magic"},
      {{0x93, 'N', 'U', 'M'}, "bad magic"},
      {{0x93, 'N', 'U', 'M', 'P', 'Y', 9, 0, 0, 0}, "version 9"},
      {{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xFF, 0xFF}, "truncated"},
      {{0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xFF, 0xFF}, "truncated"},
      {npyWithHeader("[]", 0), "not a dict"},
      {npyWithHeader("{'descr': '>f4', 'fortran_order': False, 'shape': ()}",
                     4),
       "unsupported dtype '>f4'"},
      {npyWithHeader("{'descr': '|O', 'fortran_order': False, 'shape': ()}", 8),
       "unsupported dtype"},
      {npyWithHeader("{'descr': [('a', '<f4')], 'fortran_order': False, "
                     "'shape': ()}",
                     4),
       "structured"},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}",
                     16),
       "Fortran-order"},
      {npyWithHeader(
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)}", 15),
       "data is 15 bytes, the shape needs 16"},
      {npyWithHeader(
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)}", 17),
       "data is 17 bytes"},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(99999999999, 99999999999, 99999999999)}",
                     4),
       "too large"},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(999999999999999999999,)}",
                     4),
       "non-integer or huge"},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(1,1,1,1,1,1,1,1,1)}",
                     4),
       "rank above 8"},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
                     4),
       "non-integer"},
      {npyWithHeader("{'descr': '<f4', 'shape': ()}", 4), "lacks"},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': Maybe, 'shape': ()}",
                     4),
       "True or False"},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (), "
                     "'extra': 1}",
                     4),
       "unknown header key 'extra'"},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': ()} x",
                     4),
       "trailing text"},
      {npyWithHeader("{'descr': '<f4", 4), "'descr' is not a string"},
      {npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}",
                     4),
       "malformed 'shape'"},
  };
  for (const Case& c : cases) {
    NpyArray array;
    std::string error;
    EXPECT_FALSE(parseNpy(c.bytes.data(), c.bytes.size(), &array, &error))
        << c.needle;
    EXPECT_NE(error.find(c.needle), std::string::npos)
        << "'" << error << "' lacks '" << c.needle << "'";
  }
  // Every truncation of a valid file fails cleanly too.
  const int64_t shape[1] = {3};
  const float values[3] = {1, 2, 3};
  std::vector<uint8_t> good =
      encodeNpy(STRATA_DTYPE_F32, shape, 1, values, sizeof(values));
  for (size_t size = 0; size < good.size(); ++size) {
    NpyArray array;
    std::string error;
    EXPECT_FALSE(parseNpy(good.data(), size, &array, &error)) << size;
  }
}

// NumPy has no fp8 or 4-bit types: they are written as raw bytes ('|i1'
// for i4, '|u1' for the rest), with a 4-bit element's high bits replaced by
// its value's (sign extension for i4, zeros otherwise).
TEST(NpyTest, NarrowTypesTravelAsBytes) {
  const int64_t four[1] = {4};
  const uint8_t codes[4] = {0x07, 0x08, 0xFF, 0x3A};
  struct Case {
    uint32_t dtype;
    uint32_t readAs;
    uint8_t expected[4];
  };
  const Case cases[] = {
      {STRATA_DTYPE_F8E4M3FN, STRATA_DTYPE_U8, {0x07, 0x08, 0xFF, 0x3A}},
      {STRATA_DTYPE_F8E4M3FNUZ, STRATA_DTYPE_U8, {0x07, 0x08, 0xFF, 0x3A}},
      {STRATA_DTYPE_F8E5M2, STRATA_DTYPE_U8, {0x07, 0x08, 0xFF, 0x3A}},
      {STRATA_DTYPE_F8E5M2FNUZ, STRATA_DTYPE_U8, {0x07, 0x08, 0xFF, 0x3A}},
      {STRATA_DTYPE_I4, STRATA_DTYPE_I8, {0x07, 0xF8, 0xFF, 0xFA}},
      {STRATA_DTYPE_U4, STRATA_DTYPE_U8, {0x07, 0x08, 0x0F, 0x0A}},
      {STRATA_DTYPE_F4E2M1, STRATA_DTYPE_U8, {0x07, 0x08, 0x0F, 0x0A}},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> bytes = encodeNpy(c.dtype, four, 1, codes, 4);
    NpyArray array;
    std::string error;
    ASSERT_TRUE(parseNpy(bytes.data(), bytes.size(), &array, &error))
        << c.dtype << ": " << error;
    EXPECT_EQ(array.dtype, c.readAs) << c.dtype;
    ASSERT_EQ(array.data.size(), 4u);
    EXPECT_EQ(std::memcmp(array.data.data(), c.expected, 4), 0) << c.dtype;
    // Read back for an input of that dtype, the bytes carry it.
    ASSERT_TRUE(adaptToSignature(c.dtype, &array, &error)) << error;
    EXPECT_EQ(array.dtype, c.dtype);
  }
}

TEST(NpyTest, AdaptsRawArraysToTheSignature) {
  auto array = [](uint32_t dtype, std::vector<uint8_t> data) {
    NpyArray a;
    a.dtype = dtype;
    a.shape = {static_cast<int64_t>(data.size())};
    a.data = std::move(data);
    return a;
  };
  std::string error;
  // bf16 from u16, fp8 from either byte type.
  NpyArray a = array(STRATA_DTYPE_U16, {0, 0});
  EXPECT_TRUE(adaptToSignature(STRATA_DTYPE_BF16, &a, &error));
  EXPECT_EQ(a.dtype, static_cast<uint32_t>(STRATA_DTYPE_BF16));
  a = array(STRATA_DTYPE_I8, {0x80});
  EXPECT_TRUE(adaptToSignature(STRATA_DTYPE_F8E5M2, &a, &error));
  EXPECT_EQ(a.dtype, static_cast<uint32_t>(STRATA_DTYPE_F8E5M2));
  // i4: -8..7 from int8, the codes 0..15 from uint8.
  a = array(STRATA_DTYPE_I8, {0xF8, 0x07});
  EXPECT_TRUE(adaptToSignature(STRATA_DTYPE_I4, &a, &error)) << error;
  a = array(STRATA_DTYPE_U8, {0x0F, 0x00});
  EXPECT_TRUE(adaptToSignature(STRATA_DTYPE_I4, &a, &error)) << error;
  // Values outside name the element.
  a = array(STRATA_DTYPE_I8, {0x01, 0x08});
  EXPECT_FALSE(adaptToSignature(STRATA_DTYPE_I4, &a, &error));
  EXPECT_EQ(error, "element 1 is 8, not a 4-bit value (-8..7)");
  EXPECT_EQ(a.dtype, static_cast<uint32_t>(STRATA_DTYPE_I8));
  a = array(STRATA_DTYPE_U8, {0x10});
  EXPECT_FALSE(adaptToSignature(STRATA_DTYPE_U4, &a, &error));
  EXPECT_EQ(error, "element 0 is 16, not a 4-bit code (0..15)");
  a = array(STRATA_DTYPE_I8, {0x02, 0xFF});
  EXPECT_FALSE(adaptToSignature(STRATA_DTYPE_F4E2M1, &a, &error));
  EXPECT_EQ(error, "element 1 is -1, not a 4-bit code (0..15)");
  // Anything else is left for the runtime to reject by dtype.
  a = array(STRATA_DTYPE_U16, {0, 0});
  EXPECT_TRUE(adaptToSignature(STRATA_DTYPE_I4, &a, &error));
  EXPECT_EQ(a.dtype, static_cast<uint32_t>(STRATA_DTYPE_U16));
  a = array(STRATA_DTYPE_F32, {0, 0, 0, 0});
  EXPECT_TRUE(adaptToSignature(STRATA_DTYPE_F8E4M3FN, &a, &error));
  EXPECT_EQ(a.dtype, static_cast<uint32_t>(STRATA_DTYPE_F32));
}

TEST(NpyTest, ReadFileErrorsNameThePath) {
  NpyArray array;
  std::string error;
  EXPECT_FALSE(readNpy("/nonexistent/x.npy", &array, &error));
  EXPECT_NE(error.find("/nonexistent/x.npy"), std::string::npos);
}

}  // namespace
}  // namespace strata::tools
