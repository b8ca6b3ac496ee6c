//===- input_fuzzer.cpp - libFuzzer target for compiled-model inputs ------===//
// SPDX-License-Identifier: Apache-2.0
// Runs one entry point of a compiled artifact (STRATA_FUZZ_ARTIFACT) on
// inputs decoded from the fuzz bytes: symbolic dims within the compiled
// maxima, tensor contents from token ids to NaNs. Links only the runtime.
// Run through scripts/fuzz-inputs.sh (docs/testing.md).
//
// Input layout (missing bytes read as 0):
//   2 bytes per symbolic dim, in order of first use by the entry's inputs:
//     [how, value]; how % 4: 0 the literal ((how >> 2) << 8 | value) mod
//     (max + 1), 1 the maximum, 2 a copy of dim value % n, 3 the sum of dims
//     (value & 15) % n and (value >> 4) % n, clamped to the maximum (copies
//     and sums are resolved after the literals, in order, so relations such
//     as total = past + sequence are reachable)
//   1 fill mode per input (FillMode below)
//   the payload: element bytes for every input in order, read cyclically.
//
// Environment: STRATA_FUZZ_ARTIFACT (required), STRATA_FUZZ_ENTRY (default:
// the first entry), STRATA_FUZZ_DIM_CAP (caps every symbolic dim below its
// maximum), STRATA_FUZZ_DIM_MIN (smallest value of every symbolic dim, 0 by
// default; 1 explores past crashes on empty tensors), STRATA_FUZZ_VERBOSE=1
// (prints each decoded input: replay a crash file to see its dims, values
// and status).

#include "strata/runtime/api.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

/// Inputs above this many bytes in total are rejected (not run): an
/// artifact compiled with large maxima would otherwise spend seconds a run.
constexpr size_t kMaxInputBytes = size_t{64} << 20;

/// How the payload becomes the elements of one input (mode byte % 4).
/// Integers: kSmall one byte each (0..255), kMixed mostly such bytes with
/// edge values and raw 64-bit ones mixed in, kWide int16, kRaw the element's
/// full width of random bits; so token ids, positions and masks are often
/// valid and sometimes far out of range. Floats: kSmall -8..8 in steps of
/// 1/16, kMixed the same with NaN, Inf, extremes and denormals mixed in,
/// kWide int16 / 64, kRaw random bits (NaN payloads included).
enum FillMode { kSmall = 0, kMixed = 1, kWide = 2, kRaw = 3 };

struct SymbolicDim {
  std::string name;
  int64_t min; // 0 unless STRATA_FUZZ_DIM_MIN says otherwise
  int64_t max;
};

struct FuzzState {
  strata_module_t *module = nullptr;
  strata_session_t *session = nullptr;
  const strata_entry_signature_t *entry = nullptr;
  std::vector<SymbolicDim> dims; // in order of first use
  /// Per input and dim: the index into |dims|, or -1 for a static dim.
  std::vector<std::vector<int>> dimIndex;
  bool verbose = false;
};

FuzzState state;

void releaseState() {
  strata_session_release(state.session);
  strata_module_release(state.module);
  state = FuzzState();
}

/// A setup failure (bad artifact or entry name) ends the process; it is not
/// a finding.
[[noreturn]] void fatal(const char *what, strata_status_t status) {
  std::fprintf(stderr, "strata-input-fuzzer: %s: %s: %s\n", what,
               strata_status_code_string(strata_status_code(status)),
               strata_status_message(status));
  strata_status_free(status);
  std::exit(2);
}

/// Reads the payload cyclically; an empty payload reads zeros.
class ByteStream {
public:
  ByteStream(const uint8_t *data, size_t size) : data(data), size(size) {}
  uint8_t next() {
    if (size == 0)
      return 0;
    uint8_t byte = data[pos];
    pos = pos + 1 == size ? 0 : pos + 1;
    return byte;
  }
  uint64_t nextBytes(unsigned count) {
    uint64_t value = 0;
    for (unsigned i = 0; i < count; ++i)
      value |= uint64_t{next()} << (8 * i);
    return value;
  }

private:
  const uint8_t *data;
  size_t size;
  size_t pos = 0;
};

int findDim(const char *name) {
  for (size_t i = 0; i < state.dims.size(); ++i)
    if (state.dims[i].name == name)
      return static_cast<int>(i);
  return -1;
}

