//===- Generate.cpp - strata-run generate: text generation ----------------===//
// SPDX-License-Identifier: Apache-2.0
// Generates tokens with the runtime's generator for one prompt (streamed as
// the tokens come) or a file of prompts (each added when a sequence slot is
// free, printed when it finishes), then prints each sequence's timings. The
// generator checks the prefill/decode entry contract. With --disaggregate,
// rank 0 of two MPI processes prefills and rank 1 decodes and prints
// (Disaggregate.cpp). With --micro-batches M, the prompts of a
// pipeline-parallel model are dealt to M generators stepped side by side.
//===----------------------------------------------------------------------===//

#include "Generate.h"
#include "Disaggregate.h"
#include "MeteredCommunicator.h"
#include "tools/rank-common/RankGroup.h"
#include "ToolErrors.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tools/text-common/TokenizerChoice.h"
#include "strata/runtime/api.h"
#include "strata/runtime/generate.h"
#include "tools/common/JsonText.h"
#include "tools/runtime-common/KernelIsa.h"
#include "tools/common/ParseCount.h"

namespace strata::tools {
namespace {

const char kUsage[] =
    "usage: strata-run generate MODEL.strata\n"
    "           (--prompt TEXT | --prompt-ids 1,2,3 | --batch-prompts FILE |\n"
    "            --batch-prompt-ids FILE) [--tokenizer byte|gpt2|FILE.model]\n"
    "           [--max-new-tokens N] [--temperature T] [--top-k K]\n"
    "           [--top-p P] [--min-p P] [--repetition-penalty R] [--seed S]\n"
    "           [--stop-ids 1,2] [--prefill-chunk N] [--threads N] [--json]\n"
    "           [--draft DRAFT.strata | --prompt-lookup]\n"
    "           [--max-draft-tokens K] [--fixed-draft-tokens]\n"
    "           [--communicator mpi|nccl|none] [--disaggregate]\n"
    "  --prompt TEXT             encode TEXT with the tokenizer\n"
    "  --prompt-ids 1,2,3        use these token ids; output is ids (and the\n"
    "                            decoded text when --tokenizer is given)\n"
    "  --batch-prompts FILE      one text prompt per line, generated together\n"
    "  --batch-prompt-ids FILE   one comma-separated id prompt per line\n"
    "  --tokenizer NAME          byte (default: id = byte value), gpt2 or a\n"
    "                            SentencePiece .model file; gpt2 reads\n"
    "                            encoder.json and vocab.bpe from\n"
    "                            $STRATA_GPT2_BPE_DIR if set, else from\n"
    "                            <strata-run's "
    "folder>/../share/strata/gpt2-bpe\n"
    "                            or else ../shared/data/gpt2-bpe (from the\n"
    "                            current directory)\n"
    "  --max-new-tokens N        most tokens per prompt (default 0: until a\n"
    "                            stop id or the context is full)\n"
    "  --temperature T           0 (default) is greedy\n"
    "  --top-k K, --top-p P, --min-p P, --repetition-penalty R, --seed S\n"
    "                            sampling (docs/runtime-api.md#sampling); "
    "every\n"
    "                            prompt gets seed S (default 0)\n"
    "  --stop-ids 1,2            ids that end a sequence (kept in the output)\n"
    "  --prefill-chunk N         prompt tokens per prefill call (default 0:\n"
    "                            the compiled maximum)\n"
    "  --threads N               session thread count (default 0: one per "
    "CPU)\n"
    "  --kernel-isa ISA          the runtime kernels' instruction set at\n"
    "                            most: amx (default: the host's best),\n"
    "                            avx512, avx2 or scalar\n"
    "  --json                    no streaming: one JSON object per prompt\n"
    "  --draft DRAFT.strata      speculative decoding: a smaller model of the\n"
    "                            same vocabulary drafts tokens that the\n"
    "                            model checks in one verify call per step\n"
    "                            (the output is the model's own)\n"
    "  --prompt-lookup           speculative decoding with drafts copied from\n"
    "                            earlier in the sequence (no draft model)\n"
    "  --max-draft-tokens K      most drafts per step (default 0: the\n"
    "                            model's verify_length - 1)\n"
    "  --fixed-draft-tokens      always draft K (default: adapt to the\n"
    "                            acceptance rate, off where it does not pay;\n"
    "                            required with a communicator)\n"
    "  --disaggregate            under mpirun -np 2: rank 0 runs each\n"
    "                            prompt's prefill and sends its KV cache to\n"
    "                            rank 1, which decodes and prints; the\n"
    "                            report adds each prompt's TTFT split and\n"
    "                            cache bytes (docs/distributed.md)\n"
    "  --micro-batches M         pipeline stages: deal the prompts to M\n"
    "                            generators, each with its own session,\n"
    "                            cache slots and MPI communicator, stepped\n"
    "                            on threads of their own, so that a stage\n"
    "                            runs one micro-batch's step while the next\n"
    "                            stage runs another's (default 1; at most\n"
    "                            the number of prompts; docs/distributed.md)\n";

struct Options {
  std::string artifact;
  // Exactly one prompt source: its flag and value.
  std::vector<std::string> sources;
  std::string sourceValue;
  std::vector<int64_t> promptIds;
  std::string tokenizer = "byte";
  bool tokenizerGiven = false;
  long maxNewTokens = 0;
  double temperature = 0;
  long topK = 0;
  double topP = 1;
  double minP = 0;
  double repetitionPenalty = 1;
  uint64_t seed = 0;
  std::vector<int64_t> stopIds;
  long prefillChunk = 0;
  long threads = 0;
  bool json = false;
  std::string draft;
  bool promptLookup = false;
  long maxDraftTokens = 0;
  bool fixedDraftTokens = false;
  std::string communicator;
  bool disaggregate = false;
  long microBatches = 1;
};

using strata::tools::fail;
using strata::tools::failStatus;

// All of |text| as a finite number.
bool parseNumber(const char *text, double *out) {
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(text, &end);
  if (errno || end == text || *end || !std::isfinite(value))
    return false;
  *out = value;
  return true;
}

// Comma-separated token ids (spaces allowed around them), at least one.
bool parseIds(const std::string &text, std::vector<int64_t> *out) {
  std::vector<int64_t> ids;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t first = item.find_first_not_of(" \t");
    size_t last = item.find_last_not_of(" \t");
    item =
        first == std::string::npos ? "" : item.substr(first, last - first + 1);
    long id = 0;
    if (!parseCount(item.c_str(), 0, INT32_MAX, &id))
      return false;
    ids.push_back(id);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  *out = std::move(ids);
  return true;
}

// Returns an empty string on success, "help", or the problem.
std::string parseArgs(int argc, char **argv, Options *options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help")
      return "help";
    if (arg == "--json") {
      options->json = true;
      continue;
    }
    if (arg == "--prompt-lookup") {
      options->promptLookup = true;
      continue;
    }
    if (arg == "--fixed-draft-tokens") {
      options->fixedDraftTokens = true;
      continue;
    }
    if (arg == "--disaggregate") {
      options->disaggregate = true;
      continue;
    }
    if (arg.empty() || arg[0] != '-') {
      if (!options->artifact.empty())
        return "more than one artifact given ('" + options->artifact + "', '" +
               arg + "')";
      options->artifact = arg;
      continue;
    }
    static const char *const kValued[] = {"--prompt",
                                          "--prompt-ids",
                                          "--batch-prompts",
                                          "--batch-prompt-ids",
                                          "--tokenizer",
                                          "--max-new-tokens",
                                          "--temperature",
                                          "--top-k",
                                          "--top-p",
                                          "--min-p",
                                          "--repetition-penalty",
                                          "--seed",
                                          "--stop-ids",
                                          "--prefill-chunk",
                                          "--threads",
                                          "--kernel-isa",
                                          "--draft",
                                          "--max-draft-tokens",
                                          "--communicator",
                                          "--micro-batches"};
    bool known = false;
    for (const char *flag : kValued)
      known |= arg == flag;
    if (!known)
      return "unknown option '" + arg + "'";
    if (i + 1 >= argc)
      return arg + " needs a value";
    const char *v = argv[++i];
    auto expects = [&](const std::string &what) {
      return arg + " expects " + what + ", got '" + v + "'";
    };
    double number = 0;
    if (arg == "--prompt" || arg == "--prompt-ids" ||
        arg == "--batch-prompts" || arg == "--batch-prompt-ids") {
      if (arg == "--prompt-ids" && !parseIds(v, &options->promptIds))
        return expects("comma-separated token ids (integers >= 0)");
      options->sources.push_back(arg);
      options->sourceValue = v;
    } else if (arg == "--tokenizer") {
      options->tokenizer = v;
      options->tokenizerGiven = true;
    } else if (arg == "--max-new-tokens") {
      if (!parseCount(v, 0, INT32_MAX, &options->maxNewTokens))
        return expects("a count >= 0");
    } else if (arg == "--temperature") {
      if (!parseNumber(v, &number) || number < 0)
        return expects("a number >= 0");
      options->temperature = number;
    } else if (arg == "--top-k") {
      if (!parseCount(v, 0, INT32_MAX, &options->topK))
        return expects("a count >= 0");
    } else if (arg == "--top-p") {
      if (!parseNumber(v, &number) || number <= 0 || number > 1)
        return expects("a number in (0, 1]");
      options->topP = number;
    } else if (arg == "--min-p") {
      if (!parseNumber(v, &number) || number < 0 || number >= 1)
        return expects("a number in [0, 1)");
      options->minP = number;
    } else if (arg == "--repetition-penalty") {
      if (!parseNumber(v, &number) || number <= 0)
        return expects("a number > 0");
      options->repetitionPenalty = number;
    } else if (arg == "--seed") {
      char *end = nullptr;
      errno = 0;
      unsigned long long seed = std::strtoull(v, &end, 10);
      // strtoull takes a sign; a seed is plain digits.
      if (errno || end == v || *end || !(*v >= '0' && *v <= '9'))
        return expects("an integer in [0, 2^64)");
      options->seed = seed;
    } else if (arg == "--stop-ids") {
      if (!parseIds(v, &options->stopIds))
        return expects("comma-separated token ids (integers >= 0)");
    } else if (arg == "--prefill-chunk") {
      if (!parseCount(v, 0, INT32_MAX, &options->prefillChunk))
        return expects("a count >= 0");
    } else if (arg == "--threads") {
      if (!parseCount(v, 0, STRATA_SESSION_MAX_THREADS, &options->threads))
        return expects("a count in [0, " +
                       std::to_string(STRATA_SESSION_MAX_THREADS) + "]");
    } else if (arg == "--draft") {
      options->draft = v;
    } else if (arg == "--communicator") {
      options->communicator = v;
    } else if (arg == "--micro-batches") {
      if (!parseCount(v, 1, 64, &options->microBatches))
        return expects("a count in [1, 64]");
    } else if (arg == "--max-draft-tokens") {
      if (!parseCount(v, 0, INT32_MAX, &options->maxDraftTokens))
        return expects("a count >= 0");
    } else if (arg == "--kernel-isa") {
      std::string problem = applyKernelIsa(v);
      if (!problem.empty())
        return problem;
    }
  }
  if (options->artifact.empty())
    return "no artifact given";
  if (options->sources.empty())
    return "no prompt given (--prompt, --prompt-ids, --batch-prompts or "
           "--batch-prompt-ids)";
  if (options->sources.size() > 1)
    return "give one prompt source, not " + options->sources[0] + " and " +
           options->sources[1];
  if (!options->draft.empty() && options->promptLookup)
    return "give one source of drafts, not --draft and --prompt-lookup";
  if (options->disaggregate && (!options->draft.empty() || options->promptLookup))
    return "--disaggregate does not support speculative decoding (--draft, "
           "--prompt-lookup): the draft's cache would have to move too";
  if (options->microBatches > 1 &&
      (options->disaggregate || !options->draft.empty() ||
       options->promptLookup))
    return "--micro-batches runs plain generation: not with --disaggregate, "
           "--draft or --prompt-lookup";
  return "";
}

// One prompt and what the generator made of it.
struct Prompt {
  std::vector<int64_t> ids;
  uint64_t sequence = 0;
  std::vector<int64_t> tokens;
  size_t printedTokens = 0; // streaming: tokens or
  size_t printedBytes = 0;  // bytes of decoded text already written
};

// The streaming callback's view: it records tokens and finish order.
struct Progress {
  std::vector<Prompt> prompts;
  std::vector<uint64_t> sequenceOf; // parallel to prompts, once added
  size_t adding = 0;                // the prompt add_sequence is taking
  std::vector<size_t> finished;     // prompt indices, in finishing order

