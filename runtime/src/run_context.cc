//===- run_context.cc - What a run's imports work with --------------------===//
// SPDX-License-Identifier: Apache-2.0

#include "run_context.h"

#include <cstdarg>
#include <cstdio>

#include "thread_pool.h"

namespace strata::runtime {

uint8_t* KernelScratch::reserve(uint32_t threads, size_t bytesPerThread,
                                size_t* stride) {
  constexpr size_t kAlign = 64;
  // Refuse sizes whose products could overflow before asking for them.
  constexpr size_t kMaxBytes = size_t{1} << 46;
  if (threads == 0) threads = 1;
  if (bytesPerThread > kMaxBytes / threads) return nullptr;
  *stride = (bytesPerThread + kAlign - 1) / kAlign * kAlign;
  const size_t needed = *stride * threads;
  if (needed <= bytes_ && data_) return data_;
  void* memory = nullptr;
  strata_status_t status = strata_allocator_malloc(
      allocator_, needed ? needed : kAlign, kAlign, &memory);
  if (status) {
    strata_status_free(status);
    return nullptr;
  }
  release();
  data_ = static_cast<uint8_t*>(memory);
  bytes_ = needed;
  return data_;
}

size_t KernelScratch::release() {
  const size_t bytes = bytes_;
  if (data_) strata_allocator_free(allocator_, data_);
  data_ = nullptr;
  bytes_ = 0;
  return bytes;
}

void endRun(strata_rt_context_t* context, const CheckFailure& failure) {
  RunTrap* trap = context ? context->trap : nullptr;
  if (!trap) return;
  trap->failure = failure;
  std::longjmp(trap->jump, 1);
}

void failRunOutOfMemory(strata_rt_context_t* context, uint64_t bytes) {
  CheckFailure failure;
  failure.kind = kOutOfMemoryFailure;
  failure.a = static_cast<int64_t>(bytes);
  endRun(context, failure);
}

void failRunCancelled(strata_rt_context_t* context) {
  CheckFailure failure;
  failure.kind = kCancelledFailure;
  endRun(context, failure);
}

void failRunInternal(strata_rt_context_t* context, const char* what,
                     int64_t value) {
  CheckFailure failure;
  failure.kind = kInternalFailure;
  failure.node = what;
  failure.a = value;
  endRun(context, failure);
}

void failRunWithStatus(strata_rt_context_t* context, strata_status_code_t code,
                       const char* format, ...) {
  if (!context || !context->trap) return;
  CheckFailure failure;
  failure.kind = kStatusFailure;
  failure.a = code;
  va_list args;
  va_start(args, format);
  std::vsnprintf(failure.message, sizeof(failure.message), format, args);
  va_end(args);
  endRun(context, failure);
}

uint32_t loopThreads(const strata_rt_context_t* context) {
  return context->pool ? context->pool->size() : 1;
}

uint8_t* kernelScratch(strata_rt_context_t* context, size_t bytesPerThread,
                       size_t* stride) {
  uint8_t* scratch = context->scratch
                         ? context->scratch->reserve(loopThreads(context),
                                                     bytesPerThread, stride)
                         : nullptr;
  if (!scratch) failRunOutOfMemory(context, bytesPerThread);
  return scratch;
}

void pollCancel(strata_rt_context_t* context) {
  if (context->trap && context->cancelRequested &&
      context->cancelRequested->load(std::memory_order_acquire))
    failRunCancelled(context);
}

void parallelFor(strata_rt_context_t* context, size_t count,
                 void (*task)(void* arg, size_t index, uint32_t thread),
                 void* arg) {
  if (context->pool && count > 1 && context->pool->size() > 1) {
    context->pool->parallelFor(count, task, arg);
    return;
  }
  for (size_t i = 0; i < count; ++i) task(arg, i, 0);
}

// Loops writing fewer elements run on the calling thread: waking the pool
// costs a few microseconds, about what 16K elementwise updates take.
constexpr int64_t kMinParallelWork = 16384;

extern "C" void strataRtParallelFor(strata_rt_context_t* context,
                                    strata_rt_task_fn task, void* args,
                                    int64_t begin, int64_t end, int64_t work) {
  pollCancel(context);
  const int64_t n = end - begin;
  if (n <= 0) return;
  strata_rt_context_t* taskContext =
      context->forTasks ? context->forTasks : context;
  const int64_t threads = loopThreads(context);
  if (threads == 1 || n == 1 || work < kMinParallelWork) {
    task(taskContext, args, begin, end);
    return;
  }
  const int64_t chunks = n < threads * 4 ? n : threads * 4;
  parallelFor(context, static_cast<size_t>(chunks), [&](size_t i, uint32_t) {
    const int64_t b = begin + n * static_cast<int64_t>(i) / chunks;
    const int64_t e = begin + n * static_cast<int64_t>(i + 1) / chunks;
    if (b < e) task(taskContext, args, b, e);
  });
}

}  // namespace strata::runtime
