//===- collectives.h - All-reduce and all-gather of tensor-parallel ranks -===//
// SPDX-License-Identifier: Apache-2.0
// strata_rt_all_reduce_f32 and strata_rt_all_gather_f32 of the kernel ABI
// (codegen/abi/strata_kernel_abi.h): the code of one rank of a model split
// over several processes exchanges activations with the other ranks
// through the communicator of its run context (strata/runtime/
// communicator.h). Both gather every rank's contiguous part (in one
// all_gather of the communicator, or, within one pipeline stage's group,
// pairwise by send and recv); the reduction then happens locally, in rank
// order, so every rank computes the same bits.

#ifndef STRATA_RUNTIME_SRC_KERNELS_COLLECTIVES_H_
#define STRATA_RUNTIME_SRC_KERNELS_COLLECTIVES_H_

#include <cstdint>

#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {

/// The all-reduce import: decodes STRATA_COLL_PARAM_COUNT params; OUT =
/// rank 0's IN + rank 1's IN + ..., added in that order.
extern "C" void strataAllReduceF32(strata_rt_context_t* context,
                                   const int64_t* params);

/// The all-gather import: decodes STRATA_COLL_PARAM_COUNT params; OUT is
/// every rank's IN stacked along AXIS in rank order.
extern "C" void strataAllGatherF32(strata_rt_context_t* context,
                                   const int64_t* params);

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_COLLECTIVES_H_
