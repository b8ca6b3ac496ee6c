//===- strata-run.cpp - Run an entry point of a .strata artifact ----------===//
// SPDX-License-Identifier: Apache-2.0
// strata-run OUT.strata [--entry NAME] --input NAME=FILE.npy ...
//            [--output-dir DIR] [--repeat N] [--threads N] [--json]
//            [--inspect] [--verify]
// strata-run generate MODEL.strata --prompt TEXT ... (Generate.cpp)
// Links only the runtime and the tokenizers: inputs and outputs are NumPy
// .npy files.
//===----------------------------------------------------------------------===//

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "EntryInputs.h"
#include "Generate.h"
#include "Npy.h"
#include "tools/rank-common/RankGroup.h"
#include "ToolErrors.h"
#include "strata/runtime/api.h"
#include "strata/runtime/cpu.h"
#include "tools/common/JsonText.h"
#include "tools/runtime-common/KernelIsa.h"
#include "tools/common/ParseCount.h"

using namespace strata::tools;

namespace {

const char kUsage[] =
    "usage: strata-run OUT.strata [--entry NAME] --input NAME=FILE.npy ...\n"
    "                  [--output-dir DIR] [--repeat N] [--threads N]\n"
    "                  [--json] [--inspect] [--verify]\n"
    "                  [--communicator mpi|nccl|none]\n"
    "       strata-run generate MODEL.strata --prompt TEXT ... (see\n"
    "                  strata-run generate --help)\n"
    "  --entry NAME          entry point to run (default: main, or the\n"
    "                        only one)\n"
    "  --steps FILE          run the steps of FILE on one session, in order\n"
    "                        (states such as a KV cache carry over): one\n"
    "                        per line, ENTRY NAME=FILE.npy ...; outputs of\n"
    "                        step k go to --output-dir DIR/k/\n"
    "  --input NAME=FILE     a .npy file for input NAME (one per input)\n"
    "  --output-dir DIR      write each output as DIR/<name>.npy\n"
    "  --repeat N            run N times and report every run's time\n"
    "  --threads N           session thread count (default 0: one per CPU)\n"
    "  --kernel-isa ISA      the runtime kernels' instruction set at most:\n"
    "                        amx (default: the host's best), avx512, avx2\n"
    "                        or scalar\n"
    "  --json                print the timings (with --inspect: the\n"
    "                        signatures) as one JSON object\n"
    "  --inspect             print the entry signatures, dims with their\n"
    "                        compiled maxima, and exit\n"
    "  --verify              verify the weights checksum before running\n";

struct Options {
  std::string artifact;
  std::string entry;
  std::vector<std::pair<std::string, std::string>> inputs;
  std::string outputDir;
  std::string steps;
  std::string communicator;
  long repeat = 1;
  long threads = 0;
  bool json = false;
  bool inspect = false;
  bool verify = false;
};

using strata::tools::fail;
using strata::tools::failStatus;

using strata::tools::parseCount;

// Returns an empty string on success, else the problem.
std::string parseArgs(int argc, char **argv, Options *options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc)
        return nullptr;
      (void)flag;
      return argv[++i];
    };
    if (arg == "--json") {
      options->json = true;
    } else if (arg == "--inspect") {
      options->inspect = true;
    } else if (arg == "--verify") {
      options->verify = true;
    } else if (arg == "--entry" || arg == "--input" || arg == "--output-dir" ||
               arg == "--repeat" || arg == "--threads" || arg == "--steps" ||
               arg == "--kernel-isa" || arg == "--communicator") {
      const char *v = value(arg.c_str());
      if (!v)
        return arg + " needs a value";
      if (arg == "--entry") {
        options->entry = v;
      } else if (arg == "--kernel-isa") {
        std::string problem = applyKernelIsa(v);
        if (!problem.empty())
          return problem;
      } else if (arg == "--steps") {
        options->steps = v;
      } else if (arg == "--communicator") {
        options->communicator = v;
      } else if (arg == "--output-dir") {
        options->outputDir = v;
      } else if (arg == "--repeat") {
        if (!parseCount(v, 1, 1000000, &options->repeat))
          return std::string(
                     "--repeat expects a count in [1, 1000000], got '") +
                 v + "'";
      } else if (arg == "--threads") {
        if (!parseCount(v, 0, STRATA_SESSION_MAX_THREADS, &options->threads))
          return std::string("--threads expects a count in [0, ") +
                 std::to_string(STRATA_SESSION_MAX_THREADS) + "], got '" + v +
                 "'";
      } else {
        std::string spec = v;
        size_t eq = spec.find('=');
        if (eq == 0 || eq == std::string::npos || eq + 1 == spec.size())
          return "--input expects NAME=FILE.npy, got '" + spec + "'";
        options->inputs.push_back({spec.substr(0, eq), spec.substr(eq + 1)});
      }
    } else if (arg == "-h" || arg == "--help") {
      return "help";
    } else if (!arg.empty() && arg[0] == '-') {
      return "unknown option '" + arg + "'";
    } else if (options->artifact.empty()) {
      options->artifact = arg;
    } else {
      return "more than one artifact given ('" + options->artifact + "', '" +
             arg + "')";
    }
  }
  if (options->artifact.empty())
    return "no artifact given";
  return "";
}

