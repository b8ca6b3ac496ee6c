//===- Plan.h - The workload plan of strata-bench ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// PLAN.json (bench/README.md): {"workloads": [{"kind": "prefill", "seq": 128,
// "batch": 1}, ...]}, parsed by a small defensive JSON reader: a malformed
// plan yields a message naming the workload and key, never a crash.
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_BENCH_PLAN_H_
#define STRATA_TOOLS_STRATA_BENCH_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

namespace strata::tools {

/// What one workload measures.
enum class WorkloadKind {
  /// One prefill call of |seq| tokens.
  Prefill,
  /// One decode step at context |ctx| (past = ctx - 1), the mean of |steps|.
  Decode,
  /// Prefill |prompt| tokens, then |gen| - 1 greedy decode steps.
  Generate,
  /// Prefill |seq| tokens and the argmax of the last position.
  Ttft,
};

/// One entry of the plan; unused fields stay 0.
struct Workload {
  WorkloadKind kind = WorkloadKind::Prefill;
  int64_t batch = 1;
  int64_t seq = 0;
  int64_t ctx = 0;
  int64_t steps = 0;
  int64_t prompt = 0;
  int64_t gen = 0;
};

/// The plan's name of |kind| ("prefill", "decode", "generate", "ttft").
const char *kindName(WorkloadKind kind);

/// Largest batch, length or step count a plan may ask for.
constexpr int64_t kPlanMaxCount = int64_t{1} << 20;

/// Parses the text of PLAN.json into |out|. Returns "" on success, else the
/// problem (`workload 2: 'seq' must be an integer in [1, 1048576], got 0`).
std::string parsePlan(const std::string &text, std::vector<Workload> *out);

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_BENCH_PLAN_H_
