/*===- strata_compiler.h - The Strata compiler's C API ------------*- C -*-===*
 * SPDX-License-Identifier: Apache-2.0
 * Compiles an ONNX model (or strata IR) to a .strata artifact from C or any
 * language with a C FFI: the same driver and options as strata-compile.
 *===----------------------------------------------------------------------===*/

#ifndef STRATA_COMPILER_CAPI_STRATA_COMPILER_H_
#define STRATA_COMPILER_CAPI_STRATA_COMPILER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_COMPILER_EXPORT __attribute__((visibility("default")))

/* (major << 16) | minor of this header; strata_compiler_api_version() gives
 * the library's. A minor bump only adds functions and option fields. */
#define STRATA_COMPILER_API_VERSION ((1 << 16) | 6)

/* What a call returns; values follow the runtime's absl/IREE numbering and
 * never change. */
typedef enum strata_compile_status_e {
  STRATA_COMPILE_STATUS_OK = 0,
  /* A null path, a malformed options struct or option value. */
  STRATA_COMPILE_STATUS_INVALID_ARGUMENT = 3,
  /* The model file does not exist. */
  STRATA_COMPILE_STATUS_NOT_FOUND = 5,
  /* The model cannot be compiled as given (unsupported op, a dynamic dim
   * without a maximum, ...): the error diagnostics say why. */
  STRATA_COMPILE_STATUS_FAILED_PRECONDITION = 9,
  /* A compiler bug (a C++ exception or a crash, contained). */
  STRATA_COMPILE_STATUS_INTERNAL = 13,
  /* The artifact could not be written to the output path. */
  STRATA_COMPILE_STATUS_UNAVAILABLE = 14,
} strata_compile_status_t;

typedef enum strata_compile_severity_e {
  STRATA_COMPILE_SEVERITY_ERROR = 0,
  STRATA_COMPILE_SEVERITY_WARNING = 1,
  STRATA_COMPILE_SEVERITY_NOTE = 2,
  STRATA_COMPILE_SEVERITY_REMARK = 3,
} strata_compile_severity_t;

/* Receives each diagnostic as it is reported. |location| names the ONNX
 * node(s) ("Attention_3, MatMul_7") or the file, "" if none; both strings
 * are valid only during the call. Notes follow the diagnostic they belong
 * to. */
typedef void (*strata_compile_diagnostic_fn)(strata_compile_severity_t severity,
                                             const char *location,
                                             const char *message,
                                             void *user_data);

/* Receives what a compile did as one JSON object, once, when it ends
 * (success or failure, as far as it got; not when the options struct
 * itself is unreadable): the data behind strata-compile --report (docs/python.md#the-compile-report lists the fields). |json| is
 * valid only during the call. */
typedef void (*strata_compile_report_fn)(const char *json, void *user_data);

/* Options of one compile. Initialize with strata_compile_options_init, then
 * set fields. Fields are only ever appended: the library reads the first
 * |struct_size| bytes and gives later fields their defaults, so a caller
 * built against an older header keeps working. */
