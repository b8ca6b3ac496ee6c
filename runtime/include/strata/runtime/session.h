//===- session.h - Running entry points of a module
//------------------------===//
// SPDX-License-Identifier: Apache-2.0
// A strata_session_t runs the entry points of one module: it holds the run
// options (thread count or a shared thread pool), the allocator for outputs
// and the buffer cache of the generated code. Thread-safety: a session runs
// one call at a time (calls on one session need external synchronization),
// except strata_session_cancel, which any thread may call while the session
// lives; any number of sessions may run the same module concurrently, each
// on its own thread, with their own or one shared thread pool.

#ifndef STRATA_RUNTIME_SESSION_H_
#define STRATA_RUNTIME_SESSION_H_

#include <stddef.h>
#include <stdint.h>

#include "strata/runtime/allocator.h"
#include "strata/runtime/communicator.h"
#include "strata/runtime/io_binding.h"
#include "strata/runtime/module.h"
#include "strata/runtime/status.h"
#include "strata/runtime/tensor.h"
#include "strata/runtime/thread_pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Most threads a session accepts.
#define STRATA_SESSION_MAX_THREADS 1024

/// Opaque session.
typedef struct strata_session_t strata_session_t;

/// Session options; initialize with strata_session_options_init.
typedef struct strata_session_options_t {
  /// Threads a run uses, the caller's included (the session starts
  /// thread_count - 1 workers on its first run); 0 lets the runtime choose
  /// one per CPU the process may use: the smallest of the CPU count, the
  /// affinity mask and the cgroup CPU quota rounded up, read on the
  /// session's first run. Matmul-class kernels and generated loops that
  /// write at least 16K elements run on all of them, smaller loops on the
  /// calling thread. Idle workers sleep after ~100 us.
  uint32_t thread_count;
} strata_session_options_t;

/// Sets |options| to the defaults (thread_count 0).
STRATA_API_EXPORT void strata_session_options_init(
    strata_session_options_t* options);

/// Creates a session running |module|, which it retains. |options| may be
/// NULL for the defaults. Output tensors and every buffer of the generated
/// code come from |allocator| (the latter through the session's buffer
/// cache, which may keep blocks until the session and the outputs holding
/// them are released).
/// |out_session| belongs to the caller (strata_session_release). Returns
/// INVALID_ARGUMENT for a NULL module or thread_count above
/// STRATA_SESSION_MAX_THREADS.
STRATA_API_EXPORT strata_status_t strata_session_create(
    strata_module_t* module, const strata_session_options_t* options,
    strata_allocator_t allocator, strata_session_t** out_session);

/// Frees |session| and drops its module reference; NULL is allowed.
STRATA_API_EXPORT void strata_session_release(strata_session_t* session);

/// The module (borrowed).
STRATA_API_EXPORT strata_module_t* strata_session_module(
    const strata_session_t* session);

/// Sets the thread count (0 = runtime's choice), used from the next run on;
/// INVALID_ARGUMENT above STRATA_SESSION_MAX_THREADS, FAILED_PRECONDITION
/// while the session runs on a shared pool (strata_session_set_thread_pool).
STRATA_API_EXPORT strata_status_t
strata_session_set_thread_count(strata_session_t* session, uint32_t count);

/// The thread count as set (0 = runtime's choice); on a shared pool, the
/// pool's strata_thread_pool_thread_count.
STRATA_API_EXPORT uint32_t
strata_session_thread_count(const strata_session_t* session);

/// Makes the session's runs use |pool|, shared with other sessions, from
/// the next run on, instead of workers of its own (those it had stop now);
/// the session retains |pool| until it is released or given another pool.
/// NULL goes back to workers of its own, per the thread count. Not
/// concurrent with a run on this session. INVALID_ARGUMENT for a NULL
/// session.
STRATA_API_EXPORT strata_status_t strata_session_set_thread_pool(
    strata_session_t* session, strata_thread_pool_t* pool);

