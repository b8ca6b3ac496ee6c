//===- ManifestCodec.h - Manifest bytes <-> the Manifest model --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// One description of the manifest's byte layout drives both directions, so
// the writer and the loader cannot disagree on it.
//===----------------------------------------------------------------------===//

#ifndef STRATA_CODEGEN_FORMAT_MANIFESTCODEC_H_
#define STRATA_CODEGEN_FORMAT_MANIFESTCODEC_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codegen/format/Manifest.h"

namespace strata::format {

/// The manifest section bytes of |manifest|, which must satisfy the limits
/// the decoder enforces (validateManifest does).
std::vector<uint8_t> encodeManifest(const Manifest &manifest);

/// Decodes |size| bytes at |data| into |*out|: every count and length is
/// checked against the remaining bytes before anything is allocated, ranks
/// against STRATA_MAX_RANK, and the bytes must be consumed exactly. Checks
/// the layout only; validateManifest checks the meaning. Returns false and
/// sets |*error| on the first defect.
bool decodeManifest(const uint8_t *data, size_t size, Manifest *out,
                    FormatError *error);

} // namespace strata::format

#endif // STRATA_CODEGEN_FORMAT_MANIFESTCODEC_H_
