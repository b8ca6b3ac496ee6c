//===- module.cc - Loading and inspecting .strata artifacts
//----------------===//
// SPDX-License-Identifier: Apache-2.0
// Order of checks on load: header, section table, manifest and code checksums
// (artifact.cc), manifest decoding, CPU features, then the native code. The
// code is loaded last because loading runs its initializers.

#include "strata/runtime/module.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "checksum.h"
#include "cpu_target.h"
#include "imports.h"
#include "module_internal.h"
#include "strata/runtime/cpu.h"
#include "strata_artifact_format.h"

namespace strata::runtime {
namespace {

std::string errnoText(int error) {
  char buffer[256];
  return strerror_r(error, buffer, sizeof(buffer));
}

void fillSignature(const Manifest& manifest, const ManifestTensor& tensor,
                   std::array<strata_dim_t, STRATA_MAX_RANK>* dims,
                   strata_tensor_signature_t* out) {
  for (uint32_t d = 0; d < tensor.rank; ++d) {
    int64_t dim = tensor.dims[d];
    if (dim >= 0) {
      (*dims)[d] = {dim, nullptr, dim};
    } else {
      const ManifestDim& symbolic = manifest.dims[-(dim + 1)];
      (*dims)[d] = {-1, symbolic.name.c_str(), symbolic.max};
    }
  }
  out->name = tensor.name.c_str();
  out->dtype = static_cast<strata_dtype_t>(tensor.dtype);
  out->rank = tensor.rank;
  out->dims = dims->data();
}

// Builds the public signatures; every pointer refers into |module|'s
// manifest, which no longer changes.
void buildSignatures(strata_module_t* module) {
  const Manifest& manifest = module->manifest;
  module->entries.resize(manifest.entries.size());
  for (size_t e = 0; e < manifest.entries.size(); ++e) {
    const ManifestEntry& entry = manifest.entries[e];
    EntryRecord& record = module->entries[e];
    record.index = e;
    record.inputDims.resize(entry.inputs.size());
    record.inputs.resize(entry.inputs.size());
    for (size_t i = 0; i < entry.inputs.size(); ++i) {
      fillSignature(manifest, entry.inputs[i], &record.inputDims[i],
                    &record.inputs[i]);
    }
    record.outputDims.resize(entry.outputs.size());
    record.outputs.resize(entry.outputs.size());
    for (size_t i = 0; i < entry.outputs.size(); ++i) {
      fillSignature(manifest, entry.outputs[i], &record.outputDims[i],
                    &record.outputs[i]);
    }
    record.signature = {entry.name.c_str(),
                        entry.symbol.c_str(),
                        record.inputs.size(),
                        record.inputs.data(),
                        record.outputs.size(),
                        record.outputs.data(),
                        static_cast<strata_entry_kind_t>(entry.kind)};
  }
  for (const ManifestDim& dim : manifest.dims) {
    module->dims.push_back({dim.name.c_str(), dim.max});
  }
  module->states.resize(manifest.states.size());
  for (size_t i = 0; i < manifest.states.size(); ++i) {
    const ManifestState& state = manifest.states[i];
    StateRecord& record = module->states[i];
    strata_tensor_signature_t tensor;
    fillSignature(manifest, state.tensor, &record.dims, &tensor);
    record.signature = {tensor.name, tensor.dtype,
                        static_cast<strata_state_scope_t>(state.scope),
                        tensor.rank, tensor.dims};
  }
}

void destroyModule(strata_module_t* module) {
  strata_allocator_t allocator = module->allocator;
  void* mapping = module->mapping;
  size_t mappingSize = module->mappingSize;
  // Unloads the code before the bytes it came from are unmapped.
  module->~strata_module_t();
  strata_allocator_free(allocator, module);
  if (mapping) munmap(mapping, mappingSize);
}

// Validates and loads |size| bytes at |data|. On success the module owns
// |mapping| (may be null); on failure the caller keeps it.
strata_status_t loadModule(const uint8_t* data, size_t size, void* mapping,
                           strata_allocator_t allocator,
                           strata_module_t** out_module) {
  ArtifactView view;
  Manifest manifest;
  STRATA_RETURN_IF_ERROR(decodeArtifact(data, size, &view, &manifest));
  const format::CpuTarget* cpuTarget = cpuTargetOf(manifest, view);
  if (!cpuTarget) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS,
                              "the code section has no target descriptor");
  }
  STRATA_RETURN_IF_ERROR(checkCpuTarget(*cpuTarget));