/// Decodes the dim header (2 bytes per symbolic dim) into values.
std::vector<int64_t> decodeDims(const uint8_t *header) {
  size_t n = state.dims.size();
  std::vector<int64_t> values(n, 0);
  for (size_t i = 0; i < n; ++i) {
    uint8_t how = header[2 * i], value = header[2 * i + 1];
    const SymbolicDim &dim = state.dims[i];
    if (how % 4 == 1)
      values[i] = dim.max;
    else
      values[i] = dim.min + static_cast<int64_t>((how >> 2) << 8 | value) %
                                (dim.max - dim.min + 1);
  }
  for (size_t i = 0; i < n; ++i) {
    uint8_t how = header[2 * i], value = header[2 * i + 1];
    const SymbolicDim &dim = state.dims[i];
    if (how % 4 == 2)
      values[i] = std::clamp(values[value % n], dim.min, dim.max);
    else if (how % 4 == 3)
      values[i] =
          std::clamp(values[(value & 15) % n] + values[(value >> 4) % n],
                     dim.min, dim.max);
  }
  return values;
}

/// One integer element (see FillMode) of |size| bytes.
int64_t nextInteger(FillMode mode, ByteStream &in, unsigned size) {
  using I64 = std::numeric_limits<int64_t>;
  using I32 = std::numeric_limits<int32_t>;
  static const int64_t kEdges[] = {
      -1,        -2,   I64::min(), I64::max(), I32::min(), I32::max(),
      1LL << 32, -129, 128,        256,        1024,       65535};
  switch (mode) {
  case kSmall:
    return in.next();
  case kMixed: {
    uint8_t sel = in.next();
    if (sel < 0xF0)
      return sel;
    if (sel < 0xF0 + sizeof(kEdges) / sizeof(kEdges[0]))
      return kEdges[sel - 0xF0];
    return static_cast<int64_t>(in.nextBytes(8));
  }
  case kWide:
    return static_cast<int16_t>(in.nextBytes(2));
  case kRaw:
    return static_cast<int64_t>(in.nextBytes(size));
  }
  return 0;
}

/// One float element (see FillMode).
struct FloatElement {
  bool raw;      // use |bits|, not |value|
  uint64_t bits; // little-endian element bytes
  double value;
};

FloatElement nextFloat(FillMode mode, ByteStream &in, unsigned size) {
  using D = std::numeric_limits<double>;
  using F = std::numeric_limits<float>;
  static const double kSpecials[] = {
      D::quiet_NaN(), -D::quiet_NaN(), D::infinity(),
      -D::infinity(), F::max(),        -F::max(),
      F::min(),       F::denorm_min(), -0.0,
      1e30,           -1e30,           1e-30,
      65504.0,        -65504.0,        88.75, // expf overflows above 88.72
      -103.0};
  switch (mode) {
  case kSmall:
    return {false, 0, static_cast<int8_t>(in.next()) / 16.0};
  case kMixed: {
    uint8_t sel = in.next();
    if (sel >= 0xF0)
      return {false, 0, kSpecials[sel - 0xF0]};
    return {false, 0, static_cast<int8_t>(sel) / 16.0};
  }
  case kWide:
    return {false, 0, static_cast<int16_t>(in.nextBytes(2)) / 64.0};
  case kRaw:
    return {true, in.nextBytes(size), 0.0};
  }
  return {false, 0, 0.0};
}

/// Fills |count| elements of |dtype| at |out| from |in|.
void fill(strata_dtype_t dtype, FillMode mode, ByteStream &in, size_t count,
          uint8_t *out) {
  unsigned size = strata_dtype_size(dtype);
  for (size_t i = 0; i < count; ++i, out += size) {
    switch (dtype) {
    case STRATA_DTYPE_F32:
    case STRATA_DTYPE_F64:
    case STRATA_DTYPE_BF16: {
      FloatElement element = nextFloat(mode, in, size);
      uint64_t bits = element.bits;
      if (!element.raw && dtype == STRATA_DTYPE_F64) {
        std::memcpy(&bits, &element.value, 8);
      } else if (!element.raw) {
        float value = static_cast<float>(element.value);
        uint32_t raw;
        std::memcpy(&raw, &value, 4);
        bits = dtype == STRATA_DTYPE_BF16 ? raw >> 16 : raw; // bf16 truncates
      }
      std::memcpy(out, &bits, size); // little-endian
      break;
    }
    case STRATA_DTYPE_BOOL:
      *out = in.next() & 1; // the dtype's contract: 0 or 1
      break;
    case STRATA_DTYPE_I8:
    case STRATA_DTYPE_I16:
    case STRATA_DTYPE_I32:
    case STRATA_DTYPE_I64:
    case STRATA_DTYPE_U8:
    case STRATA_DTYPE_U16:
    case STRATA_DTYPE_U32:
    case STRATA_DTYPE_U64: {
      uint64_t value = static_cast<uint64_t>(nextInteger(mode, in, size));
      std::memcpy(out, &value, size); // little-endian truncation
      break;
    }
    default: // f16, fp8, 4-bit types: raw codes
      for (unsigned b = 0; b < size; ++b)
        out[b] = in.next();
      break;
    }
  }
}

