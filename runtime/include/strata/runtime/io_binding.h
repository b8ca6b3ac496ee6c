//===- io_binding.h - Inputs and outputs of an entry, bound by name -------===//
// SPDX-License-Identifier: Apache-2.0
// A strata_io_binding_t names the tensors one entry runs on: inputs by
// name, and for any output a caller tensor to write it into, typically
// tensors that wrap the caller's own memory (strata_tensor_wrap), bound
// once and run many times (strata_session_run_binding). Thread-safety: a
// binding is not synchronized: one thread at a time binds, runs or takes
// from it.

#ifndef STRATA_RUNTIME_IO_BINDING_H_
#define STRATA_RUNTIME_IO_BINDING_H_

#include "strata/runtime/allocator.h"
#include "strata/runtime/module.h"
#include "strata/runtime/status.h"
#include "strata/runtime/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Opaque binding of one entry's inputs and outputs.
typedef struct strata_io_binding_t strata_io_binding_t;

/// Creates an empty binding for entry |entry_name| of |module|, which it
/// retains; the record comes from |allocator|. |out_binding| belongs to the
/// caller (strata_io_binding_release). NOT_FOUND for an unknown entry,
/// INVALID_ARGUMENT for a NULL argument.
STRATA_API_EXPORT strata_status_t strata_io_binding_create(
    strata_module_t* module, const char* entry_name,
    strata_allocator_t allocator, strata_io_binding_t** out_binding);

/// Frees |binding|, the output tensors it still holds, and its module
/// reference; bound tensors stay the caller's. NULL is allowed.
STRATA_API_EXPORT void strata_io_binding_release(strata_io_binding_t* binding);

/// Binds input |name| to |tensor| (borrowed: it must live, unchanged in
/// shape, until it is unbound or the binding released; the run reads its
/// data in place); NULL unbinds. The tensor is checked when a run uses
/// it. NOT_FOUND for a name the entry has no input of.
STRATA_API_EXPORT strata_status_t strata_io_binding_bind_input(
    strata_io_binding_t* binding, const char* name,
    const strata_tensor_t* tensor);

/// Binds output |name| to |tensor|, which each run writes the output into
/// (borrowed as an input is; checked when a run uses it); NULL unbinds, so
/// runs make a new tensor for that output. NOT_FOUND for a name the entry
/// has no output of.
STRATA_API_EXPORT strata_status_t strata_io_binding_bind_output(
    strata_io_binding_t* binding, const char* name, strata_tensor_t* tensor);

/// Moves the tensor the last run made for unbound output |name| to
/// |out_tensor| (the caller's to release). NOT_FOUND for an unknown name;
/// FAILED_PRECONDITION when the binding holds no tensor for it: the output
/// was bound when the last run ran, no run has succeeded yet, or the
/// tensor was taken already.
STRATA_API_EXPORT strata_status_t strata_io_binding_take_output(
    strata_io_binding_t* binding, const char* name,
    strata_tensor_t** out_tensor);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_IO_BINDING_H_
