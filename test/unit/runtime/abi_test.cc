//===- abi_test.cc - Layout of the codegen <-> runtime contract
//------------===//
// SPDX-License-Identifier: Apache-2.0
// The structs of strata_kernel_abi.h and strata_artifact_format.h are read
// and written byte for byte by generated code and by the writer; any change
// of these offsets is a version bump (STYLE.md §11).

#include <gtest/gtest.h>

#include <cstddef>

#include "codegen/abi/strata_artifact_format.h"
#include "codegen/abi/strata_kernel_abi.h"

namespace {

TEST(AbiTest, Versions) {
  EXPECT_EQ(STRATA_KERNEL_ABI_VERSION, 3u);
  EXPECT_EQ(STRATA_ARTIFACT_FORMAT_MAJOR, 2u);
  EXPECT_EQ(STRATA_ARTIFACT_FORMAT_MINOR, 0u);
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

}  // namespace
