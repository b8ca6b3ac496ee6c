/*===- strata_artifact_format.h - The .strata file layout --------*- C -*-===//
 * SPDX-License-Identifier: Apache-2.0
 * Byte layout of a .strata artifact, shared by the compiler (writer) and the
 * runtime (reader). Plain C, <stdint.h> only. All integers little-endian.
 * docs/artifact-format.md explains every field and rule.
 *===----------------------------------------------------------------------===*/

#ifndef STRATA_CODEGEN_ABI_STRATA_ARTIFACT_FORMAT_H_
#define STRATA_CODEGEN_ABI_STRATA_ARTIFACT_FORMAT_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_ARTIFACT_MAGIC "STRATA\x00\x01" /* 8 bytes */
/* A reader refuses a newer major (INCOMPATIBLE) and reads any minor of its
 * own major: a minor only adds what an older reader may ignore. */
#define STRATA_ARTIFACT_FORMAT_MAJOR 2u
#define STRATA_ARTIFACT_FORMAT_MINOR 3u
#define STRATA_ARTIFACT_ALIGNMENT 64u /* every section starts 64-aligned */

/* Legacy CPU feature bits (strata_cpu_features_host, strata_module_cpu_
 * features): a subset of the feature names of the CPU target descriptor,
 * which is what the loader compares with the host. */
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
#define STRATA_ARTIFACT_MIN_SECTIONS 3u
#define STRATA_ARTIFACT_MAX_SECTIONS 16u
/* Processes a PARALLEL section may split a model over (tensor ranks times
 * pipeline stages). */
#define STRATA_ARTIFACT_MAX_PARALLEL_RANKS 65536u

/* The fixed-size header at offset 0 (128 bytes). format_major sits where
 * format 1 had its only version field, so a format-1 reader names the
 * major in its refusal. */
typedef struct strata_artifact_header_t {
  char magic[8];                /* STRATA_ARTIFACT_MAGIC */
  uint32_t format_major;        /* STRATA_ARTIFACT_FORMAT_MAJOR */
  uint32_t kernel_abi_version;  /* STRATA_KERNEL_ABI_VERSION of the code */
  uint64_t file_size;           /* total bytes, header included */
  uint64_t reserved1;           /* 0 (format 1: CPU feature bits) */
  uint32_t section_count;       /* entries in the section table, 3..16 */
  uint32_t format_minor;        /* STRATA_ARTIFACT_FORMAT_MINOR */
  uint64_t section_table_offset;/* right after the header: always 128 */
  uint64_t header_checksum;     /* XXH64(seed 0) of this header with this
                                   field set to 0 */
  uint64_t section_table_checksum; /* XXH64 of the section table */
  uint8_t reserved[64];         /* 0 */
} strata_artifact_header_t;

/* Section kinds. A reader skips a section of a kind it does not know when
 * the section is optional and refuses the artifact when it is required. */
typedef enum strata_section_kind_e {
  STRATA_SECTION_MANIFEST = 1, /* binary manifest, see below */
  STRATA_SECTION_WEIGHTS = 2,  /* constant data; mapped read-only */
  STRATA_SECTION_CPU_CODE = 3, /* an ELF x86-64 shared object */
  STRATA_SECTION_CUDA_CODE = 4,/* reserved for cubin/PTX */
  STRATA_SECTION_PARALLEL = 5, /* strata_parallel_section_t (minor 2) */
} strata_section_kind_t;

/* The PARALLEL section (32 bytes, flagged required): the file is one rank
 * of a model split over several processes, each loading its own file. The
 * layers are split into pipeline_stages stages that run one after the
 * other (minor 3), and each stage's weights over its tensor_ranks ranks
 * (the stage's tensor-parallel group). The file of
 * stage s, tensor rank t is world rank s * tensor_ranks + t of
 * tensor_ranks * pipeline_stages (2 to STRATA_ARTIFACT_MAX_PARALLEL_RANKS).
 * Its code calls the collective and send/recv imports
 * (strata_kernel_abi.h), which exchange data through the communicator the
 * embedder gives the session; a runtime refuses to run it without one
 * whose size and rank are the world's. A file without this section is a
 * whole model (one rank of one). */