  static void onToken(void *user, uint64_t sequence, int64_t token, int done) {
    auto *self = static_cast<Progress *>(user);
    // The first token comes during add_sequence, before its id is known.
    size_t index = self->adding;
    for (size_t i = 0; i < self->sequenceOf.size(); ++i)
      if (self->sequenceOf[i] == sequence)
        index = i;
    self->prompts[index].tokens.push_back(token);
    if (done)
      self->finished.push_back(index);
  }
};

// Reads one prompt per line of |path|: text encoded by |tokenizer|, or ids
// when it is NULL.
std::string readBatch(const std::string &flag, const std::string &path,
                      const strata_tokenizer_t *tokenizer,
                      std::vector<Prompt> *prompts) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return "cannot read " + flag + " " + path + ": " + std::strerror(errno);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    std::string where = path + " line " + std::to_string(prompts->size() + 1);
    Prompt prompt;
    if (tokenizer) {
      std::string problem = encodeText(tokenizer, line, &prompt.ids);
      if (!problem.empty())
        return where + ": " + problem;
    } else if (!line.empty() && !parseIds(line, &prompt.ids)) {
      return where + ": expected comma-separated token ids, got '" + line + "'";
    }
    if (prompt.ids.empty())
      return where + ": empty prompt";
    prompts->push_back(std::move(prompt));
  }
  if (in.bad())
    return "cannot read " + flag + " " + path + ": " + std::strerror(errno);
  if (prompts->empty())
    return flag + " " + path + " holds no prompt";
  return "";
}

