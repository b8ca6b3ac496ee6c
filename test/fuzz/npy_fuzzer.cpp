//===- npy_fuzzer.cpp - libFuzzer target for the .npy reader --------------===//
// SPDX-License-Identifier: Apache-2.0
// Feeds arbitrary bytes to strata-run's .npy reader (tools/strata-run/Npy.h)
// as if they were an input file. Besides crashes, sanitizer reports and
// leaks, these abort (a finding): a refusal without a message; an accepted
// array whose data size is not its shape's; an accepted array that does
// not survive encodeNpy + parseNpy unchanged; adaptToSignature changing an
// array into anything but the dtype asked for, or refusing silently. Run
// through scripts/fuzz-loaders.sh (docs/testing.md).

#include "Npy.h"
#include "strata_kernel_abi.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using strata::tools::NpyArray;

[[noreturn]] void finding(const char *what, const std::string &detail) {
  std::fprintf(stderr, "strata-npy-fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

std::string describe(const NpyArray &array) {
  std::string text = "dtype " + std::to_string(array.dtype) + " shape (";
  for (int64_t dim : array.shape)
    text += std::to_string(dim) + ",";
  return text + ") " + std::to_string(array.data.size()) + " bytes";
}

void checkShape(const NpyArray &array) {
  if (array.shape.size() > strata::tools::kNpyMaxRank)
    finding("rank above the limit", describe(array));
  uint64_t bytes = strata_dtype_size(array.dtype);
  if (bytes == 0)
    finding("an unknown dtype", describe(array));
  for (int64_t dim : array.shape) {
    if (dim < 0)
      finding("a negative dim", describe(array));
    bytes *= static_cast<uint64_t>(dim); // no overflow: the data exists
  }
  if (bytes != array.data.size())
    finding("data size differs from the shape's", describe(array));
}

void checkRoundTrip(const NpyArray &array) {
  std::vector<uint8_t> encoded = strata::tools::encodeNpy(
      array.dtype, array.shape.data(), array.shape.size(), array.data.data(),
      array.data.size());
  NpyArray again;
  std::string error;
  if (!strata::tools::parseNpy(encoded.data(), encoded.size(), &again, &error))
    finding("an encoded array does not parse", describe(array) + ": " + error);
  if (again.dtype != array.dtype || again.shape != array.shape ||
      again.data != array.data)
    finding("an array changed through encode + parse",
            describe(array) + " became " + describe(again));
}

// Every dtype a signature can ask for: the valid codes and a few beyond.
void checkAdapt(const NpyArray &array) {
  for (uint32_t dtype = 0; dtype < 32; ++dtype) {
    NpyArray copy = array;
    std::string error;
    if (!strata::tools::adaptToSignature(dtype, &copy, &error)) {
      if (error.empty())
        finding("adaptToSignature refused without a message", describe(array));
      continue;
    }
    if (copy.dtype != dtype && copy.dtype != array.dtype)
      finding("adaptToSignature produced a third dtype",
              describe(array) + " for dtype " + std::to_string(dtype));
    if (copy.shape != array.shape || copy.data != array.data)
      finding("adaptToSignature changed the contents", describe(array));
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  NpyArray array;
  std::string error;
  if (!strata::tools::parseNpy(data, size, &array, &error)) {
    if (error.empty())
      finding("parseNpy refused without a message", std::to_string(size));
    return 0;
  }
  checkShape(array);
  checkRoundTrip(array);
  checkAdapt(array);
  return 0;
}
