//===- strata-serve.cpp - Serve a .strata artifact over HTTP --------------===//
// SPDX-License-Identifier: Apache-2.0
// Loads the artifact, starts a scheduler over one session and serves the
// OpenAI-compatible routes of the serve library until SIGTERM, SIGINT or
// SIGUSR1 (the one mpirun passes on without killing the job after), which
// drain: new requests get 503, accepted ones finish (or are cancelled
// after --drain-timeout), and the process exits 0. A model split over the
// ranks of an MPI job is served by rank 0, whose scheduler leads the
// others': they make its generator calls in step (strata_scheduler_follow)
// and end when it does.
//===----------------------------------------------------------------------===//

#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "strata/runtime/api.h"
#include "strata/serve/server.h"
#include "tools/common/ParseCount.h"
#include "tools/rank-common/RankGroup.h"
#include "tools/runtime-common/KernelIsa.h"
#include "tools/text-common/TokenizerChoice.h"

namespace {

const char kUsage[] =
    "usage: strata-serve MODEL.strata [--host 127.0.0.1] [--port 8000]\n"
    "           [--model-name NAME] [--tokenizer byte|gpt2|FILE.model]\n"
    "           [--api-key KEY] [--max-seqs N] [--max-batched-tokens N]\n"
    "           [--max-queue N] [--prefill-chunk N] [--threads N]\n"
    "           [--max-body-bytes N] [--timeout-seconds N]\n"
    "           [--drain-timeout-ms N] [--static-batching] [--no-prefix-caching]\n"
    "           [--kernel-isa amx|avx512|avx2|generic]\n"
    "           [--communicator mpi|nccl|none]\n"
    "           [--draft DRAFT.strata | --prompt-lookup]\n"
    "           [--max-draft-tokens K] [--fixed-draft-tokens]\n"
    "  --host ADDRESS          address to listen on (default 127.0.0.1: this\n"
    "                          machine only; 0.0.0.0 for every interface)\n"
    "  --port N                TCP port (default 8000; 0: any free port, printed)\n"
    "  --model-name NAME       the model id clients name (default: the file's\n"
    "                          name without .strata)\n"
    "  --tokenizer NAME        byte (default), gpt2, a SentencePiece .model, or\n"
    "                          none: prompts as token ids, and each chunk\n"
    "                          carries its token in choices[0].token_ids\n"
    "  --api-key KEY           require 'Authorization: Bearer KEY' on every\n"
    "                          route but /health (default: $STRATA_API_KEY)\n"
    "  --max-seqs N            sequences in flight (default: the artifact's\n"
    "                          slots, its --max-batch)\n"
    "  --max-batched-tokens N  tokens per scheduler iteration: decodes plus\n"
    "                          prompt chunks (default: prefill length + max-seqs)\n"
    "  --max-queue N           requests waiting for a slot before 429 (256)\n"
    "  --prefill-chunk N       most prompt tokens per prefill call\n"
    "  --threads N             session threads (default 0: one per core)\n"
    "  --max-body-bytes N      largest request body (default 1048576; 413 above)\n"
    "  --timeout-seconds N     time a client has to send a request or take a\n"
    "                          response's bytes (default 10)\n"
    "  --drain-timeout-ms N    on SIGTERM, SIGINT or SIGUSR1 (under mpirun:\n"
    "                          SIGUSR1, which mpirun passes on), time for\n"
    "                          accepted requests before\n"
    "                          they are cancelled (default 30000)\n"
    "  --static-batching       the baseline policy: a batch of waiting requests\n"
    "                          starts only when the previous one has finished,\n"
    "                          every row decoding until its longest ends\n"
    "  --no-prefix-caching     run every prompt whole (default: a prompt that\n"
    "                          starts like the tokens a free slot still holds\n"
    "                          skips them)\n"
    "  --kernel-isa ISA        cap the runtime kernels' instruction set\n"
    "  --communicator MODE     a model split over ranks (--tensor-parallel,\n"
    "                          --pipeline-parallel), one process per rank:\n"
    "                          `mpirun -np N strata-serve X.strata`. mpi: the\n"
    "                          ranks exchange over MPI; nccl: over NCCL;\n"
    "                          none: one process (default: mpi when started\n"
    "                          by an MPI launcher with 2+ processes). Rank R\n"
    "                          loads X.rank<R>.strata when X.strata is not a\n"
    "                          rank; rank 0 serves HTTP and the others follow\n"
    "  --draft DRAFT.strata    speculative decoding: a smaller model of the\n"
    "                          same vocabulary drafts tokens the model checks\n"
    "                          in one verify call per step (docs/speculative.md)\n"
    "  --prompt-lookup         speculative decoding with drafts copied from\n"
    "                          earlier in each sequence\n"
    "  --max-draft-tokens K    most drafts per step (default: the model's\n"
    "                          verify_length - 1)\n"
    "  --fixed-draft-tokens    always draft K (default: adapt per sequence;\n"
    "                          required with a model split over ranks)\n";

struct Options {
  std::string artifact;
  strata::serve::ServerOptions server;
  std::string tokenizer = "byte";
  std::string communicator;
  std::string draft;
  bool promptLookup = false;
  long maxDraftTokens = 0;
  bool fixedDraftTokens = false;
  long maxSeqs = 0, maxBatchedTokens = 0, maxQueue = 0, prefillChunk = 0;
  long threads = 0;
  bool staticBatching = false;
  bool prefixCaching = true;
};

int usageError(const std::string& message) {
  std::fprintf(stderr, "strata-serve: %s\n%s", message.c_str(), kUsage);
  return 2;
}

// Parses argv into |*options|; returns 0, or the exit code after printing.
int parseArgs(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg == "--static-batching") {
      options->staticBatching = true;
      continue;
    }
    if (arg == "--no-prefix-caching") {
      options->prefixCaching = false;
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
    if (arg.rfind("--", 0) != 0) {
      if (!options->artifact.empty()) return usageError("two artifacts given");
      options->artifact = arg;
      continue;
    }
    if (i + 1 >= argc) return usageError(arg + " needs a value");
    const char* value = argv[++i];
    long number = 0;
    auto count = [&](long low, long high, long* out) {
      if (!strata::tools::parseCount(value, low, high, out)) {
        std::exit(usageError(arg + " must be an integer in [" +
                             std::to_string(low) + ", " + std::to_string(high) +
                             "], not '" + value + "'"));
      }
    };
    if (arg == "--host") {
      options->server.host = value;
    } else if (arg == "--port") {
      count(0, 65535, &number);
      options->server.port = static_cast<int>(number);
    } else if (arg == "--model-name") {
      options->server.modelName = value;
    } else if (arg == "--tokenizer") {
      options->tokenizer = value;
    } else if (arg == "--api-key") {
      options->server.apiKey = value;
    } else if (arg == "--max-seqs") {
      count(0, 1 << 20, &options->maxSeqs);
    } else if (arg == "--max-batched-tokens") {
      count(0, 1 << 24, &options->maxBatchedTokens);
    } else if (arg == "--max-queue") {
      count(1, 1 << 16, &options->maxQueue);
    } else if (arg == "--prefill-chunk") {
      count(0, 1 << 24, &options->prefillChunk);
    } else if (arg == "--threads") {
      count(0, STRATA_SESSION_MAX_THREADS, &options->threads);
    } else if (arg == "--max-body-bytes") {
      count(1024, 1L << 30, &number);
      options->server.maxBodyBytes = static_cast<size_t>(number);
    } else if (arg == "--timeout-seconds") {
      count(1, 3600, &number);
      options->server.readTimeoutSeconds = static_cast<int>(number);
      options->server.writeTimeoutSeconds = static_cast<int>(number);
    } else if (arg == "--drain-timeout-ms") {
      count(0, 3600 * 1000, &number);
      options->server.drainTimeoutMs = number;
    } else if (arg == "--communicator") {
      options->communicator = value;
    } else if (arg == "--draft") {
      options->draft = value;
    } else if (arg == "--max-draft-tokens") {
      count(0, 1 << 16, &options->maxDraftTokens);
    } else if (arg == "--kernel-isa") {
      std::string problem = strata::tools::applyKernelIsa(value);
      if (!problem.empty()) return usageError(problem);
    } else {
      return usageError("unknown option " + arg);
    }
  }
  if (options->artifact.empty()) return usageError("no artifact given");
  if (!options->draft.empty() && options->promptLookup) {
    return usageError("--draft and --prompt-lookup are two sources of "
                      "drafts; give one");
  }
  return 0;
}

