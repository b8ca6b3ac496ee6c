//===- module.h - Loading and inspecting .strata artifacts
//-----------------===//
// SPDX-License-Identifier: Apache-2.0
// A strata_module_t is a validated artifact with its native code loaded: the
// entry-point signatures, the mapped weights and the resolved entry symbols.
// Thread-safety: a module is immutable after loading; every function here may
// be called concurrently on the same module (retain/release are atomic).

#ifndef STRATA_RUNTIME_MODULE_H_
#define STRATA_RUNTIME_MODULE_H_

#include <stddef.h>
#include <stdint.h>

#include "strata/runtime/allocator.h"
#include "strata/runtime/status.h"
#include "strata_artifact_format.h"  // entry kinds, state scopes
#include "strata_kernel_abi.h"       // strata_dtype_t

#ifdef __cplusplus
extern "C" {
#endif

/// Opaque loaded module (reference counted).
typedef struct strata_module_t strata_module_t;

/// A read-only byte range owned by the caller.
typedef struct strata_const_byte_span_t {
  const uint8_t* data;
  size_t size;
} strata_const_byte_span_t;

/// The max of a dim with no compiled maximum: an output extent computed
/// from tensor data (a Tile repeat, a Range count). Also defined, equally,
/// by strata_artifact_format.h.
#ifndef STRATA_DIM_MAX_FROM_DATA
#define STRATA_DIM_MAX_FROM_DATA 0
#endif

/// One dim of a tensor signature.
typedef struct strata_dim_t {
  /// The static extent, or -1 when the dim is symbolic.
  int64_t extent;
  /// The symbolic dim's name ("sequence"), or NULL when static.
  const char* symbol;
  /// The compiled maximum; equals |extent| when static. 0
  /// (STRATA_DIM_MAX_FROM_DATA) for an output extent computed from tensor
  /// data, which has none (at most 2^31 at run time).
  int64_t max;
} strata_dim_t;

/// The signature of one input or output.
typedef struct strata_tensor_signature_t {
  const char* name;
  strata_dtype_t dtype;
  uint32_t rank;
  const strata_dim_t* dims; /* |rank| entries */
} strata_tensor_signature_t;

/// The signature of one entry point.
typedef struct strata_entry_signature_t {
  const char* name;
  /// The exported symbol of the native code implementing the entry.
  const char* symbol;
  size_t input_count;
  const strata_tensor_signature_t* inputs;
  size_t output_count;
  const strata_tensor_signature_t* outputs;
  /// What the entry is for (generic, prefill, decode). Added in API 0.4, at
  /// the end so that the fields before keep their offsets.
  strata_entry_kind_t kind;
} strata_entry_signature_t;

/// A state tensor the module declares: memory the runtime keeps across
/// calls (the KV cache), allocated from the signature's maxima.
typedef struct strata_state_signature_t {
  const char* name;
  strata_dtype_t dtype;
  /// One instance per sequence, or one shared by the session.
  strata_state_scope_t scope;
  uint32_t rank;
  const strata_dim_t* dims; /* |rank| entries; symbolic dims have maxima */
} strata_state_signature_t;

/// A named symbolic dim of the module and its compiled maximum.
typedef struct strata_symbolic_dim_t {
  const char* name;
  /// >= 1, or 0 for a dim only outputs have, computed from tensor data.
  int64_t max;
} strata_symbolic_dim_t;

/// Memory-maps the artifact at |path| read-only and loads it: validates the
/// header, section table, manifest and code (checksums, versions, bounds,
/// CPU features) and loads the native code from an anonymous memory file.
/// The weights stay mapped, never copied; their checksum is checked only by
/// strata_module_verify_weights. |allocator| serves the module's own
/// bookkeeping. |out_module| belongs to the caller (strata_module_release).
/// Returns NOT_FOUND / UNAVAILABLE when the file cannot be opened or mapped,
/// DATA_LOSS naming the defect of a corrupt artifact, INCOMPATIBLE for a
/// format major or kernel-ABI version, a required section or CPU features
/// this runtime cannot serve.
STRATA_API_EXPORT strata_status_t
strata_module_load_file(const char* path, strata_allocator_t allocator,
                        strata_module_t** out_module);

/// Loads an artifact from |data|, which is not copied: the caller keeps it
/// alive and unchanged until the module is released. |data.data| must be
/// 64-byte aligned (so the weights are), else INVALID_ARGUMENT. Validation
/// and errors as strata_module_load_file.
STRATA_API_EXPORT strata_status_t
strata_module_load(strata_const_byte_span_t data, strata_allocator_t allocator,
                   strata_module_t** out_module);

/// Adds a reference to |module|.
STRATA_API_EXPORT void strata_module_retain(strata_module_t* module);

/// Drops a reference; the last one unloads the code and unmaps the file.
/// NULL is allowed.
STRATA_API_EXPORT void strata_module_release(strata_module_t* module);

/// Verifies the weights checksum (reads every weight byte). Returns
/// DATA_LOSS "weights checksum mismatch" if the weights are corrupt.
STRATA_API_EXPORT strata_status_t
strata_module_verify_weights(const strata_module_t* module);

/// The number of entry points (at least 1).
STRATA_API_EXPORT size_t
strata_module_entry_count(const strata_module_t* module);

/// The signature of entry |index| (borrowed, valid while the module lives),
/// or NULL if |index| is out of range.
STRATA_API_EXPORT const strata_entry_signature_t* strata_module_entry(
    const strata_module_t* module, size_t index);

/// Finds the entry named |name|; NOT_FOUND (listing the entries) if none.
STRATA_API_EXPORT strata_status_t
strata_module_find_entry(const strata_module_t* module, const char* name,
                         const strata_entry_signature_t** out_entry);

/// Sets |*out_index| to the position of input |name| in the signature of
/// entry |entry_name| (the index strata_session_run expects it at).
/// NOT_FOUND naming the entry (listing the entries) or the input (listing
/// the entry's inputs) if there is none; INVALID_ARGUMENT for a NULL
/// argument. |*out_index| is written only on success.
STRATA_API_EXPORT strata_status_t
strata_module_input_index(const strata_module_t* module, const char* entry_name,
                          const char* name, size_t* out_index);

/// As strata_module_input_index, for output |name| of entry |entry_name|.
STRATA_API_EXPORT strata_status_t strata_module_output_index(
    const strata_module_t* module, const char* entry_name, const char* name,
    size_t* out_index);

/// The number of symbolic dims in the module's dim table.
STRATA_API_EXPORT size_t
strata_module_symbolic_dim_count(const strata_module_t* module);

/// Symbolic dim |index| (borrowed), or NULL if out of range.
STRATA_API_EXPORT const strata_symbolic_dim_t* strata_module_symbolic_dim(
    const strata_module_t* module, size_t index);

/// The number of state tensors the module declares (0 if none).
STRATA_API_EXPORT size_t
strata_module_state_count(const strata_module_t* module);

/// State tensor |index| (borrowed, valid while the module lives), or NULL
/// if |index| is out of range.
STRATA_API_EXPORT const strata_state_signature_t* strata_module_state(
    const strata_module_t* module, size_t index);

/// The number of x86-64 features the native code was compiled for.
STRATA_API_EXPORT size_t
strata_module_cpu_feature_count(const strata_module_t* module);

/// CPU feature |index| of the native code in LLVM's spelling ("avx2"),
/// sorted (borrowed), or NULL if |index| is out of range. Loading checked
/// that this CPU has every one.
STRATA_API_EXPORT const char* strata_module_cpu_feature(
    const strata_module_t* module, size_t index);

/// The STRATA_CPU_FEATURE_* bits of the legacy subset of the features the
/// native code needs (strata_module_cpu_feature lists all of them).
STRATA_API_EXPORT uint64_t
strata_module_cpu_features(const strata_module_t* module);

/// The number of runtime kernels the native code calls (matmuls of each
/// precision, attention); strata_module_kernel names them.
STRATA_API_EXPORT size_t
strata_module_kernel_count(const strata_module_t* module);

/// Kernel |index|: the import the code calls (|import_name|, e.g.
/// "strata_rt_matmul_f32_bf16": every matmul of that precision calls it)
/// and the kernel set that serves it in this process now (|kernel_set|,
/// e.g. "amx-bf16", "avx512bf16", "avx512vnni", "avx512", "avx2",
/// "scalar": the host's, as capped by strata_cpu_cap_kernel_isa). Both
/// borrowed, static. OUT_OF_RANGE past strata_module_kernel_count.
STRATA_API_EXPORT strata_status_t strata_module_kernel(
    const strata_module_t* module, size_t index, const char** import_name,
    const char** kernel_set);

/// The size of the weights section in bytes.
STRATA_API_EXPORT uint64_t
strata_module_weights_size(const strata_module_t* module);

/// The intermediate arena size recorded by the compiler (0 for now).
STRATA_API_EXPORT uint64_t
strata_module_workspace_bytes(const strata_module_t* module);

/// Where |module| sits among the processes a split model runs on: world
/// rank |*out_rank| of |*out_ranks| (stage s, tensor rank t of a model of
/// S stages of T tensor ranks each is rank s * T + t of T * S; see
/// strata_module_parallel_layout), or 0 of 1 for a whole model (no PARALLEL
/// section). A session of a module with 2 or more ranks runs only with a
/// communicator of that size and rank (strata_session_set_communicator).
/// Either pointer may be NULL.
STRATA_API_EXPORT void strata_module_parallel(const strata_module_t* module,
                                              uint32_t* out_rank,
                                              uint32_t* out_ranks);

/// The layout of strata_module_parallel's world: |module|'s rank
/// |*out_tensor_rank| of the |*out_tensor_ranks| of its stage's
/// tensor-parallel group, in pipeline stage |*out_pipeline_stage| of
/// |*out_pipeline_stages|; 0 of 1 and 0 of 1 for a whole model. Any
/// pointer may be NULL.
STRATA_API_EXPORT void strata_module_parallel_layout(
    const strata_module_t* module, uint32_t* out_tensor_rank,
    uint32_t* out_tensor_ranks, uint32_t* out_pipeline_stage,
    uint32_t* out_pipeline_stages);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_MODULE_H_
