//===- contract.h - What the generator needs of a prefill/decode module ---===//
// SPDX-License-Identifier: Apache-2.0
// The entry contract of docs/design/prefill-decode.md#entry-contract,
// checked once when a generator is created.

#ifndef STRATA_RUNTIME_SRC_GENERATE_CONTRACT_H_
#define STRATA_RUNTIME_SRC_GENERATE_CONTRACT_H_

#include <cstdint>

#include "strata/runtime/module.h"
#include "strata/runtime/status.h"

namespace strata::runtime {

/// The compiled sizes a generator works with.
struct GenerationContract {
  /// Sequences in flight at most (the `slots` dim).
  int64_t slots = 0;
  /// Tokens one sequence may hold, prompt and generated (`context`).
  int64_t context = 0;
  /// Most prompt tokens one prefill call takes (`prefill_length`).
  int64_t prefillLength = 0;
  /// Logits per token (the static dim 1 of both entries' `logits`).
  int64_t vocab = 0;
  /// Most tokens per sequence of one `verify` call (`verify_length`); 0
  /// until checkVerifyEntry found the entry.
  int64_t verifyLength = 0;
  /// Every per-sequence state keeps position p at its own row (it has the
  /// `context` dim; a ring cache of a windowed attention does not), so a
  /// free slot still holds the entries its last sequence wrote and a new
  /// sequence with the same first tokens may start after them.
  bool positionsInPlace = false;
  /// A paged KV cache (prefill takes `block_table [1, N]`, decode and
  /// verify `block_tables [batch, N]` instead of slots): positions per
  /// block, N, and the blocks in each cache's pool (every paged state's
  /// dim 0). All 0 for contiguous caches.
  int64_t blockSize = 0;
  int64_t blocksPerSequence = 0;
  int64_t blockCount = 0;

  bool paged() const { return blockSize > 0; }
};

/// Checks |module| against the entry contract and fills |*out|.
/// FAILED_PRECONDITION naming the first thing missing or different.
strata_status_t checkGenerationContract(const strata_module_t* module,
                                        GenerationContract* out);

/// Checks the `verify` entry speculative decoding runs (inputs `input_ids
/// [batch, verify_length]`, `slots [batch]`, `positions [batch]`, output
/// `logits [batch, verify_length, V]`, V that of |*contract|) and sets
/// contract->verifyLength. FAILED_PRECONDITION as checkGenerationContract.
strata_status_t checkVerifyEntry(const strata_module_t* module,
                                 GenerationContract* contract);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_GENERATE_CONTRACT_H_
