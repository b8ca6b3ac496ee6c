//===- prometheus.cc - Prometheus text exposition ---------------------------===//
// SPDX-License-Identifier: Apache-2.0

#include "prometheus.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace strata::serve {

namespace {

// Prometheus's float syntax: +Inf, -Inf, NaN, else a decimal number.
std::string formatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

}  // namespace

Histogram::Histogram(std::vector<double> upperBounds)
    : bounds_(std::move(upperBounds)), counts_(bounds_.size() + 1, 0) {
  std::sort(bounds_.begin(), bounds_.end());
}

void Histogram::observe(double value) {
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  std::lock_guard<std::mutex> lock(mutex_);
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

void Histogram::write(const std::string& name, const std::string& help,
                      std::string* out) const {
  writeFamilyHeader(name, help, "histogram", out);
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    writeSample(name + "_bucket", "le=\"" + formatValue(bounds_[i]) + "\"",
                static_cast<double>(cumulative), out);
  }
  writeSample(name + "_bucket", "le=\"+Inf\"", static_cast<double>(count_), out);
  writeSample(name + "_sum", "", sum_, out);
  writeSample(name + "_count", "", static_cast<double>(count_), out);
}

void writeFamilyHeader(const std::string& name, const std::string& help,
                       const char* type, std::string* out) {
  *out += "# HELP " + name + " " + help + "\n";
  *out += "# TYPE " + name + " " + type + "\n";
}

void writeSample(const std::string& name, const std::string& labels,
                 double value, std::string* out) {
  *out += name;
  if (!labels.empty()) *out += "{" + labels + "}";
  *out += " " + formatValue(value) + "\n";
}

std::vector<double> latencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25,
          0.5,   0.75,   1.0,   2.5,  5.0,   10.0, 20.0,  30.0, 60.0};
}

}  // namespace strata::serve
