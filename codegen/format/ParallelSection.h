//===- ParallelSection.h - Rules of the PARALLEL section --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The one implementation of what a valid PARALLEL section (one rank of a
// model split into tensor ranks and pipeline stages) holds: the writer checks
// it before it writes, the loader after it located the section.
//===----------------------------------------------------------------------===//

#ifndef STRATA_CODEGEN_FORMAT_PARALLELSECTION_H_
#define STRATA_CODEGEN_FORMAT_PARALLELSECTION_H_

#include <cstddef>
#include <cstdint>

#include "codegen/format/Manifest.h"
#include "strata_artifact_format.h"

namespace strata::format {

/// Checks |section| of an artifact of format |version|: at least 1 tensor
/// rank and 1 pipeline stage with the file's rank and stage below them,
/// 2 to STRATA_ARTIFACT_MAX_PARALLEL_RANKS processes in all, one stage
/// only in an artifact older than minor 3 (which defined stages), reserved
/// words zero (unless the minor is newer). Every violation is Corrupt.
/// Returns false and sets |*error| on the first violation.
bool validateParallelSection(const strata_parallel_section_t &section,
                             FormatVersion version, FormatError *error);

/// Reads the |size| section bytes at |data| into |*out| (exactly
/// sizeof(strata_parallel_section_t) bytes), then validates them.
bool decodeParallelSection(const uint8_t *data, size_t size,
                           FormatVersion version,
                           strata_parallel_section_t *out, FormatError *error);

} // namespace strata::format

#endif // STRATA_CODEGEN_FORMAT_PARALLELSECTION_H_
