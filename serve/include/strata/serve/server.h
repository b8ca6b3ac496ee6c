//===- server.h - An OpenAI-compatible HTTP server over a scheduler -------===//
// SPDX-License-Identifier: Apache-2.0
// POST /v1/completions (plain and streamed as server-sent events), GET
// /v1/models, /health and /metrics, over a strata_scheduler_t. HTTP comes
// from cpp-httplib (docs/serving.md says why). The server borrows the
// scheduler and the tokenizer; both must outlive it.

#ifndef STRATA_SERVE_SERVER_H_
#define STRATA_SERVE_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "strata/runtime/scheduler.h"
#include "strata/tokenizers/tokenizer.h"

namespace strata::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  /// 0: any free port (port() tells which).
  int port = 8000;
  /// The name /v1/models lists and requests must name (when they name one).
  std::string modelName = "model";
  /// Nonempty: every route but /health needs "Authorization: Bearer KEY".
  std::string apiKey;
  /// Largest request body; larger ones get 413.
  size_t maxBodyBytes = 1 << 20;
  /// Seconds a client may take to send a request, and to take a response's
  /// bytes, before its connection is closed.
  int readTimeoutSeconds = 10;
  int writeTimeoutSeconds = 10;
  /// Connection threads; 0 = the scheduler's slots plus its queue plus 16,
  /// so every request the scheduler can accept has a thread to wait on it.
  int httpThreads = 0;
  /// A drain's time for requests in flight before they are cancelled.
  int64_t drainTimeoutMs = 30000;
  /// The scheduler's bounds, for the thread count and Retry-After.
  uint64_t maxQueue = 256;
};

class Server {
public:
  /// |tokenizer| may be null (prompts as token ids, no text out).
  Server(strata_scheduler_t* scheduler, const strata_tokenizer_t* tokenizer,
         ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds the socket; false with |*error| set when it cannot.
  bool bind(std::string* error);
  /// The bound port.
  int port() const;
  /// Serves until drainAndStop (or stop) from another thread; blocking.
  void serve();
  /// Refuses new completions (503), lets the scheduler finish or cancel
  /// (after drainTimeoutMs) every accepted request, waits for their last
  /// events to be sent, then stops serve(). Thread-safe; idempotent.
  void drainAndStop();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::serve

#endif  // STRATA_SERVE_SERVER_H_
