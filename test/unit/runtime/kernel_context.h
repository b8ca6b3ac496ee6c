//===- kernel_context.h - A run context for calling kernels directly ------===//
// SPDX-License-Identifier: Apache-2.0
// What a session gives the imports of a run, for tests that call the
// runtime's kernels and imports without a module: kernel scratch from the
// system allocator, every new block filled with 0xFF bytes (NaN as fp32
// and bf16, so a kernel that reads scratch it never wrote fails its test
// rather than passing by luck), and, optionally, a thread pool. No trap: a
// failure inside returns instead of ending a run.

#ifndef STRATA_TEST_UNIT_RUNTIME_KERNEL_CONTEXT_H_
#define STRATA_TEST_UNIT_RUNTIME_KERNEL_CONTEXT_H_

#include <cstring>

#include "run_context.h"
#include "strata/runtime/allocator.h"

namespace strata::runtime {

/// The system allocator, with new blocks filled with 0xFF bytes.
inline strata_allocator_t poisonedScratchAllocator() {
  const auto allocate = [](void* /*self*/, size_t size, size_t alignment,
                           void* ptrToFree, void** out) -> strata_status_t {
    const strata_allocator_t system = strata_allocator_system();
    strata_status_t status =
        system.fn(system.self, size, alignment, ptrToFree, out);
    if (status == nullptr && size != 0 && *out) std::memset(*out, 0xFF, size);
    return status;
  };
  return strata_allocator_t{nullptr, allocate};
}

class KernelContext {
 public:
  explicit KernelContext(ThreadPool* pool = nullptr) {
    context_.pool = pool;
    context_.scratch = &scratch_;
    tasks_.scratch = nullptr;
    context_.forTasks = &tasks_;
  }
  KernelContext(const KernelContext&) = delete;
  KernelContext& operator=(const KernelContext&) = delete;

  strata_rt_context_t* get() { return &context_; }

 private:
  KernelScratch scratch_{poisonedScratchAllocator()};
  strata_rt_context_t context_;
  strata_rt_context_t tasks_;
};

}  // namespace strata::runtime

#endif  // STRATA_TEST_UNIT_RUNTIME_KERNEL_CONTEXT_H_
