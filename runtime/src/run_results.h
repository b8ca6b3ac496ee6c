//===- run_results.h - The results of an entry call, checked and delivered ===//
// SPDX-License-Identifier: Apache-2.0
// After an entry returns, its results block holds one memref descriptor per
// output, each over a buffer of the generated code. Each is checked against
// the signature, then handed to a new tensor (without a copy when it can
// be) or copied into a tensor the caller preallocated: the kernel ABI has
// the generated code allocate its results, so it cannot write the
// caller's memory directly.

#ifndef STRATA_RUNTIME_SRC_RUN_RESULTS_H_
#define STRATA_RUNTIME_SRC_RUN_RESULTS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "artifact.h"
#include "strata/runtime/tensor.h"

namespace strata::runtime {

/// The value each symbolic dim is bound to by the inputs of one run.
struct Bindings {
  std::vector<int64_t> value;   // -1 while unbound
  std::vector<size_t> boundBy;  // input index that bound it
};

/// INVALID_ARGUMENT unless caller tensor |into| can take output |index| of
/// |entry| as far as the inputs determine it: the dtype, the rank, the
/// static dims and the symbolic dims the inputs bind. Checked before the
/// call, so a tensor that cannot fit fails without running the model.
strata_status_t checkOutputTensor(const Manifest& manifest,
                                  const ManifestEntry& entry, size_t index,
                                  const Bindings& bindings,
                                  const strata_tensor_t* into);

/// What deliverResults needs to know about one completed call.
struct CompletedCall {
  const Manifest* manifest = nullptr;
  const ManifestEntry* entry = nullptr;
  const Bindings* bindings = nullptr;
  /// The results block the entry filled.
  const int64_t* results = nullptr;
  /// Buffers that are not the generated code's (the inputs' data, the
  /// weights): never freed nor handed to an output, even if a malformed
  /// result points at one.
  std::vector<const void*> foreignBuffers;
};

/// Checks every result of |call| (INTERNAL for one that breaks the ABI or
/// the signature, INVALID_ARGUMENT naming the output, its shape and the
/// produced one for a caller tensor of another shape) and then delivers
/// them: output o is copied into |into[o]| when |into| and that slot are
/// non-null, else stored in |outputs[o]| as a new tensor whose record comes
/// from |allocator|. Every buffer of the generated code is freed or handed
/// over on every path. On failure nothing is written: neither |outputs| nor
/// the data of any |into| tensor.
strata_status_t deliverResults(const CompletedCall& call,
                               strata_tensor_t* const* into,
                               strata_allocator_t allocator,
                               strata_tensor_t** outputs);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_RUN_RESULTS_H_