// The static vocabulary of the decode entry's logits; 0 if unknown.
int64_t modelVocab(const strata_module_t *module) {
  const strata_entry_signature_t *entry = nullptr;
  strata_status_t status = strata_module_find_entry(module, "decode", &entry);
  if (status) {
    strata_status_free(status);
    return 0;
  }
  for (size_t o = 0; o < entry->output_count; ++o) {
    const strata_tensor_signature_t &logits = entry->outputs[o];
    if (std::strcmp(logits.name, "logits") == 0 && logits.rank > 0 &&
        !logits.dims[logits.rank - 1].symbol)
      return logits.dims[logits.rank - 1].extent;
  }
  return 0;
}

std::string idList(const std::vector<int64_t> &ids, const char *separator) {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i)
    text += (i ? separator : "") + std::to_string(ids[i]);
  return text;
}

std::string jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6f", value);
  return buffer;
}

struct Guards {
  strata_tokenizer_t *tokenizer = nullptr;
  strata_module_t *module = nullptr;
  strata_session_t *session = nullptr;
  strata_module_t *draftModule = nullptr;
  strata_session_t *draftSession = nullptr;
  strata_generator_t *generator = nullptr;
  ~Guards() {
    strata_generator_release(generator);
    strata_session_release(draftSession);
    strata_module_release(draftModule);
    strata_session_release(session);
    strata_module_release(module);
    strata_tokenizer_release(tokenizer);
  }
};