  void* record = nullptr;
  STRATA_RETURN_IF_ERROR(strata_allocator_malloc(
      allocator, sizeof(strata_module_t), alignof(strata_module_t), &record));
  auto* module = new (record) strata_module_t;
  module->allocator = allocator;
  module->view = view;
  module->manifest = std::move(manifest);
  module->cpuTarget = cpuTargetOf(module->manifest, view);
  buildSignatures(module);
  strata_status_t status =
      module->code.load(view.cpuCode.data, view.cpuCode.size);
  if (!status) status = bindImports(module->code, &module->imports);
  for (size_t e = 0; !status && e < module->entries.size(); ++e) {
    EntryRecord& entry = module->entries[e];
    status = module->code.resolve(entry.signature.symbol, &entry.function);
    if (status) {
      std::string context = "entry '" + std::string(entry.signature.name) + "'";
      status = strata_status_annotate(status, context.c_str());
    }
  }
  if (status) {
    destroyModule(module);
    return status;
  }
  module->mapping = mapping;
  module->mappingSize = mapping ? size : 0;
  *out_module = module;
  return nullptr;
}

// Keeps exceptions (std::bad_alloc from the containers) from crossing the C
// API.
template <typename Fn>
strata_status_t guarded(Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory in the runtime");
  } catch (...) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INTERNAL,
                              "unexpected exception in the runtime");
  }
}

}  // namespace
}  // namespace strata::runtime

using namespace strata::runtime;

extern "C" {

strata_status_t strata_module_load(strata_const_byte_span_t data,
                                   strata_allocator_t allocator,
                                   strata_module_t** out_module) {
  if (!out_module || (!data.data && data.size > 0)) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "data and out_module must be non-null");
  }
  if (reinterpret_cast<uintptr_t>(data.data) % 64 != 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "artifact data must be 64-byte aligned");
  }
  return guarded([&] {
    return loadModule(data.data, data.size, nullptr, allocator, out_module);
  });
}

strata_status_t strata_module_load_file(const char* path,
                                        strata_allocator_t allocator,
                                        strata_module_t** out_module) {
  if (!path || !out_module) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "path and out_module must be non-null");
  }
  // O_NONBLOCK: opening a FIFO (or a device) must not wait for a writer;
  // such files are refused below. It changes nothing for regular files.
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int error = errno;
    return STRATA_MAKE_STATUS(
        error == ENOENT || error == ENOTDIR ? STRATA_STATUS_NOT_FOUND
                                            : STRATA_STATUS_UNAVAILABLE,
        "cannot open '%s': %s", path, errnoText(error).c_str());
  }
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "'%s' is not a regular file", path);
  }
  size_t size = static_cast<size_t>(info.st_size);
  if (size < STRATA_ARTIFACT_HEADER_SIZE) {
    close(fd);
    return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS,
                              "%s: artifact is %zu bytes, smaller than the "
                              "%u-byte header (truncated?)",
                              path, size, STRATA_ARTIFACT_HEADER_SIZE);
  }
  // MAP_POPULATE: the weights are resident from the load on, so the first
  // steps of a generation do not page them in (a long generation touched
  // new rows of the position and token tables for thousands of steps) and
  // the resident set does not grow with the generated length.
  void* mapping =
      mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  int error = errno;
  close(fd);
  if (mapping == MAP_FAILED) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE, "cannot map '%s': %s",
                              path, errnoText(error).c_str());
  }
  strata_status_t status = guarded([&] {
    return loadModule(static_cast<const uint8_t*>(mapping), size, mapping,
                      allocator, out_module);
  });
  if (status) {
    munmap(mapping, size);
    return strata_status_annotate(status, path);
  }
  return nullptr;
}

