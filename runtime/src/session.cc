//===- session.cc - Running entry points of a module
//-----------------------===//
// SPDX-License-Identifier: Apache-2.0
// A run: check the inputs against the signature, describe them as memref
// descriptors (kernel ABI v2), call the entry on the session's thread pool, check each result descriptor,
// copy it into a caller-owned tensor and free the generated code's buffer.

#include "strata/runtime/session.h"

#include <atomic>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <new>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <memory>

#include "buffer_cache.h"
#include "cpu_quota.h"
#include "module_internal.h"
#include "run_checks.h"
#include "strata_artifact_format.h"
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
  /// process may use); a new count takes effect on the next run.
  std::unique_ptr<strata::runtime::ThreadPool> pool;
  /// Buffers of the generated code, reused from run to run (one reference;
  /// output tensors that kept a buffer hold others).
  strata::runtime::BufferCache* buffers = nullptr;
  /// Set by strata_session_cancel from any thread; cleared when a run
  /// starts, read by the imports on the run's thread (pollCancel).
  std::atomic<bool> cancelRequested{false};
  ~strata_session_t() {
    if (buffers) buffers->release();
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

// The value each symbolic dim is bound to by the inputs of one run.
struct Bindings {
  std::vector<int64_t> value;   // -1 while unbound
  std::vector<size_t> boundBy;  // input index that bound it
};

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

// One result descriptor as read back from the results block.
struct Result {
  void* allocated = nullptr;
  void* aligned = nullptr;
  int64_t offset = 0;
  int64_t sizes[STRATA_MAX_RANK] = {};
  int64_t strides[STRATA_MAX_RANK] = {};
};

strata_status_t checkResult(const ManifestEntry& entry, size_t index,
                            const Manifest& manifest, const Bindings& bindings,
                            const Result& result) {
  const ManifestTensor& expected = entry.outputs[index];
  const char* name = expected.name.c_str();
  auto internal = [&](const std::string& what) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INTERNAL,
                              "entry '%s' returned a malformed output '%s': %s",
                              entry.name.c_str(), name, what.c_str());
  };
  uint64_t elements = 1;
  for (uint32_t d = 0; d < expected.rank; ++d) {
    int64_t size = result.sizes[d];
    int64_t dim = expected.dims[d];
    std::string where =
        "dim " + std::to_string(d) + " is " + std::to_string(size);
    if (size < 0) return internal(where + ", negative");
    if (dim >= 0 && size != dim) {
      return internal(where + ", expected " + std::to_string(dim));
    }
    if (dim < 0) {
      size_t k = static_cast<size_t>(-(dim + 1));
      // A from-data extent is bounded by the generated code's checks.
      int64_t max = manifest.dims[k].max == STRATA_DIM_MAX_FROM_DATA
                        ? STRATA_MAX_DATA_EXTENT
                        : manifest.dims[k].max;
      if (size > max) {
        return internal(where + ", above the maximum " +
                        std::to_string(max) + " of '" +
                        manifest.dims[k].name + "'");
      }
      if (bindings.value[k] >= 0 && size != bindings.value[k]) {
        return internal(where + ", but the inputs bind '" +
                        manifest.dims[k].name + "' to " +
                        std::to_string(bindings.value[k]));
      }
    }
    // From-data dims are each bounded only by STRATA_MAX_DATA_EXTENT.
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(size),
                               &elements) ||
        elements > STRATA_MANIFEST_MAX_TENSOR_BYTES /
                       strata_dtype_size(expected.dtype)) {
      return internal("its dims multiply past the format's tensor limit");
    }
  }
  if (elements == 0) return nullptr;
  if (!result.aligned) return internal("null data pointer");
  if (result.offset != 0) {
    return internal("offset " + std::to_string(result.offset) + ", expected 0");
  }
  int64_t stride = 1;
  for (uint32_t d = expected.rank; d-- > 0;) {
    if (result.sizes[d] != 1 && result.strides[d] != stride) {
      return internal("dim " + std::to_string(d) + " has stride " +
                      std::to_string(result.strides[d]) +
                      ", expected a contiguous row-major " +
                      std::to_string(stride));
    }
    stride *= result.sizes[d];
  }
  return nullptr;
}

