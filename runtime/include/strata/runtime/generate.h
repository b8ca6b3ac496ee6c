//===- generate.h - In-process text generation over prefill/decode --------===//
// SPDX-License-Identifier: Apache-2.0
// A strata_generator_t generates tokens for several sequences at once with a
// session of a module that has `prefill` and `decode` entries (the contract
// is docs/design/prefill-decode.md#entry-contract): each new prompt goes
// through prefill, then every step runs one decode call for all sequences in
// flight and samples one token per sequence. Thread-safety: a generator is
// not synchronized; one thread at a time calls it, and it runs its session,
// which nothing else may run or reset while the generator lives.

#ifndef STRATA_RUNTIME_GENERATE_H_
#define STRATA_RUNTIME_GENERATE_H_

#include <stddef.h>
#include <stdint.h>

#include "strata/runtime/session.h"
#include "strata/runtime/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Opaque generator.
typedef struct strata_generator_t strata_generator_t;

/// Receives each generated token as soon as it is sampled, on the thread
/// that called add_sequence or step, in the order the tokens were made.
/// |finished| is nonzero on a sequence's last token. It may call
/// strata_generator_cancel, strata_generator_remove_sequence and the read
/// functions (tokens, metrics); add_sequence, step and set_callback return
/// FAILED_PRECONDITION from inside it.
typedef void (*strata_generator_token_fn)(void* user, uint64_t sequence_id,
                                          int64_t token, int finished);

/// Generator options; initialize with strata_generator_options_init. Fields
/// are only ever appended: the library reads the first |struct_size| bytes,
/// and bytes past the fields it knows must be zero.
typedef struct strata_generator_options_t {
  /// sizeof(strata_generator_options_t) as the caller compiled it.
  size_t struct_size;
  /// Most prompt tokens one prefill call takes; 0 (the default) = the
  /// compiled maximum of the `prefill_length` dim, which it may not exceed.
  int64_t prefill_chunk;
  /// Streaming callback (NULL: none) and its first argument.
  strata_generator_token_fn callback;
  void* callback_user;
  /// Speculative decoding (docs/speculative.md): each step drafts tokens
  /// for every sequence and checks them all in one call of the module's
  /// `verify` entry, keeping the longest run the target agrees with (exactly
  /// the target's greedy output, or its distribution when sampling). The
  /// drafts come from a session of a smaller draft module with the same
  /// vocabulary (draft_session, borrowed like |session|, with at least as
  /// many slots and as much context), or from prompt lookup (nonzero
  /// prompt_lookup: the tokens that followed the latest earlier occurrence
  /// of the sequence's last tokens); not both. NULL and 0: plain decode.
  strata_session_t* draft_session;
  int32_t prompt_lookup;
  /// Most tokens drafted per sequence and step, in [0, verify_length - 1];
  /// 0 = verify_length - 1.
  int32_t max_draft_tokens;
  /// Nonzero: always draft max_draft_tokens. Zero (the default): the count
  /// adapts per sequence to its acceptance rate and the measured call times,
  /// down to plain decode where drafting does not pay.
  int32_t fixed_draft_tokens;
  /// Nonzero: prefix reuse. A finished sequence's slot keeps its cache
  /// entries; a new sequence goes to the free slot whose cached tokens
  /// share the longest start with its prompt (at least 16 tokens; else the
  /// least recently used free slot) and its prefill starts after them (the
  /// last prompt token always runs, for its logits). Ignored (off) with
  /// speculative decoding and for modules whose cache is not kept by
  /// position (the ring cache of a windowed attention).
  int32_t prefix_reuse;
  /// One process driving a split model (docs/distributed.md): non-NULL
  /// on rank 0 of the model's group, every call that moves this
  /// generator's sequences (add_sequence, begin_sequence, prefill, step,
  /// cancel, remove_sequence, release) is first sent over |lead_group| to
  /// its other ranks, whose generators, created with the same options and
  /// a NULL lead_group, repeat it in strata_generator_follow; the model's
  /// collectives then meet. Borrowed; send is required. Speculative
  /// decoding needs fixed_draft_tokens (the adaptive count follows
  /// measured times, which differ between processes), and
  /// resume_prefilled is refused (FAILED_PRECONDITION).
  const strata_communicator_t* lead_group;
} strata_generator_options_t;

