//===- run_context.h - What a run's imports work with ---------------------===//
// SPDX-License-Identifier: Apache-2.0
// The kernel ABI's strata_rt_context_t (codegen/abi/strata_kernel_abi.h):
// generated code receives it as its entry's first argument and passes it to
// every import, so everything a run uses (buffer cache, thread pool, cancel
// request, where failures end the run, kernel scratch) is reached from the
// call itself, never from thread-local or global state. A session builds
// one per run on the calling thread's stack.

#ifndef STRATA_RUNTIME_SRC_RUN_CONTEXT_H_
#define STRATA_RUNTIME_SRC_RUN_CONTEXT_H_

#include <atomic>
#include <csetjmp>
#include <cstddef>
#include <cstdint>

#include "strata/runtime/allocator.h"
#include "strata/runtime/communicator.h"
#include "strata/runtime/status.h"
#include "strata_kernel_abi.h"

namespace strata::runtime {

class BufferCache;
class ThreadPool;

/// What a failed check reported (strata_check_kind_t and its values).
struct CheckFailure {
  const char* node = "";
  const char* input = "";
  int64_t kind = 0;
  int64_t a = 0, b = 0, c = 0;
  /// The whole message of a kStatusFailure (a status code in |a|): copied
  /// here because the run ends by a non-local return, past any frame that
  /// could own a string.
  char message[320] = {};
};

/// Where a run that ends early returns to (callEntryChecked, run_checks.h).
struct RunTrap {
  std::jmp_buf jump;
  CheckFailure failure;
};

/// Scratch memory of the runtime's kernels: one block per thread of a
/// parallel loop, from the session's allocator, kept from call to call
/// (a matmul needs the same blocks every time) until released.
class KernelScratch {
 public:
  explicit KernelScratch(strata_allocator_t allocator)
      : allocator_(allocator) {}
  ~KernelScratch() { release(); }
  KernelScratch(const KernelScratch&) = delete;
  KernelScratch& operator=(const KernelScratch&) = delete;

  /// |threads| blocks of at least |bytesPerThread| bytes each, 64-byte
  /// aligned, |*stride| bytes apart; null if the memory cannot be had
  /// (the blocks held before are kept).
  uint8_t* reserve(uint32_t threads, size_t bytesPerThread, size_t* stride);

  /// Frees the blocks; returns the bytes freed.
  size_t release();

 private:
  strata_allocator_t allocator_;
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
};

/// Where the module of a run sits in its split model
/// (strata_module_parallel_layout): the collectives and the hand-overs
/// between stages address their peers by it. A whole model's is tensor
/// rank 0 of 1 in stage 0 of 1.
struct ParallelLayout {
  uint32_t tensorRank = 0;
  uint32_t tensorRanks = 1;
  uint32_t stage = 0;
  uint32_t stages = 1;

  /// The communicator rank of tensor rank |t| of stage |s|.
  uint32_t worldRank(uint32_t s, uint32_t t) const {
    return s * tensorRanks + t;
  }
};

}  // namespace strata::runtime

/// Built by whoever calls an entry point (a session, a test) and valid for
/// that call. Parallel tasks receive |forTasks|.
struct strata_rt_context_t {
  /// Where strata_rt_alloc takes buffers from; null: plain aligned memory.
  strata::runtime::BufferCache* buffers = nullptr;
  /// The pool parallel loops run on; null: on the calling thread.
  strata::runtime::ThreadPool* pool = nullptr;
  /// Set from any thread to ask the run to stop; null: not cancellable.
  const std::atomic<bool>* cancelRequested = nullptr;
  /// Where a failed check, allocation or cancel ends the run; set only
  /// while a checked call is in progress on the thread that made it.
  strata::runtime::RunTrap* trap = nullptr;
  /// Kernel scratch; null: kernels that need scratch do nothing (tests
  /// always give one).
  strata::runtime::KernelScratch* scratch = nullptr;
  /// The group the collectives exchange data with (the session's copy);
  /// null: a run of a whole model, whose code calls no collective.
  const strata_communicator_t* communicator = nullptr;
  /// The module's place in its split model, which the communicator's
  /// size and rank match (checked by the session).
  strata::runtime::ParallelLayout parallel;
  /// The context parallel tasks of this run receive: the same buffers, no
  /// pool (a loop inside a task runs on its thread), no trap or cancel (a
  /// task cannot end the run). Null: tasks receive this context.
  strata_rt_context_t* forTasks = nullptr;
};