// Writes what is new since the last call: a single prompt's tokens as they
// come, or each finished prompt of a batch as one block.
class Printer {
public:
  Printer(const Options &options, const strata_tokenizer_t *tokenizer,
          bool textPrompts, bool batch)
      : options(options), tokenizer(tokenizer), textPrompts(textPrompts),
        batch(batch) {}

  std::string update(Progress *progress) {
    if (options.json)
      return "";
    if (batch) {
      for (; blocks < progress->finished.size(); ++blocks) {
        size_t index = progress->finished[blocks];
        std::string body;
        std::string problem = describe(progress->prompts[index].tokens, &body);
        if (!problem.empty())
          return "prompt " + std::to_string(index) + ": " + problem;
        // Text may hold NUL bytes: written by length.
        std::printf("== prompt %zu ==\n", index);
        std::fwrite(body.data(), 1, body.size(), stdout);
        std::printf("\n");
      }
      std::fflush(stdout);
      return "";
    }
    Prompt &prompt = progress->prompts[0];
    if (textPrompts) {
      // Decoding the whole prefix keeps multi-token characters whole.
      std::string text;
      std::string problem = decodeIds(tokenizer, prompt.tokens, &text);
      if (!problem.empty())
        return problem;
      if (text.size() > prompt.printedBytes) {
        std::fwrite(text.data() + prompt.printedBytes, 1,
                    text.size() - prompt.printedBytes, stdout);
        prompt.printedBytes = text.size();
      }
    } else {
      for (; prompt.printedTokens < prompt.tokens.size();
           ++prompt.printedTokens)
        std::printf(
            "%s%lld", prompt.printedTokens ? " " : "",
            static_cast<long long>(prompt.tokens[prompt.printedTokens]));
    }
    std::fflush(stdout);
    return "";
  }

  // Ends the single prompt's stream (ids: the decoded text follows).
  std::string finish(const Progress &progress) {
    if (options.json || batch)
      return "";
    std::printf("\n");
    if (!textPrompts && tokenizer) {
      std::string text;
      std::string problem =
          decodeIds(tokenizer, progress.prompts[0].tokens, &text);
      if (!problem.empty())
        return problem;
      std::printf("text: ");
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::printf("\n");
    }
    return "";
  }

private:
  // A finished prompt's block: its text, or its ids (and text).
  std::string describe(const std::vector<int64_t> &tokens, std::string *out) {
    std::string text;
    if (tokenizer) {
      std::string problem = decodeIds(tokenizer, tokens, &text);
      if (!problem.empty())
        return problem;
    }
    if (textPrompts)
      *out = text;
    else
      *out = idList(tokens, " ") + (tokenizer ? "\ntext: " + text : "");
    return "";
  }

  const Options &options;
  const strata_tokenizer_t *tokenizer;
  bool textPrompts, batch;
  size_t blocks = 0;
};

// The params every prompt is generated with.
strata_generation_params_t generationParams(const Options &options) {
  strata_generation_params_t params;
  strata_generation_params_init(&params);
  params.temperature = static_cast<float>(options.temperature);
  params.top_k = static_cast<int32_t>(options.topK);
  params.top_p = static_cast<float>(options.topP);
  params.min_p = static_cast<float>(options.minP);
  params.repetition_penalty = static_cast<float>(options.repetitionPenalty);
  params.seed = options.seed;
  params.max_new_tokens = options.maxNewTokens;
  params.stop_tokens = options.stopIds.data();
  params.stop_token_count = options.stopIds.size();
  return params;
}

