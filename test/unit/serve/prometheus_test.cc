//===- prometheus_test.cc - The text exposition format --------------------===//
// SPDX-License-Identifier: Apache-2.0
// The page as a whole is also parsed by the prometheus_client package in the
// end-to-end server test.

#include "prometheus.h"
#include "server_metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::serve {
namespace {

TEST(PrometheusTest, HistogramsAreCumulativeWithSumAndCount) {
  Histogram histogram({0.1, 1.0});
  histogram.observe(0.05);
  histogram.observe(0.1);  // on a bound: counted in it (le)
  histogram.observe(0.5);
  histogram.observe(7.0);
  std::string out;
  histogram.write("x_seconds", "Test.", &out);
  EXPECT_EQ(out,
            "# HELP x_seconds Test.\n"
            "# TYPE x_seconds histogram\n"
            "x_seconds_bucket{le=\"0.10000000000000001\"} 2\n"
            "x_seconds_bucket{le=\"1\"} 3\n"
            "x_seconds_bucket{le=\"+Inf\"} 4\n"
            "x_seconds_sum 7.6500000000000004\n"
            "x_seconds_count 4\n");
}

TEST(PrometheusTest, ServerPageHasEveryFamily) {
  ServerMetrics metrics;
  strata_scheduler_stats_t stats;
  strata_scheduler_stats_init(&stats);
  stats.slots = 4;
  stats.running = 1;
  stats.context = 40;
  std::string page = metrics.render(stats);
  for (const char* family :
       {"strata_time_to_first_token_seconds", "strata_time_per_output_token_seconds",
        "strata_inter_token_latency_seconds", "strata_e2e_request_latency_seconds",
        "strata_request_queue_time_seconds", "strata_requests_waiting",
        "strata_requests_running", "strata_kv_cache_blocks_used",
        "strata_kv_cache_blocks_free", "strata_requests_total",
        "strata_prompt_tokens_total", "strata_generation_tokens_total",
        "strata_preemptions_total", "strata_padding_tokens_total"}) {
    EXPECT_NE(page.find(std::string("# TYPE ") + family + " "), std::string::npos)
        << family;
  }
  // 40 tokens of context = 3 blocks of 16 per slot.
  EXPECT_NE(page.find("strata_kv_cache_blocks_used 3\n"), std::string::npos);
  EXPECT_NE(page.find("strata_kv_cache_blocks_free 9\n"), std::string::npos);
}

}  // namespace
}  // namespace strata::serve
