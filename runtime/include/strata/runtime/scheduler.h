//===- scheduler.h - Continuous batching of generation requests -----------===//
// SPDX-License-Identifier: Apache-2.0
// A strata_scheduler_t serves generation requests from any number of threads
// with one generator (generate.h) driven by a thread of its own. Scheduling
// is per iteration: between two decode steps, finished requests leave,
// waiting ones take the free sequence slots (highest priority first, then
// first come, first served), and the prompts of new requests run through
// prefill in chunks under a per-step token budget, interleaved with the
// running decodes, so a long prompt delays the running sequences by at most
// one budget's worth of prefill per step. Docs: docs/serving.md.

#ifndef STRATA_RUNTIME_SCHEDULER_H_
#define STRATA_RUNTIME_SCHEDULER_H_

#include <stddef.h>
#include <stdint.h>

#include "strata/runtime/generate.h"
#include "strata/runtime/session.h"
#include "strata/runtime/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Opaque scheduler.
typedef struct strata_scheduler_t strata_scheduler_t;

/// How a request stands in an event.
typedef enum strata_request_state_t {
  /// A token; more follow.
  STRATA_REQUEST_RUNNING = 0,
  /// Final: it sampled one of its stop tokens (the event's token).
  STRATA_REQUEST_STOPPED = 1,
  /// Final: it reached max_new_tokens or filled the context.
  STRATA_REQUEST_LENGTH = 2,
  /// Final: strata_scheduler_cancel, a drain's deadline or the release.
  STRATA_REQUEST_CANCELLED = 3,
  /// Final: a run failed; |error| says why.
  STRATA_REQUEST_FAILED = 4,
} strata_request_state_t;

/// One event of a request, valid during the callback only.
typedef struct strata_request_event_t {
  uint64_t request_id;
  strata_request_state_t state;
  /// Nonzero when |token| is a sampled token (every RUNNING event, and a
  /// STOPPED or LENGTH event, whose token is the last).
  int has_token;
  int64_t token;
  /// FAILED: the message of the failing status; else NULL.
  const char* error;
  /// Final events: prompt and generated token counts, and milliseconds
  /// from submission to leaving the queue (queue), to the first token
  /// (ttft; 0 without one) and to the end (total).
  uint64_t prompt_tokens;
  uint64_t generated_tokens;
  double queue_ms;
  double ttft_ms;
  double total_ms;
} strata_request_event_t;

/// Receives a request's events on the scheduler's thread, in order: its
/// tokens as they are sampled, then exactly one final event (state other
/// than RUNNING), after which |user| is never used again, so the callback
/// may free it there. It must return quickly (every request waits on it)
/// and may call submit, cancel and stats, not release or drain.
typedef void (*strata_request_fn)(void* user,
                                  const strata_request_event_t* event);

/// Scheduler options; initialize with strata_scheduler_options_init.
/// Versioned as strata_generator_options_t is.
typedef struct strata_scheduler_options_t {
  size_t struct_size;
  /// Most sequences in flight at once; 0 (the default) = the module's
  /// sequence slots, which it may not exceed.
  int32_t max_seqs;
  /// Most tokens one iteration computes: one per decoding sequence plus
  /// the prompt tokens of the prefill chunks run beside them (at least one
  /// prompt token runs whenever one waits, so prompts always advance);
  /// 0 (the default) = the module's prefill_length plus max_seqs.
  int64_t max_batched_tokens;
  /// Most requests waiting for a slot; submit beyond it is
  /// RESOURCE_EXHAUSTED. 0 (the default) = 256.
  int32_t max_queue;
  /// The generator's prefill_chunk (0: the module's prefill_length).
  int64_t prefill_chunk;
  /// Nonzero: static batching, the baseline continuous batching is measured
  /// against. A batch of up to max_seqs waiting requests starts only when
  /// the previous batch has finished entirely; its prompts run before any
  /// decode, and no request joins it meanwhile. Every row decodes until the
  /// batch's longest request ends (a request that ended sooner has had its
  /// final event; its row's further tokens are dropped), as in systems
  /// that batch statically (Hugging Face generate, onnxruntime-genai).
  int32_t static_batching;
  /// The generator's prefix_reuse (generate.h): a request whose prompt
  /// starts like the tokens a free slot still caches skips their prefill.
  int32_t prefix_reuse;
  /// The generator's lead_group (generate.h): on rank 0 of a split model,
  /// the other ranks run strata_scheduler_follow with the same options.
  const strata_communicator_t* lead_group;
  /// Speculative decoding in every step (docs/speculative.md): the
  /// generator's draft_session (borrowed; NULL: none), prompt_lookup,
  /// max_draft_tokens and fixed_draft_tokens (generate.h).
  strata_session_t* draft_session;
  int32_t prompt_lookup;
  int32_t max_draft_tokens;
  int32_t fixed_draft_tokens;
} strata_scheduler_options_t;

/// Sets |options| to the defaults and struct_size to this header's size.
STRATA_API_EXPORT void strata_scheduler_options_init(
    strata_scheduler_options_t* options);

