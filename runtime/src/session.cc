//===- session.cc - Running entry points of a module
//-----------------------===//
// SPDX-License-Identifier: Apache-2.0
// A run: check the inputs (and any caller output tensors) against the
// signature, describe the inputs as memref descriptors over their own
// memory, add the session's state tensors, call the entry with a run
// context naming the session's buffer cache, kernel scratch and thread pool
// (or the shared one it was given; kernel ABI v3), then deliver the results
// (run_results.h).

#include "strata/runtime/session.h"

#include <atomic>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "buffer_cache.h"
#include "cpu_quota.h"
#include "io_binding_internal.h"
#include "kernels/amx.h"
#include "module_internal.h"
#include "run_checks.h"
#include "run_context.h"
#include "run_results.h"
#include "session_communicator.h"
#include "shared_thread_pool.h"
#include "state_memory.h"
#include "state_rows.h"
#include "tensor_internal.h"
#include "thread_pool.h"

struct strata_session_t {
  strata_module_t* module = nullptr;
  strata_allocator_t allocator{};
  uint32_t threadCount = 0;
  /// defaultThreadCount() as read on the first run that needed it: the
  /// cgroup files are read once per session, not once per run.
  uint32_t defaultThreads = 0;
  /// Started on the first run with threadCount threads (0: one per CPU this
  /// process may use); a new count takes effect on the next run. Unused
  /// while sharedPool is set.
  std::unique_ptr<strata::runtime::ThreadPool> pool;
  /// One reference to the pool of strata_session_set_thread_pool, or null.
  strata_thread_pool_t* sharedPool = nullptr;
  /// Buffers of the generated code, reused from run to run (one reference;
  /// output tensors that kept a buffer hold others).
  strata::runtime::BufferCache* buffers = nullptr;
  /// Set by strata_session_cancel from any thread; cleared when a run
  /// starts, read by the imports on the run's thread (pollCancel).
  std::atomic<bool> cancelRequested{false};
  /// The runtime kernels' per-thread scratch.
  strata::runtime::KernelScratch* scratch = nullptr;
  /// One zero-filled buffer per state tensor the module declares, at its
  /// full extent (state_memory.h); their addresses and byte sizes.
  std::vector<strata::runtime::StateMemory> stateMemory;
  std::vector<void*> states;
  std::vector<size_t> stateBytes;
  /// Each state's dims at its full extent (symbolic dims at their maxima).
  std::vector<std::vector<int64_t>> stateDims;
  /// The copy of strata_session_set_communicator's communicator (what its
  /// |self| points to is the caller's), valid while hasCommunicator.
  strata_communicator_t communicator{};
  bool hasCommunicator = false;
  ~strata_session_t() {
    delete scratch;
    if (buffers) buffers->release();
    strata_thread_pool_release(sharedPool);
  }
};