// "name: dtype[dims]" of a tensor or state signature.
template <typename Signature>
std::string describeTensor(const Signature &t) {
  std::string text =
      std::string(t.name) + ": " + strata_dtype_name(t.dtype) + "[";
  for (uint32_t d = 0; d < t.rank; ++d) {
    if (d)
      text += ", ";
    if (t.dims[d].symbol && t.dims[d].max == STRATA_DIM_MAX_FROM_DATA)
      text += std::string(t.dims[d].symbol) + " (from data)";
    else if (t.dims[d].symbol)
      text +=
          std::string(t.dims[d].symbol) + "<=" + std::to_string(t.dims[d].max);
    else
      text += std::to_string(t.dims[d].extent);
  }
  return text + "]";
}

const char *entryKindName(strata_entry_kind_t kind) {
  switch (kind) {
  case STRATA_ENTRY_KIND_PREFILL:
    return "prefill";
  case STRATA_ENTRY_KIND_DECODE:
    return "decode";
  case STRATA_ENTRY_KIND_VERIFY:
    return "verify";
  default:
    return "generic";
  }
}

const char *stateScopeName(strata_state_scope_t scope) {
  return scope == STRATA_STATE_SCOPE_SHARED ? "shared" : "per-sequence";
}

// The runtime kernels |module| calls: (import, the set serving it here).
std::vector<std::pair<const char *, const char *>>
moduleKernels(const strata_module_t *module) {
  std::vector<std::pair<const char *, const char *>> kernels;
  for (size_t i = 0; i < strata_module_kernel_count(module); ++i) {
    const char *import = nullptr, *set = nullptr;
    if (strata_status_t status =
            strata_module_kernel(module, i, &import, &set)) {
      strata_status_free(status);  // in range: cannot happen
      continue;
    }
    kernels.emplace_back(import, set);
  }
  return kernels;
}

