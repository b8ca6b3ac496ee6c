//===- lead_group.h - One generator's calls repeated on every rank --------===//
// SPDX-License-Identifier: Apache-2.0
// A split model runs on every rank at once, so a server on rank 0 makes
// each generator call on every rank: rank 0's generator sends a call to
// the others before it makes it (strata_generator_options_t.lead_group),
// and theirs make it in turn (strata_generator_follow). A generator's
// state depends only on its calls (sequence ids and slots are counters,
// sampling is seeded, the logits are the same on every rank), so the
// followers' sequences stay the lead's and their collectives meet.

#ifndef STRATA_RUNTIME_SRC_GENERATE_LEAD_GROUP_H_
#define STRATA_RUNTIME_SRC_GENERATE_LEAD_GROUP_H_

#include <cstdint>

#include "strata/runtime/communicator.h"
#include "strata/runtime/generate.h"

namespace strata::runtime {

enum class LeadOp : uint32_t {
  kAddSequence = 1,
  kBeginSequence,
  kPrefill,
  kStep,
  kCancel,
  kRemoveSequence,
  kRelease,
  // The lead's own call failed in a way the others may not have met: they
  // stop (and strata-serve ends the job) rather than wait in a collective.
  kAbort,
};

// Bounds on a new sequence's call: a prompt longer than any context, or
// more stop tokens than any vocabulary, is malformed.
constexpr uint64_t kMostPromptTokens = uint64_t{1} << 24;
constexpr uint64_t kMostStopTokens = uint64_t{1} << 20;

// One call as sent: the fixed part. A new sequence's prompt and stop
// tokens follow in a second message of (count + stopCount) ids.
struct LeadCall {
  uint32_t magic;
  uint32_t op;
  // The sequence the call names; for a new one, the id the lead gives it.
  uint64_t sequence;
  // Prompt tokens of a new sequence; a prefill's max_tokens.
  uint64_t count;
  uint64_t stopCount;
  // A new sequence's params (strata_generation_params_t).
  uint64_t seed;
  int64_t maxNewTokens;
  float temperature;
  float topP;
  float minP;
  float repetitionPenalty;
  int32_t topK;
  // Nonzero when |digest| holds the lead's stateDigest before this call
  // (not for calls made from its token callback, mid-step).
  uint32_t hasDigest;
  uint64_t digest;
};

// Sends |call| (and, for a new sequence, |prompt| then |stops|) to every
// other rank of |group|. UNAVAILABLE quoting the transport's message.
strata_status_t sendLeadCall(const strata_communicator_t& group, LeadCall call,
                             const int64_t* prompt, const int64_t* stops);

// The params of a new sequence's call, and back (|stops|: the stop tokens
// that came with it).
void putParams(const strata_generation_params_t& params, LeadCall* call);
strata_generation_params_t paramsOf(const LeadCall& call,
                                    const int64_t* stops);

// What a generator's calls have made of its sequences (ids, token counts,
// last tokens, slots, finished flags): equal on the lead and a follower
// that have made the same calls with the same results.
uint64_t stateDigest(const strata_generator_t& generator);

// Whether a call's failure is one every rank meets alike: a refusal that
// follows from the call's arguments and the generator's state, which the
// ranks share. Any other (memory, a transport, an internal error) may be
// this rank's alone.
bool failsOnEveryRank(strata_status_t status);

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_GENERATE_LEAD_GROUP_H_