namespace strata::runtime {
namespace {

#define INVALID(...) \
  STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

const EntryRecord* findEntry(const strata_module_t* module, const char* name) {
  for (const EntryRecord& entry : module->entries) {
    if (std::strcmp(entry.signature.name, name) == 0) return &entry;
  }
  return nullptr;
}

strata_status_t checkInputs(const strata_module_t* module,
                            const EntryRecord& entry,
                            const strata_tensor_t* const* inputs,
                            Bindings* bindings) {
  const ManifestEntry& manifestEntry = module->manifest.entries[entry.index];
  bindings->value.assign(module->manifest.dims.size(), -1);
  bindings->boundBy.assign(module->manifest.dims.size(), 0);
  for (size_t i = 0; i < manifestEntry.inputs.size(); ++i) {
    const ManifestTensor& expected = manifestEntry.inputs[i];
    const char* name = expected.name.c_str();
    const strata_tensor_t* tensor = inputs[i];
    if (!tensor) return INVALID("input %zu ('%s') is null", i, name);
    if (tensor->dtype != expected.dtype) {
      return INVALID(
          "input '%s' has dtype %s, expected %s", name,
          strata_dtype_name(tensor->dtype),
          strata_dtype_name(static_cast<strata_dtype_t>(expected.dtype)));
    }
    if (tensor->rank != expected.rank) {
      return INVALID("input '%s' has rank %" PRIu32 ", expected %" PRIu32, name,
                     tensor->rank, expected.rank);
    }
    for (uint32_t d = 0; d < expected.rank; ++d) {
      int64_t actual = tensor->dims[d];
      int64_t dim = expected.dims[d];
      if (dim >= 0) {
        if (actual != dim) {
          return INVALID("input '%s' dim %" PRIu32 " is %" PRId64
                         ", expected %" PRId64,
                         name, d, actual, dim);
        }
        continue;
      }
      size_t k = static_cast<size_t>(-(dim + 1));
      const ManifestDim& symbolic = module->manifest.dims[k];
      if (actual > symbolic.max) {
        return INVALID("input '%s' dim %" PRIu32 " (%s) is %" PRId64
                       ", above the compiled maximum %" PRId64,
                       name, d, symbolic.name.c_str(), actual, symbolic.max);
      }
      if (bindings->value[k] < 0) {
        bindings->value[k] = actual;
        bindings->boundBy[k] = i;
      } else if (bindings->value[k] != actual) {
        return INVALID("input '%s' dim %" PRIu32 " (%s) is %" PRId64
                       ", but input '%s' binds '%s' to %" PRId64,
                       name, d, symbolic.name.c_str(), actual,
                       manifestEntry.inputs[bindings->boundBy[k]].name.c_str(),
                       symbolic.name.c_str(), bindings->value[k]);
      }
    }
  }
  return nullptr;
}

// The dims of state |state| at its full extent (symbolic dims at their
// maxima, which the loader checked exist and fit the size limits).
std::vector<int64_t> fullStateDims(const strata_module_t* module,
                                   const ManifestState& state) {
  std::vector<int64_t> dims(state.tensor.dims,
                            state.tensor.dims + state.tensor.rank);
  for (int64_t& dim : dims) {
    if (dim < 0) dim = module->manifest.dims[static_cast<size_t>(-(dim + 1))].max;
  }
  return dims;
}

// Allocates and zero-fills every state tensor the module declares.
strata_status_t allocateStates(strata_session_t* session) {
  const Manifest& manifest = session->module->manifest;
  session->stateMemory.reserve(manifest.states.size());
  session->states.reserve(manifest.states.size());
  session->stateBytes.reserve(manifest.states.size());
  session->stateDims.reserve(manifest.states.size());
  for (const ManifestState& state : manifest.states) {
    std::vector<int64_t> dims = fullStateDims(session->module, state);
    size_t bytes = strata_dtype_size(state.tensor.dtype);
    for (int64_t dim : dims) bytes *= static_cast<size_t>(dim);
    strata::runtime::StateMemory memory;
    STRATA_RETURN_IF_ERROR(strata::runtime::StateMemory::allocate(
        session->allocator, bytes, &memory));
    session->states.push_back(memory.data());
    session->stateBytes.push_back(bytes);
    session->stateMemory.push_back(std::move(memory));
    session->stateDims.push_back(std::move(dims));
  }
  return nullptr;
}

// Fills a packed rank-|rank| descriptor of contiguous row-major data.
void describe(void* data, uint32_t rank, const int64_t* dims,
              strata_memref_desc_t* desc) {
  desc->allocated = data;
  desc->aligned = data;
  desc->offset = 0;
  int64_t stride = 1;
  for (uint32_t d = rank; d-- > 0;) {
    desc->sizes_and_strides[d] = dims[d];
    desc->sizes_and_strides[rank + d] = stride;
    stride *= dims[d];
  }
}

// The pool the next run uses: the shared one, else the session's own,
// (re)started at the thread count in effect.
ThreadPool* runPool(strata_session_t* session) {
  if (session->sharedPool) return &session->sharedPool->pool;
  if (!session->threadCount && !session->defaultThreads)
    session->defaultThreads = defaultThreadCount();
  const uint32_t threads =
      session->threadCount ? session->threadCount : session->defaultThreads;
  if (!session->pool || session->pool->size() != threads) {
    session->pool.reset();
    session->pool = std::make_unique<ThreadPool>(threads);
  }
  return session->pool.get();
}

// Checks that output |into| (caller tensors, null slots allowed; null for
// none) are usable before the call: each fits what the inputs determine
// of its output and no tensor takes two outputs.
strata_status_t checkOutputTensors(const strata_module_t* module,
                                   const ManifestEntry& entry,
                                   const Bindings& bindings,
                                   strata_tensor_t* const* into) {
  if (!into) return nullptr;
  for (size_t o = 0; o < entry.outputs.size(); ++o) {
    if (!into[o]) continue;
    for (size_t p = 0; p < o; ++p) {
      if (into[p] == into[o]) {
        return INVALID("outputs '%s' and '%s' are given the same tensor",
                       entry.outputs[p].name.c_str(),
                       entry.outputs[o].name.c_str());
      }
    }
    STRATA_RETURN_IF_ERROR(
        checkOutputTensor(module->manifest, entry, o, bindings, into[o]));
  }
  return nullptr;
}

// Runs the entry; output o is copied into |into[o]| when |into| and that
// slot are non-null, else a new tensor is stored in |outputs[o]|.
strata_status_t run(strata_session_t* session, const char* entryName,
                    const strata_tensor_t* const* inputs, size_t inputCount,
                    strata_tensor_t* const* into, strata_tensor_t** outputs,
                    size_t outputCount) {
  const strata_module_t* module = session->module;
  const EntryRecord* entry = findEntry(module, entryName);
  if (!entry) {
    const strata_entry_signature_t* unused = nullptr;
    return strata_module_find_entry(module, entryName, &unused);
  }
  const ManifestEntry& manifestEntry = module->manifest.entries[entry->index];
  if (inputCount != manifestEntry.inputs.size()) {
    return INVALID("entry '%s' takes %zu inputs, got %zu", entryName,
                   manifestEntry.inputs.size(), inputCount);
  }
  if (outputCount != manifestEntry.outputs.size()) {
    return INVALID("entry '%s' has %zu outputs, got room for %zu", entryName,
                   manifestEntry.outputs.size(), outputCount);
  }
  if ((inputCount > 0 && !inputs) || (outputCount > 0 && !outputs && !into)) {
    return INVALID("inputs and outputs must be non-null");
  }
  const strata_communicator_t* communicator =
      session->hasCommunicator ? &session->communicator : nullptr;
  STRATA_RETURN_IF_ERROR(
      checkRunCommunicator(module, communicator, entryName));
  Bindings bindings;
  STRATA_RETURN_IF_ERROR(checkInputs(module, *entry, inputs, &bindings));
  STRATA_RETURN_IF_ERROR(
      checkOutputTensors(module, manifestEntry, bindings, into));

  // The run's context; tasks get one without pool, trap or cancel.
  ThreadPool* pool = runPool(session);
  strata_rt_context_t taskContext;
  taskContext.buffers = session->buffers;
  strata_rt_context_t context;
  context.buffers = session->buffers;
  context.pool = pool;
  context.cancelRequested = &session->cancelRequested;
  context.scratch = session->scratch;
  context.communicator = communicator;
  ParallelLayout& layout = context.parallel;
  strata_module_parallel_layout(module, &layout.tensorRank, &layout.tensorRanks,
                                &layout.stage, &layout.stages);
  context.forTasks = &taskContext;

  // Arguments: the context, the results block (if any), one descriptor per
  // input, one per state tensor, the weights.
  const std::vector<ManifestState>& states = module->manifest.states;
  std::vector<strata_memref_desc_t> inputDescs(inputCount + states.size());
  std::vector<void*> args;
  args.push_back(&context);
  size_t resultWords = 0;
  for (const ManifestTensor& output : manifestEntry.outputs) {
    resultWords += strata_memref_desc_size(output.rank) / 8;
  }
  std::vector<int64_t> results(resultWords, 0);
  if (outputCount > 0) args.push_back(results.data());
  for (size_t i = 0; i < inputCount; ++i) {
    // The input's own memory, caller-wrapped or not: inputs are never copied.
    describe(inputs[i]->data, inputs[i]->rank, inputs[i]->dims, &inputDescs[i]);
    args.push_back(&inputDescs[i]);
  }
  for (size_t s = 0; s < states.size(); ++s) {
    strata_memref_desc_t* desc = &inputDescs[inputCount + s];
    describe(session->states[s], states[s].tensor.rank,
             session->stateDims[s].data(), desc);
    args.push_back(desc);
  }
  strata_memref_desc_t weights;
  int64_t weightsSize = static_cast<int64_t>(module->view.weights.size);
  describe(const_cast<uint8_t*>(module->view.weights.data), 1, &weightsSize,
           &weights);
  args.push_back(&weights);

  // Filled before the call: an allocation failing after it would strand
  // the buffers the call returned.
  CompletedCall call;
  call.manifest = &module->manifest;
  call.entry = &manifestEntry;
  call.bindings = &bindings;
  call.results = results.data();
  call.foreignBuffers.reserve(inputCount + states.size() + 1);
  for (size_t i = 0; i < inputCount; ++i) {
    call.foreignBuffers.push_back(inputs[i]->data);
  }
  for (void* state : session->states) call.foreignBuffers.push_back(state);
  call.foreignBuffers.push_back(module->view.weights.data);
  CheckFailure failure;
  session->buffers->beginRun();
  const bool completed = callEntryChecked(&context, entry->function,
                                          args.data(), args.size(), &failure);
  if (!completed) {
    // A failed check or allocation, or a cancel: the results block holds
    // nothing valid; every buffer the run took is still live in the cache.
    session->buffers->reclaimLive();
    session->buffers->trimUnused();
    return checkFailureStatus(failure);
  }

  strata_status_t status =
      deliverResults(call, into, session->allocator, outputs);
  // The cache keeps what the last few runs used, no more.
  session->buffers->trimUnused();
  return status;
}

// Maps |names| to positions of the entry's inputs and runs it; selects
// the requested outputs (all in manifest order for null |outputNames|).
strata_status_t runNamed(strata_session_t* session, const char* entryName,
                         const char* const* inputNames,
                         const strata_tensor_t* const* inputs,
                         size_t inputCount, const char* const* outputNames,
                         strata_tensor_t** outputs, size_t outputCount) {
  const strata_module_t* module = session->module;
  const strata_entry_signature_t* signature = nullptr;
  STRATA_RETURN_IF_ERROR(
      strata_module_find_entry(module, entryName, &signature));
  if ((inputCount > 0 && (!inputs || !inputNames)) ||
      (outputCount > 0 && !outputs)) {
    return INVALID("input names, inputs and outputs must be non-null");
  }
  std::vector<const strata_tensor_t*> ordered(signature->input_count,
                                              nullptr);
  std::vector<bool> given(signature->input_count, false);
  for (size_t i = 0; i < inputCount; ++i) {
    if (!inputNames[i]) return INVALID("input name %zu is null", i);
    size_t index = 0;
    STRATA_RETURN_IF_ERROR(
        strata_module_input_index(module, entryName, inputNames[i], &index));
    if (given[index]) {
      return INVALID("input '%s' of entry '%s' is given twice", inputNames[i],
                     entryName);
    }
    given[index] = true;
    ordered[index] = inputs[i];
  }
  for (size_t i = 0; i < signature->input_count; ++i) {
    if (!given[i]) {
      return INVALID("entry '%s' needs input '%s', which is not given",
                     entryName, signature->inputs[i].name);
    }
  }
  if (!outputNames) {
    return run(session, entryName, ordered.data(), ordered.size(),
               /*into=*/nullptr, outputs, outputCount);
  }
  // Position of each requested output in the entry's signature.
  std::vector<size_t> selected(outputCount);
  std::vector<bool> taken(signature->output_count, false);
  for (size_t o = 0; o < outputCount; ++o) {
    if (!outputNames[o]) return INVALID("output name %zu is null", o);
    STRATA_RETURN_IF_ERROR(strata_module_output_index(
        module, entryName, outputNames[o], &selected[o]));
    if (taken[selected[o]]) {
      return INVALID("output '%s' of entry '%s' is requested twice",
                     outputNames[o], entryName);
    }
    taken[selected[o]] = true;
  }
  std::vector<strata_tensor_t*> all(signature->output_count, nullptr);
  STRATA_RETURN_IF_ERROR(run(session, entryName, ordered.data(),
                             ordered.size(), /*into=*/nullptr, all.data(),
                             all.size()));
  for (size_t o = 0; o < outputCount; ++o) {
    outputs[o] = std::exchange(all[selected[o]], nullptr);
  }
  for (strata_tensor_t* unused : all) strata_tensor_release(unused);
  return nullptr;
}

}  // namespace
}  // namespace strata::runtime

