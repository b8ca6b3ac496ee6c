//===- lead_group.cc - One generator's calls repeated on every rank -------===//
// SPDX-License-Identifier: Apache-2.0
// The sending half (called by generator.cc's C functions before they act)
// and strata_generator_follow. A follower makes each call through the same
// C functions an embedder would, so the lead's and its checks are one.

#include "generate/lead_group.h"

#include <algorithm>
#include <cinttypes>
#include <chrono>
#include <new>
#include <thread>
#include <vector>

#include "generate/generator_state.h"
#include "versioned_struct.h"

namespace strata::runtime {
namespace {

constexpr uint32_t kLeadMagic = 0x4c444752u;  // "RGDL"
// How long a follower polls without pause after the last call before it
// sleeps between polls, and its longest sleep: a call that ends an idle
// spell waits at most that long; calls in a busy spell are found at once.
constexpr auto kPollWithoutPause = std::chrono::milliseconds(2);
constexpr auto kLongestPause = std::chrono::microseconds(500);

strata_status_t transportError(const char* what, strata_status_t cause) {
  strata_status_t status = STRATA_MAKE_STATUS(
      STRATA_STATUS_UNAVAILABLE, "%s: %s", what, strata_status_message(cause));
  strata_status_free(cause);
  return status;
}

bool isNewSequence(LeadOp op) {
  return op == LeadOp::kAddSequence || op == LeadOp::kBeginSequence;
}

// Waits for the lead's next message (with the group's probe, if any; a
// recv without one blocks in the transport).
strata_status_t awaitCall(const strata_communicator_t& group) {
  if (!group.probe) return nullptr;
  const auto idleSince = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    int ready = 0;
    if (strata_status_t status =
            group.probe(group.self, 0, STRATA_COMMUNICATOR_TAG_LEAD, &ready)) {
      return transportError("waiting for the lead's next call", status);
    }
    if (ready) return nullptr;
    if (std::chrono::steady_clock::now() - idleSince < kPollWithoutPause) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, kLongestPause);
  }
}

strata_status_t diverged(const char* call, uint64_t sequence,
                         strata_status_t cause) {
  strata_status_t status = STRATA_MAKE_STATUS(
      STRATA_STATUS_FAILED_PRECONDITION,
      "the lead's %s of sequence %" PRIu64
      " does not hold on this rank (%s): the ranks' generators have diverged",
      call, sequence, cause ? strata_status_message(cause) : "another id");
  strata_status_free(cause);
  return status;
}

// Frees the status of a call the lead made too, when every rank meets it
// alike; a sequence this rank lacks means the ranks have diverged, and a
// failure that may be this rank's alone ends the following (the lead
// would otherwise wait for this rank in the model's next collective).
strata_status_t settle(const char* call, uint64_t sequence,
                       strata_status_t status) {
  if (!status) return nullptr;
  if (strata_status_code(status) == STRATA_STATUS_NOT_FOUND) {
    return diverged(call, sequence, status);
  }
  if (!failsOnEveryRank(status)) {
    return strata_status_annotate(status, "a call of the lead, on this rank");
  }
  strata_status_free(status);
  return nullptr;
}

void mix(uint64_t* hash, uint64_t value) {
  for (int byte = 0; byte < 8; ++byte) {
    *hash ^= (value >> (8 * byte)) & 0xff;
    *hash *= 0x100000001b3ull;  // FNV-1a
  }
}

}  // namespace

uint64_t stateDigest(const strata_generator_t& generator) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const auto& [id, sequence] : generator.sequences) {
    mix(&hash, id);
    mix(&hash, sequence->tokens.size());
    mix(&hash, sequence->tokens.empty()
                   ? 0
                   : static_cast<uint64_t>(sequence->tokens.back()));
    mix(&hash, static_cast<uint64_t>(sequence->slot));
    mix(&hash, (sequence->finished ? 1u : 0u) | (sequence->prefilled << 1));
  }
  return hash;
}

bool failsOnEveryRank(strata_status_t status) {
  switch (strata_status_code(status)) {
    case STRATA_STATUS_INVALID_ARGUMENT:
    case STRATA_STATUS_OUT_OF_RANGE:
    case STRATA_STATUS_FAILED_PRECONDITION:
    case STRATA_STATUS_NOT_FOUND:
      return true;
    default:
      return false;
  }
}

void putParams(const strata_generation_params_t& params, LeadCall* call) {
  call->seed = params.seed;
  call->maxNewTokens = params.max_new_tokens;
  call->temperature = params.temperature;
  call->topP = params.top_p;
  call->minP = params.min_p;
  call->repetitionPenalty = params.repetition_penalty;
  call->topK = params.top_k;
  call->stopCount = params.stop_token_count;
}

strata_generation_params_t paramsOf(const LeadCall& call,
                                    const int64_t* stops) {
  strata_generation_params_t params;
  strata_generation_params_init(&params);
  params.seed = call.seed;
  params.max_new_tokens = call.maxNewTokens;
  params.temperature = call.temperature;
  params.top_p = call.topP;
  params.min_p = call.minP;
  params.repetition_penalty = call.repetitionPenalty;
  params.top_k = call.topK;
  params.stop_tokens = call.stopCount ? stops : nullptr;
  params.stop_token_count = call.stopCount;
  return params;
}

