/*===- strata_artifact_format.h - The .strata file layout --------*- C -*-===//
 * SPDX-License-Identifier: Apache-2.0
 * Byte layout of a .strata artifact, shared by the compiler (writer) and the
 * runtime (reader). Plain C, <stdint.h> only. All integers little-endian.
 * docs/artifact-format.md explains every field.
 *===----------------------------------------------------------------------===*/

#ifndef STRATA_CODEGEN_ABI_STRATA_ARTIFACT_FORMAT_H_
#define STRATA_CODEGEN_ABI_STRATA_ARTIFACT_FORMAT_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_ARTIFACT_MAGIC "STRATA\x00\x01" /* 8 bytes */
#define STRATA_ARTIFACT_FORMAT_VERSION 1u
#define STRATA_ARTIFACT_ALIGNMENT 64u /* every section starts 64-aligned */

/* CPU features the native code was compiled for (header.cpu_features). */
#define STRATA_CPU_FEATURE_AVX2 (1ull << 0)
#define STRATA_CPU_FEATURE_FMA (1ull << 1)
#define STRATA_CPU_FEATURE_AVX512F (1ull << 2)
#define STRATA_CPU_FEATURE_AVX512BW (1ull << 3)
#define STRATA_CPU_FEATURE_AVX512VL (1ull << 4)
#define STRATA_CPU_FEATURE_AVX512DQ (1ull << 5)
#define STRATA_CPU_FEATURE_AVX512VNNI (1ull << 6)
#define STRATA_CPU_FEATURE_AVX512BF16 (1ull << 7)
#define STRATA_CPU_FEATURE_F16C (1ull << 8)

/* Loader limits (see docs/artifact-format.md for every validation rule). */
#define STRATA_ARTIFACT_HEADER_SIZE 128u
#define STRATA_ARTIFACT_SECTION_ENTRY_SIZE 32u
#define STRATA_ARTIFACT_MAX_SECTIONS 16u

/* The fixed-size header at offset 0 (128 bytes). */
typedef struct strata_artifact_header_t {
  char magic[8];                /* STRATA_ARTIFACT_MAGIC */
  uint32_t format_version;      /* STRATA_ARTIFACT_FORMAT_VERSION */
  uint32_t kernel_abi_version;  /* STRATA_KERNEL_ABI_VERSION of the code */
  uint64_t file_size;           /* total bytes, header included */
  uint64_t cpu_features;        /* STRATA_CPU_FEATURE_* the code needs */
  uint32_t section_count;       /* entries in the section table, 3..16 */
  uint32_t reserved0;           /* 0 */
  uint64_t section_table_offset;/* right after the header: always 128 */
  uint64_t header_checksum;     /* XXH64(seed 0) of this header with this
                                   field set to 0 */
  uint64_t section_table_checksum; /* XXH64 of the section table */
  uint8_t reserved[64];         /* 0 */
} strata_artifact_header_t;

typedef enum strata_section_kind_e {
  STRATA_SECTION_MANIFEST = 1, /* binary manifest, see below */
  STRATA_SECTION_WEIGHTS = 2,  /* constant data; mapped read-only */
  STRATA_SECTION_CPU_CODE = 3, /* an ELF x86-64 shared object */
  STRATA_SECTION_CUDA_CODE = 4,/* reserved for cubin/PTX */
} strata_section_kind_t;

/* One entry of the section table (32 bytes). Sections do not overlap and
 * lie inside the file; offsets are multiples of STRATA_ARTIFACT_ALIGNMENT. */
typedef struct strata_section_t {
  uint32_t kind;      /* strata_section_kind_t */
  uint32_t flags;     /* 0 */
  uint64_t offset;
  uint64_t size;
  uint64_t checksum;  /* XXH64 of the section bytes. The loader always
                         verifies MANIFEST and CPU_CODE; WEIGHTS only on
                         request (it is large and mapped lazily). */
} strata_section_t;

/*
 * MANIFEST section, a little-endian byte stream:
 *   u32 entry_count
 *   entry_count x entry:
 *     str name; str symbol
 *     u32 input_count;  input_count  x tensor
 *     u32 output_count; output_count x tensor
 *   u32 dim_count; dim_count x { str name; i64 max }   symbolic dims
 *   u64 workspace_bytes                                 arena (0 in v1)
 * tensor: str name; u32 dtype (strata_dtype_t); u32 rank (<= STRATA_MAX_RANK);
 *         rank x i64 dim, where dim >= 0 is a static extent and
 *         dim = -1 - k refers to symbolic dim k of the dim table.
 * str: u32 length (<= 4096) followed by that many bytes (not terminated).
 * The manifest must be consumed exactly (no trailing bytes).
 * Further rules: entry_count >= 1; names and symbols are non-empty and
 * contain no NUL byte; entry names are unique, as are the input names and
 * the output names of an entry and the dim names; input_count <=
 * STRATA_MAX_ENTRY_INPUTS; a symbolic dim's max is >= 1, or
 * STRATA_DIM_MAX_FROM_DATA for a dim only outputs refer to; every tensor's
 * largest size (maxima substituted, a from-data dim counted as 1) is at most
 * STRATA_MANIFEST_MAX_TENSOR_BYTES.
 */
#define STRATA_MANIFEST_MAX_STRING 4096u
#define STRATA_MANIFEST_MAX_TENSOR_BYTES (1ull << 44) /* 16 TiB */
/* The max of a symbolic dim with no compile-time maximum: an output extent
 * the generated code computes from tensor data (a Tile repeat, a Range
 * count), each at most STRATA_MAX_DATA_EXTENT at run time. */
#define STRATA_DIM_MAX_FROM_DATA 0

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_CODEGEN_ABI_STRATA_ARTIFACT_FORMAT_H_ */