/// Sets |options| to the defaults and struct_size to this header's size.
STRATA_API_EXPORT void strata_generator_options_init(
    strata_generator_options_t* options);

/// How one sequence's tokens are chosen and when it ends; initialize with
/// strata_generation_params_init (greedy, no limit but the context, no stop
/// tokens). Versioned like strata_generator_options_t. The sampling fields
/// are those of docs/runtime-api.md#sampling.
typedef struct strata_generation_params_t {
  size_t struct_size;
  /// 0 = greedy; else divides the logits before the softmax.
  float temperature;
  /// Keeps the k most likely tokens; 0 = off.
  int32_t top_k;
  /// Nucleus size in (0, 1]; 1 = off.
  float top_p;
  /// Drops tokens below min_p times the most likely one's probability.
  float min_p;
  /// Hugging Face's repetition penalty over prompt and generated tokens.
  float repetition_penalty;
  /// Seeds the sequence's own generator of draws.
  uint64_t seed;
  /// Most tokens to generate; 0 = until the context is full.
  int64_t max_new_tokens;
  /// Tokens that end the sequence (copied; may be NULL when count is 0).
  const int64_t* stop_tokens;
  size_t stop_token_count;
} strata_generation_params_t;

/// Sets |params| to greedy defaults and struct_size to this header's size.
STRATA_API_EXPORT void strata_generation_params_init(
    strata_generation_params_t* params);

/// Timings of one sequence. Set struct_size (strata_generation_metrics_init)
/// before the call; the library fills the fields it knows.
typedef struct strata_generation_metrics_t {
  size_t struct_size;
  uint64_t prompt_tokens;
  uint64_t generated_tokens;
  /// Time to first token: from add_sequence's start to the first token
  /// sampled (the whole prefill).
  double ttft_ms;
  /// Time per output token: the mean interval between consecutive tokens
  /// (waits between steps included); 0 with fewer than 2 tokens.
  double tpot_ms;
  /// Median and 99th percentile (nearest rank) of those intervals.
  double p50_ms;
  double p99_ms;
  /// Generated tokens per second from add_sequence's start to the last.
  double tokens_per_second;
  /// Speculative decoding: tokens drafted, drafted tokens the target kept,
  /// and target calls (decode or verify) after prefill. Without it,
  /// target_steps counts decode calls and the others stay 0.
  uint64_t draft_tokens;
  uint64_t accepted_draft_tokens;
  uint64_t target_steps;
  /// Prompt tokens whose cache entries prefix reuse found in the slot (not
  /// run through prefill).
  uint64_t reused_prompt_tokens;
} strata_generation_metrics_t;

/// Zeroes |metrics| and sets struct_size to this header's size.
STRATA_API_EXPORT void strata_generation_metrics_init(
    strata_generation_metrics_t* metrics);

/// Creates a generator over |session|, which it borrows: the session must
/// outlive the generator, and the caller must not run or reset it while the
/// generator lives. Checks the module against the prefill/decode contract:
/// FAILED_PRECONDITION naming what is missing or different (an entry, its
/// kind, an input's name, dtype or rank, a dim of the table); INVALID_ARGUMENT
/// for NULL arguments, a bad struct_size or a prefill_chunk outside [0,
/// prefill_length]. With speculative decoding, FAILED_PRECONDITION also for
/// a module without a `verify` entry, or a draft module that breaks the
/// contract or differs in vocabulary, or has fewer slots or less context;
/// INVALID_ARGUMENT for both drafts at once or a max_draft_tokens outside
/// [0, verify_length - 1]. Resets every sequence slot of the session's
/// state (and of the draft session's).
/// |out| belongs to the caller (strata_generator_release).
STRATA_API_EXPORT strata_status_t strata_generator_create(
    strata_session_t* session, const strata_generator_options_t* options,
    strata_generator_t** out);

/// Resets the slots of the sequences still in flight and frees |generator|;
/// NULL is allowed.
STRATA_API_EXPORT void strata_generator_release(strata_generator_t* generator);

/// Replaces the streaming callback (NULL: none).
STRATA_API_EXPORT strata_status_t
strata_generator_set_callback(strata_generator_t* generator,
                              strata_generator_token_fn callback, void* user);