/// Gives the session the group its module's collectives exchange data
/// over, from the next run on (NULL removes it). The struct is copied;
/// what its |self| points to is borrowed and must stay valid until the
/// communicator is removed or replaced or the session is released. A
/// module that is rank R of a tensor-parallel group of N
/// (strata_module_parallel) needs a communicator of size N and rank R, and
/// every run of it fails with FAILED_PRECONDITION, before any of its code
/// runs, while the session has none; a whole model accepts any. Returns
/// INVALID_ARGUMENT, keeping the previous communicator, for a NULL session,
/// a struct_size smaller than the struct's or setting fields this library
/// does not know, no all_gather, a rank not below the size, or a size or
/// rank other than the module's (naming both). Not concurrent with a run
/// on this session.
STRATA_API_EXPORT strata_status_t strata_session_set_communicator(
    strata_session_t* session, const strata_communicator_t* communicator);

/// The shared pool the session runs on (borrowed), or NULL when it runs on
/// workers of its own.
STRATA_API_EXPORT strata_thread_pool_t* strata_session_thread_pool(
    const strata_session_t* session);

/// Frees the blocks the session's buffer cache keeps for its next run and
/// returns their bytes (0 for NULL). After every run the cache frees the
/// blocks none of the last 4 runs used, so a session whose shapes vary (a
/// growing decode context) holds about what a few runs need; this frees
/// those too, for a session that will sit idle. Outputs still held are not
/// affected.
STRATA_API_EXPORT size_t strata_session_trim(strata_session_t* session);

/// State tensors (strata_module_state): the session allocates every state
/// the module declares when it is created (zero-filled, at its full extent:
/// symbolic dims at their maxima; RESOURCE_EXHAUSTED from
/// strata_session_create if it cannot; with the system allocator as an
/// anonymous mapping whose zero pages arrive on first touch, so unused
/// cache positions take no memory: docs/runtime-api.md), passes them to
/// every entry point, which reads and updates them in place, and frees them
/// with the session.

/// Stores a copy of state |index| (module order) in |out_tensor|, which the
/// caller owns. OUT_OF_RANGE for an index past the module's states.
STRATA_API_EXPORT strata_status_t strata_session_read_state(
    const strata_session_t* session, size_t index,
    strata_tensor_t** out_tensor);

/// Zero-fills the state: every state tensor for |slot| < 0, else the part of
/// every PER_SEQUENCE state at sequence slot |slot| (its dim 0 counts
/// slots; SHARED states are left as they are). OUT_OF_RANGE, changing
/// nothing, when |slot| is past some PER_SEQUENCE state's slots. Not
/// concurrent with a run on this session.
STRATA_API_EXPORT strata_status_t strata_session_reset_state(
    strata_session_t* session, int64_t slot);

/// Copies positions [first, first + count) of sequence slot |slot| of the
/// PER_SEQUENCE state |index| into |out| (|out_bytes| bytes): with the
/// position dim the one the manifest names `context` (a KV cache
/// [slots, kv_heads, context, row]), the data is packed as [dims between
/// `slots` and `context`][count][dims after it], so a KV cache's is
/// kv_heads * count * row_bytes bytes, head-major. With
/// strata_session_write_state_rows it moves a prompt's cache from one
/// session to another (disaggregated prefill and decode). OUT_OF_RANGE for
/// an index past the module's states, a slot outside the state's slots or
/// a range outside its positions; UNIMPLEMENTED for a state without a
/// `context` dim (a paged block pool, the ring cache of a windowed
/// attention: their positions are not rows of a slot); INVALID_ARGUMENT
/// for NULL arguments, a SHARED state or |out_bytes| other than the packed
/// size (naming both). Not concurrent with a run on this session.
STRATA_API_EXPORT strata_status_t strata_session_read_state_rows(
    const strata_session_t* session, size_t index, int64_t slot,
    int64_t first, int64_t count, void* out, size_t out_bytes);

/// Writes |bytes| bytes at |data|, packed as strata_session_read_state_rows
/// reads them, into positions [first, first + count) of sequence slot
/// |slot| of the PER_SEQUENCE state |index|; the other positions and slots
/// are left as they are. The errors of strata_session_read_state_rows, and
/// nothing is written on failure. Not concurrent with a run on this
/// session.
STRATA_API_EXPORT strata_status_t strata_session_write_state_rows(
    strata_session_t* session, size_t index, int64_t slot, int64_t first,
    int64_t count, const void* data, size_t bytes);

