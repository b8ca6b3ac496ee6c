//===- param_address.h - Addresses in an import's params block ------------===//
// SPDX-License-Identifier: Apache-2.0
// Generated code passes operand addresses to the runtime's imports as
// int64 fields of a params block (strata_kernel_abi.h).

#ifndef STRATA_RUNTIME_SRC_KERNELS_PARAM_ADDRESS_H_
#define STRATA_RUNTIME_SRC_KERNELS_PARAM_ADDRESS_H_

#include <cstdint>

namespace strata::runtime::kernels {

/// The pointer a params field holds (0: null).
template <typename T>
inline T* paramAddress(int64_t value) {
  return reinterpret_cast<T*>(static_cast<intptr_t>(value));
}

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_PARAM_ADDRESS_H_