/// Starts a sequence: takes a free slot, runs |prompt| through prefill in
/// chunks of prefill_chunk tokens, samples the first token and streams it,
/// and stores the new sequence's id (never reused) in |*out_sequence_id|.
/// The sequence may already be finished (a stop token, max_new_tokens 1),
/// which frees its slot at once. |params| NULL is the defaults.
/// INVALID_ARGUMENT for an empty prompt or bad params (naming the field);
/// RESOURCE_EXHAUSTED "no free sequence slot (N in use)"; OUT_OF_RANGE when
/// the prompt plus max_new_tokens (at least 1) exceeds the context, naming
/// both; a failing prefill's status. On failure nothing is streamed, the
/// slot is reset and free again, and the other sequences are unaffected.
STRATA_API_EXPORT strata_status_t strata_generator_add_sequence(
    strata_generator_t* generator, const int64_t* prompt, size_t prompt_length,
    const strata_generation_params_t* params, uint64_t* out_sequence_id);

/// Starts a sequence without running its prompt, for a caller that spreads
/// prompts over steps (chunked prefill interleaved with decode): the checks,
/// errors and slot of add_sequence, and a copy of |prompt|. Until
/// strata_generator_prefill has run the whole prompt and sampled the first
/// token, steps leave the sequence out; it holds its slot and counts as in
/// flight.
STRATA_API_EXPORT strata_status_t strata_generator_begin_sequence(
    strata_generator_t* generator, const int64_t* prompt, size_t prompt_length,
    const strata_generation_params_t* params, uint64_t* out_sequence_id);

/// Runs at most |max_tokens| more prompt tokens of a sequence started with
/// begin_sequence through prefill (in calls of at most prefill_chunk
/// tokens); the call that runs the last of them samples and streams the
/// first token. Stores the prompt tokens still to run in |*out_remaining|
/// (may be NULL). OK and nothing run for a sequence already decoding.
/// NOT_FOUND for an unknown id, FAILED_PRECONDITION for a finished or
/// cancelled one, INVALID_ARGUMENT for max_tokens 0. A failing prefill's
/// status finishes the sequence with no tokens (its slot free again); the
/// other sequences are unaffected.
STRATA_API_EXPORT strata_status_t strata_generator_prefill(
    strata_generator_t* generator, uint64_t sequence_id, size_t max_tokens,
    size_t* out_remaining);

/// The sequence slot of sequence |sequence_id| in |*out_slot|: the index
/// of its rows in the session's PER_SEQUENCE states (with a paged cache,
/// only the row of its calls; its positions are in blocks). NOT_FOUND for
/// an unknown id, FAILED_PRECONDITION for a finished or cancelled one,
/// which holds no slot; INVALID_ARGUMENT for NULL arguments.
STRATA_API_EXPORT strata_status_t strata_generator_sequence_slot(
    const strata_generator_t* generator, uint64_t sequence_id,
    int64_t* out_slot);

/// Disaggregated prefill and decode: for a sequence started with
/// begin_sequence whose prompt another session ran (its keys and values
/// written into this sequence's slot with strata_session_write_state_rows,
/// positions [0, prompt_length) of every PER_SEQUENCE state), marks the
/// prompt as run and takes |first_token|, sampled by the other side, as its
/// first generated token: streamed (it may finish the sequence: a stop
/// token, max_new_tokens 1), its TTFT counted from begin_sequence, and the
/// following steps decode it. A sampling sequence's generator of draws
/// moves on by the one draw the first token took, so a seeded sequence
/// continues exactly as it would have here. NOT_FOUND for an unknown id;
/// FAILED_PRECONDITION for a sequence whose prefill has started, that
/// decodes or has finished, or for a generator with a paged cache, a draft
/// model or prompt lookup (not supported: their caches are not slot rows
/// or need the draft's prefill too); INVALID_ARGUMENT for a NULL generator
/// or a token outside the vocabulary.
STRATA_API_EXPORT strata_status_t strata_generator_resume_prefilled(
    strata_generator_t* generator, uint64_t sequence_id, int64_t first_token);