void strata_module_retain(strata_module_t* module) {
  if (module) module->references.fetch_add(1, std::memory_order_relaxed);
}

void strata_module_release(strata_module_t* module) {
  if (module &&
      module->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    destroyModule(module);
  }
}

strata_status_t strata_module_verify_weights(const strata_module_t* module) {
  if (!module) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "module must be non-null");
  }
  const SectionView& weights = module->view.weights;
  if (checksum64(weights.data, weights.size) != weights.checksum) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS,
                              "weights checksum mismatch (section at offset "
                              "%llu, %llu bytes)",
                              static_cast<unsigned long long>(weights.offset),
                              static_cast<unsigned long long>(weights.size));
  }
  return nullptr;
}

size_t strata_module_entry_count(const strata_module_t* module) {
  return module->entries.size();
}

const strata_entry_signature_t* strata_module_entry(
    const strata_module_t* module, size_t index) {
  if (index >= module->entries.size()) return nullptr;
  return &module->entries[index].signature;
}

strata_status_t strata_module_find_entry(
    const strata_module_t* module, const char* name,
    const strata_entry_signature_t** out_entry) {
  if (!module || !name || !out_entry) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "module, name and out_entry must be non-null");
  }
  for (const EntryRecord& entry : module->entries) {
    if (std::strcmp(entry.signature.name, name) == 0) {
      *out_entry = &entry.signature;
      return nullptr;
    }
  }
  return guarded([&] {
    std::string known;
    for (const EntryRecord& entry : module->entries) {
      known += (known.empty() ? "'" : ", '") +
               std::string(entry.signature.name) + "'";
    }
    return STRATA_MAKE_STATUS(STRATA_STATUS_NOT_FOUND,
                              "no entry '%s' in the module (entries: %s)", name,
                              known.c_str());
  });
}

// The position of |name| among the inputs (or |outputs|) of entry
// |entryName|; NOT_FOUND listing them if none has that name.
static strata_status_t tensorIndex(const strata_module_t* module,
                                   const char* entryName, const char* name,
                                   bool outputs, size_t* outIndex) {
  if (!module || !entryName || !name || !outIndex) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "module, entry_name, name and out_index must be non-null");
  }
  const strata_entry_signature_t* entry = nullptr;
  STRATA_RETURN_IF_ERROR(strata_module_find_entry(module, entryName, &entry));
  const strata_tensor_signature_t* tensors =
      outputs ? entry->outputs : entry->inputs;
  const size_t count = outputs ? entry->output_count : entry->input_count;
  for (size_t i = 0; i < count; ++i) {
    if (std::strcmp(tensors[i].name, name) == 0) {
      *outIndex = i;
      return nullptr;
    }
  }
  const char* kind = outputs ? "output" : "input";
  return guarded([&] {
    std::string known;
    for (size_t i = 0; i < count; ++i) {
      known += (known.empty() ? "'" : ", '") + std::string(tensors[i].name) +
               "'";
    }
    return STRATA_MAKE_STATUS(STRATA_STATUS_NOT_FOUND,
                              "entry '%s' has no %s '%s' (%ss: %s)", entryName,
                              kind, name, kind,
                              known.empty() ? "none" : known.c_str());
  });
}

strata_status_t strata_module_input_index(const strata_module_t* module,
                                          const char* entry_name,
                                          const char* name,
                                          size_t* out_index) {
  return tensorIndex(module, entry_name, name, /*outputs=*/false, out_index);
}

strata_status_t strata_module_output_index(const strata_module_t* module,
                                           const char* entry_name,
                                           const char* name,
                                           size_t* out_index) {
  return tensorIndex(module, entry_name, name, /*outputs=*/true, out_index);
}

