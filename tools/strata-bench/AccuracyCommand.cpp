//===- AccuracyCommand.cpp - The --accuracy mode of strata-bench ----------===//
// SPDX-License-Identifier: Apache-2.0
// Defaults follow test/e2e/check_precision.py (8 stretches of 257 bytes),
// cut to what every artifact was compiled for, so a plain run on the
// fixture reproduces the numbers docs/design/precision.md quotes.
//===----------------------------------------------------------------------===//

#include "AccuracyCommand.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "Accuracy.h"
#include "HeldOut.h"
#include "strata/runtime/session.h"
#include "tools/common/JsonText.h"
#include "tools/common/ParseCount.h"

namespace strata::tools {

const char kAccuracyUsage[] =
    "usage: strata-bench --accuracy [--reference REF.strata] ARTIFACT...\n"
    "                    (--text FILE | --token-ids FILE) [--slots N]\n"
    "                    [--length L] [--entry decode|prefill] [--threads N]\n"
    "                    [--json]\n"
    "  Teacher-forces held-out data through artifacts compiled from one\n"
    "  model and scores each against the reference (normally fp32):\n"
    "  cross-entropy of the next token, top-1 agreement with the reference\n"
    "  and mean KL(reference || artifact), over every scored position.\n"
    "  --reference FILE  the reference artifact (default: the first\n"
    "                    ARTIFACT); it is scored too, against itself\n"
    "  --text FILE       a byte-level model's held-out text: the bytes are\n"
    "                    the token ids; --slots stretches of --length bytes\n"
    "                    spread evenly over the file; bits per byte\n"
    "  --token-ids FILE  token ids, one whitespace-separated sequence per\n"
    "                    line, run --slots lines at a time; bits and nats\n"
    "                    per token\n"
    "  --slots N         sequences in flight at once (default 8, or fewer\n"
    "                    if an artifact has fewer slots)\n"
    "  --length L        tokens per sequence, the last only predicted\n"
    "                    (text: default 257, or the context + 1 if less;\n"
    "                    token ids: longer lines are cut, default whole)\n"
    "  --entry decode    the first token through 'prefill', then one\n"
    "                    'decode' step per token (default)\n"
    "  --entry prefill   each sequence but its last token in one 'prefill'\n"
    "                    call, scored on 'all_logits' (artifacts compiled\n"
    "                    with --prefill-logits all): prefill precisions\n"
    "  --threads N       session thread count (0: one per CPU; default 1)\n"
    "  --json            print one JSON object instead of a table\n";

namespace {

struct AccuracyOptions {
  std::vector<std::string> artifacts; // the reference first
  std::string text;
  std::string tokenIds;
  long slots = 0;  // 0: the default
  long length = 0; // 0: the default
  ScoredEntry entry = ScoredEntry::Decode;
  long threads = 1;
  bool json = false;
};

constexpr long kDefaultSlots = 8;
constexpr long kDefaultTextLength = 257;

// Returns "" on success, "help", or the problem.
std::string parseArgs(int argc, char **argv, AccuracyOptions *options) {
  std::string reference;
  std::vector<std::string> others;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--accuracy")
      continue;
    if (arg == "--json") {
      options->json = true;
      continue;
    }
    if (arg == "-h" || arg == "--help")
      return "help";
    if (arg.compare(0, 1, "-") != 0) {
      others.push_back(arg);
      continue;
    }
    if (arg != "--reference" && arg != "--text" && arg != "--token-ids" &&
        arg != "--slots" && arg != "--length" && arg != "--entry" &&
        arg != "--threads")
      return "unknown argument '" + arg + "' in --accuracy mode";
    if (i + 1 >= argc)
      return arg + " needs a value";
    const char *v = argv[++i];
    if (arg == "--reference") {
      reference = v;
    } else if (arg == "--text") {
      options->text = v;
    } else if (arg == "--token-ids") {
      options->tokenIds = v;
    } else if (arg == "--slots") {
      if (!parseCount(v, 1, 1 << 20, &options->slots))
        return std::string("--slots expects a count in [1, 1048576], got '") +
               v + "'";
    } else if (arg == "--length") {
      if (!parseCount(v, 2, 1 << 24, &options->length))
        return std::string("--length expects a count in [2, 16777216] (one "
                           "token fed, one predicted at least), got '") +
               v + "'";
    } else if (arg == "--entry") {
      std::string entry = v;
      if (entry != "decode" && entry != "prefill")
        return "--entry expects 'decode' or 'prefill', got '" + entry + "'";
      options->entry =
          entry == "decode" ? ScoredEntry::Decode : ScoredEntry::Prefill;
    } else if (!parseCount(v, 0, STRATA_SESSION_MAX_THREADS,
                           &options->threads)) {
      return std::string("--threads expects a count in [0, ") +
             std::to_string(STRATA_SESSION_MAX_THREADS) + "], got '" + v + "'";
    }
  }
  if (!reference.empty())
    options->artifacts.push_back(reference);
  options->artifacts.insert(options->artifacts.end(), others.begin(),
                            others.end());
  if (options->artifacts.empty())
    return "no artifact given (the reference first, then the artifacts to "
           "score)";
  if (options->text.empty() == options->tokenIds.empty())
    return "give the held-out data as one of --text FILE or --token-ids FILE";
  return "";
}

std::string jsonNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

void printTable(const AccuracyOptions &options,
                const std::vector<AccuracyResult> &results) {
  bool bytes = !options.text.empty();
  int width = 8;
  for (const AccuracyResult &r : results)
    width = std::max(width, static_cast<int>(r.path.size()));
  double reference = results[0].bitsPerToken();
  // A token file's cross-entropy is also given in nats, the unit of most
  // published perplexities (exp of it).
  std::printf("%-*s  %10s%s  %8s  %8s  %10s  %9s\n", width, "artifact",
              bytes ? "bits/byte" : "bits/token", bytes ? "" : "  nats/token",
              "x ref", "top-1", "mean KL", "positions");
  for (size_t i = 0; i < results.size(); ++i) {
    const AccuracyResult &r = results[i];
    std::printf("%-*s  %10.4f", width, r.path.c_str(), r.bitsPerToken());
    if (!bytes)
      std::printf("  %10.4f", r.natsPerToken());
    std::printf("  %8.4f  %8.4f  %10.3e  %9lld%s\n",
                reference > 0 ? r.bitsPerToken() / reference : 0.0,
                r.top1Agreement(), r.meanKl(),
                static_cast<long long>(r.positions),
                i == 0 ? "  (reference)" : "");
  }
}

void printJson(const AccuracyOptions &options, int64_t sequences, int64_t slots,
               int64_t length, const std::vector<AccuracyResult> &results) {
  bool bytes = !options.text.empty();
  double reference = results[0].bitsPerToken();
  std::string json =
      "{\"reference\": " + jsonString(results[0].path) +
      ", \"data\": " + jsonString(bytes ? options.text : options.tokenIds) +
      ", \"data_kind\": " + jsonString(bytes ? "text" : "token_ids") +
      ", \"entry\": " +
      jsonString(options.entry == ScoredEntry::Decode ? "decode" : "prefill") +
      ", \"sequences\": " + std::to_string(sequences) +
      ", \"slots\": " + std::to_string(slots) +
      ", \"length\": " + std::to_string(length) +
      ", \"threads\": " + std::to_string(options.threads) + ", \"results\": [";
  for (size_t i = 0; i < results.size(); ++i) {
    const AccuracyResult &r = results[i];
    json += std::string(i ? ", " : "") +
            "{\"artifact\": " + jsonString(r.path) +
            ", \"positions\": " + std::to_string(r.positions) +
            ", \"nats_per_token\": " + jsonNumber(r.natsPerToken()) +
            ", \"bits_per_token\": " + jsonNumber(r.bitsPerToken());
    if (bytes)
      json += ", \"bits_per_byte\": " + jsonNumber(r.bitsPerToken());
    json += ", \"ratio_to_reference\": " +
            jsonNumber(reference > 0 ? r.bitsPerToken() / reference : 0) +
            ", \"top1_agreement\": " + jsonNumber(r.top1Agreement()) +
            ", \"mean_kl\": " + jsonNumber(r.meanKl()) + "}";
  }
  std::printf("%s]}\n", json.c_str());
}

int fail(const std::string &message) {
  std::fprintf(stderr, "strata-bench: error: %s\n", message.c_str());
  return 1;
}

} // namespace