namespace {

// The checks both row copies share; the copy itself is state_rows.cc's.
strata_status_t copySessionRows(const strata_session_t* session, size_t index,
                                int64_t slot, int64_t first, int64_t count,
                                void* buffer, size_t bytes,
                                strata::runtime::RowsDirection direction) {
  if (!session || !buffer) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "session and the row buffer must be non-null");
  }
  const strata_state_signature_t* state =
      strata_module_state(session->module, index);
  if (!state) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_OUT_OF_RANGE,
                              "state %zu does not exist: the module declares "
                              "%zu state tensors",
                              index, session->states.size());
  }
  return strata::runtime::copyStateRows(
      *state, session->stateDims[index].data(),
      static_cast<uint8_t*>(session->states[index]), slot, first, count,
      buffer, bytes, direction);
}

}  // namespace

extern "C" {

void strata_session_options_init(strata_session_options_t* options) {
  if (options) options->thread_count = 0;
}

strata_status_t strata_session_create(strata_module_t* module,
                                      const strata_session_options_t* options,
                                      strata_allocator_t allocator,
                                      strata_session_t** out_session) {
  if (!module || !out_session) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "module and out_session must be non-null");
  }
  strata_session_options_t defaults;
  strata_session_options_init(&defaults);
  if (!options) options = &defaults;
  if (options->thread_count > STRATA_SESSION_MAX_THREADS) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "thread count %" PRIu32 " is above the limit %d",
                              options->thread_count,
                              STRATA_SESSION_MAX_THREADS);
  }
  // AMX tile data is granted per process: asked for here, once, so that
  // no kernel call is the first to ask (strata_cpu_amx_status says why not).
  (void)strata::runtime::kernels::amxPermitted();
  void* record = nullptr;
  STRATA_RETURN_IF_ERROR(strata_allocator_malloc(
      allocator, sizeof(strata_session_t), alignof(strata_session_t), &record));
  auto* session = new (record) strata_session_t;
  strata_module_retain(module);
  session->module = module;
  session->allocator = allocator;
  session->threadCount = options->thread_count;
  session->buffers = new (std::nothrow) strata::runtime::BufferCache(allocator);
  session->scratch =
      new (std::nothrow) strata::runtime::KernelScratch(allocator);
  if (!session->buffers || !session->scratch) {
    strata_session_release(session);
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory creating a session");
  }
  if (strata_status_t status = strata::runtime::allocateStates(session)) {
    strata_session_release(session);
    return status;
  }
  *out_session = session;
  return nullptr;
}