void describeInput(const strata_tensor_signature_t &sig, FillMode mode,
                   const strata_tensor_t *tensor) {
  uint32_t rank = strata_tensor_rank(tensor);
  const int64_t *shape = strata_tensor_dims(tensor);
  std::string text =
      std::string(sig.name) + ": " + strata_dtype_name(sig.dtype) + "[";
  for (uint32_t d = 0; d < rank; ++d)
    text += (d ? "x" : "") + std::to_string(shape[d]);
  text += "] mode " + std::to_string(mode) + ":";
  size_t count = strata_tensor_element_count(tensor);
  const void *data = strata_tensor_const_data(tensor);
  for (size_t i = 0; i < count && i < 12; ++i) {
    char buffer[32];
    if (sig.dtype == STRATA_DTYPE_F32)
      std::snprintf(buffer, sizeof(buffer), " %g",
                    static_cast<const float *>(data)[i]);
    else if (sig.dtype == STRATA_DTYPE_I64)
      std::snprintf(
          buffer, sizeof(buffer), " %lld",
          static_cast<long long>(static_cast<const int64_t *>(data)[i]));
    else if (sig.dtype == STRATA_DTYPE_I32)
      std::snprintf(buffer, sizeof(buffer), " %d",
                    static_cast<const int32_t *>(data)[i]);
    else
      std::snprintf(buffer, sizeof(buffer), " 0x%02x",
                    static_cast<const uint8_t *>(data)[i]);
    text += buffer;
  }
  if (count > 12)
    text += " ...";
  std::fprintf(stderr, "  %s\n", text.c_str());
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *path = std::getenv("STRATA_FUZZ_ARTIFACT");
  if (!path || !*path) {
    std::fprintf(stderr, "strata-input-fuzzer: set STRATA_FUZZ_ARTIFACT to a "
                         ".strata file (scripts/fuzz-inputs.sh does)\n");
    std::exit(2);
  }
  const char *verbose = std::getenv("STRATA_FUZZ_VERBOSE");
  state.verbose = verbose && *verbose && std::strcmp(verbose, "0") != 0;
  strata_allocator_t allocator = strata_allocator_system();
  strata_status_t status =
      strata_module_load_file(path, allocator, &state.module);
  if (status)
    fatal(path, status);
  const char *entryName = std::getenv("STRATA_FUZZ_ENTRY");
  if (entryName && *entryName) {
    status = strata_module_find_entry(state.module, entryName, &state.entry);
    if (status)
      fatal(entryName, status);
  } else {
    state.entry = strata_module_entry(state.module, 0);
  }
  strata_session_options_t options;
  strata_session_options_init(&options);
  options.thread_count = 1; // deterministic, and the machine is shared
  status =
      strata_session_create(state.module, &options, allocator, &state.session);
  if (status)
    fatal("session", status);
  std::atexit(releaseState);

  int64_t cap = 0, min = 0;
  if (const char *text = std::getenv("STRATA_FUZZ_DIM_CAP"))
    cap = std::atoll(text);
  if (const char *text = std::getenv("STRATA_FUZZ_DIM_MIN"))
    min = std::max<int64_t>(0, std::atoll(text));
  const strata_entry_signature_t *entry = state.entry;
  for (size_t i = 0; i < entry->input_count; ++i) {
    const strata_tensor_signature_t &sig = entry->inputs[i];
    std::vector<int> indices;
    for (uint32_t d = 0; d < sig.rank; ++d) {
      const strata_dim_t &dim = sig.dims[d];
      if (!dim.symbol) {
        indices.push_back(-1);
        continue;
      }
      int index = findDim(dim.symbol);
      if (index < 0) {
        int64_t max = cap > 0 && cap < dim.max ? cap : dim.max;
        state.dims.push_back({dim.symbol, std::min(min, max), max});
        index = static_cast<int>(state.dims.size()) - 1;
      }
      indices.push_back(index);
    }
    state.dimIndex.push_back(std::move(indices));
  }
  std::fprintf(stderr, "strata-input-fuzzer: entry '%s', %zu inputs, dims:",
               entry->name, entry->input_count);
  for (const SymbolicDim &dim : state.dims)
    std::fprintf(stderr, " %s in [%lld, %lld]", dim.name.c_str(),
                 static_cast<long long>(dim.min),
                 static_cast<long long>(dim.max));
  std::fprintf(stderr, "\n");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const strata_entry_signature_t *entry = state.entry;
  size_t headerSize = 2 * state.dims.size() + entry->input_count;
  std::vector<uint8_t> header(headerSize, 0);
  std::memcpy(header.data(), data, std::min(size, headerSize));
  ByteStream payload(size > headerSize ? data + headerSize : nullptr,
                     size > headerSize ? size - headerSize : 0);
  std::vector<int64_t> values = decodeDims(header.data());
  const uint8_t *modes = header.data() + 2 * state.dims.size();

  // Shapes first, so an oversized input is rejected before allocating.
  std::vector<std::vector<int64_t>> shapes(entry->input_count);
  size_t totalBytes = 0;
  for (size_t i = 0; i < entry->input_count; ++i) {
    const strata_tensor_signature_t &sig = entry->inputs[i];
    size_t bytes = strata_dtype_size(sig.dtype);
    for (uint32_t d = 0; d < sig.rank; ++d) {
      int index = state.dimIndex[i][d];
      shapes[i].push_back(index < 0 ? sig.dims[d].extent : values[index]);
      bytes *= static_cast<size_t>(shapes[i].back());
    }
    totalBytes += bytes;
  }
  if (totalBytes > kMaxInputBytes)
    return -1;

  std::vector<strata_tensor_t *> inputs(entry->input_count, nullptr);
  auto releaseInputs = [&] {
    for (strata_tensor_t *tensor : inputs)
      strata_tensor_release(tensor);
  };
  for (size_t i = 0; i < entry->input_count; ++i) {
    const strata_tensor_signature_t &sig = entry->inputs[i];
    strata_status_t status =
        strata_tensor_create(sig.dtype, sig.rank, shapes[i].data(),
                             strata_allocator_system(), &inputs[i]);
    if (status) {
      // Cannot fail below kMaxInputBytes: a failure is the runtime's bug.
      std::fprintf(stderr, "strata-input-fuzzer: strata_tensor_create: %s\n",
                   strata_status_message(status));
      std::abort();
    }
    fill(sig.dtype, static_cast<FillMode>(modes[i] % 4), payload,
         strata_tensor_element_count(inputs[i]),
         static_cast<uint8_t *>(strata_tensor_data(inputs[i])));
  }
  if (state.verbose) {
    std::fprintf(stderr, "strata-input-fuzzer: dims");
    for (size_t d = 0; d < values.size(); ++d)
      std::fprintf(stderr, " %s=%lld", state.dims[d].name.c_str(),
                   static_cast<long long>(values[d]));
    std::fprintf(stderr, "\n");
    for (size_t i = 0; i < entry->input_count; ++i)
      describeInput(entry->inputs[i], static_cast<FillMode>(modes[i] % 4),
                    inputs[i]);
  }

  std::vector<strata_tensor_t *> outputs(entry->output_count, nullptr);
  strata_status_t status = strata_session_run(
      state.session, entry->name,
      const_cast<const strata_tensor_t *const *>(inputs.data()), inputs.size(),
      outputs.data(), outputs.size());
  strata_status_code_t code = strata_status_code(status);
  if (state.verbose)
    std::fprintf(stderr, "strata-input-fuzzer: %s%s%s\n",
                 strata_status_code_string(code), status ? ": " : "",
                 strata_status_message(status));
  releaseInputs();
  if (code != STRATA_STATUS_OK && code != STRATA_STATUS_INVALID_ARGUMENT &&
      code != STRATA_STATUS_RESOURCE_EXHAUSTED) {
    // A well-formed input of the right shapes must either run or be refused
    // as the caller's error; anything else is a bug of the compiler or the
    // runtime.
    std::fprintf(stderr, "strata-input-fuzzer: unexpected status %s: %s\n",
                 strata_status_code_string(code),
                 strata_status_message(status));
    std::fflush(stderr);
    std::abort();
  }
  strata_status_free(status);

  // Read every output byte, so that ASan sees an output whose recorded size
  // exceeds its buffer.
  uint8_t sum = 0;
  for (strata_tensor_t *tensor : outputs) {
    if (!tensor)
      continue;
    const uint8_t *bytes =
        static_cast<const uint8_t *>(strata_tensor_const_data(tensor));
    for (size_t b = 0, n = strata_tensor_byte_size(tensor); b < n; ++b)
      sum ^= bytes[b];
    strata_tensor_release(tensor);
  }
  volatile uint8_t sink = sum;
  (void)sink;
  return 0;
}
