//===- tensor.cc - Host tensors
//--------------------------------------------===//
// SPDX-License-Identifier: Apache-2.0
// One allocation for the tensor record, one for the 64-byte-aligned data;
// both come from the caller's allocator, which the tensor remembers. A
// wrapped tensor allocates only the record; its data is the caller's.

#include "strata/runtime/tensor.h"

#include <cinttypes>
#include <cstring>
#include <new>

#include "tensor_internal.h"

namespace strata::runtime {

strata_status_t computeByteSize(strata_dtype_t dtype, uint32_t rank,
                                const int64_t* dims, size_t* out_elements,
                                size_t* out_bytes) {
  uint32_t elementSize = strata_dtype_size(dtype);
  if (elementSize == 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "unknown dtype %u", static_cast<unsigned>(dtype));
  }
  if (rank > STRATA_MAX_RANK) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "rank %" PRIu32 " is above the limit of %d", rank,
                              STRATA_MAX_RANK);
  }
  if (rank > 0 && !dims) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "dims must be non-null for rank %" PRIu32, rank);
  }
  uint64_t elements = 1;
  bool overflow = false;
  for (uint32_t d = 0; d < rank; ++d) {
    if (dims[d] < 0) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                                "dim %" PRIu32 " is negative (%" PRId64 ")", d,
                                dims[d]);
    }
    overflow |= __builtin_mul_overflow(elements, static_cast<uint64_t>(dims[d]),
                                       &elements);
  }
  uint64_t bytes = 0;
  overflow |= __builtin_mul_overflow(elements, uint64_t{elementSize}, &bytes);
  if (overflow || bytes > (uint64_t{1} << 46)) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "tensor size overflows or exceeds 64 TiB");
  }
  *out_elements = elements;
  *out_bytes = bytes;
  return nullptr;
}

strata_status_t createTensor(strata_dtype_t dtype, uint32_t rank,
                             const int64_t* dims, strata_allocator_t allocator,
                             bool zero, strata_tensor_t** out_tensor) {
  if (!out_tensor) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "out_tensor must be non-null");
  }
  size_t elements = 0, bytes = 0;
  STRATA_RETURN_IF_ERROR(computeByteSize(dtype, rank, dims, &elements, &bytes));
  void* data = nullptr;
  STRATA_RETURN_IF_ERROR(
      strata_allocator_malloc(allocator, bytes, STRATA_TENSOR_ALIGNMENT, &data));
  if (zero) std::memset(data, 0, bytes);
  strata_status_t status =
      wrapTensor(dtype, rank, dims, allocator, data, /*releaseData=*/nullptr,
                 /*releaseUser=*/nullptr, out_tensor);
  if (status) strata_allocator_free(allocator, data);
  return status;
}

strata_status_t wrapTensor(strata_dtype_t dtype, uint32_t rank,
                           const int64_t* dims, strata_allocator_t allocator,
                           void* data, void (*releaseData)(void*, void*),
                           void* releaseUser, strata_tensor_t** out_tensor) {
  size_t elements = 0, bytes = 0;
  STRATA_RETURN_IF_ERROR(computeByteSize(dtype, rank, dims, &elements, &bytes));
  void* record = nullptr;
  STRATA_RETURN_IF_ERROR(strata_allocator_malloc(
      allocator, sizeof(strata_tensor_t), alignof(strata_tensor_t), &record));
  auto* tensor = new (record) strata_tensor_t;
  tensor->allocator = allocator;
  tensor->dtype = dtype;
  tensor->rank = rank;
  for (uint32_t d = 0; d < STRATA_MAX_RANK; ++d) {
    tensor->dims[d] = d < rank ? dims[d] : 0;
  }
  tensor->elementCount = elements;
  tensor->byteSize = bytes;
  tensor->data = data;
  tensor->releaseData = releaseData;
  tensor->releaseUser = releaseUser;
  *out_tensor = tensor;
  return nullptr;
}

}  // namespace strata::runtime

using strata::runtime::computeByteSize;