// Steps the generator until every prompt is done, adding prompts as slots
// free up. Returns the exit status.
int generateAll(const Options &options, strata_generator_t *generator,
                Progress *progress, Printer *printer) {
  const strata_generation_params_t params = generationParams(options);
  size_t slots = strata_generator_slot_count(generator);
  size_t next = 0;
  while (true) {
    while (next < progress->prompts.size() &&
           strata_generator_active_count(generator) < slots) {
      const std::vector<int64_t> &ids = progress->prompts[next].ids;
      progress->adding = next;
      uint64_t sequence = 0;
      strata_status_t status = strata_generator_add_sequence(
          generator, ids.data(), ids.size(), &params, &sequence);
      if (status)
        return failStatus("prompt " + std::to_string(next), status);
      progress->sequenceOf.push_back(sequence);
      progress->prompts[next++].sequence = sequence;
      std::string problem = printer->update(progress);
      if (!problem.empty())
        return fail(problem);
    }
    if (strata_generator_active_count(generator) == 0)
      break;
    strata_status_t status = strata_generator_step(generator, nullptr);
    if (status)
      return failStatus("generation failed", status);
    std::string problem = printer->update(progress);
    if (!problem.empty())
      return fail(problem);
  }
  std::string problem = printer->finish(*progress);
  return problem.empty() ? 0 : fail(problem);
}

// One line (or JSON object) of tokens and timings per prompt; a
// disaggregated run (|handoff| not empty) adds each prompt's TTFT split
// and cache bytes, and its TTFT runs from the prompt's arrival.
// |generators|: the one that ran every prompt, or one per prompt.
int report(const Options &options,
           const std::vector<strata_generator_t *> &generators,
           const strata_tokenizer_t *tokenizer, const Progress &progress,
           const std::vector<HandoffTimes> &handoff) {
  for (size_t i = 0; i < progress.prompts.size(); ++i) {
    const Prompt &prompt = progress.prompts[i];
    strata_generator_t *generator =
        generators.size() == 1 ? generators[0] : generators[i];
    strata_generation_metrics_t m;
    strata_generation_metrics_init(&m);
    strata_status_t status =
        strata_generator_metrics(generator, prompt.sequence, &m);
    if (status)
      return failStatus("prompt " + std::to_string(i), status);
    const HandoffTimes *split = i < handoff.size() ? &handoff[i] : nullptr;
    if (split)
      m.ttft_ms = split->ttftMs;
    const bool speculative = !options.draft.empty() || options.promptLookup;
    // Speculative decoding: the share of drafts kept, drafts kept per
    // target step, and tokens per target step.
    const double steps = static_cast<double>(m.target_steps);
    const double acceptance =
        m.draft_tokens ? static_cast<double>(m.accepted_draft_tokens) /
                             static_cast<double>(m.draft_tokens)
                       : 0.0;
    const double acceptedPerStep =
        steps > 0 ? static_cast<double>(m.accepted_draft_tokens) / steps : 0.0;
    // The first token comes from prefill, the others from target steps.
    const double tokensPerStep =
        steps > 0 ? static_cast<double>(m.generated_tokens - 1) / steps : 0.0;
    if (!options.json) {
      std::printf("prompt %zu: %llu prompt tokens, %llu generated; TTFT "
                  "%.3f ms, TPOT %.3f ms, p50 %.3f ms, p99 %.3f ms, %.1f "
                  "tokens/s\n",
                  i, static_cast<unsigned long long>(m.prompt_tokens),
                  static_cast<unsigned long long>(m.generated_tokens),
                  m.ttft_ms, m.tpot_ms, m.p50_ms, m.p99_ms,
                  m.tokens_per_second);
      if (speculative)
        std::printf("prompt %zu: %llu drafted, %llu accepted (%.1f%%), %.2f "
                    "accepted and %.2f tokens per target step\n",
                    i, static_cast<unsigned long long>(m.draft_tokens),
                    static_cast<unsigned long long>(m.accepted_draft_tokens),
                    100.0 * acceptance, acceptedPerStep, tokensPerStep);
      if (split)
        std::printf("prompt %zu: TTFT split: queue %.3f ms, prefill %.3f ms, "
                    "transfer %.3f ms, first decode step %.3f ms; %llu KV "
                    "bytes\n",
                    i, split->queueMs, split->prefillMs, split->transferMs,
                    split->firstDecodeMs,
                    static_cast<unsigned long long>(split->kvBytes));
      continue;
    }
    std::string text = "null";
    if (tokenizer) {
      std::string decoded;
      std::string problem = decodeIds(tokenizer, prompt.tokens, &decoded);
      if (!problem.empty())
        return fail("prompt " + std::to_string(i) + ": " + problem);
      text = jsonString(decoded);
    }
    std::string extra;
    if (split)
      extra = ", \"queue_ms\": " + jsonNumber(split->queueMs) +
              ", \"prefill_ms\": " + jsonNumber(split->prefillMs) +
              ", \"transfer_ms\": " + jsonNumber(split->transferMs) +
              ", \"first_decode_ms\": " + jsonNumber(split->firstDecodeMs) +
              ", \"kv_bytes\": " + std::to_string(split->kvBytes);
    std::printf("{\"prompt\": %zu, \"tokens\": [%s], \"text\": %s, "
                "\"ttft_ms\": %s, \"tpot_ms\": %s, \"p50_ms\": %s, "
                "\"p99_ms\": %s, \"tokens_per_s\": %s, "
                "\"target_steps\": %llu, \"draft_tokens\": %llu, "
                "\"accepted_draft_tokens\": %llu, \"acceptance_rate\": %s, "
                "\"accepted_per_step\": %s, \"tokens_per_step\": %s%s}\n",
                i, idList(prompt.tokens, ", ").c_str(), text.c_str(),
                jsonNumber(m.ttft_ms).c_str(), jsonNumber(m.tpot_ms).c_str(),
                jsonNumber(m.p50_ms).c_str(), jsonNumber(m.p99_ms).c_str(),
                jsonNumber(m.tokens_per_second).c_str(),
                static_cast<unsigned long long>(m.target_steps),
                static_cast<unsigned long long>(m.draft_tokens),
                static_cast<unsigned long long>(m.accepted_draft_tokens),
                jsonNumber(acceptance).c_str(),
                jsonNumber(acceptedPerStep).c_str(),
                jsonNumber(tokensPerStep).c_str(), extra.c_str());
  }
  return 0;
}