void strata_session_release(strata_session_t* session) {
  if (!session) return;
  strata_module_t* module = session->module;
  strata_allocator_t allocator = session->allocator;
  session->~strata_session_t();
  strata_allocator_free(allocator, session);
  strata_module_release(module);
}

strata_module_t* strata_session_module(const strata_session_t* session) {
  return session->module;
}

strata_status_t strata_session_set_thread_count(strata_session_t* session,
                                                uint32_t count) {
  if (!session) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "session must be non-null");
  }
  if (count > STRATA_SESSION_MAX_THREADS) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "thread count %" PRIu32 " is above the limit %d",
                              count, STRATA_SESSION_MAX_THREADS);
  }
  if (session->sharedPool) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_FAILED_PRECONDITION,
        "the session runs on a shared thread pool of %" PRIu32
        " threads; give it no pool (strata_session_set_thread_pool NULL) "
        "to set its own thread count",
        session->sharedPool->pool.size());
  }
  session->threadCount = count;
  return nullptr;
}

uint32_t strata_session_thread_count(const strata_session_t* session) {
  if (session->sharedPool) return session->sharedPool->pool.size();
  return session->threadCount;
}

strata_status_t strata_session_set_thread_pool(strata_session_t* session,
                                               strata_thread_pool_t* pool) {
  if (!session) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "session must be non-null");
  }
  strata_thread_pool_retain(pool);
  strata_thread_pool_release(std::exchange(session->sharedPool, pool));
  // Workers of its own would only sleep from now on.
  if (pool) session->pool.reset();
  return nullptr;
}