extern "C" {

const char* strata_dtype_name(strata_dtype_t dtype) {
  switch (dtype) {
    case STRATA_DTYPE_F32:
      return "f32";
    case STRATA_DTYPE_F16:
      return "f16";
    case STRATA_DTYPE_BF16:
      return "bf16";
    case STRATA_DTYPE_F64:
      return "f64";
    case STRATA_DTYPE_I8:
      return "i8";
    case STRATA_DTYPE_I16:
      return "i16";
    case STRATA_DTYPE_I32:
      return "i32";
    case STRATA_DTYPE_I64:
      return "i64";
    case STRATA_DTYPE_U8:
      return "u8";
    case STRATA_DTYPE_U16:
      return "u16";
    case STRATA_DTYPE_U32:
      return "u32";
    case STRATA_DTYPE_U64:
      return "u64";
    case STRATA_DTYPE_BOOL:
      return "bool";
    case STRATA_DTYPE_F8E4M3FN:
      return "f8e4m3fn";
    case STRATA_DTYPE_F8E4M3FNUZ:
      return "f8e4m3fnuz";
    case STRATA_DTYPE_F8E5M2:
      return "f8e5m2";
    case STRATA_DTYPE_F8E5M2FNUZ:
      return "f8e5m2fnuz";
    case STRATA_DTYPE_I4:
      return "i4";
    case STRATA_DTYPE_U4:
      return "u4";
    case STRATA_DTYPE_F4E2M1:
      return "f4e2m1";
  }
  return "unknown";
}

strata_status_t strata_tensor_create(strata_dtype_t dtype, uint32_t rank,
                                     const int64_t* dims,
                                     strata_allocator_t allocator,
                                     strata_tensor_t** out_tensor) {
  return strata::runtime::createTensor(dtype, rank, dims, allocator,
                                       /*zero=*/true, out_tensor);
}

strata_status_t strata_tensor_create_copy(strata_dtype_t dtype, uint32_t rank,
                                          const int64_t* dims, const void* data,
                                          size_t data_size,
                                          strata_allocator_t allocator,
                                          strata_tensor_t** out_tensor) {
  size_t elements = 0, bytes = 0;
  STRATA_RETURN_IF_ERROR(computeByteSize(dtype, rank, dims, &elements, &bytes));
  if (bytes != data_size) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "data is %zu bytes, the tensor needs %zu",
                              data_size, bytes);
  }
  if (bytes > 0 && !data) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "data must be non-null");
  }
  strata_tensor_t* tensor = nullptr;
  STRATA_RETURN_IF_ERROR(strata::runtime::createTensor(
      dtype, rank, dims, allocator, /*zero=*/false, &tensor));
  if (bytes > 0) std::memcpy(tensor->data, data, bytes);
  *out_tensor = tensor;
  return nullptr;
}

strata_status_t strata_tensor_wrap(strata_dtype_t dtype, uint32_t rank,
                                   const int64_t* dims, void* data,
                                   size_t data_size,
                                   strata_tensor_release_fn_t release_fn,
                                   void* user, strata_allocator_t allocator,
                                   strata_tensor_t** out_tensor) {
  if (!out_tensor) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "out_tensor must be non-null");
  }
  size_t elements = 0, bytes = 0;
  STRATA_RETURN_IF_ERROR(computeByteSize(dtype, rank, dims, &elements, &bytes));
  if (data_size < bytes) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "data is %zu bytes, the tensor needs %zu",
                              data_size, bytes);
  }
  if (!data && bytes > 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "data must be non-null");
  }
  // Generated code loads elements at their natural alignment, no more.
  const uint32_t elementSize = strata_dtype_size(dtype);
  if (reinterpret_cast<uintptr_t>(data) % elementSize != 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "data %p is not aligned to the %" PRIu32
                              "-byte elements of %s",
                              data, elementSize, strata_dtype_name(dtype));
  }
  strata_tensor_t* tensor = nullptr;
  STRATA_RETURN_IF_ERROR(strata::runtime::wrapTensor(
      dtype, rank, dims, allocator, data, release_fn, user, &tensor));
  tensor->ownsData = false;
  *out_tensor = tensor;
  return nullptr;
}

void strata_tensor_release(strata_tensor_t* tensor) {
  if (!tensor) return;
  strata_allocator_t allocator = tensor->allocator;
  if (tensor->releaseData) {
    tensor->releaseData(tensor->releaseUser, tensor->data);
  } else if (tensor->ownsData) {
    strata_allocator_free(allocator, tensor->data);
  }
  tensor->~strata_tensor_t();
  strata_allocator_free(allocator, tensor);
}

strata_dtype_t strata_tensor_dtype(const strata_tensor_t* tensor) {
  return tensor->dtype;
}

uint32_t strata_tensor_rank(const strata_tensor_t* tensor) {
  return tensor->rank;
}

const int64_t* strata_tensor_dims(const strata_tensor_t* tensor) {
  return tensor->dims;
}

size_t strata_tensor_element_count(const strata_tensor_t* tensor) {
  return tensor->elementCount;
}

size_t strata_tensor_byte_size(const strata_tensor_t* tensor) {
  return tensor->byteSize;
}

void* strata_tensor_data(strata_tensor_t* tensor) { return tensor->data; }

const void* strata_tensor_const_data(const strata_tensor_t* tensor) {
  return tensor->data;
}

}  // extern "C"
