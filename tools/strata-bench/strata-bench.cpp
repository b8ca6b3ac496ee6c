//===- strata-bench.cpp - Time a plan of workloads on .strata artifacts ---===//
// SPDX-License-Identifier: Apache-2.0
// strata-bench --prefill P.strata --decode D.strata --plan PLAN.json
//              [--threads N] [--warmup N] [--seed N] [--json]
// The Strata engine of bench/ (bench/README.md): one call times every
// workload of the plan and prints one JSON object; `--accuracy` scores
// artifacts against a reference instead (AccuracyCommand.h). Links only the
// runtime.
//===----------------------------------------------------------------------===//

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "AccuracyCommand.h"
#include "Bench.h"
#include "Plan.h"
#include "tools/common/JsonText.h"
#include "tools/runtime-common/KernelIsa.h"
#include "tools/common/ParseCount.h"

using namespace strata::tools;

namespace {

const char kUsage[] =
    "usage: strata-bench [--prefill P.strata] [--decode D.strata]\n"
    "                    --plan PLAN.json [--threads N] [--warmup N]\n"
    "                    [--seed N] [--json] [--tokens]\n"
    "  --prefill FILE   artifact compiled from the prefill model\n"
    "  --decode FILE    artifact compiled from the with-past decode model;\n"
    "                   one with prefill/decode entries (a decoder compiled\n"
    "                   with defaults) runs generate workloads through the\n"
    "                   runtime's generator\n"
    "  --plan FILE      {\"workloads\": [{\"kind\": \"prefill\", \"seq\": "
    "128,\n"
    "                   \"batch\": 1}, {\"kind\": \"decode\", \"ctx\": 1024},\n"
    "                   {\"kind\": \"generate\", \"batch\": 4, \"prompt\": "
    "16,\n"
    "                   \"gen\": 32}, {\"kind\": \"ttft\", \"seq\": 128}]}\n"
    "  --threads N      session thread count (0: one per CPU; default 1)\n"
    "  --kernel-isa ISA the runtime kernels' instruction set at most:\n"
    "                   amx (default: the host's best), avx512, avx2 or\n"
    "                   scalar\n"
    "  --warmup N       untimed runs of each workload first (default 1)\n"
    "  --seed N         seed of the random ids and past caches (default "
    "1234)\n"
    "  --json           print one JSON object instead of a table\n"
    "  --tokens         with --json: also print each generation's prompt and\n"
    "                   generated ids (\"prompt_ids\", \"tokens\")\n";

struct Options {
  std::string prefill;
  std::string decode;
  std::string plan;
  long threads = 1;
  long warmup = 1;
  long seed = 1234;
  bool json = false;
  bool tokens = false;
};

int fail(const std::string &message) {
  std::fprintf(stderr, "strata-bench: error: %s\n", message.c_str());
  return 1;
}

using strata::tools::parseCount;

// Returns "" on success, "help", or the problem.
std::string parseArgs(int argc, char **argv, Options *options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--json" || arg == "--tokens") {
      (arg == "--json" ? options->json : options->tokens) = true;
      continue;
    }
    if (arg == "-h" || arg == "--help")
      return "help";
    if (arg != "--prefill" && arg != "--decode" && arg != "--plan" &&
        arg != "--threads" && arg != "--warmup" && arg != "--seed" &&
        arg != "--kernel-isa")
      return "unknown argument '" + arg + "'";
    if (i + 1 >= argc)
      return arg + " needs a value";
    const char *v = argv[++i];
    if (arg == "--prefill") {
      options->prefill = v;
    } else if (arg == "--decode") {
      options->decode = v;
    } else if (arg == "--plan") {
      options->plan = v;
    } else if (arg == "--threads") {
      if (!parseCount(v, 0, STRATA_SESSION_MAX_THREADS, &options->threads))
        return std::string("--threads expects a count in [0, ") +
               std::to_string(STRATA_SESSION_MAX_THREADS) + "], got '" + v +
               "'";
    } else if (arg == "--kernel-isa") {
      std::string problem = applyKernelIsa(v);
      if (!problem.empty())
        return problem;
    } else if (arg == "--warmup") {
      if (!parseCount(v, 0, 1000, &options->warmup))
        return std::string("--warmup expects a count in [0, 1000], got '") + v +
               "'";
    } else if (!parseCount(v, 0, 0x7fffffff, &options->seed)) {
      return std::string("--seed expects an integer in [0, 2147483647], "
                         "got '") +
             v + "'";
    }
  }
  if (options->plan.empty())
    return "no --plan given";
  if (options->prefill.empty() && options->decode.empty())
    return "no artifact given (--prefill and/or --decode)";
  return "";
}

