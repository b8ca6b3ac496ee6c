//===- Disaggregate.h - strata-run generate --disaggregate ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Prefill on rank 0, decode on rank 1 of a 2-process MPI job, each
// prompt's KV cache sent between them (docs/distributed.md#disaggregated-
// prefill-and-decode).
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_RUN_DISAGGREGATE_H_
#define STRATA_TOOLS_STRATA_RUN_DISAGGREGATE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "strata/runtime/api.h"
#include "strata/runtime/generate.h"

namespace strata::tools {

using DisaggregateClock = std::chrono::steady_clock;

/// One request's time to first token, split as the cluster simulator
/// splits it (bench/cluster/simulate.py), in ms, and its cache's bytes.
/// Every request arrives when both ranks pass the start barrier.
struct HandoffTimes {
  /// Arrival to the start of its prefill on rank 0.
  double queueMs = 0;
  /// Its prefill, first token sampled.
  double prefillMs = 0;
  /// From rank 0 starting to send to rank 1 holding all of it (waiting
  /// for rank 1 to take it included).
  double transferMs = 0;
  /// From rank 1 holding the cache to its second token (rows written,
  /// resumed, the first decode step it was in).
  double firstDecodeMs = 0;
  /// Arrival to its first token streamed by rank 1.
  double ttftMs = 0;
  uint64_t kvBytes = 0;
};

/// "" when |communicator| (null: none) can carry a disaggregated run: 2
/// ranks, with send and recv; else the problem.
std::string checkDisaggregateGroup(const strata_communicator_t *communicator);

/// "" when the cache of |session|'s module can move by rows: not paged
/// (|generator| says), every per-sequence state with a `context` dim (no
/// ring cache of a windowed attention); else the problem.
std::string checkDisaggregateCache(const strata_session_t *session,
                                   const strata_generator_t *generator);

/// Both ranks call it first: the common arrival time of every request.
std::string startTogether(const strata_communicator_t *communicator,
                          DisaggregateClock::time_point *start);

/// Rank 0: for each prompt in order, its prefill (first token sampled),
/// then a header, its ids and its cache rows sent to rank 1, and the
/// sequence removed. A failure is sent on as well, so rank 1 stops too.
std::string runPrefillRank(const strata_communicator_t *communicator,
                           const strata_session_t *session,
                           strata_generator_t *generator,
                           const std::vector<std::vector<int64_t>> &prompts,
                           const strata_generation_params_t &params,
                           DisaggregateClock::time_point start);

/// Rank 1: receives each request, begins it with the same prompt and
/// params, writes its rows, resumes it with rank 0's first token and
/// decodes. One request is received (blocking) when nothing decodes, else
/// after each step while requests remain and a slot is free. |onBegin|
/// learns each prompt's sequence id before its first token is streamed;
/// |onTokens| runs after every token-making call ("" or a problem).
std::string runDecodeRank(const strata_communicator_t *communicator,
                          strata_session_t *session,
                          strata_generator_t *generator,
                          const std::vector<std::vector<int64_t>> &prompts,
                          const strata_generation_params_t &params,
                          DisaggregateClock::time_point start,
                          const std::function<void(size_t, uint64_t)> &onBegin,
                          const std::function<std::string()> &onTokens,
                          std::vector<HandoffTimes> *times);

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_RUN_DISAGGREGATE_H_
