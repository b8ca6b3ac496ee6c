//===- HeldOut.h - Held-out sequences to score ------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The data of an accuracy run: stretches of a text file whose bytes are the
// token ids (a byte-level model), or a file of token ids, one sequence a
// line.
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_BENCH_HELDOUT_H_
#define STRATA_TOOLS_STRATA_BENCH_HELDOUT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace strata::tools {

/// One teacher-forced sequence: token t predicts token t + 1.
using TokenSequence = std::vector<int64_t>;

/// Reads |count| stretches of |length| bytes of the file at |path|, spread
/// evenly over it (stretch i starts at i * ((size - length) / count)), each
/// byte one token id. Returns "" or the problem (unreadable, empty, shorter
/// than |length|).
std::string readTextStretches(const std::string &path, int64_t count,
                              int64_t length, std::vector<TokenSequence> *out);

/// Reads the file at |path| as token ids: one sequence per non-blank line,
/// ids as whitespace-separated decimal integers >= 0. A line longer than
/// |maxLength| tokens (0: no limit) keeps its first |maxLength|. Returns ""
/// or the problem, naming the line (a word that is not an id, a sequence
/// of fewer than 2 tokens, no sequence at all).
std::string readTokenLines(const std::string &path, int64_t maxLength,
                           std::vector<TokenSequence> *out);

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_BENCH_HELDOUT_H_