strata_status_t strata_session_set_communicator(
    strata_session_t* session, const strata_communicator_t* communicator) {
  if (!session) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "session must be non-null");
  }
  if (!communicator) {
    session->hasCommunicator = false;
    return nullptr;
  }
  STRATA_RETURN_IF_ERROR(strata::runtime::acceptCommunicator(
      session->module, communicator, &session->communicator));
  session->hasCommunicator = true;
  return nullptr;
}

strata_thread_pool_t* strata_session_thread_pool(
    const strata_session_t* session) {
  return session ? session->sharedPool : nullptr;
}

size_t strata_session_trim(strata_session_t* session) {
  if (!session) return 0;
  return session->buffers->trimAll() + session->scratch->release();
}

strata_status_t strata_session_read_state(const strata_session_t* session,
                                          size_t index,
                                          strata_tensor_t** out_tensor) {
  if (!session || !out_tensor) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "session and out_tensor must be non-null");
  }
  const auto& states = session->module->manifest.states;
  if (index >= states.size()) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_OUT_OF_RANGE,
                              "state %zu does not exist: the module declares "
                              "%zu state tensors",
                              index, states.size());
  }
  return strata_tensor_create_copy(
      static_cast<strata_dtype_t>(states[index].tensor.dtype),
      states[index].tensor.rank, session->stateDims[index].data(),
      session->states[index],
      session->stateBytes[index], session->allocator, out_tensor);
}

