//===- prometheus.h - Prometheus text exposition of counters and histograms -===//
// SPDX-License-Identifier: Apache-2.0
// The few metric kinds the server exports, written in the Prometheus text
// format 0.0.4 (HELP and TYPE lines, then samples; histograms as
// cumulative _bucket{le=...} series with _sum and _count). Debian packages
// no Prometheus client library for C++; this is all the server needs.

#ifndef STRATA_SERVE_SRC_PROMETHEUS_H_
#define STRATA_SERVE_SRC_PROMETHEUS_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace strata::serve {

/// A histogram of observations with fixed upper bounds; thread-safe.
class Histogram {
public:
  explicit Histogram(std::vector<double> upperBounds);
  void observe(double value);
  /// Appends the family |name| (HELP, TYPE and every series) to |out|.
  void write(const std::string& name, const std::string& help,
             std::string* out) const;

private:
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::vector<uint64_t> counts_;  // per bound, not cumulative; last = +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

/// Appends the HELP and TYPE lines of a family.
void writeFamilyHeader(const std::string& name, const std::string& help,
                       const char* type, std::string* out);

/// Appends one sample line: name{labels} value. |labels| is already
/// formatted (key="value",...) or empty.
void writeSample(const std::string& name, const std::string& labels,
                 double value, std::string* out);

/// Bounds for latencies in seconds, 1 ms to 60 s.
std::vector<double> latencyBuckets();

}  // namespace strata::serve

#endif  // STRATA_SERVE_SRC_PROMETHEUS_H_