/// One decode call for every sequence in flight whose prompt has run (rows
/// in slot order), then one token sampled and streamed per sequence. A sequence finishes on a
/// stop token (which is streamed and kept), at max_new_tokens or when its
/// context is full; its slot is then reset and free for add_sequence.
/// Stores the number of sequences still in flight in |*out_active| (may be
/// NULL); with none in flight it does nothing. On failure (the decode run's
/// status, or the sampler's) no sequence moves and nothing is streamed, so
/// the step may be retried or sequences cancelled.
STRATA_API_EXPORT strata_status_t
strata_generator_step(strata_generator_t* generator, size_t* out_active);

/// The other side of strata_generator_options_t.lead_group, on a rank
/// other than 0 of |group|: receives the calls of rank 0's generator and
/// makes each on |generator| (created with the lead's options, no
/// callback needed), until the lead is released; then returns OK. The
/// calls' own statuses are not returned (the lead meets the same ones);
/// UNAVAILABLE if a message does not arrive or is malformed,
/// FAILED_PRECONDITION for a sequence id the lead has and this generator
/// lacks (the two have diverged). Blocks; waits for the lead's messages
/// with the group's probe (sleeping between probes while idle) where it
/// has one.
STRATA_API_EXPORT strata_status_t strata_generator_follow(
    strata_generator_t* generator, const strata_communicator_t* group);

/// Stops sequence |sequence_id| (nothing more is streamed for it) and frees
/// its slot; its tokens and metrics stay readable. OK for a finished one;
/// NOT_FOUND for an unknown id.
STRATA_API_EXPORT strata_status_t
strata_generator_cancel(strata_generator_t* generator, uint64_t sequence_id);

/// Cancels sequence |sequence_id| if it is in flight and forgets it, so its
/// tokens and metrics are no longer kept. NOT_FOUND for an unknown id.
STRATA_API_EXPORT strata_status_t strata_generator_remove_sequence(
    strata_generator_t* generator, uint64_t sequence_id);

/// The tokens generated so far for |sequence_id| (the prompt excluded):
/// |*tokens| is borrowed and valid until the next call on the generator.
/// NOT_FOUND for an unknown id.
STRATA_API_EXPORT strata_status_t strata_generator_sequence_tokens(
    const strata_generator_t* generator, uint64_t sequence_id,
    const int64_t** tokens, size_t* count);

/// Nonzero in |*out_finished| once |sequence_id| finished or was cancelled.
STRATA_API_EXPORT strata_status_t
strata_generator_sequence_finished(const strata_generator_t* generator,
                                   uint64_t sequence_id, int* out_finished);

/// Fills |*metrics| (its struct_size set by the caller; an older, shorter
/// struct gets the fields it has) for |sequence_id|. NOT_FOUND for an
/// unknown id, INVALID_ARGUMENT for a struct_size below the first version's.
STRATA_API_EXPORT strata_status_t strata_generator_metrics(
    const strata_generator_t* generator, uint64_t sequence_id,
    strata_generation_metrics_t* metrics);

/// The KV cache of a generator at one moment. Set struct_size
/// (strata_generator_cache_stats_init) before the call.
typedef struct strata_generator_cache_stats_t {
  size_t struct_size;
  /// A paged cache (compiled with --kv-block-size): positions per block,
  /// blocks in each pool, blocks sequences hold, and sequences that gave
  /// their blocks back to older ones (recomputed later). All 0 for a
  /// contiguous cache, whose slots are reserved whole.
  uint64_t block_size;
  uint64_t blocks_total;
  uint64_t blocks_used;
  uint64_t preemptions;
} strata_generator_cache_stats_t;

/// Zeroes |stats| and sets struct_size to this header's size.
STRATA_API_EXPORT void strata_generator_cache_stats_init(
    strata_generator_cache_stats_t* stats);

/// Fills |*stats|; INVALID_ARGUMENT for a NULL argument or a struct_size
/// below the first version's.
STRATA_API_EXPORT strata_status_t strata_generator_cache_stats(
    const strata_generator_t* generator,
    strata_generator_cache_stats_t* stats);

/// The number of sequences in flight and the number of slots.
STRATA_API_EXPORT size_t
strata_generator_active_count(const strata_generator_t* generator);
STRATA_API_EXPORT size_t
strata_generator_slot_count(const strata_generator_t* generator);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_GENERATE_H_
