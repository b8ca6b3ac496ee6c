//===- ManifestCodec.cpp - Manifest bytes <-> the Manifest model ----------===//
// SPDX-License-Identifier: Apache-2.0
// The layout is written once, as transfer functions over a stream: the
// Encoder appends each field, the Decoder reads and bounds-checks it.
//===----------------------------------------------------------------------===//

#include "codegen/format/ManifestCodec.h"

#include <cstring>
#include <string>

#include "codegen/format/ManifestRules.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the manifest is little-endian; so is this codec");

namespace strata::format {
namespace {

// The fewest bytes a record can take, which bounds a count before anything
// is allocated for it: a string is at least 5 bytes (length and one byte).
constexpr size_t kMinTensorBytes = 5 + 4 + 4;
constexpr size_t kMinEntryBytes = 5 + 5 + 4 + 4 + 4;
constexpr size_t kMinDimBytes = 5 + 8;
constexpr size_t kMinStateBytes = kMinTensorBytes + 4;
constexpr size_t kMinTargetBytes = 4 + 4 + 4;
constexpr size_t kMinFeatureBytes = 5;

// Appends fields; never fails.
class Encoder {
public:
  bool u32(const char *, uint32_t &value) { return put(&value, 4); }
  bool u64(const char *, uint64_t &value) { return put(&value, 8); }
  bool i64(const char *, int64_t &value) { return put(&value, 8); }
  bool str(const char *, std::string &value) {
    uint32_t length = static_cast<uint32_t>(value.size());
    return put(&length, 4) && put(value.data(), value.size());
  }
  bool fail(std::string) { return false; }
  size_t offset() const { return bytes.size(); }
  template <typename T, typename Fn>
  bool list(const char *, size_t, std::vector<T> &items, Fn &&each) {
    uint32_t count = static_cast<uint32_t>(items.size());
    put(&count, 4);
    for (T &item : items)
      if (!each(*this, item))
        return false;
    return true;
  }
  // A u32 byte count, then what |body| writes.
  template <typename Fn> bool sized(const char *, Fn &&body) {
    Encoder inner;
    if (!body(inner))
      return false;
    uint32_t size = static_cast<uint32_t>(inner.bytes.size());
    return put(&size, 4) && put(inner.bytes.data(), inner.bytes.size());
  }
  bool rest(std::vector<uint8_t> &raw) { return put(raw.data(), raw.size()); }

  std::vector<uint8_t> bytes;

private:
  bool put(const void *data, size_t size) {
    const auto *begin = static_cast<const uint8_t *>(data);
    bytes.insert(bytes.end(), begin, begin + size);
    return true;
  }
};

// Reads fields from the window [offset, end) of the manifest bytes; every
// read is bounds-checked and the first defect is kept in |error|.
class Decoder {
public:
  Decoder(const uint8_t *data, size_t offset, size_t end, FormatError *error)
      : data(data), position(offset), end(end), error(error) {}

  bool u32(const char *what, uint32_t &value) { return get(what, &value, 4); }
  bool u64(const char *what, uint64_t &value) { return get(what, &value, 8); }
  bool i64(const char *what, int64_t &value) { return get(what, &value, 8); }
  // Length and bytes only: the string rules are validateManifest's.
  bool str(const char *what, std::string &value) {
    uint32_t length = 0;
    if (!u32(what, length))
      return false;
    if (length > remaining())
      return truncated(what);
    value.assign(reinterpret_cast<const char *>(data + position), length);
    position += length;
    return true;
  }
  bool fail(std::string message) {
    error->kind = FormatErrorKind::Corrupt;
    error->message = std::move(message);
    return false;
  }
  size_t offset() const { return position; }
  template <typename T, typename Fn>
  bool list(const char *what, size_t minBytes, std::vector<T> &items,
            Fn &&each) {
    uint32_t count = 0;
    std::string countName = std::string(what) + " count";
    if (!u32(countName.c_str(), count))
      return false;
    if (count > remaining() / minBytes)
      return fail("manifest " + countName + " " + std::to_string(count) +
                  " at byte " + std::to_string(position - 4) +
                  " exceeds what the remaining " +
                  std::to_string(remaining()) + " bytes can hold");
    items.resize(count);
    for (T &item : items)
      if (!each(*this, item))
        return false;
    return true;
  }
  template <typename Fn> bool sized(const char *what, Fn &&body) {
    uint32_t size = 0;
    if (!u32(what, size))
      return false;
    if (size > remaining())
      return truncated(what);
    Decoder inner(data, position, position + size, error);
    if (!body(inner))
      return false;
    if (inner.remaining() != 0)
      return fail("manifest " + std::string(what) + " ending at byte " +
                  std::to_string(position + size) + " has " +
                  std::to_string(inner.remaining()) + " unread bytes");
    position += size;
    return true;
  }
  bool rest(std::vector<uint8_t> &raw) {
    raw.assign(data + position, data + end);
    position = end;
    return true;
  }
  size_t remaining() const { return end - position; }

private:
  bool get(const char *what, void *out, size_t size) {
    if (size > remaining())
      return truncated(what);
    std::memcpy(out, data + position, size);
    position += size;
    return true;
  }
  bool truncated(const char *what) {
    return fail("manifest truncated at byte " + std::to_string(position) +
                " of " + std::to_string(end) + " while reading " + what);
  }