bool readFile(const std::string &path, std::string *out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return false;
  *out = text.str();
  return true;
}

// Peak resident set of this process (VmHWM), 0 if /proc is unavailable.
long long peakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.compare(0, 6, "VmHWM:") == 0)
      return std::atoll(line.c_str() + 6) * 1024;
  }
  return 0;
}

using strata::tools::jsonString;

std::string jsonNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

// |values| as |rows| JSON arrays of equal length.
std::string jsonRows(const std::vector<int64_t> &values, int64_t rows) {
  std::string json = "[";
  size_t width = values.size() / static_cast<size_t>(rows);
  for (size_t i = 0; i < values.size(); ++i) {
    if (i % width == 0)
      json += i ? "], [" : "[";
    else
      json += ", ";
    json += std::to_string(values[i]);
  }
  return json + "]]";
}

// The workload's parameters as JSON members ("kind": ..., "seq": ...).
std::string describe(const Workload &w) {
  std::string text = "\"kind\": " + jsonString(kindName(w.kind)) +
                     ", \"batch\": " + std::to_string(w.batch);
  switch (w.kind) {
  case WorkloadKind::Prefill:
  case WorkloadKind::Ttft:
    return text + ", \"seq\": " + std::to_string(w.seq);
  case WorkloadKind::Decode:
    return text + ", \"ctx\": " + std::to_string(w.ctx) +
           ", \"steps\": " + std::to_string(w.steps);
  case WorkloadKind::Generate:
    return text + ", \"prompt\": " + std::to_string(w.prompt) +
           ", \"gen\": " + std::to_string(w.gen);
  }
  return text;
}

// One human-readable line of a result.
std::string tableLine(const Workload &w, const BenchResult &r) {
  char buffer[160];
  switch (w.kind) {
  case WorkloadKind::Prefill:
    std::snprintf(buffer, sizeof(buffer),
                  "prefill  seq %lld batch %lld: %.3f ms",
                  static_cast<long long>(w.seq),
                  static_cast<long long>(w.batch), r.seconds * 1e3);
    break;
  case WorkloadKind::Ttft:
    std::snprintf(buffer, sizeof(buffer),
                  "ttft     seq %lld batch %lld: %.3f ms",
                  static_cast<long long>(w.seq),
                  static_cast<long long>(w.batch), r.seconds * 1e3);
    break;
  case WorkloadKind::Decode:
    std::snprintf(buffer, sizeof(buffer),
                  "decode   ctx %lld batch %lld: %.3f ms/step",
                  static_cast<long long>(w.ctx),
                  static_cast<long long>(w.batch), r.seconds * 1e3);
    break;
  case WorkloadKind::Generate:
    std::snprintf(
        buffer, sizeof(buffer),
        "generate batch %lld prompt %lld gen %lld: %.3f s, %.1f "
        "tok/s, ttft %.3f ms",
        static_cast<long long>(w.batch), static_cast<long long>(w.prompt),
        static_cast<long long>(w.gen), r.seconds,
        static_cast<double>(w.batch * w.gen) / r.seconds, r.ttftSeconds * 1e3);
    break;
  }
  return buffer;
}