strata_status_t run(strata_session_t* session, const char* entryName,
                    const strata_tensor_t* const* inputs, size_t inputCount,
                    strata_tensor_t** outputs, size_t outputCount) {
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
  if ((inputCount > 0 && !inputs) || (outputCount > 0 && !outputs)) {
    return INVALID("inputs and outputs must be non-null");
  }
  Bindings bindings;
  STRATA_RETURN_IF_ERROR(checkInputs(module, *entry, inputs, &bindings));

  // Arguments: results block (if any), one descriptor per input, weights.
  std::vector<strata_memref_desc_t> inputDescs(inputCount);
  std::vector<void*> args;
  size_t resultWords = 0;
  for (const ManifestTensor& output : manifestEntry.outputs) {
    resultWords += strata_memref_desc_size(output.rank) / 8;
  }
  std::vector<int64_t> results(resultWords, 0);
  if (outputCount > 0) args.push_back(results.data());
  for (size_t i = 0; i < inputCount; ++i) {
    describe(inputs[i]->data, inputs[i]->rank, inputs[i]->dims, &inputDescs[i]);
    args.push_back(&inputDescs[i]);
  }
  strata_memref_desc_t weights;
  int64_t weightsSize = static_cast<int64_t>(module->view.weights.size);
  describe(const_cast<uint8_t*>(module->view.weights.data), 1, &weightsSize,
           &weights);
  args.push_back(&weights);

  if (!session->threadCount && !session->defaultThreads)
    session->defaultThreads = defaultThreadCount();
  const uint32_t threads =
      session->threadCount ? session->threadCount : session->defaultThreads;
  if (!session->pool || session->pool->size() != threads) {
    session->pool.reset();
    session->pool = std::make_unique<ThreadPool>(threads);
  }
  CheckFailure failure;
  bool completed;
  session->buffers->beginRun();
  {
    ScopedCurrentPool currentPool(session->pool.get());
    ScopedBufferCache currentBuffers(session->buffers);
    ScopedCancelRequest cancel(&session->cancelRequested, &failRunCancelled);
    completed = callEntryChecked(entry->function, args.data(), args.size(),
                                 &failure);
  }
  if (!completed) {
    // A failed check or allocation, or a cancel: the results block holds
    // nothing valid; every buffer the run took is still live in the cache.
    session->buffers->reclaimLive();
    session->buffers->trimUnused();
    return checkFailureStatus(failure);
  }

  // Decode every result first, so that all buffers are freed on any path.
  std::vector<Result> decoded(outputCount);
  const int64_t* cursor = results.data();
  for (size_t o = 0; o < outputCount; ++o) {
    uint32_t rank = manifestEntry.outputs[o].rank;
    Result& r = decoded[o];
    std::memcpy(&r.allocated, cursor, 8);
    std::memcpy(&r.aligned, cursor + 1, 8);
    r.offset = cursor[2];
    for (uint32_t d = 0; d < rank; ++d) {
      r.sizes[d] = cursor[3 + d];
      r.strides[d] = cursor[3 + rank + d];
    }
    cursor += 3 + 2 * rank;
  }
  // Buffers the runtime or the caller owns are never freed or handed out
  // (ABI violations that would otherwise corrupt the heap); each distinct
  // generated buffer is freed once, or handed to its output tensor.
  std::set<void*> keep;
  for (size_t i = 0; i < inputCount; ++i) keep.insert(inputs[i]->data);
  keep.insert(const_cast<uint8_t*>(module->view.weights.data));
  keep.insert(nullptr);
  strata_status_t status = nullptr;
  std::vector<strata_tensor_t*> created(outputCount, nullptr);
  for (size_t o = 0; o < outputCount && !status; ++o) {
    const ManifestTensor& expected = manifestEntry.outputs[o];
    const Result& r = decoded[o];
    status = checkResult(manifestEntry, o, module->manifest, bindings, r);
    if (status) break;
    const auto dtype = static_cast<strata_dtype_t>(expected.dtype);
    // A buffer of its own starting at its allocation becomes the tensor's
    // data as is: no copy (a decode step's KV outputs are tens of MB).
    if (r.aligned == r.allocated && keep.insert(r.allocated).second) {
      status = wrapTensor(dtype, expected.rank, r.sizes, session->allocator,
                          r.allocated, releaseAdoptedBuffer, &created[o]);
      if (status) {
        releaseBuffer(r.allocated);
      } else {
        adoptBuffer(r.allocated);
      }
      continue;
    }
    status = createTensor(dtype, expected.rank, r.sizes, session->allocator,
                          /*zero=*/false, &created[o]);
    if (!status && created[o]->byteSize > 0) {
      std::memcpy(created[o]->data, r.aligned, created[o]->byteSize);
    }
  }
  for (const Result& r : decoded) {
    if (keep.insert(r.allocated).second) releaseBuffer(r.allocated);
  }
  // The cache keeps what the last few runs used, no more.
  session->buffers->trimUnused();
  if (status) {
    for (strata_tensor_t* tensor : created) strata_tensor_release(tensor);
    return status;
  }
  for (size_t o = 0; o < outputCount; ++o) outputs[o] = created[o];
  return nullptr;
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
    return run(session, entryName, ordered.data(), ordered.size(), outputs,
               outputCount);
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
                             ordered.size(), all.data(), all.size()));
  for (size_t o = 0; o < outputCount; ++o) {
    outputs[o] = std::exchange(all[selected[o]], nullptr);
  }
  for (strata_tensor_t* unused : all) strata_tensor_release(unused);
  return nullptr;
}

}  // namespace
}  // namespace strata::runtime

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
  void* record = nullptr;
  STRATA_RETURN_IF_ERROR(strata_allocator_malloc(
      allocator, sizeof(strata_session_t), alignof(strata_session_t), &record));
  auto* session = new (record) strata_session_t;
  strata_module_retain(module);
  session->module = module;
  session->allocator = allocator;
  session->threadCount = options->thread_count;
  session->buffers = new (std::nothrow) strata::runtime::BufferCache(allocator);
  if (!session->buffers) {
    strata_session_release(session);
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory creating a session");
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
  session->threadCount = count;
  return nullptr;
}

uint32_t strata_session_thread_count(const strata_session_t* session) {
  return session->threadCount;
}

size_t strata_session_trim(strata_session_t* session) {
  return session ? session->buffers->trimAll() : 0;
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
                                outputs, output_count);
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

void strata_session_cancel(strata_session_t* session) {
  if (session) session->cancelRequested.store(true, std::memory_order_release);
}

}  // extern "C"