strata_status_t sendLeadCall(const strata_communicator_t& group, LeadCall call,
                             const int64_t* prompt, const int64_t* stops) {
  call.magic = kLeadMagic;
  const bool newSequence = isNewSequence(static_cast<LeadOp>(call.op));
  std::vector<int64_t> ids;
  if (newSequence) {
    try {
      ids.assign(prompt, prompt + call.count);
      if (call.stopCount) ids.insert(ids.end(), stops, stops + call.stopCount);
    } catch (const std::bad_alloc&) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                                "out of memory sending a call to the ranks");
    }
  }
  for (uint32_t peer = 1; peer < group.size; ++peer) {
    if (strata_status_t status =
            group.send(group.self, &call, sizeof(call), peer,
                       STRATA_COMMUNICATOR_TAG_LEAD)) {
      return transportError("sending a generator call to the ranks", status);
    }
    if (!newSequence) continue;
    if (strata_status_t status = group.send(
            group.self, ids.data(), ids.size() * sizeof(int64_t), peer,
            STRATA_COMMUNICATOR_TAG_LEAD)) {
      return transportError("sending a prompt to the ranks", status);
    }
  }
  return nullptr;
}

}  // namespace strata::runtime

extern "C" strata_status_t strata_generator_follow(
    strata_generator_t* generator, const strata_communicator_t* given) {
  using namespace strata::runtime;
  if (!generator || !given) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator and group must not be NULL");
  }
  strata_communicator_t copy;
  STRATA_RETURN_IF_ERROR(copyVersioned(given, sizeof(copy), &copy, "group"));
  const strata_communicator_t* group = &copy;
  if (!group->recv || group->size < 2 || group->rank == 0 ||
      group->rank >= group->size) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "a follower needs a group of 2 or more ranks with recv, as a rank "
        "other than 0 (this is rank %u of %u)",
        group->rank, group->size);
  }
  if (generator->leadGroup) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "a leading generator cannot follow");
  }
  std::vector<int64_t> ids;
  for (;;) {
    STRATA_RETURN_IF_ERROR(awaitCall(*group));
    LeadCall call{};
    if (strata_status_t status =
            group->recv(group->self, &call, sizeof(call), 0,
                        STRATA_COMMUNICATOR_TAG_LEAD)) {
      return transportError("receiving the lead's call", status);
    }
    const LeadOp op = static_cast<LeadOp>(call.op);
    if (call.magic != kLeadMagic || call.op < 1 ||
        call.op > static_cast<uint32_t>(LeadOp::kAbort)) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                                "the lead sent a malformed call (op %u)",
                                call.op);
    }
    // A new sequence's ids follow: taken before anything is judged, so
    // that the lead's send completes.
    if (isNewSequence(op)) {
      if (call.count == 0 || call.count > kMostPromptTokens ||
          call.stopCount > kMostStopTokens) {
        return STRATA_MAKE_STATUS(
            STRATA_STATUS_UNAVAILABLE,
            "the lead sent a sequence of %" PRIu64 " prompt and %" PRIu64
            " stop tokens",
            call.count, call.stopCount);
      }
      try {
        ids.resize(call.count + call.stopCount);
      } catch (const std::bad_alloc&) {
        return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                                  "out of memory for the lead's prompt");
      }
      if (strata_status_t status = group->recv(
              group->self, ids.data(), ids.size() * sizeof(int64_t), 0,
              STRATA_COMMUNICATOR_TAG_LEAD)) {
        return transportError("receiving the lead's prompt", status);
      }
    }
    if (call.hasDigest && call.digest != stateDigest(*generator)) {
      return STRATA_MAKE_STATUS(
          STRATA_STATUS_FAILED_PRECONDITION,
          "this rank's sequences differ from the lead's before its call "
          "(op %u): the ranks' generators have diverged",
          call.op);
    }
    switch (op) {
      case LeadOp::kAddSequence:
      case LeadOp::kBeginSequence: {
        const strata_generation_params_t params =
            paramsOf(call, ids.data() + call.count);
        uint64_t id = 0;
        strata_status_t status =
            op == LeadOp::kAddSequence
                ? strata_generator_add_sequence(generator, ids.data(),
                                                call.count, &params, &id)
                : strata_generator_begin_sequence(generator, ids.data(),
                                                  call.count, &params, &id);
        if (!status && id != call.sequence) {
          return diverged("new sequence", call.sequence, nullptr);
        }
        STRATA_RETURN_IF_ERROR(settle("new sequence", call.sequence, status));
        break;
      }
      case LeadOp::kPrefill:
        STRATA_RETURN_IF_ERROR(settle(
            "prefill", call.sequence,
            strata_generator_prefill(generator, call.sequence, call.count,
                                     nullptr)));
        break;
      case LeadOp::kStep:
        STRATA_RETURN_IF_ERROR(
            settle("step", 0, strata_generator_step(generator, nullptr)));
        break;
      case LeadOp::kCancel:
        STRATA_RETURN_IF_ERROR(
            settle("cancel", call.sequence,
                   strata_generator_cancel(generator, call.sequence)));
        break;
      case LeadOp::kRemoveSequence:
        STRATA_RETURN_IF_ERROR(
            settle("removal", call.sequence,
                   strata_generator_remove_sequence(generator, call.sequence)));
        break;
      case LeadOp::kRelease:
        return nullptr;
      case LeadOp::kAbort:
        return STRATA_MAKE_STATUS(
            STRATA_STATUS_UNAVAILABLE,
            "the lead's generator stopped after a failure the other ranks "
            "may not have met (rank 0's error says which)");
    }
  }
}
