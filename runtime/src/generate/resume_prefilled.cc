//===- resume_prefilled.cc - Decoding a prompt another session ran --------===//
// SPDX-License-Identifier: Apache-2.0
// Disaggregated prefill and decode: one process runs a prompt through
// prefill and samples its first token, another decodes. The decode side
// begins the same sequence, receives the prompt's cache rows into its slot
// (strata_session_write_state_rows) and resumes here with the first token,
// as if its own prefill had just sampled it.

#include <cinttypes>
#include <new>
#include <vector>

#include "generate/generator_state.h"
#include "strata/runtime/generate.h"

using strata::runtime::Clock;
using strata::runtime::Sequence;

strata_status_t strata_generator_t::resumePrefilled(Sequence* sequence,
                                                    int64_t token) {
  const size_t promptLength = sequence->promptLength;
  sequence->prefilled = promptLength;
  noteCached(sequence->slot, 0, sequence->prompt.data(), promptLength);
  // Sampling draws once per token; the first token's draw was the other
  // side's, so this side's generator skips it to stay in step.
  if (sequence->sampler.params().temperature != 0.0f) {
    sequence->sampler.uniform();
  }
  sequence->prompt = std::vector<int64_t>();
  accept(sequence, token, Clock::now());
  stream();
  return nullptr;
}

extern "C" {

strata_status_t strata_generator_sequence_slot(
    const strata_generator_t* generator, uint64_t sequence_id,
    int64_t* out_slot) {
  if (!generator || !out_slot) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator and out_slot must not be NULL");
  }
  const Sequence* sequence = generator->find(sequence_id);
  if (!sequence) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_NOT_FOUND,
                              "no sequence %" PRIu64 " in the generator",
                              sequence_id);
  }
  if (sequence->slot < 0) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_FAILED_PRECONDITION,
        "sequence %" PRIu64 " has finished and holds no slot", sequence_id);
  }
  *out_slot = sequence->slot;
  return nullptr;
}

strata_status_t strata_generator_resume_prefilled(strata_generator_t* generator,
                                                  uint64_t sequence_id,
                                                  int64_t first_token) {
  if (!generator) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "generator must not be NULL");
  }
  if (generator->inCallback) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_FAILED_PRECONDITION,
        "strata_generator_resume_prefilled called from the token callback");
  }
  if (generator->leadGroup) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_FAILED_PRECONDITION,
        "resuming a prefilled sequence is not supported on a generator that "
        "leads other ranks: their caches did not receive the prompt's rows");
  }
  if (generator->pool) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_FAILED_PRECONDITION,
        "resuming a prefilled sequence is not supported with a paged KV "
        "cache: its positions are in shared blocks, not rows of a slot");
  }
  if (generator->speculative()) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_FAILED_PRECONDITION,
        "resuming a prefilled sequence is not supported with speculative "
        "decoding (a draft model or prompt lookup)");
  }
  Sequence* sequence = generator->find(sequence_id);
  if (!sequence) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_NOT_FOUND,
                              "no sequence %" PRIu64 " in the generator",
                              sequence_id);
  }
  if (sequence->finished) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_FAILED_PRECONDITION,
                              "sequence %" PRIu64 " has finished", sequence_id);
  }
  // Prefix reuse may have found cached tokens; a prefill call ran more.
  if (!sequence->tokens.empty() ||
      sequence->prefilled > sequence->reusedPrompt) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_FAILED_PRECONDITION,
                              "sequence %" PRIu64
                              " has already started its prefill or decodes",
                              sequence_id);
  }
  if (first_token < 0 || first_token >= generator->contract.vocab) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "first token %" PRId64
                              " is outside the vocabulary of %" PRId64
                              " tokens",
                              first_token, generator->contract.vocab);
  }
  try {
    return generator->resumePrefilled(sequence, first_token);
  } catch (const std::bad_alloc&) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory");
  }
}

}  // extern "C"