std::string defaultModelName(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  const std::string suffix = ".strata";
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    name.resize(name.size() - suffix.size());
  }
  return name;
}

// The handles main holds, released in reverse order on every way out
// (the scheduler, which borrows the sessions, is released before them).
struct Handles {
  strata_tokenizer_t* tokenizer = nullptr;
  strata_module_t* module = nullptr;
  strata_session_t* session = nullptr;
  strata_module_t* draftModule = nullptr;
  strata_session_t* draftSession = nullptr;
  ~Handles() {
    strata_session_release(draftSession);
    strata_module_release(draftModule);
    strata_session_release(session);
    strata_module_release(module);
    strata_tokenizer_release(tokenizer);
  }
};

int fail(const char* what, strata_status_t status) {
  std::fprintf(stderr, "strata-serve: %s: %s: %s\n", what,
               strata_status_code_string(strata_status_code(status)),
               strata_status_message(status));
  strata_status_free(status);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  bool namedModel = false;
  for (int i = 1; i < argc; ++i) namedModel |= !std::strcmp(argv[i], "--model-name");
  if (int code = parseArgs(argc, argv, &options)) return code;
  if (!namedModel) options.server.modelName = defaultModelName(options.artifact);
  if (options.server.apiKey.empty()) {
    if (const char* key = std::getenv("STRATA_API_KEY")) options.server.apiKey = key;
  }

#if defined(M_ARENA_MAX) && defined(M_MMAP_THRESHOLD)
  // A server's resident set should follow what it holds. glibc's defaults
  // let it drift up for minutes: up to 8 malloc arenas per core, one per
  // busy connection thread, each growing on its own, and a mmap threshold
  // that rises to the size of every large block freed, so activation
  // buffers of new shapes then come from (and fragment) the heap. Four
  // arenas, and blocks of 256 KiB and more always mapped and unmapped.
  mallopt(M_ARENA_MAX, 4);
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif

  // Signals go to one waiting thread; every other thread (sessions, the
  // scheduler, connections) inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  strata::tools::RankGroup group;
  // A rank that fails alone ends the job: the others would wait for it
  // (NCCL's start included).
  strata::tools::AbortJobOnFailure abortOnFailure(group);
  std::string problem = group.open(options.communicator);
  if (!problem.empty()) {
    std::fprintf(stderr, "strata-serve: %s\n", problem.c_str());
    return 1;
  }
  Handles handles;
  if (options.tokenizer != "none" && group.lead()) {
    problem = strata::tools::openTokenizer(options.tokenizer, &handles.tokenizer);
  }
  if (!problem.empty()) {
    std::fprintf(stderr, "strata-serve: --tokenizer %s: %s\n",
                 options.tokenizer.c_str(), problem.c_str());
    return 1;
  }
  std::string loaded;
  strata_status_t status = group.loadModule(
      options.artifact, strata_allocator_system(), &handles.module, &loaded);
  if (status) return fail(loaded.empty() ? options.artifact.c_str() : loaded.c_str(), status);
  strata_session_options_t sessionOptions;
  strata_session_options_init(&sessionOptions);
  sessionOptions.thread_count = static_cast<uint32_t>(options.threads);
  status = strata_session_create(handles.module, &sessionOptions,
                                 strata_allocator_system(), &handles.session);
  if (status) return fail("session", status);
  status = group.attach(handles.session);
  if (status) return fail("communicator", status);
  // The draft model is whole on every rank (each rank drafts the same).
  if (!options.draft.empty()) {
    status = strata_module_load_file(options.draft.c_str(),
                                     strata_allocator_system(),
                                     &handles.draftModule);
    if (status) return fail(options.draft.c_str(), status);
    status = strata_session_create(handles.draftModule, &sessionOptions,
                                   strata_allocator_system(),
                                   &handles.draftSession);
    if (status) return fail("draft session", status);
  }
  strata_scheduler_options_t schedulerOptions;
  strata_scheduler_options_init(&schedulerOptions);
  schedulerOptions.max_seqs = static_cast<int32_t>(options.maxSeqs);
  schedulerOptions.max_batched_tokens = options.maxBatchedTokens;
  schedulerOptions.max_queue = static_cast<int32_t>(options.maxQueue);
  schedulerOptions.prefill_chunk = options.prefillChunk;
  schedulerOptions.static_batching = options.staticBatching ? 1 : 0;
  schedulerOptions.prefix_reuse = options.prefixCaching ? 1 : 0;
  schedulerOptions.draft_session = handles.draftSession;
  schedulerOptions.prompt_lookup = options.promptLookup ? 1 : 0;
  schedulerOptions.max_draft_tokens = static_cast<int32_t>(options.maxDraftTokens);
  schedulerOptions.fixed_draft_tokens = options.fixedDraftTokens ? 1 : 0;
  if (!group.lead()) {
    // Signals stay blocked here: a follower ends when rank 0 has drained.
    status = strata_scheduler_follow(handles.session, &schedulerOptions,
                                     group.control());
    if (status) {
      std::fprintf(stderr, "strata-serve: rank %u: %s: %s\n", group.rank(),
                   strata_status_code_string(strata_status_code(status)),
                   strata_status_message(status));
      strata_status_free(status);
    }
    return abortOnFailure.done(status ? 1 : 0);
  }
  if (group.size() > 1) schedulerOptions.lead_group = group.control();
  strata_scheduler_t* scheduler = nullptr;
  status =
      strata_scheduler_create(handles.session, &schedulerOptions, &scheduler);
  if (status) return fail(options.artifact.c_str(), status);
  options.server.maxQueue = options.maxQueue ? static_cast<uint64_t>(options.maxQueue) : 256;

  int exitCode = 0;
  {
    strata::serve::Server server(scheduler, handles.tokenizer, options.server);
    std::string error;
    if (!server.bind(&error)) {
      std::fprintf(stderr, "strata-serve: %s\n", error.c_str());
      exitCode = 1;
    } else {
      std::thread waiter([&] {
        int signal = 0;
        const timespec period = {5, 0};
        while ((signal = sigtimedwait(&signals, nullptr, &period)) < 0) {
#ifdef M_ARENA_MAX
          // Free memory inside the arenas goes back to the system (glibc
          // returns only the top of each heap on its own): RSS then follows
          // what the server holds instead of its high-water mark.
          malloc_trim(0);
#endif
        }
        std::fprintf(stderr, "strata-serve: %s: draining\n",
                     signal == SIGTERM  ? "SIGTERM"
                     : signal == SIGINT ? "SIGINT"
                                        : "SIGUSR1");
        server.drainAndStop();
      });
      std::printf("strata-serve: serving '%s' on http://%s:%d\n",
                  options.server.modelName.c_str(), options.server.host.c_str(),
                  server.port());
      std::fflush(stdout);
      server.serve();
      // serve() returns after drainAndStop, or on a listening failure; a
      // signal to ourselves then ends the waiter either way.
      pthread_kill(waiter.native_handle(), SIGTERM);
      waiter.join();
    }
  }
  // Releasing the scheduler lets the other ranks' followers return.
  strata_scheduler_release(scheduler);
  return abortOnFailure.done(exitCode);
}