strata_status_t strata_session_reset_state(strata_session_t* session,
                                           int64_t slot) {
  if (!session) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "session must be non-null");
  }
  const auto& states = session->module->manifest.states;
  if (slot < 0) {
    for (strata::runtime::StateMemory& memory : session->stateMemory)
      memory.zeroAll();
    return nullptr;
  }
  // Dim 0 of a per-sequence state counts its slots (rank >= 1: a format
  // rule).
  for (size_t s = 0; s < states.size(); ++s) {
    if (states[s].scope != STRATA_STATE_SCOPE_PER_SEQUENCE) continue;
    const int64_t slots = session->stateDims[s][0];
    if (slot >= slots) {
      return STRATA_MAKE_STATUS(
          STRATA_STATUS_OUT_OF_RANGE,
          "sequence slot %" PRId64 " is out of range: state '%s' has %" PRId64
          " slots",
          slot, states[s].tensor.name.c_str(), slots);
    }
  }
  for (size_t s = 0; s < states.size(); ++s) {
    if (states[s].scope != STRATA_STATE_SCOPE_PER_SEQUENCE) continue;
    const int64_t slots = session->stateDims[s][0];
    const size_t slice = session->stateBytes[s] / static_cast<size_t>(slots);
    std::memset(static_cast<uint8_t*>(session->states[s]) +
                    slice * static_cast<size_t>(slot),
                0, slice);
  }
  return nullptr;
}

strata_status_t strata_session_read_state_rows(const strata_session_t* session,
                                               size_t index, int64_t slot,
                                               int64_t first, int64_t count,
                                               void* out, size_t out_bytes) {
  return copySessionRows(session, index, slot, first, count, out, out_bytes,
                         strata::runtime::RowsDirection::kOut);
}

