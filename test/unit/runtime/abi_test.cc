//===- abi_test.cc - Layout of the codegen <-> runtime contract
//------------===//
// SPDX-License-Identifier: Apache-2.0
// The structs of strata_kernel_abi.h and strata_artifact_format.h are read
// and written byte for byte by generated code and by the writer; any change
// of these offsets is a version bump (STYLE.md §11).

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "codegen/abi/strata_artifact_format.h"
#include "codegen/abi/strata_kernel_abi.h"
#include "strata/runtime/communicator.h"

namespace {

TEST(AbiTest, Versions) {
  EXPECT_EQ(STRATA_KERNEL_ABI_VERSION, 5u);
  EXPECT_EQ(STRATA_ARTIFACT_FORMAT_MAJOR, 2u);
  EXPECT_EQ(STRATA_ARTIFACT_FORMAT_MINOR, 3u);
}

// Manifest enumerations: values never change once assigned.
TEST(AbiTest, ManifestEnumValues) {
  EXPECT_EQ(STRATA_SECTION_FLAG_REQUIRED, 1u);
  EXPECT_EQ(STRATA_ENTRY_KIND_GENERIC, 1);
  EXPECT_EQ(STRATA_ENTRY_KIND_PREFILL, 2);
  EXPECT_EQ(STRATA_ENTRY_KIND_DECODE, 3);
  EXPECT_EQ(STRATA_STATE_SCOPE_PER_SEQUENCE, 1);
  EXPECT_EQ(STRATA_STATE_SCOPE_SHARED, 2);
  EXPECT_EQ(STRATA_TARGET_CPU, 1);
  EXPECT_EQ(STRATA_TARGET_CUDA, 2);
}

TEST(AbiTest, MemrefDescriptorLayout) {
  EXPECT_EQ(offsetof(strata_memref_desc_t, allocated), 0u);
  EXPECT_EQ(offsetof(strata_memref_desc_t, aligned), 8u);
  EXPECT_EQ(offsetof(strata_memref_desc_t, offset), 16u);
  EXPECT_EQ(offsetof(strata_memref_desc_t, sizes_and_strides), 24u);
  EXPECT_EQ(sizeof(strata_memref_desc_t), 24u + 16u * 8u);
  EXPECT_EQ(strata_memref_desc_size(0), 24u);
  EXPECT_EQ(strata_memref_desc_size(2), 56u);
  EXPECT_EQ(strata_memref_desc_size(STRATA_MAX_RANK),
            sizeof(strata_memref_desc_t));
}

TEST(AbiTest, DtypeValuesAndSizes) {
  EXPECT_EQ(STRATA_DTYPE_F32, 1);
  EXPECT_EQ(STRATA_DTYPE_BOOL, 13);
  EXPECT_EQ(strata_dtype_size(STRATA_DTYPE_F32), 4u);
  EXPECT_EQ(strata_dtype_size(STRATA_DTYPE_BF16), 2u);
  EXPECT_EQ(strata_dtype_size(STRATA_DTYPE_U64), 8u);
  EXPECT_EQ(strata_dtype_size(STRATA_DTYPE_BOOL), 1u);
  EXPECT_EQ(strata_dtype_size(0), 0u);
  EXPECT_EQ(strata_dtype_size(21), 0u);
}

// The fp8 and 4-bit dtypes follow BOOL; values never change once assigned.
TEST(AbiTest, NarrowDtypeValuesAndSizes) {
  EXPECT_EQ(STRATA_DTYPE_F8E4M3FN, 14);
  EXPECT_EQ(STRATA_DTYPE_F8E4M3FNUZ, 15);
  EXPECT_EQ(STRATA_DTYPE_F8E5M2, 16);
  EXPECT_EQ(STRATA_DTYPE_F8E5M2FNUZ, 17);
  EXPECT_EQ(STRATA_DTYPE_I4, 18);
  EXPECT_EQ(STRATA_DTYPE_U4, 19);
  EXPECT_EQ(STRATA_DTYPE_F4E2M1, 20);
  // One byte per element, the 4-bit types included (not packed).
  for (uint32_t dtype = STRATA_DTYPE_F8E4M3FN; dtype <= STRATA_DTYPE_F4E2M1;
       ++dtype)
    EXPECT_EQ(strata_dtype_size(dtype), 1u) << dtype;
}

TEST(AbiTest, ArtifactHeaderLayout) {
  EXPECT_EQ(sizeof(strata_artifact_header_t), 128u);
  // format_major where format 1 had format_version, so old readers name it.
  EXPECT_EQ(offsetof(strata_artifact_header_t, format_major), 8u);
  EXPECT_EQ(offsetof(strata_artifact_header_t, kernel_abi_version), 12u);
  EXPECT_EQ(offsetof(strata_artifact_header_t, file_size), 16u);
  EXPECT_EQ(offsetof(strata_artifact_header_t, reserved1), 24u);
  EXPECT_EQ(offsetof(strata_artifact_header_t, section_count), 32u);
  EXPECT_EQ(offsetof(strata_artifact_header_t, format_minor), 36u);
  EXPECT_EQ(offsetof(strata_artifact_header_t, section_table_offset), 40u);
  EXPECT_EQ(offsetof(strata_artifact_header_t, header_checksum), 48u);
  EXPECT_EQ(offsetof(strata_artifact_header_t, section_table_checksum), 56u);
  EXPECT_EQ(offsetof(strata_artifact_header_t, reserved), 64u);
  EXPECT_EQ(sizeof(strata_section_t), 32u);
  EXPECT_EQ(offsetof(strata_section_t, offset), 8u);
  EXPECT_EQ(offsetof(strata_section_t, checksum), 24u);
}

// The PARALLEL section (format 2.2, pipeline stages 2.3), the collectives'
// and the stage hand-overs' parameter blocks, and the message tags.
TEST(AbiTest, ParallelSectionAndCollectiveParams) {
  EXPECT_EQ(STRATA_SECTION_PARALLEL, 5);
  EXPECT_EQ(sizeof(strata_parallel_section_t), 32u);
  EXPECT_EQ(offsetof(strata_parallel_section_t, tensor_rank), 0u);
  EXPECT_EQ(offsetof(strata_parallel_section_t, tensor_ranks), 4u);
  EXPECT_EQ(offsetof(strata_parallel_section_t, pipeline_stage), 8u);
  EXPECT_EQ(offsetof(strata_parallel_section_t, pipeline_stages), 12u);
  EXPECT_EQ(offsetof(strata_parallel_section_t, reserved), 16u);
  EXPECT_EQ(STRATA_COLL_IN, 0);
  EXPECT_EQ(STRATA_COLL_SIZES, 1);
  EXPECT_EQ(STRATA_COLL_STRIDES, 5);
  EXPECT_EQ(STRATA_COLL_OUT, 9);
  EXPECT_EQ(STRATA_COLL_AXIS, 10);
  EXPECT_EQ(STRATA_COLL_RANKS, 11);
  EXPECT_EQ(STRATA_COLL_PARAM_COUNT, 12);
  EXPECT_EQ(STRATA_ARTIFACT_MAX_PARALLEL_RANKS, 65536u);
  EXPECT_EQ(STRATA_P2P_BUF, 0);
  EXPECT_EQ(STRATA_P2P_SIZES, 1);
  EXPECT_EQ(STRATA_P2P_STRIDES, 5);
  EXPECT_EQ(STRATA_P2P_STAGE, 9);
  EXPECT_EQ(STRATA_P2P_EXTENTS, 10);
  EXPECT_EQ(STRATA_P2P_PARAM_COUNT, 11);
  EXPECT_EQ(STRATA_COMMUNICATOR_TAG_GROUP, 0x5301u);
  EXPECT_EQ(STRATA_COMMUNICATOR_TAG_STAGE, 0x5302u);
}

// Layout values are recorded in generated code: they never change.
TEST(AbiTest, MatmulLayoutValues) {
  EXPECT_EQ(STRATA_MM_LAYOUT_PANEL_I4_GROUPS, 4);
  EXPECT_EQ(STRATA_MM_LAYOUT_PANEL_I8, 5);
  EXPECT_EQ(STRATA_MM_LAYOUT_PANEL_I4_F16_BLOCKS, 6);
}

// The matmul params block: the bias came last (version 4).
TEST(AbiTest, MatmulParamIndices) {
  EXPECT_EQ(STRATA_MM_GROUP_SIZE, 34);
  EXPECT_EQ(STRATA_MM_BIAS, 35);
  EXPECT_EQ(STRATA_MM_PARAM_COUNT, 36);
}

// The Winograd weight transform G g G^T (version 5), point-major: a 3 x 3
// of ones gives the outer product of G's row sums (1, 1.5, 0.5, 1); the
// centre tap alone that of G's middle column (0, 0.5, -0.5, 0). Two
// channels and three columns, each (c, m) its own 3 x 3.
TEST(AbiTest, WinogradWeightTransform) {
  const int64_t c = 2, m = 3, plane = c * m;
  std::vector<float> w(9 * plane, 0.0f), u(16 * plane, -1.0f);
  for (int64_t tap = 0; tap < 9; ++tap) w[tap * plane + 0] = 1.0f;  // (0, 0)
  w[4 * plane + 1 * m + 2] = 1.0f;  // centre tap of (1, 2)
  strata_winograd_f23_weight(w.data(), c, m, u.data());
  const double rowSums[4] = {1.0, 1.5, 0.5, 1.0};
  const double centre[4] = {0.0, 0.5, -0.5, 0.0};
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < 4; ++s) {
      const int64_t point = r * 4 + s;
      EXPECT_EQ(u[point * plane + 0], rowSums[r] * rowSums[s]) << point;
      EXPECT_EQ(u[point * plane + 1 * m + 2], centre[r] * centre[s]) << point;
      EXPECT_EQ(u[point * plane + 1], 0.0f) << point;
    }
}

