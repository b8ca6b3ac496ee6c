//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//
// SPDX-License-Identifier: Apache-2.0
// The header is a Python dict literal; this parses exactly the three keys
// NumPy writes ('descr', 'fortran_order', 'shape') and rejects the rest.
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "strata_kernel_abi.h"

using namespace strata::tools;

namespace {

struct DescrEntry {
  const char *descr;
  uint32_t dtype;
};

// Accepted spellings; the first one per dtype is the one written. Reading
// takes the first entry of a descr, so '<u2' reads as u16 and '|u1'/'|i1'
// as u8/i8 (adaptToSignature reinterprets them for bf16, fp8 and 4-bit
// inputs).
constexpr DescrEntry kDescrs[] = {
    {"<f4", STRATA_DTYPE_F32},
    {"<f2", STRATA_DTYPE_F16},
    {"<f8", STRATA_DTYPE_F64},
    {"|i1", STRATA_DTYPE_I8},
    {"<i2", STRATA_DTYPE_I16},
    {"<i4", STRATA_DTYPE_I32},
    {"<i8", STRATA_DTYPE_I64},
    {"|u1", STRATA_DTYPE_U8},
    {"<u2", STRATA_DTYPE_U16},
    {"<u4", STRATA_DTYPE_U32},
    {"<u8", STRATA_DTYPE_U64},
    {"|b1", STRATA_DTYPE_BOOL},
    {"<i1", STRATA_DTYPE_I8},
    {"<u1", STRATA_DTYPE_U8},
    {"<b1", STRATA_DTYPE_BOOL},
    // Written only: NumPy has no bfloat16, fp8 or 4-bit types, so they
    // travel as raw codes, one element per byte for fp8 and 4-bit.
    {"<u2", STRATA_DTYPE_BF16},
    {"|u1", STRATA_DTYPE_F8E4M3FN},
    {"|u1", STRATA_DTYPE_F8E4M3FNUZ},
    {"|u1", STRATA_DTYPE_F8E5M2},
    {"|u1", STRATA_DTYPE_F8E5M2FNUZ},
    {"|i1", STRATA_DTYPE_I4},
    {"|u1", STRATA_DTYPE_U4},
    {"|u1", STRATA_DTYPE_F4E2M1},
};

bool isFourBit(uint32_t dtype) {
  return dtype == STRATA_DTYPE_I4 || dtype == STRATA_DTYPE_U4 ||
         dtype == STRATA_DTYPE_F4E2M1;
}

bool isFp8(uint32_t dtype) {
  return dtype == STRATA_DTYPE_F8E4M3FN || dtype == STRATA_DTYPE_F8E4M3FNUZ ||
         dtype == STRATA_DTYPE_F8E5M2 || dtype == STRATA_DTYPE_F8E5M2FNUZ;
}

bool fail(std::string *error, const std::string &message) {
  if (error)
    *error = message;
  return false;
}

// A cursor over the header dict text.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n'))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    skipSpace();
    return pos < text.size() && text[pos] == c;
  }
  bool quoted(std::string *out) {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      return false;
    *out = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
  }
  bool word(std::string *out) {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() && std::isalpha(static_cast<uint8_t>(text[pos])))
      ++pos;
    *out = text.substr(start, pos - start);
    return !out->empty();
  }
  bool integer(int64_t *out) {
    skipSpace();
    size_t start = pos;
    int64_t value = 0;
    while (pos < text.size() && std::isdigit(static_cast<uint8_t>(text[pos]))) {
      if (value > (INT64_MAX - 9) / 10)
        return false;
      value = value * 10 + (text[pos++] - '0');
    }
    // Python writes longs as 3L in old files.
    if (pos < text.size() && text[pos] == 'L')
      ++pos;
    *out = value;
    return pos > start;
  }
  bool atEnd() {
    skipSpace();
    return pos == text.size();
  }

private:
  const std::string &text;
  size_t pos = 0;
};