// Rank 0 prefills, rank 1 decodes and prints (Disaggregate.h). Returns
// the exit status.
int generateDisaggregated(const Options &options, const RankGroup &group,
                          const strata_communicator_t *comm, Guards *guards,
                          Progress *progress, Printer *printer) {
  std::string problem =
      checkDisaggregateCache(guards->session, guards->generator);
  if (!problem.empty())
    return fail(problem);
  const strata_generation_params_t params = generationParams(options);
  std::vector<std::vector<int64_t>> prompts;
  for (const Prompt &prompt : progress->prompts)
    prompts.push_back(prompt.ids);
  DisaggregateClock::time_point start;
  problem = startTogether(comm, &start);
  if (!problem.empty())
    return fail(problem);
  if (group.rank() == 0) {
    problem = runPrefillRank(comm, guards->session, guards->generator,
                             prompts, params, start);
    return problem.empty() ? 0 : fail("prefill rank: " + problem);
  }
  std::vector<HandoffTimes> handoff;
  problem = runDecodeRank(
      comm, guards->session, guards->generator, prompts, params, start,
      [&](size_t prompt, uint64_t id) {
        // The first token is streamed as the sequence resumes.
        progress->adding = prompt;
        progress->sequenceOf.push_back(id);
        progress->prompts[prompt].sequence = id;
      },
      [&] { return printer->update(progress); }, &handoff);
  if (problem.empty())
    problem = printer->finish(*progress);
  if (!problem.empty())
    return fail("decode rank: " + problem);
  return report(options, {guards->generator}, guards->tokenizer, *progress,
                handoff);
}

} // namespace

// One micro-batch: its prompts (indices into all prompts), its session
// (the first lane uses the main one) and generator.
struct Lane {
  std::vector<size_t> indices;
  Progress progress;
  std::unique_ptr<MeteredCommunicator> meter;
  strata_session_t *session = nullptr;  // owned unless the first lane's
  strata_generator_t *generator = nullptr;
  bool ownsSession = false;
  int exitCode = 0;
  Lane() = default;
  Lane(const Lane &) = delete;
  Lane &operator=(const Lane &) = delete;
  ~Lane() {
    strata_generator_release(generator);
    if (ownsSession)
      strata_session_release(session);
  }
};