void printInspect(const strata_module_t *module) {
  std::printf("cpu features:");
  size_t featureCount = strata_module_cpu_feature_count(module);
  if (featureCount == 0)
    std::printf(" (baseline x86-64)");
  for (size_t i = 0; i < featureCount; ++i)
    std::printf(" %s", strata_module_cpu_feature(module, i));
  std::printf(
      "\nweights: %llu bytes\n",
      static_cast<unsigned long long>(strata_module_weights_size(module)));
  // Which runtime kernel each matmul (by precision) and attention uses
  // here, and why not AMX where it is not.
  std::printf("kernels: %s", strata_cpu_kernel_isa());
  if (const char *amx = strata_cpu_amx_status())
    std::printf(" (no AMX tiles: %s)", amx);
  std::printf("\n");
  for (const auto &[import, set] : moduleKernels(module))
    std::printf("kernel %s: %s\n", import, set);
  for (size_t i = 0; i < strata_module_symbolic_dim_count(module); ++i) {
    const strata_symbolic_dim_t *dim = strata_module_symbolic_dim(module, i);
    if (dim->max == STRATA_DIM_MAX_FROM_DATA)
      std::printf("dim %s from data (no compiled maximum)\n", dim->name);
    else
      std::printf("dim %s <= %lld\n", dim->name,
                  static_cast<long long>(dim->max));
  }
  for (size_t e = 0; e < strata_module_entry_count(module); ++e) {
    const strata_entry_signature_t *entry = strata_module_entry(module, e);
    if (entry->kind == STRATA_ENTRY_KIND_GENERIC)
      std::printf("entry %s (symbol %s)\n", entry->name, entry->symbol);
    else
      std::printf("entry %s (symbol %s, %s)\n", entry->name, entry->symbol,
                  entryKindName(entry->kind));
    for (size_t i = 0; i < entry->input_count; ++i)
      std::printf("  input  %s\n", describeTensor(entry->inputs[i]).c_str());
    for (size_t i = 0; i < entry->output_count; ++i)
      std::printf("  output %s\n", describeTensor(entry->outputs[i]).c_str());
  }
  for (size_t i = 0; i < strata_module_state_count(module); ++i) {
    const strata_state_signature_t *state = strata_module_state(module, i);
    std::printf("state %s, %s\n", describeTensor(*state).c_str(),
                stateScopeName(state->scope));
  }
}

using strata::tools::jsonString;

/// A dim maximum; null for one read from tensor data.
std::string jsonMax(int64_t max) {
  return max == STRATA_DIM_MAX_FROM_DATA ? "null" : std::to_string(max);
}

template <typename Signature> std::string jsonTensor(const Signature &t) {
  std::string json = "{\"name\": " + jsonString(t.name) +
                     ", \"dtype\": " + jsonString(strata_dtype_name(t.dtype)) +
                     ", \"dims\": [";
  for (uint32_t d = 0; d < t.rank; ++d) {
    json += d ? ", " : "";
    if (t.dims[d].symbol)
      json += "{\"symbol\": " + jsonString(t.dims[d].symbol) +
              ", \"max\": " + jsonMax(t.dims[d].max) + "}";
    else
      json += std::to_string(t.dims[d].extent);
  }
  return json + "]}";
}

// --inspect --json: the same facts as printInspect, as one JSON object
// (a static dim is a number, a symbolic one {"symbol", "max"}).
void printInspectJson(const strata_module_t *module) {
  std::string json = "{\"cpu_features\": [";
  for (size_t i = 0; i < strata_module_cpu_feature_count(module); ++i)
    json += (i ? ", " : "") + jsonString(strata_module_cpu_feature(module, i));
  json += "], \"weights_bytes\": " +
          std::to_string(strata_module_weights_size(module)) +
          ", \"kernel_isa\": " + jsonString(strata_cpu_kernel_isa()) +
          ", \"amx_status\": " +
          (strata_cpu_amx_status() ? jsonString(strata_cpu_amx_status())
                                   : std::string("null")) +
          ", \"kernels\": [";
  bool first = true;
  for (const auto &[import, set] : moduleKernels(module)) {
    json += (first ? "" : ", ") + std::string("{\"import\": ") +
            jsonString(import) + ", \"set\": " + jsonString(set) + "}";
    first = false;
  }
  json += "], \"dims\": [";
  for (size_t i = 0; i < strata_module_symbolic_dim_count(module); ++i) {
    const strata_symbolic_dim_t *dim = strata_module_symbolic_dim(module, i);
    json += (i ? ", " : "") + std::string("{\"name\": ") +
            jsonString(dim->name) + ", \"max\": " + jsonMax(dim->max) +
            "}";
  }
  json += "], \"entries\": [";
  for (size_t e = 0; e < strata_module_entry_count(module); ++e) {
    const strata_entry_signature_t *entry = strata_module_entry(module, e);
    json += (e ? ", " : "") + std::string("{\"name\": ") +
            jsonString(entry->name) +
            ", \"symbol\": " + jsonString(entry->symbol) +
            ", \"kind\": " + jsonString(entryKindName(entry->kind)) +
            ", \"inputs\": [";
    for (size_t i = 0; i < entry->input_count; ++i)
      json += (i ? ", " : "") + jsonTensor(entry->inputs[i]);
    json += "], \"outputs\": [";
    for (size_t i = 0; i < entry->output_count; ++i)
      json += (i ? ", " : "") + jsonTensor(entry->outputs[i]);
    json += "]}";
  }
  json += "], \"states\": [";
  for (size_t i = 0; i < strata_module_state_count(module); ++i) {
    const strata_state_signature_t *state = strata_module_state(module, i);
    std::string tensor = jsonTensor(*state);
    tensor.pop_back(); // the closing brace: the scope goes inside
    json += (i ? ", " : "") + tensor + ", \"scope\": " +
            jsonString(stateScopeName(state->scope)) + "}";
  }
  std::printf("%s]}\n", json.c_str());
}