int runTool(const Options &options) {
  std::string text;
  if (!readFile(options.plan, &text))
    return fail(options.plan + ": cannot read the plan");
  std::vector<Workload> plan;
  std::string problem = parsePlan(text, &plan);
  if (!problem.empty())
    return fail(options.plan + ": " + problem);

  Bench bench;
  problem = bench.open(options.prefill, options.decode,
                       static_cast<uint32_t>(options.threads));
  if (!problem.empty())
    return fail(problem);
  // Every workload is checked before the first one runs, so a bad plan
  // fails in milliseconds rather than after minutes of measurement.
  for (size_t i = 0; i < plan.size(); ++i) {
    problem = bench.check(plan[i]);
    if (!problem.empty())
      return fail("workload " + std::to_string(i + 1) + " (" +
                  kindName(plan[i].kind) + "): " + problem);
  }

  std::vector<BenchResult> results(plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    problem = bench.run(plan[i], static_cast<int>(options.warmup),
                        static_cast<uint64_t>(options.seed), &results[i]);
    if (!problem.empty())
      return fail("workload " + std::to_string(i + 1) + " (" +
                  kindName(plan[i].kind) + "): " + problem);
    if (!options.json) {
      std::printf("%s\n", tableLine(plan[i], results[i]).c_str());
      std::fflush(stdout);
    }
  }

  double load = bench.prefillLoadSeconds() + bench.decodeLoadSeconds();
  long long rss = peakRssBytes();
  if (!options.json) {
    std::printf("load %.3f s (prefill %.3f s, decode %.3f s), peak RSS %.1f "
                "MB, %ld thread(s), kernels %s\n",
                load, bench.prefillLoadSeconds(), bench.decodeLoadSeconds(),
                static_cast<double>(rss) / 1e6, options.threads,
                strata_cpu_kernel_isa());
    return 0;
  }
  std::string json =
      "{\"prefill_artifact\": " + jsonString(options.prefill) +
      ", \"decode_artifact\": " + jsonString(options.decode) +
      ", \"threads\": " + std::to_string(options.threads) +
      ", \"kernel_isa\": " + jsonString(strata_cpu_kernel_isa()) +
      ", \"warmup\": " + std::to_string(options.warmup) +
      ", \"seed\": " + std::to_string(options.seed) +
      ", \"load_seconds\": " + jsonNumber(load) +
      ", \"prefill_load_seconds\": " + jsonNumber(bench.prefillLoadSeconds()) +
      ", \"decode_load_seconds\": " + jsonNumber(bench.decodeLoadSeconds()) +
      ", \"peak_rss_bytes\": " + std::to_string(rss) + ", \"results\": [";
  for (size_t i = 0; i < plan.size(); ++i) {
    const Workload &w = plan[i];
    const BenchResult &r = results[i];
    json += (i ? ", {" : "{") + describe(w) +
            ", \"seconds\": " + jsonNumber(r.seconds);
    if (r.ttftSeconds >= 0)
      json += ", \"ttft_seconds\": " + jsonNumber(r.ttftSeconds);
    if (w.kind == WorkloadKind::Generate)
      json += ", \"tokens_per_second\": " +
              jsonNumber(static_cast<double>(w.batch * w.gen) / r.seconds);
    if (w.kind == WorkloadKind::Generate && options.tokens)
      json += ", \"prompt_ids\": " + jsonRows(r.promptIds, w.batch) +
              ", \"tokens\": " + jsonRows(r.tokens, w.batch);
    json += "}";
  }
  json += "]}";
  std::printf("%s\n", json.c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (wantsAccuracy(argc, argv))
    return runAccuracyCommand(argc, argv);
  Options options;
  std::string problem = parseArgs(argc, argv, &options);
  if (problem == "help") {
    std::printf("%s\n%s", kUsage, kAccuracyUsage);
    return 0;
  }
  if (!problem.empty()) {
    std::fprintf(stderr, "strata-bench: error: %s\n%s", problem.c_str(),
                 kUsage);
    return 1;
  }
  return runTool(options);
}
