//===- pipeline_transfer.h - Activations handed between pipeline stages ---===//
// SPDX-License-Identifier: Apache-2.0
// strata_rt_send_f32, strata_rt_recv_extents_f32 and strata_rt_recv_f32 of
// the kernel ABI (codegen/abi/strata_kernel_abi.h): the code of one
// pipeline stage of a split model receives the residual stream from the
// stage before it and sends its own to the stage after, each between the
// ranks of the same tensor rank over the communicator of its run context:
// the tensor's extents first (the receiver allocates from them), then its
// elements.

#ifndef STRATA_RUNTIME_SRC_KERNELS_PIPELINE_TRANSFER_H_
#define STRATA_RUNTIME_SRC_KERNELS_PIPELINE_TRANSFER_H_

#include <cstdint>

#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

/// The send import: decodes STRATA_P2P_PARAM_COUNT params; SIZES, then
/// BUF (strided), to stage STAGE's rank of this tensor rank.
extern "C" void strataSendF32(strata_rt_context_t* context,
                              const int64_t* params);

/// The extents import: decodes STAGE and EXTENTS; the sizes the peer sent
/// into EXTENTS.
extern "C" void strataRecvExtentsF32(strata_rt_context_t* context,
                                     const int64_t* params);

/// The receive import: decodes STRATA_P2P_PARAM_COUNT params; BUF
/// (contiguous, SIZES) from stage STAGE's rank of this tensor rank.
extern "C" void strataRecvF32(strata_rt_context_t* context,
                              const int64_t* params);

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_PIPELINE_TRANSFER_H_
