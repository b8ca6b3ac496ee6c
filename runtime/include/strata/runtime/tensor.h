//===- tensor.h - Host tensors
//---------------------------------------------===//
// SPDX-License-Identifier: Apache-2.0
// A strata_tensor_t is a dense row-major host tensor: a dtype, a rank, dims
// and data, either 64-byte-aligned from a strata_allocator_t or caller
// memory the tensor wraps without a copy (strata_tensor_wrap). Inputs of a
// run are borrowed; outputs of a run belong to the caller. Thread-safety: a
// tensor is not synchronized; concurrent reads are safe, writes need
// external locking.

#ifndef STRATA_RUNTIME_TENSOR_H_
#define STRATA_RUNTIME_TENSOR_H_

#include <stddef.h>
#include <stdint.h>

#include "strata/runtime/allocator.h"
#include "strata/runtime/status.h"
#include "strata_kernel_abi.h"  // strata_dtype_t, STRATA_MAX_RANK

#ifdef __cplusplus
extern "C" {
#endif

/// Alignment of every tensor's data, in bytes.
#define STRATA_TENSOR_ALIGNMENT 64

/// Opaque host tensor.
typedef struct strata_tensor_t strata_tensor_t;

/// Returns a short lower-case name of |dtype| ("f32", "i64", "bool", ...),
/// or "unknown".
STRATA_API_EXPORT const char* strata_dtype_name(strata_dtype_t dtype);

/// Creates a zero-filled tensor of |dtype| with |rank| (<= STRATA_MAX_RANK)
/// dims |dims| (each >= 0; |dims| may be NULL when |rank| is 0). Memory comes
/// from |allocator|, which must stay usable until the tensor is released.
/// |out_tensor| belongs to the caller (strata_tensor_release). Returns
/// INVALID_ARGUMENT for a bad dtype, rank or dim, RESOURCE_EXHAUSTED when the
/// size overflows or the allocation fails.
STRATA_API_EXPORT strata_status_t strata_tensor_create(
    strata_dtype_t dtype, uint32_t rank, const int64_t* dims,
    strata_allocator_t allocator, strata_tensor_t** out_tensor);

/// Like strata_tensor_create, then copies |data_size| bytes from |data|,
/// which must equal the tensor's byte size (else INVALID_ARGUMENT).
STRATA_API_EXPORT strata_status_t strata_tensor_create_copy(
    strata_dtype_t dtype, uint32_t rank, const int64_t* dims, const void* data,
    size_t data_size, strata_allocator_t allocator,
    strata_tensor_t** out_tensor);

/// Called once when a tensor made by strata_tensor_wrap is released, with
/// the |user| and |data| given to it: the caller's memory is free to go.
typedef void (*strata_tensor_release_fn_t)(void* user, void* data);

/// Creates a tensor over caller memory |data| of |data_size| bytes without
/// copying it: runs read an input from |data| itself, and the runtime
/// writes an output there. |data_size| must be at least the tensor's byte
/// size (more is allowed: a buffer sized for the largest shape), |data|
/// non-null unless that size is 0 and aligned to the dtype's element size
/// (the generated code needs no more; STRATA_TENSOR_ALIGNMENT is faster for
/// vector loads); else INVALID_ARGUMENT. Only the tensor record comes from
/// |allocator|. Lifetime: |data| must stay valid until the tensor is
/// released. Then |release_fn|, if non-NULL, is called once as
/// release_fn(user, data); with NULL the memory is only borrowed and stays
/// the caller's, to free after the release. On failure |release_fn| is not
/// called and the memory stays the caller's.
STRATA_API_EXPORT strata_status_t strata_tensor_wrap(
    strata_dtype_t dtype, uint32_t rank, const int64_t* dims, void* data,
    size_t data_size, strata_tensor_release_fn_t release_fn, void* user,
    strata_allocator_t allocator, strata_tensor_t** out_tensor);

/// Frees |tensor| and its data (a wrapped tensor: calls its release_fn, if
/// any); NULL is allowed.
STRATA_API_EXPORT void strata_tensor_release(strata_tensor_t* tensor);

/// The element type.
STRATA_API_EXPORT strata_dtype_t
strata_tensor_dtype(const strata_tensor_t* tensor);

/// The number of dims.
STRATA_API_EXPORT uint32_t strata_tensor_rank(const strata_tensor_t* tensor);

/// The dims (borrowed, |rank| values, valid while the tensor lives).
STRATA_API_EXPORT const int64_t* strata_tensor_dims(
    const strata_tensor_t* tensor);

/// The number of elements (the product of the dims; 1 for rank 0).
STRATA_API_EXPORT size_t
strata_tensor_element_count(const strata_tensor_t* tensor);

/// The size of the data in bytes.
STRATA_API_EXPORT size_t strata_tensor_byte_size(const strata_tensor_t* tensor);

/// The data (borrowed, valid while the tensor lives): 64-byte aligned, or
/// the pointer given to strata_tensor_wrap.
STRATA_API_EXPORT void* strata_tensor_data(strata_tensor_t* tensor);

/// The data, read-only.
STRATA_API_EXPORT const void* strata_tensor_const_data(
    const strata_tensor_t* tensor);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_TENSOR_H_