uint32_t bitsOf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

// Every binary16 value widens exactly and narrows back to itself (NaNs to
// a quiet NaN of the same sign and payload top).
TEST(AbiTest, F16RoundTrip) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float x = strata_f16_to_f32(uint16_t(h));
    const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    if (nan) {
      ASSERT_TRUE(x != x) << h;
      ASSERT_EQ(strata_f32_to_f16(x), uint16_t(h | 0x200u)) << h;
    } else {
      ASSERT_EQ(strata_f32_to_f16(x), uint16_t(h)) << h;
    }
  }
}

// Narrowing rounds to nearest, ties to even, as the compiler's _Float16
// conversion (vcvtps2ph) does: every midpoint and its neighbours, and a
// million random floats over the binary16 range and beyond.
TEST(AbiTest, F32ToF16RoundsToNearestEven) {
  const auto expected = [](float x) {
    const _Float16 h = static_cast<_Float16>(x);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    return bits;
  };
  for (uint32_t h = 0; h < 0x7bffu; ++h)  // up to the largest, 65504
    for (uint32_t sign : {0u, 0x8000u}) {
      const float lo = strata_f16_to_f32(uint16_t(h | sign));
      const float hi = strata_f16_to_f32(uint16_t((h + 1) | sign));
      const float mid = (lo + hi) / 2;  // exact in fp32
      for (float x : {mid, std::nextafter(mid, lo), std::nextafter(mid, hi)})
        ASSERT_EQ(strata_f32_to_f16(x), expected(x))
            << std::hex << bitsOf(x);
    }
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits(0, 0x4800'0000u);
  for (int i = 0; i < 1'000'000; ++i) {
    uint32_t u = bits(rng) | (i % 2 ? 0x8000'0000u : 0u);
    float x;
    std::memcpy(&x, &u, 4);
    ASSERT_EQ(strata_f32_to_f16(x), expected(x)) << std::hex << u;
  }
}

}  // namespace