size_t strata_module_symbolic_dim_count(const strata_module_t* module) {
  return module->dims.size();
}

const strata_symbolic_dim_t* strata_module_symbolic_dim(
    const strata_module_t* module, size_t index) {
  if (index >= module->dims.size()) return nullptr;
  return &module->dims[index];
}

size_t strata_module_state_count(const strata_module_t* module) {
  return module->states.size();
}

const strata_state_signature_t* strata_module_state(
    const strata_module_t* module, size_t index) {
  if (index >= module->states.size()) return nullptr;
  return &module->states[index].signature;
}

size_t strata_module_cpu_feature_count(const strata_module_t* module) {
  return module->cpuTarget->features.size();
}

const char* strata_module_cpu_feature(const strata_module_t* module,
                                      size_t index) {
  const std::vector<std::string>& features = module->cpuTarget->features;
  if (index >= features.size()) return nullptr;
  return features[index].c_str();
}

uint64_t strata_module_cpu_features(const strata_module_t* module) {
  return legacyCpuFeatureBits(module->cpuTarget->features);
}

namespace {

// The import number (importName) of |module|'s kernel |index|, in the
// runtime's order of imports, or -1.
int64_t kernelImportAt(const strata_module_t* module, size_t index) {
  for (size_t i = 0; i < strata::runtime::importCount(); ++i) {
    if (!(module->imports >> i & 1u) || !strata::runtime::importKernelSet(i))
      continue;
    if (index-- == 0) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace

size_t strata_module_kernel_count(const strata_module_t* module) {
  size_t n = 0;
  while (module && kernelImportAt(module, n) >= 0) ++n;
  return n;
}

strata_status_t strata_module_kernel(const strata_module_t* module,
                                     size_t index, const char** import_name,
                                     const char** kernel_set) {
  if (!module || !import_name || !kernel_set) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "module, import_name and kernel_set must be "
                              "non-null");
  }
  const int64_t import = kernelImportAt(module, index);
  if (import < 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_OUT_OF_RANGE,
                              "kernel index %zu is out of range (%zu kernels)",
                              index, strata_module_kernel_count(module));
  }
  *import_name = strata::runtime::importName(static_cast<size_t>(import));
  *kernel_set = strata::runtime::importKernelSet(static_cast<size_t>(import));
  return nullptr;
}

uint64_t strata_module_weights_size(const strata_module_t* module) {
  return module->view.weights.size;
}

uint64_t strata_module_workspace_bytes(const strata_module_t* module) {
  return module->manifest.workspaceBytes;
}

void strata_module_parallel(const strata_module_t* module, uint32_t* out_rank,
                            uint32_t* out_ranks) {
  uint32_t t = 0, tensorRanks = 1, stage = 0, stages = 1;
  strata_module_parallel_layout(module, &t, &tensorRanks, &stage, &stages);
  // The loader capped the product at STRATA_ARTIFACT_MAX_PARALLEL_RANKS.
  if (out_rank) *out_rank = stage * tensorRanks + t;
  if (out_ranks) *out_ranks = stages * tensorRanks;
}

void strata_module_parallel_layout(const strata_module_t* module,
                                   uint32_t* out_tensor_rank,
                                   uint32_t* out_tensor_ranks,
                                   uint32_t* out_pipeline_stage,
                                   uint32_t* out_pipeline_stages) {
  const bool parallel = module && module->view.isParallel;
  const strata_parallel_section_t* s =
      parallel ? &module->view.parallel : nullptr;
  if (out_tensor_rank) *out_tensor_rank = s ? s->tensor_rank : 0;
  if (out_tensor_ranks) *out_tensor_ranks = s ? s->tensor_ranks : 1;
  if (out_pipeline_stage) *out_pipeline_stage = s ? s->pipeline_stage : 0;
  if (out_pipeline_stages) *out_pipeline_stages = s ? s->pipeline_stages : 1;
}

}  // extern "C"