// Pipeline micro-batches: prompt i goes to lane i mod M, each lane a
// generator on a session and an MPI communicator of its own, stepped on its
// own thread. A stage's call returns only once its outputs have come back
// from the last stage, so one generator keeps one stage busy at a time;
// with M of them, while one micro-batch's step runs in a later stage the
// first stage runs another's (what vLLM's virtual engines do). Every rank
// deals the same prompts to the same lanes, so each communicator carries
// one lane's calls, in the same order on every rank. Prints as a batch
// once every lane is done. Returns the exit status; a lane that fails ends
// the whole job (the other ranks would wait for it forever).
int generateMicroBatches(const Options &options, RankGroup &group,
                         strata_module_t *module,
                         const strata_session_options_t &sessionOptions,
                         strata_generator_options_t generatorOptions,
                         MeteredCommunicator &firstMeter, Guards *guards,
                         Progress *progress, Printer *printer,
                         MeteredCommunicator::Totals *totals) {
  const size_t count = std::min<size_t>(
      static_cast<size_t>(options.microBatches), progress->prompts.size());
  std::vector<std::unique_ptr<Lane>> lanes;
  for (size_t l = 0; l < count; ++l) {
    auto lane = std::make_unique<Lane>();
    for (size_t i = l; i < progress->prompts.size(); i += count) {
      lane->indices.push_back(i);
      lane->progress.prompts.push_back(progress->prompts[i]);
    }
    const strata_communicator_t *comm = firstMeter.table();
    if (l == 0) {
      lane->session = guards->session;
    } else {
      const strata_communicator_t *other = nullptr;
      std::string problem = group.openAnother(&other);
      if (!problem.empty())
        return fail("--micro-batches: " + problem);
      lane->meter = std::make_unique<MeteredCommunicator>(other);
      comm = lane->meter->table();
      strata_status_t status =
          strata_session_create(module, &sessionOptions,
                                strata_allocator_system(), &lane->session);
      lane->ownsSession = !status;
      if (!status)
        status = strata_session_set_communicator(lane->session, comm);
      if (status)
        return failStatus("micro-batch " + std::to_string(l) +
                              ": cannot create a session",
                          status);
    }
    generatorOptions.callback_user = &lane->progress;
    strata_status_t status = strata_generator_create(
        lane->session, &generatorOptions, &lane->generator);
    if (status)
      return failStatus("micro-batch " + std::to_string(l), status);
    lanes.push_back(std::move(lane));
  }
  // Nothing streams from the lanes' threads: the batch prints at the end.
  Options quiet = options;
  quiet.json = true;
  auto run = [&](Lane *lane) {
    Printer silent(quiet, nullptr, false, true);
    lane->exitCode =
        generateAll(quiet, lane->generator, &lane->progress, &silent);
    if (lane->exitCode)
      group.abortJob(lane->exitCode);
  };
  std::vector<std::thread> threads;
  for (size_t l = 1; l < lanes.size(); ++l)
    threads.emplace_back(run, lanes[l].get());
  run(lanes[0].get());
  for (std::thread &t : threads)
    t.join();
  std::vector<strata_generator_t *> generatorOf(progress->prompts.size());
  for (const std::unique_ptr<Lane> &lane : lanes) {
    if (lane->exitCode)
      return lane->exitCode;
    for (size_t j = 0; j < lane->indices.size(); ++j) {
      Prompt &prompt = progress->prompts[lane->indices[j]];
      prompt.tokens = lane->progress.prompts[j].tokens;
      prompt.sequence = lane->progress.prompts[j].sequence;
      generatorOf[lane->indices[j]] = lane->generator;
    }
    const MeteredCommunicator::Totals &t =
        lane->meter ? lane->meter->totals() : firstMeter.totals();
    totals->allGathers += t.allGathers;
    totals->sends += t.sends;
    totals->receives += t.receives;
    totals->bytes += t.bytes;
    totals->seconds += t.seconds;
  }
  for (size_t i = 0; i < progress->prompts.size(); ++i)
    progress->finished.push_back(i);
  std::string problem = printer->update(progress);
  if (!problem.empty())
    return fail(problem);
  return report(options, generatorOf, guards->tokenizer, *progress, {});
}