typedef struct strata_parallel_section_t {
  uint32_t tensor_rank;     /* this file's rank within its stage's group */
  uint32_t tensor_ranks;    /* ranks each layer's weights are split over */
  uint32_t pipeline_stage;  /* this file's stage, below pipeline_stages */
  uint32_t pipeline_stages; /* stages the layers are split into (minor 2: 1) */
  uint32_t reserved[4];     /* 0 */
} strata_parallel_section_t;

/* strata_section_t.flags bits. */
#define STRATA_SECTION_FLAG_REQUIRED 1u /* a reader must understand it */
#define STRATA_SECTION_KNOWN_FLAGS STRATA_SECTION_FLAG_REQUIRED

/* One entry of the section table (32 bytes). Sections do not overlap and
 * lie inside the file; offsets are multiples of STRATA_ARTIFACT_ALIGNMENT. */
typedef struct strata_section_t {
  uint32_t kind;      /* strata_section_kind_t */
  uint32_t flags;     /* STRATA_SECTION_FLAG_* */
  uint64_t offset;
  uint64_t size;
  uint64_t checksum;  /* XXH64 of the section bytes. The loader always
                         verifies MANIFEST and CPU_CODE; WEIGHTS only on
                         request (it is large and mapped lazily). */
} strata_section_t;

/* What an entry point is for (manifest entry.kind). */
typedef enum strata_entry_kind_e {
  STRATA_ENTRY_KIND_GENERIC = 1, /* one call computes the whole graph */
  STRATA_ENTRY_KIND_PREFILL = 2, /* fills the state from a prompt */
  STRATA_ENTRY_KIND_DECODE = 3,  /* one step that reads and extends state */
  STRATA_ENTRY_KIND_VERIFY = 4,  /* several tokens per sequence, all logits */
} strata_entry_kind_t;

/* Who shares a declared state tensor (manifest state.scope). */
typedef enum strata_state_scope_e {
  STRATA_STATE_SCOPE_PER_SEQUENCE = 1, /* one instance per sequence */
  STRATA_STATE_SCOPE_SHARED = 2,       /* one instance per session */
} strata_state_scope_t;

/* The target a code section was compiled for (manifest target.kind). */
typedef enum strata_target_kind_e {
  STRATA_TARGET_CPU = 1,  /* payload: str arch; u32 n; n x str feature */
  STRATA_TARGET_CUDA = 2, /* reserved: sm architectures, defined with the
                             CUDA back end */
} strata_target_kind_t;

/* The one CPU architecture the CPU code section is built for. */
#define STRATA_TARGET_CPU_ARCH_X86_64 "x86-64"

/*
 * MANIFEST section, a little-endian byte stream consumed exactly:
 *   u32 entry_count (>= 1); entry_count x entry:
 *     str name; str symbol; u32 kind (strata_entry_kind_t)
 *     u32 input_count;  input_count  x tensor
 *     u32 output_count; output_count x tensor
 *   u32 dim_count; dim_count x { str name; i64 max }   symbolic dims
 *   u32 state_count; state_count x { str name; u32 dtype; u32 scope;
 *                                    u32 rank; rank x i64 dim }
 *   u32 target_count; target_count x { u32 section (index in the section
 *       table); u32 kind (strata_target_kind_t); u32 size; size bytes }
 *   u64 workspace_bytes                                 arena (0 for now)
 * tensor: str name; u32 dtype (strata_dtype_t); u32 rank (<= STRATA_MAX_RANK);
 *         rank x i64 dim, where dim >= 0 is a static extent and
 *         dim = -1 - k refers to symbolic dim k of the dim table.
 * str: u32 length (1..4096) followed by that many bytes (no NUL, not
 * terminated). docs/artifact-format.md lists every further rule.
 */
#define STRATA_MANIFEST_MAX_STRING 4096u
#define STRATA_MANIFEST_MAX_TENSOR_BYTES (1ull << 44) /* 16 TiB */
/* At most this many features in a CPU target descriptor. */
#define STRATA_TARGET_MAX_CPU_FEATURES 256u
/* The max of a symbolic dim with no compile-time maximum: an output extent
 * the generated code computes from tensor data (a Tile repeat, a Range
 * count), each at most STRATA_MAX_DATA_EXTENT at run time. */
#define STRATA_DIM_MAX_FROM_DATA 0

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_CODEGEN_ABI_STRATA_ARTIFACT_FORMAT_H_ */
