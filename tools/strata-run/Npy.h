//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// A small, defensive .npy codec for strata-run: format versions 1-3,
// little-endian C-order arrays of the dtypes the runtime knows. Malformed
// files yield an error message, never a crash.
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_RUN_NPY_H_
#define STRATA_TOOLS_STRATA_RUN_NPY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace strata::tools {

/// A decoded array.
struct NpyArray {
  /// A strata_dtype_t value.
  uint32_t dtype = 0;
  std::vector<int64_t> shape;
  /// Row-major element bytes.
  std::vector<uint8_t> data;
};

/// Largest header and rank parseNpy accepts.
constexpr size_t kNpyMaxHeader = 1 << 20;
constexpr size_t kNpyMaxRank = 8;

/// Decodes the .npy bytes |bytes|. Returns false with |*error| set for a bad
/// magic, version, header, unsupported dtype (big-endian, objects, ...),
/// Fortran order with rank > 1, rank above 8, or a data size that does not
/// match the shape.
bool parseNpy(const uint8_t *bytes, size_t size, NpyArray *out,
              std::string *error);

/// Reads and decodes the file at |path|.
bool readNpy(const std::string &path, NpyArray *out, std::string *error);

/// Encodes an array as .npy version 1.0 bytes (header padded to 64 bytes).
/// The types NumPy lacks travel as raw codes: bf16 as '<u2', the fp8 types
/// as '|u1', the 4-bit types one element per byte as '|i1' (i4, the value
/// sign-extended) or '|u1' (u4, f4e2m1; the high four bits cleared).
std::vector<uint8_t> encodeNpy(uint32_t dtype, const int64_t *shape,
                               size_t rank, const void *data, size_t size);

/// Writes encodeNpy's bytes to |path|.
bool writeNpy(const std::string &path, uint32_t dtype, const int64_t *shape,
              size_t rank, const void *data, size_t size, std::string *error);

/// Makes a decoded input |array| carry the signature's |dtype| where NumPy
/// cannot spell it: a u16 array for bf16, a u8 or i8 array (raw codes) for
/// the fp8 types and the 4-bit ones. 4-bit values are checked: i4 takes
/// -8..7 from an i8 array or the codes 0..15 from a u8 one, u4 and f4e2m1
/// take 0..15; returns false with |*error| naming the first element outside.
/// Any other dtype is left as it is (the runtime reports a mismatch).
bool adaptToSignature(uint32_t dtype, NpyArray *array, std::string *error);

/// The NumPy descr of a strata dtype ("<f4"), or "" if it has none.
const char *npyDescr(uint32_t dtype);

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_RUN_NPY_H_