bool wantsAccuracy(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--accuracy")
      return true;
  return false;
}

int runAccuracyCommand(int argc, char **argv) {
  AccuracyOptions options;
  std::string problem = parseArgs(argc, argv, &options);
  if (problem == "help") {
    std::fputs(kAccuracyUsage, stdout);
    return 0;
  }
  if (!problem.empty()) {
    std::fprintf(stderr, "strata-bench: error: %s\n%s", problem.c_str(),
                 kAccuracyUsage);
    return 1;
  }
  AccuracyRun run;
  problem = run.open(options.artifacts, options.entry,
                     static_cast<uint32_t>(options.threads));
  if (!problem.empty())
    return fail(problem);

  // Defaults shrink to what every artifact holds; explicit values are
  // checked against it (AccuracyRun::check) with a message saying so.
  int64_t slots = options.slots ? options.slots
                                : std::min<int64_t>(kDefaultSlots, run.slots());
  int64_t longest = run.context() + 1;
  if (options.entry == ScoredEntry::Prefill)
    longest = std::min(longest, run.prefillLength() + 1);
  std::vector<TokenSequence> sequences;
  int64_t length = options.length;
  if (!options.text.empty()) {
    if (!length)
      length = std::min<int64_t>(kDefaultTextLength, longest);
    problem = readTextStretches(options.text, slots, length, &sequences);
  } else {
    problem = readTokenLines(options.tokenIds, length, &sequences);
    for (const TokenSequence &seq : sequences)
      length = std::max(length, static_cast<int64_t>(seq.size()));
  }
  if (!problem.empty())
    return fail(problem);

  std::vector<AccuracyResult> results;
  problem = run.score(sequences, slots, &results);
  if (!problem.empty())
    return fail(problem);
  if (options.json)
    printJson(options, static_cast<int64_t>(sequences.size()), slots, length,
              results);
  else
    printTable(options, results);
  return 0;
}

} // namespace strata::tools
