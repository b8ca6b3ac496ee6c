//===- ParallelSection.h - Rules of the PARALLEL section --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The one implementation of what a valid PARALLEL section (one rank of a
// tensor-parallel group) holds: the writer checks it before it writes, the
// loader after it located the section.
//===----------------------------------------------------------------------===//

#ifndef STRATA_CODEGEN_FORMAT_PARALLELSECTION_H_
#define STRATA_CODEGEN_FORMAT_PARALLELSECTION_H_

#include <cstddef>
#include <cstdint>

#include "codegen/format/Manifest.h"
#include "strata_artifact_format.h"

namespace strata::format {

/// Checks |section| of an artifact of format |version|: at least 2 tensor
/// ranks and a rank below them, one pipeline stage (stage 0 of 1), reserved
/// words zero (unless the minor is newer). Pipeline stages a newer minor
/// may define are Incompatible there and Corrupt in an artifact of this
/// reader's minor or older. Returns false and sets |*error| on the first
/// violation.
bool validateParallelSection(const strata_parallel_section_t &section,
                             FormatVersion version, FormatError *error);

/// Reads the |size| section bytes at |data| into |*out| (exactly
/// sizeof(strata_parallel_section_t) bytes), then validates them.
bool decodeParallelSection(const uint8_t *data, size_t size,
                           FormatVersion version,
                           strata_parallel_section_t *out, FormatError *error);

} // namespace strata::format

#endif // STRATA_CODEGEN_FORMAT_PARALLELSECTION_H_