/// Runs entry |entry_name| on |input_count| borrowed |inputs| (in manifest
/// order) and stores |output_count| new tensors in |outputs|, which the
/// caller owns and releases with strata_tensor_release. |output_count| must
/// equal the entry's output count. Inputs are checked against the signature
/// first: count, dtype, rank, static dims, symbolic dims at most their
/// maximum and bound to one value across all inputs; a mismatch returns
/// INVALID_ARGUMENT naming the input. NOT_FOUND if there is no such entry;
/// INTERNAL if the generated code returns a malformed output; CANCELLED if
/// strata_session_cancel stopped it. |outputs| is written only on success.
STRATA_API_EXPORT strata_status_t
strata_session_run(strata_session_t* session, const char* entry_name,
                   const strata_tensor_t* const* inputs, size_t input_count,
                   strata_tensor_t** outputs, size_t output_count);

/// strata_session_run with inputs and outputs by name. |input_names[i]|
/// names the input |inputs[i]| is for; each input of the entry must be
/// named exactly once, in any order. |output_names| NULL returns every
/// output in manifest order (|output_count| must equal the entry's output
/// count); otherwise |outputs[o]| receives output |output_names[o]|, each
/// named at most once, and the outputs not named are released. NOT_FOUND
/// naming an unknown entry, input or output; INVALID_ARGUMENT naming an
/// input given twice or not given, or an output requested twice, and for
/// everything strata_session_run rejects. |outputs| is written only on
/// success.
STRATA_API_EXPORT strata_status_t strata_session_run_named(
    strata_session_t* session, const char* entry_name,
    const char* const* input_names, const strata_tensor_t* const* inputs,
    size_t input_count, const char* const* output_names,
    strata_tensor_t** outputs, size_t output_count);

/// strata_session_run into tensors the caller preallocated: output o is
/// written into the data of |outputs[o]| (|output_count| of them, every one
/// non-null, distinct, owned by the caller and not consumed). The generated
/// code allocates its results itself (kernel ABI), so each is copied into
/// the caller's tensor after the entry returns. Before the call each tensor
/// is checked against what the inputs determine (dtype, rank, static dims,
/// symbolic dims the inputs bind) and after it against the shape the run
/// produced: a mismatch is INVALID_ARGUMENT naming the output, the
/// tensor's shape and the expected one, e.g. "output 'y' is a tensor of
/// shape [2, 4], expected [3, 4]". A tensor may also be an input of the
/// run (it is written after the entry has returned). On any failure no
/// tensor's data is written.
STRATA_API_EXPORT strata_status_t strata_session_run_into(
    strata_session_t* session, const char* entry_name,
    const strata_tensor_t* const* inputs, size_t input_count,
    strata_tensor_t* const* outputs, size_t output_count);

/// Runs the entry of |binding| (io_binding.h) with its bound inputs: each
/// bound output is written into its tensor as strata_session_run_into
/// does, each other output becomes a new tensor the binding holds
/// (strata_io_binding_take_output), replacing the one of an earlier run.
/// INVALID_ARGUMENT naming an input that is not bound, or when |binding|
/// is for another module than the session's; everything strata_session_run
/// and strata_session_run_into reject. On failure the binding keeps the
/// tensors of its last successful run and no bound tensor is written.
STRATA_API_EXPORT strata_status_t strata_session_run_binding(
    strata_session_t* session, strata_io_binding_t* binding);

/// Asks the run in progress on |session| to stop; callable from any thread
/// (NULL is allowed). The run stops at its next parallel loop or
/// matmul/attention kernel call and returns CANCELLED with no outputs, its
/// buffers back in the session's cache; the session stays usable. A run
/// that ends before it reaches such a point returns as usual. Each run
/// starts by clearing the request, so a cancel made while no run is in
/// progress has no effect: it cancels only a run already started.
STRATA_API_EXPORT void strata_session_cancel(strata_session_t* session);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_SESSION_H_