strata_status_t strata_session_write_state_rows(strata_session_t* session,
                                                size_t index, int64_t slot,
                                                int64_t first, int64_t count,
                                                const void* data,
                                                size_t bytes) {
  // Only read from: the direction is kIn.
  return copySessionRows(session, index, slot, first, count,
                         const_cast<void*>(data), bytes,
                         strata::runtime::RowsDirection::kIn);
}

}  // extern "C"

namespace {

// The C boundary of both run calls: argument check, the cancel flag
// cleared (a cancel cancels only a run in progress), and the failures that
// surface as C++ exceptions from the runtime's own code turned into
// statuses.
template <typename Run>
strata_status_t guardedRun(strata_session_t* session, const char* entry_name,
                           Run run) {
  if (!session || !entry_name) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "session and entry_name must be non-null");
  }
  session->cancelRequested.store(false, std::memory_order_relaxed);
  try {
    return run();
  } catch (const std::bad_alloc&) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory while running '%s'", entry_name);
  } catch (const std::system_error& error) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "cannot start the worker threads of '%s': %s",
                              entry_name, error.what());
  }
}

}  // namespace

extern "C" {

strata_status_t strata_session_run(strata_session_t* session,
                                   const char* entry_name,
                                   const strata_tensor_t* const* inputs,
                                   size_t input_count,
                                   strata_tensor_t** outputs,
                                   size_t output_count) {
  return guardedRun(session, entry_name, [&] {
    return strata::runtime::run(session, entry_name, inputs, input_count,
                                /*into=*/nullptr, outputs, output_count);
  });
}

strata_status_t strata_session_run_named(
    strata_session_t* session, const char* entry_name,
    const char* const* input_names, const strata_tensor_t* const* inputs,
    size_t input_count, const char* const* output_names,
    strata_tensor_t** outputs, size_t output_count) {
  return guardedRun(session, entry_name, [&] {
    return strata::runtime::runNamed(session, entry_name, input_names, inputs,
                                     input_count, output_names, outputs,
                                     output_count);
  });
}

strata_status_t strata_session_run_into(strata_session_t* session,
                                        const char* entry_name,
                                        const strata_tensor_t* const* inputs,
                                        size_t input_count,
                                        strata_tensor_t* const* outputs,
                                        size_t output_count) {
  return guardedRun(session, entry_name, [&]() -> strata_status_t {
    if (output_count > 0 && !outputs) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                                "outputs must be non-null");
    }
    for (size_t o = 0; o < output_count; ++o) {
      if (!outputs[o]) {
        return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                                  "output tensor %zu is null", o);
      }
    }
    // Every output has a tensor, so nothing is ever stored in |unused|.
    std::vector<strata_tensor_t*> unused(output_count, nullptr);
    return strata::runtime::run(session, entry_name, inputs, input_count,
                                outputs, unused.data(), output_count);
  });
}

strata_status_t strata_session_run_binding(strata_session_t* session,
                                           strata_io_binding_t* binding) {
  if (!binding) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "binding must be non-null");
  }
  const char* entryName = binding->entry->name;
  return guardedRun(session, entryName, [&]() -> strata_status_t {
    if (binding->module != session->module) {
      return STRATA_MAKE_STATUS(
          STRATA_STATUS_INVALID_ARGUMENT,
          "the binding of '%s' is for another module than the session's",
          entryName);
    }
    for (size_t i = 0; i < binding->inputs.size(); ++i) {
      if (!binding->inputs[i]) {
        return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                                  "input '%s' of '%s' is not bound",
                                  binding->entry->inputs[i].name, entryName);
      }
    }
    std::vector<strata_tensor_t*> made(binding->madeOutputs.size(), nullptr);
    STRATA_RETURN_IF_ERROR(strata::runtime::run(
        session, entryName, binding->inputs.data(), binding->inputs.size(),
        binding->boundOutputs.data(), made.data(), made.size()));
    binding->madeOutputs.swap(made);
    for (strata_tensor_t* old : made) strata_tensor_release(old);
    return nullptr;
  });
}

void strata_session_cancel(strata_session_t* session) {
  if (session) session->cancelRequested.store(true, std::memory_order_release);
}

}  // extern "C"
