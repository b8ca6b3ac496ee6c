//===- tensor_internal.h - The tensor record, shared with session.cc
//-------===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_RUNTIME_SRC_TENSOR_INTERNAL_H_
#define STRATA_RUNTIME_SRC_TENSOR_INTERNAL_H_

#include <cstddef>
#include <cstdint>

#include "strata/runtime/tensor.h"

struct strata_tensor_t {
  strata_allocator_t allocator;
  strata_dtype_t dtype;
  uint32_t rank;
  int64_t dims[STRATA_MAX_RANK];
  size_t elementCount;
  size_t byteSize;
  void* data;
  /// How |data| goes when the tensor is released: releaseData(releaseUser,
  /// data) when set (outputs that hand over a buffer of the generated code,
  /// caller memory wrapped with a release callback), else through
  /// |allocator| if ownsData, else not at all (borrowed caller memory).
  void (*releaseData)(void* user, void* data) = nullptr;
  void* releaseUser = nullptr;
  bool ownsData = true;
};

namespace strata::runtime {

/// Validates |dtype|, |rank| and |dims| and computes the element count and
/// byte size without overflow (INVALID_ARGUMENT / RESOURCE_EXHAUSTED).
strata_status_t computeByteSize(strata_dtype_t dtype, uint32_t rank,
                                const int64_t* dims, size_t* out_elements,
                                size_t* out_bytes);

/// strata_tensor_create; |zero| false leaves the data uninitialized.
strata_status_t createTensor(strata_dtype_t dtype, uint32_t rank,
                             const int64_t* dims, strata_allocator_t allocator,
                             bool zero, strata_tensor_t** out_tensor);

/// A tensor record (from |allocator|) over |data| of the given shape.
/// |releaseData| null: |allocator| frees the data with the tensor;
/// otherwise releaseData(releaseUser, data) does.
strata_status_t wrapTensor(strata_dtype_t dtype, uint32_t rank,
                           const int64_t* dims, strata_allocator_t allocator,
                           void* data, void (*releaseData)(void*, void*),
                           void* releaseUser, strata_tensor_t** out_tensor);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_TENSOR_INTERNAL_H_