bool parseHeader(const std::string &text, std::string *descr, bool *fortran,
                 std::vector<int64_t> *shape, std::string *error) {
  HeaderParser p(text);
  if (!p.consume('{'))
    return fail(error, "header is not a dict");
  bool haveDescr = false, haveFortran = false, haveShape = false;
  while (!p.peek('}')) {
    std::string key;
    if (!p.quoted(&key) || !p.consume(':'))
      return fail(error, "malformed header dict");
    if (key == "descr") {
      if (!p.quoted(descr))
        return fail(error, "'descr' is not a string (structured arrays are "
                           "not supported)");
      haveDescr = true;
    } else if (key == "fortran_order") {
      std::string value;
      if (!p.word(&value) || (value != "True" && value != "False"))
        return fail(error, "'fortran_order' is not True or False");
      *fortran = value == "True";
      haveFortran = true;
    } else if (key == "shape") {
      if (!p.consume('('))
        return fail(error, "'shape' is not a tuple");
      while (!p.consume(')')) {
        int64_t dim = 0;
        if (!p.integer(&dim))
          return fail(error, "'shape' holds a non-integer or huge dim");
        if (shape->size() >= kNpyMaxRank)
          return fail(error, "rank above " + std::to_string(kNpyMaxRank) +
                                 " is not supported");
        shape->push_back(dim);
        if (!p.consume(',') && !p.peek(')'))
          return fail(error, "malformed 'shape' tuple");
      }
      haveShape = true;
    } else {
      return fail(error, "unknown header key '" + key + "'");
    }
    if (!p.consume(',') && !p.peek('}'))
      return fail(error, "malformed header dict");
  }
  p.consume('}');
  if (!p.atEnd())
    return fail(error, "trailing text after the header dict");
  if (!haveDescr || !haveFortran || !haveShape)
    return fail(error, "header lacks 'descr', 'fortran_order' or 'shape'");
  return true;
}

} // namespace

const char *strata::tools::npyDescr(uint32_t dtype) {
  for (const DescrEntry &entry : kDescrs)
    if (entry.dtype == dtype)
      return entry.descr;
  return "";
}

bool strata::tools::parseNpy(const uint8_t *bytes, size_t size, NpyArray *out,
                             std::string *error) {
  if (size < 10 || std::memcmp(bytes, "\x93NUMPY", 6) != 0)
    return fail(error, "not a .npy file (bad magic)");
  uint8_t major = bytes[6];
  size_t headerLength = 0, dataOffset = 0;
  if (major == 1) {
    headerLength = bytes[8] | (size_t{bytes[9]} << 8);
    dataOffset = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return fail(error, "truncated .npy header");
    headerLength = bytes[8] | (size_t{bytes[9]} << 8) |
                   (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
    dataOffset = 12;
  } else {
    return fail(error, ".npy format version " + std::to_string(major) +
                           " is not supported");
  }
  if (headerLength > kNpyMaxHeader || headerLength > size - dataOffset)
    return fail(error, "truncated .npy header");
  std::string header(reinterpret_cast<const char *>(bytes) + dataOffset,
                     headerLength);
  dataOffset += headerLength;
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  if (!parseHeader(header, &descr, &fortran, &shape, error))
    return false;
  if (!descr.empty() && descr[0] == '=')
    descr[0] = '<';
  uint32_t dtype = 0;
  for (const DescrEntry &entry : kDescrs) {
    if (descr == entry.descr) {
      dtype = entry.dtype;
      break;
    }
  }
  if (dtype == 0)
    return fail(error, "unsupported dtype '" + descr +
                           "' (little-endian numbers and bool only)");
  if (fortran && shape.size() > 1)
    return fail(error, "Fortran-order arrays are not supported; save with "
                       "np.ascontiguousarray");
  uint64_t elements = 1;
  for (int64_t dim : shape)
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(dim), &elements))
      return fail(error, "shape is too large");
  uint64_t bytesNeeded = 0;
  if (__builtin_mul_overflow(elements, uint64_t{strata_dtype_size(dtype)},
                             &bytesNeeded))
    return fail(error, "shape is too large");
  if (bytesNeeded != size - dataOffset)
    return fail(error, "data is " + std::to_string(size - dataOffset) +
                           " bytes, the shape needs " +
                           std::to_string(bytesNeeded));
  out->dtype = dtype;
  out->shape = std::move(shape);
  out->data.assign(bytes + dataOffset, bytes + size);
  return true;
}