typedef struct strata_compile_options_t {
  /* sizeof(strata_compile_options_t) as the caller compiled it. */
  size_t struct_size;
  /* "x86-64-v3" (NULL or "" too: portable), "x86-64-v4", "native" or an
   * LLVM CPU name. */
  const char *target_cpu;
  /* |dim_count| entries "NAME=MAX": the maximum of symbolic dim NAME
   * (docs/shapes.md). */
  const char *const *dims;
  size_t dim_count;
  /* The maximum of the batch dims (default 8) and of the sequence-length
   * dims (default 1024). */
  int64_t max_batch;
  int64_t max_seq;
  /* Nonzero (the default): run the fusion pipeline. */
  int32_t enable_fusion;
  /* Nonzero (the default): fp32 attention calls the runtime's kernel. */
  int32_t runtime_attention;
  /* |binding_count| entries "NAME=FILE.pb": graph input NAME frozen to the
   * serialized ONNX TensorProto in FILE (ONNX models only). */
  const char *const *bindings;
  size_t binding_count;

  /* Since 1.1: precision per phase (docs/design/precision.md) and the
   * generation entries (docs/design/prefill-decode.md). A NULL or empty
   * string is the default. */
  /* The decode entry's weights: "fp32" (default), "bf16", "int8" (one scale
   * per output column) or "int4" (one per |int4_group| rows). */
  const char *decode_precision;
  /* The prefill entry's contractions: "fp32" (default), "bf16" or "int8"
   * (W8A8: activations quantized per token at run time). */
  const char *prefill_precision;
  /* The KV cache: "fp32" (default), "bf16" or "int8" (per token and head). */
  const char *kv_cache_precision;
  /* Rows of a column sharing one int4 scale: 32 (default), 64 or 128. */
  int64_t int4_group;
  /* Nonzero: a quantized entry keeps the LM head in fp32. */
  int32_t keep_fp32_lm_head;
  /* Nonzero: prefill and main read the decode entry's quantized weights
   * (one copy, a smaller artifact) instead of fp32 ones beside them. */
  int32_t shared_prefill_weights;
  /* A file of token sequences the model runs at compile time to scale the
   * quantized weights by their inputs' statistics (AWQ for int8/int4
   * decode, SmoothQuant for int8 prefill); NULL: plain absmax. Its format:
   * "ids" (default: one sequence a line, ids separated by whitespace) or
   * "bytes" (raw text whose bytes are a byte-level model's tokens). */
  const char *calibration_data;
  const char *calibration_format;
  /* Nonzero: a causal decoder gets no prefill and decode entries, only
   * "main". */
  int32_t no_generation_entries;
  /* The most prompt tokens one prefill call takes (default 0: max_seq). */
  int64_t prefill_chunk;
  /* Nonzero: prefill also returns every position's logits (all_logits). */
  int32_t prefill_all_logits;
  /* Sliding-window attention (docs/design/sparse-attention.md): each query
   * of a causal attention sees its last |attention_window| keys (0: dense)
   * and the first |attention_sinks|; |attention_layer_count| layer indices
   * (0-based, program order) restrict it to those layers (0: all). */
  int64_t attention_window;
  int64_t attention_sinks;
  const int64_t *attention_layers;
  size_t attention_layer_count;
  /* Top-k global blocks: each windowed query also sees the
   * |attention_global_topk| earlier blocks of |attention_block| keys it
   * scores highest (0: none; attention_block 0: 64). */
  int64_t attention_global_topk;
  int64_t attention_block;

  /* Since 1.2: the compile report (NULL: none) and its first argument. */
  strata_compile_report_fn report;
  void *report_user_data;

  /* Since 1.3: the most tokens per sequence of the verify entry
   * (speculative decoding, docs/speculative.md); default 9, 0: none. */
  int64_t verify_length;

  /* Since 1.4: a paged KV cache for serving (docs/serving.md, "KV cache"),
   * as strata-compile --kv-block-size and --kv-blocks: each cache is one
   * pool of |kv_blocks| blocks of |kv_block_size| positions and the
   * generation entries take block tables instead of slots. kv_block_size
   * 0 (the default): a contiguous cache per sequence slot; kv_blocks 0
   * (the default): what max_batch sequences of the whole context take. */
  int64_t kv_block_size;
  int64_t kv_blocks;

  /* Since 1.5: tensor parallelism (docs/distributed.md): the artifact is
   * rank |tensor_rank| of |tensor_ranks| processes that each hold a share
   * of every layer (compile each rank to its own file, X.rank<R>.strata,
   * as strata-compile --tensor-parallel does). tensor_ranks 0 or 1 (the
   * default): a whole model. */
  int64_t tensor_ranks;
  int64_t tensor_rank;

  /* Since 1.6: pipeline parallelism (docs/distributed.md): the artifact is
   * pipeline stage |pipeline_stage| of |pipeline_stages| consecutive parts
   * of the layers, each run by its own processes (with tensor_ranks, the
   * stage's tensor rank tensor_rank; world rank pipeline_stage *
   * tensor_ranks + tensor_rank, as strata-compile --pipeline-parallel
   * names the files). pipeline_stages 0 or 1 (the default): one stage. */
  int64_t pipeline_stages;
  int64_t pipeline_stage;
} strata_compile_options_t;

/* The struct_size of a 1.0 caller's options (the fields before
 * decode_precision). */
#define STRATA_COMPILE_OPTIONS_SIZE_1_0 \
  offsetof(strata_compile_options_t, decode_precision)

/* What a failed compile reported: its status and every error message. */
typedef struct strata_compiler_error_t strata_compiler_error_t;

/* The library's STRATA_COMPILER_API_VERSION. */
STRATA_COMPILER_EXPORT uint32_t strata_compiler_api_version(void);

/* Sets |options| to the defaults and struct_size to this header's size. */
STRATA_COMPILER_EXPORT void
strata_compile_options_init(strata_compile_options_t *options);

/* Compiles the model at |model_path| (.onnx, .onnxtext, or .mlir with one
 * entry per public function) to the artifact |output_path| (replaced if
 * present; nothing is left there on failure). |options| may be NULL for
 * the defaults, |diagnostic| NULL to receive none. On failure, if
 * |out_error| is not NULL, *out_error receives an error the caller frees
 * with strata_compiler_error_free (on success it is set to NULL).
 *
 * No C++ exception or crash of the compiler leaves this function: either
 * becomes STRATA_COMPILE_STATUS_INTERNAL (the first call installs LLVM's
 * crash-recovery signal handlers for the process, as libclang does). Calls
 * from several threads are safe; they run one at a time, since the
 * in-process linker keeps global state. */
STRATA_COMPILER_EXPORT strata_compile_status_t strata_compile_file(
    const char *model_path, const char *output_path,
    const strata_compile_options_t *options,
    strata_compile_diagnostic_fn diagnostic, void *user_data,
    strata_compiler_error_t **out_error);

/* The status of |error|. */
STRATA_COMPILER_EXPORT strata_compile_status_t
strata_compiler_error_status(const strata_compiler_error_t *error);

/* Every error of the failed compile, one per line as "location: message"
 * (borrowed, valid until the error is freed). */
STRATA_COMPILER_EXPORT const char *
strata_compiler_error_message(const strata_compiler_error_t *error);

/* Frees |error|; NULL is ignored. */
STRATA_COMPILER_EXPORT void
strata_compiler_error_free(strata_compiler_error_t *error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_COMPILER_CAPI_STRATA_COMPILER_H_ */
