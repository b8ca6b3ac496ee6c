//===- run_results.cc - The results of an entry call, checked and delivered ===//
// SPDX-License-Identifier: Apache-2.0
// Every result is checked before any is delivered, and every caller tensor
// before any is written, so a failed run leaves the caller's memory as it
// was.

#include "run_results.h"

#include <cinttypes>
#include <cstring>
#include <set>
#include <string>

#include "buffer_cache.h"
#include "strata_artifact_format.h"
#include "tensor_internal.h"

namespace strata::runtime {
namespace {

#define INVALID(...) \
  STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

// One result descriptor as read back from the results block.
struct Result {
  void* allocated = nullptr;
  void* aligned = nullptr;
  int64_t offset = 0;
  int64_t sizes[STRATA_MAX_RANK] = {};
  int64_t strides[STRATA_MAX_RANK] = {};
};

std::vector<Result> decodeResults(const ManifestEntry& entry,
                                  const int64_t* cursor) {
  std::vector<Result> decoded(entry.outputs.size());
  for (size_t o = 0; o < decoded.size(); ++o) {
    uint32_t rank = entry.outputs[o].rank;
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
  return decoded;
}

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

// "[2, 4]"; a dim the inputs leave open prints as its symbolic name.
std::string shapeString(uint32_t rank, const int64_t* dims,
                        const char* const* names = nullptr) {
  std::string text = "[";
  for (uint32_t d = 0; d < rank; ++d) {
    if (d > 0) text += ", ";
    text += names && names[d] ? names[d] : std::to_string(dims[d]);
  }
  return text + "]";
}

// INVALID_ARGUMENT unless caller tensor |into| has the shape output |index|
// was produced with.
strata_status_t checkProducedShape(const ManifestTensor& expected,
                                   const Result& result,
                                   const strata_tensor_t* into) {
  if (std::memcmp(into->dims, result.sizes,
                  expected.rank * sizeof(int64_t)) == 0) {
    return nullptr;
  }
  return INVALID("output '%s' is a tensor of shape %s, the run produced %s",
                 expected.name.c_str(),
                 shapeString(into->rank, into->dims).c_str(),
                 shapeString(expected.rank, result.sizes).c_str());
}

void releaseAdopted(void* /*user*/, void* data) { releaseAdoptedBuffer(data); }

}  // namespace

strata_status_t checkOutputTensor(const Manifest& manifest,
                                  const ManifestEntry& entry, size_t index,
                                  const Bindings& bindings,
                                  const strata_tensor_t* into) {
  const ManifestTensor& expected = entry.outputs[index];
  const char* name = expected.name.c_str();
  if (into->dtype != expected.dtype) {
    return INVALID(
        "output '%s' is a tensor of dtype %s, expected %s", name,
        strata_dtype_name(into->dtype),
        strata_dtype_name(static_cast<strata_dtype_t>(expected.dtype)));
  }
  // The expected shape as far as the inputs determine it.
  int64_t dims[STRATA_MAX_RANK] = {};
  const char* open[STRATA_MAX_RANK] = {};
  bool fits = into->rank == expected.rank;
  for (uint32_t d = 0; d < expected.rank; ++d) {
    dims[d] = expected.dims[d];
    if (dims[d] < 0) {
      size_t k = static_cast<size_t>(-(dims[d] + 1));
      dims[d] = bindings.value[k];
      if (dims[d] < 0) open[d] = manifest.dims[k].name.c_str();
    }
    if (fits && !open[d] && into->dims[d] != dims[d]) fits = false;
  }
  if (fits) return nullptr;
  return INVALID("output '%s' is a tensor of shape %s, expected %s", name,
                 shapeString(into->rank, into->dims).c_str(),
                 shapeString(expected.rank, dims, open).c_str());
}

strata_status_t deliverResults(const CompletedCall& call,
                               strata_tensor_t* const* into,
                               strata_allocator_t allocator,
                               strata_tensor_t** outputs) {
  const ManifestEntry& entry = *call.entry;
  const size_t count = entry.outputs.size();
  const std::vector<Result> decoded = decodeResults(entry, call.results);
  // Each distinct generated buffer is freed once, or handed to its output
  // tensor; the buffers of the runtime and the caller never are (ABI
  // violations that would otherwise corrupt the heap).
  std::set<const void*> handled(call.foreignBuffers.begin(),
                                call.foreignBuffers.end());
  handled.insert(nullptr);
  auto target = [&](size_t o) { return into ? into[o] : nullptr; };

  strata_status_t status = nullptr;
  for (size_t o = 0; o < count && !status; ++o) {
    status = checkResult(entry, o, *call.manifest, *call.bindings, decoded[o]);
    if (!status && target(o)) {
      status = checkProducedShape(entry.outputs[o], decoded[o], target(o));
    }
  }
  std::vector<strata_tensor_t*> created(count, nullptr);
  for (size_t o = 0; o < count && !status; ++o) {
    if (target(o)) continue;
    const ManifestTensor& expected = entry.outputs[o];
    const Result& r = decoded[o];
    const auto dtype = static_cast<strata_dtype_t>(expected.dtype);
    // A buffer of its own starting at its allocation becomes the tensor's
    // data as is: no copy (a decode step's KV outputs are tens of MB).
    if (r.aligned == r.allocated && handled.insert(r.allocated).second) {
      status = wrapTensor(dtype, expected.rank, r.sizes, allocator,
                          r.allocated, releaseAdopted, nullptr, &created[o]);
      if (status) {
        releaseBuffer(r.allocated);
      } else {
        adoptBuffer(r.allocated);
      }
      continue;
    }
    status = createTensor(dtype, expected.rank, r.sizes, allocator,
                          /*zero=*/false, &created[o]);
    if (!status && created[o]->byteSize > 0) {
      std::memcpy(created[o]->data, r.aligned, created[o]->byteSize);
    }
  }
  // Nothing fails from here on: the caller's tensors are written only now.
  // memmove: a caller tensor may also be an input a malformed result echoes.
  for (size_t o = 0; o < count && !status; ++o) {
    strata_tensor_t* destination = target(o);
    if (destination && destination->byteSize > 0) {
      std::memmove(destination->data, decoded[o].aligned,
                   destination->byteSize);
    }
  }
  for (const Result& r : decoded) {
    if (handled.insert(r.allocated).second) releaseBuffer(r.allocated);
  }
  if (status) {
    for (strata_tensor_t* tensor : created) strata_tensor_release(tensor);
    return status;
  }
  for (size_t o = 0; o < count; ++o) {
    if (!target(o)) outputs[o] = created[o];
  }
  return nullptr;
}

}  // namespace strata::runtime