namespace strata::runtime {

/// Scratch of |bytesPerThread| for every thread |context|'s loops run on
/// (the pool's size, else 1), |*stride| bytes apart. When it cannot be
/// had: ends the run with RESOURCE_EXHAUSTED, or returns null outside a
/// checked run.
uint8_t* kernelScratch(strata_rt_context_t* context, size_t bytesPerThread,
                       size_t* stride);

/// Ends the run of |context| with |failure| (a non-local return to
/// callEntryChecked); returns when |context| has no trap (a task, or a call
/// outside callEntryChecked).
void endRun(strata_rt_context_t* context, const CheckFailure& failure);

/// Ends the run of |context| with RESOURCE_EXHAUSTED because an allocation
/// of |bytes| failed; returns when |context| has no trap (a task, or a
/// call outside callEntryChecked), and the caller then returns null.
void failRunOutOfMemory(strata_rt_context_t* context, uint64_t bytes);

/// Ends the run of |context| with CANCELLED (through pollCancel); returns
/// when |context| has no trap.
void failRunCancelled(strata_rt_context_t* context);

/// Ends the run of |context| with INTERNAL: generated code passed an import
/// parameters it cannot have been compiled to pass (|what| a static string
/// naming them, |value| the value); returns when |context| has no trap.
void failRunInternal(strata_rt_context_t* context, const char* what,
                     int64_t value);

/// Ends the run of |context| with status |code| and the printf-style
/// message (cut at CheckFailure::message's size): what the imports report
/// that is neither the caller's input nor a bug of the code, such as a
/// missing communicator (FAILED_PRECONDITION) or a failed transport
/// (UNAVAILABLE). Returns when |context| has no trap.
void failRunWithStatus(strata_rt_context_t* context, strata_status_code_t code,
                       const char* format, ...)
    __attribute__((format(printf, 3, 4)));

/// CheckFailure::kind of a failed allocation (not a strata_check_kind_t).
constexpr int64_t kOutOfMemoryFailure = -1;
/// CheckFailure::kind of a cancelled run.
constexpr int64_t kCancelledFailure = -2;
/// CheckFailure::kind of import parameters no compiler emits (node: what).
constexpr int64_t kInternalFailure = -3;
/// CheckFailure::kind of failRunWithStatus (a: the code, message: all).
constexpr int64_t kStatusFailure = -4;

/// Threads a loop of |context| runs on (1 without a pool).
uint32_t loopThreads(const strata_rt_context_t* context);

/// Ends the run of |context| if its cancel was requested. Only the entry's
/// thread outside any loop acts (tasks have no trap), so a loop always
/// completes.
void pollCancel(strata_rt_context_t* context);

/// Runs task(arg, index, thread) for every index in [0, count) on
/// |context|'s pool (or serially), |thread| in [0, loopThreads(context)):
/// no two tasks that run at the same time share one.
void parallelFor(strata_rt_context_t* context, size_t count,
                 void (*task)(void* arg, size_t index, uint32_t thread),
                 void* arg);

template <typename F>
void parallelFor(strata_rt_context_t* context, size_t count, const F& f) {
  parallelFor(
      context, count,
      [](void* arg, size_t index, uint32_t thread) {
        (*static_cast<const F*>(arg))(index, thread);
      },
      const_cast<void*>(static_cast<const void*>(&f)));
}

/// The strata_rt_parallel_for import.
extern "C" void strataRtParallelFor(strata_rt_context_t* context,
                                    strata_rt_task_fn task, void* args,
                                    int64_t begin, int64_t end, int64_t work);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_RUN_CONTEXT_H_