std::string jsonNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6f", value);
  return buffer;
}

int runToolIn(Options options, RankGroup &group) {
  std::string problem = group.open(options.communicator);
  if (!problem.empty())
    return fail(problem);
  // Every rank runs the same calls; rank 0 alone reports them.
  if (!group.lead()) {
    if (!std::freopen("/dev/null", "w", stdout))
      return fail("cannot silence rank " + std::to_string(group.rank()));
    options.outputDir.clear();
  }
  strata_allocator_t allocator = strata_allocator_system();
  auto loadStart = std::chrono::steady_clock::now();
  strata_module_t *module = nullptr;
  std::string loaded;
  strata_status_t status =
      group.loadModule(options.artifact, allocator, &module, &loaded);
  if (status)
    return failStatus("cannot load", status);
  options.artifact = loaded;
  double loadMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - loadStart)
                      .count();
  struct ModuleGuard {
    strata_module_t *m;
    ~ModuleGuard() { strata_module_release(m); }
  } moduleGuard{module};

  if (options.verify) {
    status = strata_module_verify_weights(module);
    if (status)
      return failStatus("weights verification failed", status);
    if (!options.json)
      std::printf("weights: checksum OK\n");
  }
  if (options.inspect) {
    if (options.json)
      printInspectJson(module);
    else
      printInspect(module);
    return 0;
  }

  if (!options.steps.empty())
    return runSteps(module, options.steps, options.outputDir, options.threads,
                    options.json, group.communicator());
  const strata_entry_signature_t *entry = nullptr;
  if (options.entry.empty()) {
    // `main` is the model as exported; other entries are named.
    size_t count = strata_module_entry_count(module);
    if (count == 1) {
      entry = strata_module_entry(module, 0);
    } else if (status = strata_module_find_entry(module, "main", &entry);
               status) {
      strata_status_free(status);
      std::string names;
      for (size_t e = 0; e < count; ++e)
        names +=
            (e ? ", " : "") + std::string(strata_module_entry(module, e)->name);
      return fail("the artifact has several entries (" + names +
                  ") and none is 'main'; choose one with --entry");
    }
  } else {
    status = strata_module_find_entry(module, options.entry.c_str(), &entry);
    if (status)
      return failStatus("--entry", status);
  }

  // Inputs, matched by name.
  TensorList inputs;
  std::string inputError;
  if (!loadEntryInputs(*entry, options.inputs, allocator, &inputs,
                       &inputError))
    return fail(inputError);

  SessionHandle session;
  status = createSession(module, options.threads, allocator, &session,
                         group.communicator());
  if (status)
    return failStatus("cannot create a session", status);

  TensorList outputs;
  std::vector<double> timesMs;
  for (long r = 0; r < options.repeat; ++r) {
    double ms = 0;
    status = runEntry(session.session, *entry, inputs, &outputs, &ms);
    if (status)
      return failStatus("run failed", status);
    timesMs.push_back(ms);
    if (!options.json)
      std::printf("run %ld: %.3f ms\n", r + 1, ms);
  }

  // Outputs.
  std::vector<std::string> written(entry->output_count);
  if (!options.outputDir.empty()) {
    std::string error;
    if (!writeEntryOutputs(*entry, outputs, options.outputDir, &written,
                           &error))
      return fail(error);
  }

  std::vector<double> sorted = timesMs;
  std::sort(sorted.begin(), sorted.end());
  double median =
      sorted.size() % 2
          ? sorted[sorted.size() / 2]
          : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  double mean = 0;
  for (double t : timesMs)
    mean += t / static_cast<double>(timesMs.size());

  if (options.json) {
    std::string json = "{\"artifact\": " + jsonString(options.artifact) +
                       ", \"entry\": " + jsonString(entry->name) +
                       ", \"load_ms\": " + jsonNumber(loadMs) +
                       ", \"runs_ms\": [";
    for (size_t i = 0; i < timesMs.size(); ++i)
      json += (i ? ", " : "") + jsonNumber(timesMs[i]);
    json += "], \"median_ms\": " + jsonNumber(median) +
            ", \"min_ms\": " + jsonNumber(sorted.front()) +
            ", \"mean_ms\": " + jsonNumber(mean) + ", \"outputs\": [";
    for (size_t o = 0; o < entry->output_count; ++o) {
      strata_tensor_t *t = outputs.tensors[o];
      json += (o ? ", " : "") + std::string("{\"name\": ") +
              jsonString(entry->outputs[o].name) + ", \"dtype\": " +
              jsonString(strata_dtype_name(strata_tensor_dtype(t))) +
              ", \"shape\": [";
      for (uint32_t d = 0; d < strata_tensor_rank(t); ++d)
        json += (d ? ", " : "") + std::to_string(strata_tensor_dims(t)[d]);
      json += "]";
      if (!written[o].empty())
        json += ", \"file\": " + jsonString(written[o]);
      json += "}";
    }
    json += "]}";
    std::printf("%s\n", json.c_str());
    return 0;
  }
  std::printf("entry %s: %zu run(s), median %.3f ms, min %.3f ms, mean "
              "%.3f ms (load %.3f ms)\n",
              entry->name, timesMs.size(), median, sorted.front(), mean,
              loadMs);
  for (size_t o = 0; o < entry->output_count; ++o) {
    strata_tensor_t *t = outputs.tensors[o];
    std::string shape;
    for (uint32_t d = 0; d < strata_tensor_rank(t); ++d)
      shape += (d ? ", " : "") + std::to_string(strata_tensor_dims(t)[d]);
    std::printf("output %s: %s[%s]%s%s\n", entry->outputs[o].name,
                strata_dtype_name(strata_tensor_dtype(t)), shape.c_str(),
                written[o].empty() ? "" : " -> ", written[o].c_str());
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "generate") == 0)
    return strata::tools::runGenerate(argc - 1, argv + 1);
  Options options;
  std::string problem = parseArgs(argc, argv, &options);
  if (problem == "help") {
    std::fputs(kUsage, stdout);
    std::fputs(kCommunicatorHelp, stdout);
    return 0;
  }
  if (!problem.empty()) {
    std::fprintf(stderr, "strata-run: error: %s\n%s", problem.c_str(), kUsage);
    return 1;
  }
  // The group outlives the sessions; a rank that failed alone ends them
  // all once its sessions are released.
  RankGroup group;
  AbortJobOnFailure aborts(group);
  return aborts.done(runToolIn(options, group));
}