bool strata::tools::readNpy(const std::string &path, NpyArray *out,
                            std::string *error) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(error, "cannot open '" + path + "'");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  if (!parseNpy(bytes.data(), bytes.size(), out, error)) {
    if (error)
      *error = "'" + path + "': " + *error;
    return false;
  }
  return true;
}

std::vector<uint8_t> strata::tools::encodeNpy(uint32_t dtype,
                                              const int64_t *shape, size_t rank,
                                              const void *data, size_t size) {
  std::string header = "{'descr': '" + std::string(npyDescr(dtype)) +
                       "', 'fortran_order': False, 'shape': (";
  for (size_t d = 0; d < rank; ++d) {
    header += std::to_string(shape[d]);
    header += rank == 1 ? ",)" : (d + 1 < rank ? ", " : ")");
  }
  if (rank == 0)
    header += ")";
  header += ", }";
  // Magic + version + length (10 bytes) + header + '\n' is 64-aligned.
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.push_back(static_cast<uint8_t>(header.size() & 0xFF));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  const auto *bytes = static_cast<const uint8_t *>(data);
  if (size)
    out.insert(out.end(), bytes, bytes + size);
  // A 4-bit element's high bits are not part of it: write the value alone
  // (sign-extended for i4), so the array reads as the numbers it holds.
  if (isFourBit(dtype)) {
    for (size_t i = out.size() - size; i < out.size(); ++i) {
      uint8_t low = out[i] & 0xF;
      out[i] = dtype == STRATA_DTYPE_I4 && (low & 0x8) ? low | 0xF0 : low;
    }
  }
  return out;
}

bool strata::tools::adaptToSignature(uint32_t dtype, NpyArray *array,
                                     std::string *error) {
  if (array->dtype == dtype)
    return true;
  bool rawByte =
      array->dtype == STRATA_DTYPE_U8 || array->dtype == STRATA_DTYPE_I8;
  if (dtype == STRATA_DTYPE_BF16 && array->dtype == STRATA_DTYPE_U16) {
    array->dtype = dtype;
    return true;
  }
  if (isFp8(dtype) && rawByte) {
    array->dtype = dtype;
    return true;
  }
  if (!isFourBit(dtype) || !rawByte)
    return true; // a real mismatch: the runtime names both dtypes
  // 4-bit: one value per byte. i4 takes -8..7 from an int8 array or the
  // codes 0..15 from a uint8 one; u4 and f4e2m1 take 0..15.
  bool signedValues =
      dtype == STRATA_DTYPE_I4 && array->dtype == STRATA_DTYPE_I8;
  for (size_t i = 0; i < array->data.size(); ++i) {
    int value = array->dtype == STRATA_DTYPE_I8
                    ? static_cast<int8_t>(array->data[i])
                    : array->data[i];
    bool ok =
        signedValues ? value >= -8 && value <= 7 : value >= 0 && value <= 15;
    if (!ok)
      return fail(error, "element " + std::to_string(i) + " is " +
                             std::to_string(value) + ", not a 4-bit " +
                             (signedValues ? "value (-8..7)" : "code (0..15)"));
  }
  array->dtype = dtype;
  return true;
}

bool strata::tools::writeNpy(const std::string &path, uint32_t dtype,
                             const int64_t *shape, size_t rank,
                             const void *data, size_t size,
                             std::string *error) {
  std::vector<uint8_t> bytes = encodeNpy(dtype, shape, rank, data, size);
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return fail(error, "cannot open '" + path + "' for writing");
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  ok = std::fclose(file) == 0 && ok;
  if (!ok)
    return fail(error, "cannot write '" + path + "'");
  return true;
}