int runGenerate(int argc, char **argv) {
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
  // Declared before the sessions, which must be released first.
  RankGroup group;
  AbortJobOnFailure aborts(group);
  problem = group.open(options.communicator);
  if (!problem.empty())
    return fail(problem);
  // What this rank exchanges, reported after the prompts.
  MeteredCommunicator meter(group.communicator());
  // Every rank must make the same calls: a draft length that adapts to
  // measured acceptance and timing could differ from rank to rank.
  if (group.communicator() && (!options.draft.empty() ||
                               options.promptLookup) &&
      !options.fixedDraftTokens)
    return fail("speculative decoding across tensor-parallel ranks needs "
                "--fixed-draft-tokens: an adaptive draft length could make "
                "the ranks' calls differ");
  if (options.disaggregate) {
    problem = checkDisaggregateGroup(meter.table());
    if (!problem.empty())
      return fail(problem);
  }
  // Rank 0 alone streams and reports; disaggregated, the decode rank does.
  const bool prints = options.disaggregate ? group.rank() == 1 : group.lead();
  if (!prints && !std::freopen("/dev/null", "w", stdout))
    return fail("cannot silence rank " + std::to_string(group.rank()));
  const std::string &source = options.sources[0];
  const bool textPrompts = source == "--prompt" || source == "--batch-prompts";
  const bool batch =
      source == "--batch-prompts" || source == "--batch-prompt-ids";

  Guards guards;
  // Id prompts are decoded only when a tokenizer is asked for.
  if (textPrompts || options.tokenizerGiven) {
    problem = openTokenizer(options.tokenizer, &guards.tokenizer);
    if (!problem.empty())
      return fail(problem);
  }
  Progress progress;
  if (batch) {
    problem =
        readBatch(source, options.sourceValue,
                  textPrompts ? guards.tokenizer : nullptr, &progress.prompts);
    if (!problem.empty())
      return fail(problem);
  } else {
    Prompt prompt;
    prompt.ids = options.promptIds;
    if (textPrompts) {
      problem = encodeText(guards.tokenizer, options.sourceValue, &prompt.ids);
      if (!problem.empty())
        return fail(problem);
      if (prompt.ids.empty())
        return fail("--prompt is empty");
    }
    progress.prompts.push_back(std::move(prompt));
  }

  strata_allocator_t allocator = strata_allocator_system();
  std::string loaded;
  // Disaggregated, the ranks are two copies of one whole model.
  strata_status_t status =
      options.disaggregate
          ? strata_module_load_file(options.artifact.c_str(), allocator,
                                    &guards.module)
          : group.loadModule(options.artifact, allocator, &guards.module,
                             &loaded);
  if (status)
    return failStatus("cannot load", status);
  uint32_t modelRanks = 1;
  strata_module_parallel(guards.module, nullptr, &modelRanks);
  if (options.disaggregate && modelRanks > 1)
    return fail("--disaggregate runs a whole model on each rank; " +
                options.artifact + " is one rank of a tensor-parallel group");
  if (options.microBatches > 1) {
    uint32_t stages = 1;
    strata_module_parallel_layout(guards.module, nullptr, nullptr, nullptr,
                                  &stages);
    if (stages < 2)
      return fail("--micro-batches needs a pipeline-parallel model "
                  "(strata-compile --pipeline-parallel); " + loaded +
                  " is one stage");
  }
  strata_session_options_t sessionOptions;
  strata_session_options_init(&sessionOptions);
  sessionOptions.thread_count = static_cast<uint32_t>(options.threads);
  status = strata_session_create(guards.module, &sessionOptions, allocator,
                                 &guards.session);
  if (!status && meter.table() && !options.disaggregate)
    status = strata_session_set_communicator(guards.session, meter.table());
  if (status)
    return failStatus("cannot create a session", status);
  strata_generator_options_t generatorOptions;
  strata_generator_options_init(&generatorOptions);
  generatorOptions.prefill_chunk = options.prefillChunk;
  generatorOptions.callback = &Progress::onToken;
  generatorOptions.callback_user = &progress;
  if (!options.draft.empty()) {
    status = strata_module_load_file(options.draft.c_str(), allocator,
                                     &guards.draftModule);
    if (status)
      return failStatus("cannot load the draft " + options.draft, status);
    status = strata_session_create(guards.draftModule, &sessionOptions,
                                   allocator, &guards.draftSession);
    if (status)
      return failStatus("cannot create a session of the draft", status);
    generatorOptions.draft_session = guards.draftSession;
  }
  generatorOptions.prompt_lookup = options.promptLookup ? 1 : 0;
  generatorOptions.max_draft_tokens =
      static_cast<int32_t>(options.maxDraftTokens);
  generatorOptions.fixed_draft_tokens = options.fixedDraftTokens ? 1 : 0;
  // Micro-batches make generators of their own, the first on this session.
  if (options.microBatches == 1) {
    status = strata_generator_create(guards.session, &generatorOptions,
                                     &guards.generator);
    if (status)
      return failStatus("cannot generate with " + options.artifact, status);
  }

  // The runtime takes any id; one outside the vocabulary is a wrong
  // tokenizer or a typo, so it is refused here.
  int64_t vocab = modelVocab(guards.module);
  for (size_t i = 0; vocab > 0 && i < progress.prompts.size(); ++i) {
    const std::vector<int64_t> &ids = progress.prompts[i].ids;
    for (size_t p = 0; p < ids.size(); ++p)
      if (ids[p] >= vocab)
        return fail("prompt " + std::to_string(i) + ": token " +
                    std::to_string(ids[p]) + " at position " +
                    std::to_string(p) + " is outside the model's vocabulary (" +
                    std::to_string(vocab) + " ids)");
  }

  Printer printer(options, guards.tokenizer, textPrompts, batch);
  if (options.disaggregate)
    return aborts.done(generateDisaggregated(options, group, meter.table(),
                                             &guards, &progress, &printer));
  MeteredCommunicator::Totals t;
  int exitCode = 0;
  if (options.microBatches > 1) {
    exitCode = generateMicroBatches(options, group, guards.module,
                                    sessionOptions, generatorOptions, meter,
                                    &guards, &progress, &printer, &t);
  } else {
    exitCode = generateAll(options, guards.generator, &progress, &printer);
    if (exitCode)
      return exitCode;
    exitCode =
        report(options, {guards.generator}, guards.tokenizer, progress, {});
    t = meter.totals();
  }
  if (exitCode || !meter.table())
    return aborts.done(exitCode);
  if (options.json)
    std::printf("{\"collectives\": {\"ranks\": %u, \"all_gathers\": %llu, "
                "\"sends\": %llu, \"receives\": %llu, \"bytes_per_rank\": "
                "%llu, \"seconds\": %s}}\n",
                group.size(), static_cast<unsigned long long>(t.allGathers),
                static_cast<unsigned long long>(t.sends),
                static_cast<unsigned long long>(t.receives),
                static_cast<unsigned long long>(t.bytes),
                jsonNumber(t.seconds).c_str());
  else
    std::printf("rank 0 of %u: %llu collectives, %llu bytes contributed, "
                "%.3f ms in them\n",
                group.size(),
                static_cast<unsigned long long>(t.allGathers + t.sends +
                                                t.receives),
                static_cast<unsigned long long>(t.bytes), 1e3 * t.seconds);
  return aborts.done(0);
}

} // namespace strata::tools
