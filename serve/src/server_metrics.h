//===- server_metrics.h - What /metrics exports -----------------------------===//
// SPDX-License-Identifier: Apache-2.0
// The server's latency histograms (observed as requests finish and tokens
// are sent) and its rejection counters, rendered with the scheduler's
// gauges and counters as one Prometheus page. The names are the contract
// of docs/serving.md and the Grafana dashboard beside it.

#ifndef STRATA_SERVE_SRC_SERVER_METRICS_H_
#define STRATA_SERVE_SRC_SERVER_METRICS_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "prometheus.h"
#include "strata/runtime/scheduler.h"

namespace strata::serve {

/// Tokens per KV-cache block in the block gauges.
constexpr uint64_t kKvBlockTokens = 16;

struct ServerMetrics {
  Histogram ttft{latencyBuckets()};
  Histogram tpot{latencyBuckets()};
  Histogram interToken{latencyBuckets()};
  Histogram endToEnd{latencyBuckets()};
  Histogram queueWait{latencyBuckets()};
  std::atomic<uint64_t> badRequests{0};
  std::atomic<uint64_t> queueFull{0};
  std::atomic<uint64_t> unauthorized{0};
  std::atomic<uint64_t> draining{0};
  std::atomic<uint64_t> disconnects{0};

  /// Records a finished request's timings (its final event).
  void observeFinal(const strata_request_event_t& event);

  /// The whole exposition page.
  std::string render(const strata_scheduler_stats_t& stats) const;
};

}  // namespace strata::serve

#endif  // STRATA_SERVE_SRC_SERVER_METRICS_H_
