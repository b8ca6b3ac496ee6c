//===- server_metrics.cc - What /metrics exports ----------------------------===//
// SPDX-License-Identifier: Apache-2.0
// KV-cache blocks: the cache gives every sequence in flight a slot of the
// whole context, so a running sequence holds context / 16 blocks however
// few tokens it has cached; strata_kv_cache_tokens counts those it has.

#include "server_metrics.h"

namespace strata::serve {

void ServerMetrics::observeFinal(const strata_request_event_t& event) {
  queueWait.observe(event.queue_ms / 1000.0);
  endToEnd.observe(event.total_ms / 1000.0);
  if (event.generated_tokens > 0) ttft.observe(event.ttft_ms / 1000.0);
  if (event.generated_tokens > 1) {
    tpot.observe((event.total_ms - event.ttft_ms) / 1000.0 /
                 static_cast<double>(event.generated_tokens - 1));
  }
}

std::string ServerMetrics::render(const strata_scheduler_stats_t& stats) const {
  std::string out;
  ttft.write("strata_time_to_first_token_seconds",
             "Submission to first token, per request.", &out);
  tpot.write("strata_time_per_output_token_seconds",
             "Mean time between a request's tokens after the first.", &out);
  interToken.write("strata_inter_token_latency_seconds",
                   "Time between consecutive tokens sent to a client.", &out);
  endToEnd.write("strata_e2e_request_latency_seconds",
                 "Submission to the final event, per request.", &out);
  queueWait.write("strata_request_queue_time_seconds",
                  "Submission to leaving the queue for a sequence slot.", &out);

  auto gauge = [&](const char* name, const char* help, double value) {
    writeFamilyHeader(name, help, "gauge", &out);
    writeSample(name, "", value, &out);
  };
  gauge("strata_requests_waiting", "Requests waiting for a sequence slot.",
        static_cast<double>(stats.waiting));
  gauge("strata_requests_running", "Sequences in flight (prefill or decode).",
        static_cast<double>(stats.running));
  // A paged cache counts its own blocks; a contiguous one reserves a whole
  // context per sequence, counted in blocks of kKvBlockTokens.
  const bool paged = stats.kv_block_size > 0;
  const uint64_t blocksPerSlot =
      (stats.context + kKvBlockTokens - 1) / kKvBlockTokens;
  gauge("strata_kv_cache_blocks_used",
        "KV-cache blocks held by sequences in flight (a contiguous cache: "
        "a whole context per sequence, in blocks of 16 tokens).",
        static_cast<double>(paged ? stats.kv_blocks_used
                                  : stats.running * blocksPerSlot));
  gauge("strata_kv_cache_blocks_free",
        "KV-cache blocks no sequence holds (published prefix blocks "
        "included: they are evicted when needed).",
        static_cast<double>(paged ? stats.kv_blocks_total -
                                        std::min(stats.kv_blocks_total,
                                                 stats.kv_blocks_used)
                                  : (stats.slots - stats.running) *
                                        blocksPerSlot));
  gauge("strata_kv_cache_tokens", "Tokens cached for sequences in flight.",
        static_cast<double>(stats.cached_tokens));

  auto counter = [&](const char* name, const char* help) {
    writeFamilyHeader(name, help, "counter", &out);
  };
  counter("strata_requests_total", "Requests finished, by outcome.");
  writeSample("strata_requests_total", "outcome=\"stop\"",
              static_cast<double>(stats.stopped), &out);
  writeSample("strata_requests_total", "outcome=\"length\"",
              static_cast<double>(stats.length), &out);
  writeSample("strata_requests_total", "outcome=\"cancelled\"",
              static_cast<double>(stats.cancelled), &out);
  writeSample("strata_requests_total", "outcome=\"failed\"",
              static_cast<double>(stats.failed), &out);
  counter("strata_rejected_requests_total",
          "Requests answered with an error before they were queued.");
  writeSample("strata_rejected_requests_total", "reason=\"bad_request\"",
              static_cast<double>(badRequests.load()), &out);
  writeSample("strata_rejected_requests_total", "reason=\"queue_full\"",
              static_cast<double>(queueFull.load()), &out);
  writeSample("strata_rejected_requests_total", "reason=\"unauthorized\"",
              static_cast<double>(unauthorized.load()), &out);
  writeSample("strata_rejected_requests_total", "reason=\"draining\"",
              static_cast<double>(draining.load()), &out);
  counter("strata_client_disconnects_total",
          "Streams cancelled because the client went away.");
  writeSample("strata_client_disconnects_total", "",
              static_cast<double>(disconnects.load()), &out);
  counter("strata_prompt_tokens_total", "Prompt tokens run through prefill.");
  writeSample("strata_prompt_tokens_total", "",
              static_cast<double>(stats.prompt_tokens), &out);
  counter("strata_prefix_cache_hit_tokens_total",
          "Prompt tokens found cached in a free slot instead of run.");
  writeSample("strata_prefix_cache_hit_tokens_total", "",
              static_cast<double>(stats.reused_prompt_tokens), &out);
  const double promptSeen =
      static_cast<double>(stats.prompt_tokens + stats.reused_prompt_tokens);
  gauge("strata_prefix_cache_hit_ratio",
        "Prompt tokens found cached over all prompt tokens, since the start.",
        promptSeen > 0 ? static_cast<double>(stats.reused_prompt_tokens) /
                             promptSeen
                       : 0.0);
  counter("strata_generation_tokens_total", "Tokens generated.");
  writeSample("strata_generation_tokens_total", "",
              static_cast<double>(stats.generated_tokens), &out);
  counter("strata_preemptions_total",
          "Sequences that gave their KV blocks to older ones and were "
          "recomputed (a contiguous cache reserves slots whole: none).");
  writeSample("strata_preemptions_total", "",
              static_cast<double>(stats.preemptions), &out);
  counter("strata_padding_tokens_total",
          "Tokens static batches decoded for rows whose request had ended "
          "(--static-batching; 0 with continuous batching).");
  writeSample("strata_padding_tokens_total", "",
              static_cast<double>(stats.padding_tokens), &out);
  counter("strata_speculative_draft_tokens_total",
          "Tokens drafted for finished requests (--draft, --prompt-lookup).");
  writeSample("strata_speculative_draft_tokens_total", "",
              static_cast<double>(stats.draft_tokens), &out);
  counter("strata_speculative_accepted_tokens_total",
          "Drafted tokens the model kept, for finished requests.");
  writeSample("strata_speculative_accepted_tokens_total", "",
              static_cast<double>(stats.accepted_draft_tokens), &out);
  counter("strata_speculative_target_steps_total",
          "Model calls after prefill (decode or verify) that made finished "
          "requests' tokens, one per request and call.");
  writeSample("strata_speculative_target_steps_total", "",
              static_cast<double>(stats.target_steps), &out);
  gauge("strata_speculative_acceptance_rate",
        "Share of drafted tokens kept, over finished requests (0: none "
        "drafted).",
        stats.draft_tokens > 0 ? static_cast<double>(stats.accepted_draft_tokens) /
                                     static_cast<double>(stats.draft_tokens)
                               : 0.0);
  gauge("strata_speculative_tokens_per_target_step",
        "Tokens each model call after prefill made per request: 1 plus the "
        "drafts kept (1: plain decode).",
        stats.target_steps > 0
            ? 1.0 + static_cast<double>(stats.accepted_draft_tokens) /
                        static_cast<double>(stats.target_steps)
            : 0.0);
  counter("strata_engine_busy_seconds_total",
          "Time the scheduler's iterations took; its rate is utilisation.");
  writeSample("strata_engine_busy_seconds_total", "", stats.busy_ms / 1000.0,
              &out);
  counter("strata_engine_iterations_total", "Scheduler iterations with work.");
  writeSample("strata_engine_iterations_total", "",
              static_cast<double>(stats.iterations), &out);
  return out;
}

}  // namespace strata::serve