/// A rank other than 0 of a split model served by rank 0's scheduler
/// (created with |options|' lead_group set): makes a generator of
/// |session| as strata_scheduler_create would with |options| (lead_group
/// aside) and repeats rank 0's generator calls on it
/// (strata_generator_follow over |group|) until rank 0's scheduler is
/// released. Blocks; returns OK then, or the error that ended it.
STRATA_API_EXPORT strata_status_t strata_scheduler_follow(
    strata_session_t* session, const strata_scheduler_options_t* options,
    const strata_communicator_t* group);

/// Counts and gauges of a scheduler at one moment (between iterations).
/// Set struct_size (strata_scheduler_stats_init) before the call.
typedef struct strata_scheduler_stats_t {
  size_t struct_size;
  /// Requests waiting for a slot, and sequences in flight (prefilling or
  /// decoding).
  uint64_t waiting;
  uint64_t running;
  /// Sequence slots (max_seqs), the context of each and the vocabulary
  /// (token ids are below it).
  uint64_t slots;
  uint64_t context;
  uint64_t vocab;
  /// Tokens the cache holds for the sequences in flight (prompt tokens run
  /// plus generated ones).
  uint64_t cached_tokens;
  /// Requests accepted by submit, and finished per final state.
  uint64_t submitted;
  uint64_t stopped;
  uint64_t length;
  uint64_t cancelled;
  uint64_t failed;
  /// Prompt tokens run through prefill, prompt tokens prefix reuse found
  /// cached instead, and tokens generated.
  uint64_t prompt_tokens;
  uint64_t reused_prompt_tokens;
  uint64_t generated_tokens;
  /// Iterations with work, and the milliseconds they took.
  uint64_t iterations;
  double busy_ms;
  /// A paged KV cache (strata_generator_cache_stats): positions per block,
  /// blocks in each pool and blocks held, and preemptions. 0 for a
  /// contiguous cache.
  uint64_t kv_block_size;
  uint64_t kv_blocks_total;
  uint64_t kv_blocks_used;
  uint64_t preemptions;
  /// Static batching: tokens decoded for rows whose request had already
  /// ended, while they waited for their batch's longest (0 otherwise).
  uint64_t padding_tokens;
  /// Speculative decoding, over the requests finished so far: tokens
  /// drafted, drafts the target kept, and the target calls after prefill
  /// (decode or verify) that made their tokens, counted once per request
  /// in each (strata_generation_metrics_t). Tokens per target step:
  /// (generated tokens after the first) / target_steps.
  uint64_t draft_tokens;
  uint64_t accepted_draft_tokens;
  uint64_t target_steps;
} strata_scheduler_stats_t;

/// Zeroes |stats| and sets struct_size to this header's size.
STRATA_API_EXPORT void strata_scheduler_stats_init(
    strata_scheduler_stats_t* stats);

/// Creates a scheduler over |session| (borrowed as strata_generator_create
/// borrows it, with the same checks and errors) and starts its thread.
/// INVALID_ARGUMENT for NULL arguments, a bad struct_size, max_seqs outside
/// [0, slots], or negative max_batched_tokens or max_queue.
STRATA_API_EXPORT strata_status_t strata_scheduler_create(
    strata_session_t* session, const strata_scheduler_options_t* options,
    strata_scheduler_t** out);

/// Cancels every request still waiting or running (each gets its final
/// CANCELLED event), stops the thread and frees |scheduler|; NULL is allowed.
/// Not from a callback.
STRATA_API_EXPORT void strata_scheduler_release(strata_scheduler_t* scheduler);

/// Queues a request: |prompt| (copied) generated with |params| (copied;
/// NULL = greedy defaults) at |priority| (higher first; equal ones in
/// submission order), its events to |callback| with |user|. Stores its id
/// (never reused) in |*out_request_id| (may be NULL). The checks of
/// strata_generator_add_sequence happen here, with its errors
/// (INVALID_ARGUMENT naming the field, OUT_OF_RANGE for a prompt plus
/// max_new_tokens over the context); RESOURCE_EXHAUSTED when max_queue
/// requests wait; UNAVAILABLE once draining. A request refused here gets
/// no event.
STRATA_API_EXPORT strata_status_t strata_scheduler_submit(
    strata_scheduler_t* scheduler, const int64_t* prompt, size_t prompt_length,
    const strata_generation_params_t* params, int32_t priority,
    strata_request_fn callback, void* user, uint64_t* out_request_id);

/// Asks for request |request_id| to stop: before its next iteration it
/// leaves the queue or frees its slot and gets its final CANCELLED event
/// (unless it finished first: then nothing happens). NOT_FOUND for an id
/// that is unknown or whose request ended before the current iteration.
STRATA_API_EXPORT strata_status_t
strata_scheduler_cancel(strata_scheduler_t* scheduler, uint64_t request_id);

/// Stops accepting requests (submit: UNAVAILABLE) and waits until every
/// accepted one has had its final event; after |timeout_ms| (negative:
/// no limit) it cancels those left and waits for their final events.
/// Not from a callback.
STRATA_API_EXPORT strata_status_t
strata_scheduler_drain(strata_scheduler_t* scheduler, int64_t timeout_ms);

/// Fills |*stats| (struct_size set by the caller).
STRATA_API_EXPORT strata_status_t strata_scheduler_stats(
    strata_scheduler_t* scheduler, strata_scheduler_stats_t* stats);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_RUNTIME_SCHEDULER_H_