  const uint8_t *data;
  size_t position;
  size_t end;
  FormatError *error;
};

//===----------------------------------------------------------------------===//
// The layout (docs/artifact-format.md#manifest)
//===----------------------------------------------------------------------===//

template <typename Stream>
bool transferTensor(Stream &s, ManifestTensor &t) {
  if (!s.str("tensor name", t.name) || !s.u32("tensor dtype", t.dtype) ||
      !s.u32("tensor rank", t.rank))
    return false;
  FormatError rankError;
  if (!checkRank(t.rank, "manifest tensor '" + t.name + "'", &rankError))
    return s.fail(rankError.message);
  for (uint32_t d = 0; d < t.rank; ++d)
    if (!s.i64("tensor dim", t.dims[d]))
      return false;
  return true;
}

template <typename Stream> bool transferEntry(Stream &s, ManifestEntry &e) {
  auto tensor = [](Stream &io, ManifestTensor &t) {
    return transferTensor(io, t);
  };
  return s.str("entry name", e.name) && s.str("entry symbol", e.symbol) &&
         s.u32("entry kind", e.kind) &&
         s.list("input", kMinTensorBytes, e.inputs, tensor) &&
         s.list("output", kMinTensorBytes, e.outputs, tensor);
}

template <typename Stream> bool transferCpuTarget(Stream &s, CpuTarget &t) {
  return s.str("cpu architecture", t.arch) &&
         s.list("cpu feature", kMinFeatureBytes, t.features,
                [](Stream &io, std::string &feature) {
                  return io.str("cpu feature", feature);
                });
}

template <typename Stream> bool transferTarget(Stream &s, ManifestTarget &t) {
  return s.u32("target section", t.section) &&
         s.u32("target kind", t.kind) &&
         s.sized("target descriptor", [&](Stream &body) {
           // Other kinds are kept as bytes: a reader that does not run
           // their code skips them.
           return t.kind == STRATA_TARGET_CPU ? transferCpuTarget(body, t.cpu)
                                              : body.rest(t.payload);
         });
}

template <typename Stream> bool transferManifest(Stream &s, Manifest &m) {
  return s.list("entry", kMinEntryBytes, m.entries,
                [](Stream &io, ManifestEntry &e) {
                  return transferEntry(io, e);
                }) &&
         s.list("dim", kMinDimBytes, m.dims,
                [](Stream &io, ManifestDim &d) {
                  return io.str("dim name", d.name) &&
                         io.i64("dim max", d.max);
                }) &&
         s.list("state", kMinStateBytes, m.states,
                [](Stream &io, ManifestState &state) {
                  return transferTensor(io, state.tensor) &&
                         io.u32("state scope", state.scope);
                }) &&
         s.list("target", kMinTargetBytes, m.targets,
                [](Stream &io, ManifestTarget &t) {
                  return transferTarget(io, t);
                }) &&
         s.u64("workspace bytes", m.workspaceBytes);
}

} // namespace

std::vector<uint8_t> encodeManifest(const Manifest &manifest) {
  Encoder encoder;
  // The encoder only reads the fields the transfer functions hand it.
  transferManifest(encoder, const_cast<Manifest &>(manifest));
  return std::move(encoder.bytes);
}

bool decodeManifest(const uint8_t *data, size_t size, Manifest *out,
                    FormatError *error) {
  Decoder decoder(data, 0, size, error);
  Manifest manifest;
  if (!transferManifest(decoder, manifest))
    return false;
  if (decoder.remaining() != 0)
    return decoder.fail("manifest has " +
                        std::to_string(decoder.remaining()) +
                        " trailing bytes after byte " +
                        std::to_string(decoder.offset()));
  *out = std::move(manifest);
  return true;
}

} // namespace strata::format
