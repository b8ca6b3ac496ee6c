//===- Bench.h - Running the workloads of a plan ----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Loads a prefill and a decode artifact once, keeps one session per artifact
// (so thread pools and reused buffers stay warm from run to run) and times
// the workloads of a plan the way bench/engines.py times onnxruntime.
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_BENCH_BENCH_H_
#define STRATA_TOOLS_STRATA_BENCH_BENCH_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Plan.h"
#include "strata/runtime/runtime.hpp"

namespace strata::tools {

/// One loaded artifact and its session.
struct BenchModel {
  std::string path;
  strata::Module module;
  strata::Session session;
  const strata_entry_signature_t *entry = nullptr;
  /// Module load plus session creation.
  double loadSeconds = 0;
  /// Index of the 'logits' output.
  size_t logitsIndex = 0;
};

/// The measurement of one workload.
struct BenchResult {
  /// prefill: the call; decode: mean seconds per step; generate: wall time of
  /// the whole generation; ttft: prefill plus argmax.
  double seconds = 0;
  /// generate and ttft: time to the first token (prefill plus argmax).
  double ttftSeconds = -1;
  /// generate: the prompt ids and the generated ids, row-major per batch
  /// row ([batch, prompt] and [batch, gen]).
  std::vector<int64_t> promptIds;
  std::vector<int64_t> tokens;
};

class Bench {
public:
  /// Loads the artifacts (either path may be empty when no workload needs
  /// it; the same path twice loads one module) and creates sessions with
  /// |threads| threads. Returns "" or the problem.
  std::string open(const std::string &prefillPath,
                   const std::string &decodePath, uint32_t threads);

  /// Checks that the loaded artifacts can run |workload| (inputs known,
  /// shapes within the compiled maxima) without running it.
  std::string check(const Workload &workload) const;

  /// Runs |workload| |warmup| times untimed, then timed. Returns "" or the
  /// problem.
  std::string run(const Workload &workload, int warmup, uint64_t seed,
                  BenchResult *result);

  /// Load seconds of the prefill and decode artifacts (0 when not loaded or
  /// shared with the other role).
  double prefillLoadSeconds() const;
  double decodeLoadSeconds() const;

private:
  /// generate on an artifact with prefill and decode entries: the
  /// runtime's generator (the sequences added, then steps until all end);
  /// TTFT is the time until every sequence has its first token.
  std::string timeGeneratorRun(const Workload &w, uint64_t seed,
                               BenchResult *result);

  /// What one call binds: batch rows, new tokens per row, past length.
  struct Step {
    int64_t batch = 1;
    int64_t seq = 1;
    int64_t past = 0;
  };

  std::string loadModel(const std::string &path, const char *role,
                        uint32_t threads, std::shared_ptr<BenchModel> *out);
  std::string checkStep(const BenchModel *model, const char *role,
                        const Step &step) const;
  std::string makeInputs(const BenchModel &model, const Step &step,
                         const std::vector<int64_t> &ids,
                         const std::map<std::string, strata::Tensor> &past,
                         uint64_t seed, std::vector<strata::Tensor> *owned,
                         std::vector<const strata::Tensor *> *ordered) const;
  std::string call(BenchModel &model, const std::vector<const Tensor *> &in,
                   std::vector<strata::Tensor> *outputs);
  std::string argmaxLast(const BenchModel &model,
                         const std::vector<strata::Tensor> &outputs,
                         std::vector<int64_t> *next) const;
  std::string timePrefill(const Workload &w, uint64_t seed, bool argmax,
                          double *seconds);
  std::string timeDecode(const Workload &w, uint64_t seed, int warmup,
                         double *seconds);
  std::string timeGenerate(const Workload &w, uint64_t seed,
                           BenchResult *result);

  std::shared_ptr<BenchModel> prefill_;
  std::shared_ptr<BenchModel> decode_;
};

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_BENCH_BENCH_H_
