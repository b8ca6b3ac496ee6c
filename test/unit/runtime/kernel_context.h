//===- kernel_context.h - A run context for calling kernels directly ------===//
// SPDX-License-Identifier: Apache-2.0
// What a session gives the imports of a run, for tests that call the
// runtime's kernels and imports without a module: kernel scratch from the
// system allocator and, optionally, a thread pool. No trap: a failure
// inside returns instead of ending a run.

#ifndef STRATA_TEST_UNIT_RUNTIME_KERNEL_CONTEXT_H_
#define STRATA_TEST_UNIT_RUNTIME_KERNEL_CONTEXT_H_

#include "run_context.h"
#include "strata/runtime/allocator.h"

namespace strata::runtime {

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
  KernelScratch scratch_{strata_allocator_system()};
  strata_rt_context_t context_;
  strata_rt_context_t tasks_;
};

}  // namespace strata::runtime

#endif  // STRATA_TEST_UNIT_RUNTIME_KERNEL_CONTEXT_H_
