//===- server.cc - An OpenAI-compatible HTTP server over a scheduler ------===//
// SPDX-License-Identifier: Apache-2.0
// Each HTTP request runs on a cpp-httplib connection thread. A completion
// is submitted to the scheduler with a channel the scheduler's thread fills
// (tokens, then one final event); the connection thread waits on the
// channel and answers, in one JSON body or as server-sent events. A client
// that goes away fails the next write, which cancels its request; the
// channel lives until the scheduler's final event for it.

#include "strata/serve/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "completion_request.h"
#include "server_metrics.h"
#include "text_stream.h"

namespace strata::serve {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

// What the scheduler's thread hands a connection thread.
struct Event {
  bool hasToken = false;
  int64_t token = 0;
  bool final = false;
  strata_request_state_t state = STRATA_REQUEST_RUNNING;
  std::string error;
  uint64_t promptTokens = 0;
  uint64_t generatedTokens = 0;
};

struct Channel {
  ServerMetrics* metrics = nullptr;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Event> events;
  bool finalSeen = false;
  Clock::time_point lastToken;
  bool anyToken = false;

  // The scheduler's callback; |user| is a heap shared_ptr to the channel,
  // freed with the final event.
  static void onEvent(void* user, const strata_request_event_t* event) {
    auto* holder = static_cast<std::shared_ptr<Channel>*>(user);
    Channel& channel = **holder;
    const bool final = event->state != STRATA_REQUEST_RUNNING;
    if (event->has_token) {
      const Clock::time_point now = Clock::now();
      if (channel.anyToken) {
        channel.metrics->interToken.observe(
            std::chrono::duration<double>(now - channel.lastToken).count());
      }
      channel.anyToken = true;
      channel.lastToken = now;
    }
    if (final) channel.metrics->observeFinal(*event);
    {
      std::lock_guard<std::mutex> lock(channel.mutex);
      Event copy;
      copy.hasToken = event->has_token != 0;
      copy.token = event->token;
      copy.final = final;
      copy.state = event->state;
      if (event->error) copy.error = event->error;
      copy.promptTokens = event->prompt_tokens;
      copy.generatedTokens = event->generated_tokens;
      channel.events.push_back(std::move(copy));
      if (final) channel.finalSeen = true;
    }
    channel.changed.notify_all();
    if (final) delete holder;
  }

  // Waits up to |timeout| for events and takes them all.
  std::deque<Event> take(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait_for(lock, timeout, [&] { return !events.empty(); });
    return std::exchange(events, {});
  }
};

bool sameSecret(const std::string& given, const std::string& expected) {
  // Constant time in the contents: every byte of the longer one is looked at.
  const size_t length = std::max(given.size(), expected.size());
  unsigned char difference = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < length; ++i) {
    unsigned char a = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    unsigned char b =
        i < expected.size() ? static_cast<unsigned char>(expected[i]) : 0;
    difference |= static_cast<unsigned char>(a ^ b);
  }
  return difference == 0;
}

std::string dumpJson(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void sendError(httplib::Response& res, const ApiError& error) {
  res.status = error.httpStatus;
  res.set_content(error.json(), "application/json");
}

ApiError serverError(int status, const std::string& type,
                     const std::string& code, const std::string& message) {
  ApiError error;
  error.httpStatus = status;
  error.type = type;
  error.code = code;
  error.message = message;
  return error;
}

const char* finishReason(strata_request_state_t state) {
  return state == STRATA_REQUEST_LENGTH ? "length" : "stop";
}

// A request that ended without an answer: it failed, or was cancelled by
// something other than its stop string (a drain). Else no error.
ApiError endedWithoutAnswer(const Event& final, bool stoppedByText) {
  if (final.state == STRATA_REQUEST_FAILED) {
    return serverError(500, "server_error", "failed",
                       "generation failed: " + final.error);
  }
  if (final.state == STRATA_REQUEST_CANCELLED && !stoppedByText) {
    return serverError(500, "server_error", "cancelled",
                       "the request was cancelled (the server is shutting "
                       "down)");
  }
  return {};
}

Json usageJson(const Event& final) {
  return {{"prompt_tokens", final.promptTokens},
          {"completion_tokens", final.generatedTokens},
          {"total_tokens", final.promptTokens + final.generatedTokens}};
}

}  // namespace

struct Server::Impl {
  strata_scheduler_t* scheduler;
  const strata_tokenizer_t* tokenizer;
  ServerOptions options;
  RequestLimits limits;
  ServerMetrics metrics;
  httplib::Server http;
  std::mutex mutex;
  std::condition_variable handlersDone;
  int activeCompletions = 0;
  bool draining = false;
  uint64_t nextCompletion = 1;
  int boundPort = 0;
  // The listening socket, seen when cpp-httplib sets its options.
  int listenSocket = -1;

  Impl(strata_scheduler_t* s, const strata_tokenizer_t* t, ServerOptions o)
      : scheduler(s), tokenizer(t), options(std::move(o)) {
    strata_scheduler_stats_t stats;
    strata_scheduler_stats_init(&stats);
    strata_status_free(strata_scheduler_stats(scheduler, &stats));
    limits.modelName = options.modelName;
    limits.context = stats.context;
    limits.vocab = static_cast<int64_t>(stats.vocab);
    limits.tokenizer = tokenizer;
    int threads = options.httpThreads;
    if (threads <= 0) {
      threads = static_cast<int>(stats.slots + options.maxQueue + 16);
    }
    http.new_task_queue = [threads] {
      return new httplib::ThreadPool(static_cast<size_t>(threads));
    };
    http.set_payload_max_length(options.maxBodyBytes);
    http.set_read_timeout(options.readTimeoutSeconds, 0);
    http.set_write_timeout(options.writeTimeoutSeconds, 0);
    http.set_keep_alive_timeout(5);
    http.set_socket_options([this](socket_t sock) {
      httplib::default_socket_options(sock);
      listenSocket = sock;
    });
    routes();
  }

  // A completion object (one choice), whole or as a stream chunk.
  Json completionJson(const std::string& id, int64_t created,
                      const std::string& text, const Json& reason) const {
    return {{"id", id},
            {"object", "text_completion"},
            {"created", created},
            {"model", options.modelName},
            {"choices", Json::array({{{"text", text},
                                      {"index", 0},
                                      {"logprobs", nullptr},
                                      {"finish_reason", reason}}})}};
  }

  // Adds a token's text; a stop string in it cancels the request.
  std::string pushText(TextStream& text, int64_t token, uint64_t requestId,
                       bool* stoppedByText) {
    std::string error;
    std::string delta = text.push(token, stoppedByText, &error);
    if (*stoppedByText) {
      strata_status_free(strata_scheduler_cancel(scheduler, requestId));
    }
    return delta;
  }

  std::string newCompletionId() {
    std::lock_guard<std::mutex> lock(mutex);
    return "cmpl-" + std::to_string(nextCompletion++);
  }

  void routes();
  void completions(const httplib::Request& req, httplib::Response& res);
  void streamCompletion(std::shared_ptr<Channel> channel, uint64_t requestId,
                        const CompletionRequest& request, httplib::Response& res);
  void finishHandler() {
    std::lock_guard<std::mutex> lock(mutex);
    --activeCompletions;
    handlersDone.notify_all();
  }
};

void Server::Impl::routes() {
  http.set_pre_routing_handler(
      [this](const httplib::Request& req, httplib::Response& res) {
        if (options.apiKey.empty() || req.path == "/health") {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        const std::string header = req.get_header_value("Authorization");
        const std::string prefix = "Bearer ";
        const bool ok = header.compare(0, prefix.size(), prefix) == 0 &&
                        sameSecret(header.substr(prefix.size()), options.apiKey);
        if (ok) return httplib::Server::HandlerResponse::Unhandled;
        ++metrics.unauthorized;
        sendError(res, serverError(401, "invalid_request_error",
                                   "invalid_api_key",
                                   header.empty() ? "no API key given (use "
                                                    "Authorization: Bearer KEY)"
                                                  : "the API key is wrong"));
        return httplib::Server::HandlerResponse::Handled;
      });
  http.set_exception_handler([this](const httplib::Request&, httplib::Response& res,
                                    std::exception_ptr) {
    sendError(res, serverError(500, "server_error", "internal_error",
                               "the server failed to handle the request"));
  });
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    // Statuses httplib set itself (404, 413, 400 for a bad request line).
    if (!res.body.empty()) return;
    const std::string message =
        res.status == 404 ? "no route " + req.method + " " + req.path
        : res.status == 413 ? std::string("the request body is too large")
                            : std::string("bad request");
    sendError(res, serverError(res.status, "invalid_request_error", "", message));
  });
  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex);
    res.status = draining ? 503 : 200;
    res.set_content(draining ? "{\"status\":\"draining\"}" : "{\"status\":\"ok\"}",
                    "application/json");
  });
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    Json model = {{"id", options.modelName},
                  {"object", "model"},
                  {"created", 0},
                  {"owned_by", "strata"},
                  {"max_model_len", limits.context}};
    res.set_content(dumpJson({{"object", "list"}, {"data", Json::array({model})}}),
                    "application/json");
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    strata_scheduler_stats_t stats;
    strata_scheduler_stats_init(&stats);
    strata_status_free(strata_scheduler_stats(scheduler, &stats));
    res.set_content(metrics.render(stats), "text/plain; version=0.0.4");
  });
  http.Post("/v1/completions",
            [this](const httplib::Request& req, httplib::Response& res) {
              completions(req, res);
            });
}

void Server::Impl::completions(const httplib::Request& req,
                               httplib::Response& res) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (draining) {
      ++metrics.draining;
      sendError(res, serverError(503, "server_error", "server_draining",
                                 "the server is shutting down"));
      return;
    }
    ++activeCompletions;
  }
  CompletionRequest request;
  if (ApiError error = parseCompletionRequest(req.body, limits, &request)) {
    ++metrics.badRequests;
    sendError(res, error);
    finishHandler();
    return;
  }
  strata_generation_params_t params = request.params;
  if (!request.hasSeed) {
    params.seed = static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  }

  auto channel = std::make_shared<Channel>();
  channel->metrics = &metrics;
  auto* holder = new std::shared_ptr<Channel>(channel);
  uint64_t requestId = 0;
  strata_status_t status = strata_scheduler_submit(
      scheduler, request.prompt.data(), request.prompt.size(), &params,
      request.priority, &Channel::onEvent, holder, &requestId);
  if (status) {
    delete holder;
    const strata_status_code_t code = strata_status_code(status);
    const std::string message = strata_status_message(status);
    strata_status_free(status);
    if (code == STRATA_STATUS_RESOURCE_EXHAUSTED) {
      ++metrics.queueFull;
      res.set_header("Retry-After", "1");
      sendError(res, serverError(429, "rate_limit_error", "queue_full",
                                 "too many requests waiting: " + message));
    } else if (code == STRATA_STATUS_UNAVAILABLE) {
      ++metrics.draining;
      sendError(res, serverError(503, "server_error", "server_draining", message));
    } else {
      ++metrics.badRequests;
      sendError(res, ApiError::invalid("", message));
    }
    finishHandler();
    return;
  }
  if (request.stream) {
    streamCompletion(channel, requestId, request, res);
    return;
  }

  TextStream text(tokenizer, request.stop);
  bool stoppedByText = false;
  Event final;
  std::vector<int64_t> ids;
  for (bool done = false; !done;) {
    for (Event& event : channel->take(std::chrono::milliseconds(1000))) {
      if (event.hasToken && !stoppedByText) {
        ids.push_back(event.token);
        pushText(text, event.token, requestId, &stoppedByText);
      }
      if (event.final) {
        final = event;
        done = true;
      }
    }
  }
  if (ApiError error = endedWithoutAnswer(final, stoppedByText)) {
    sendError(res, error);
    finishHandler();
    return;
  }
  if (!stoppedByText) text.finish();
  Json body = completionJson(newCompletionId(),
                             static_cast<int64_t>(std::time(nullptr)),
                             text.sent(),
                             stoppedByText ? "stop" : finishReason(final.state));
  body["usage"] = usageJson(final);
  if (!tokenizer) body["choices"][0]["token_ids"] = ids;
  res.set_content(dumpJson(body), "application/json");
  finishHandler();
}

void Server::Impl::streamCompletion(std::shared_ptr<Channel> channel,
                                    uint64_t requestId,
                                    const CompletionRequest& request,
                                    httplib::Response& res) {
  struct StreamState {
    std::shared_ptr<Channel> channel;
    TextStream text;
    std::string id;
    int64_t created;
    bool stoppedByText = false;
    bool finished = false;
  };
  auto state = std::make_shared<StreamState>(
      StreamState{channel, TextStream(tokenizer, request.stop), newCompletionId(),
                  static_cast<int64_t>(std::time(nullptr))});
  auto chunk = [this, state](const std::string& text, const Json& reason) {
    return completionJson(state->id, state->created, text, reason);
  };
  // Without a tokenizer there is no text: each chunk carries its token.
  const bool tokenChunks = tokenizer == nullptr;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, state, chunk, requestId, tokenChunks](size_t,
                                                   httplib::DataSink& sink) {
        std::deque<Event> events =
            state->channel->take(std::chrono::milliseconds(1000));
        if (events.empty()) {
          // A comment line: keeps proxies from timing out, and finds a
          // client that went away while its request waited.
          return sink.write(": waiting\n\n", 11);
        }
        std::string out;
        for (const Event& event : events) {
          if (event.hasToken && !state->stoppedByText) {
            std::string delta = pushText(state->text, event.token, requestId,
                                         &state->stoppedByText);
            if (tokenChunks && !event.final) {
              Json body = chunk("", nullptr);
              body["choices"][0]["token_ids"] = Json::array({event.token});
              out += "data: " + dumpJson(body) + "\n\n";
            } else if (!delta.empty()) {
              out += "data: " + dumpJson(chunk(delta, nullptr)) + "\n\n";
            }
          }
          if (!event.final) continue;
          state->finished = true;
          if (ApiError error = endedWithoutAnswer(event, state->stoppedByText)) {
            out += "data: " + error.json() + "\n\n";
          } else {
            std::string tail = state->stoppedByText ? "" : state->text.finish();
            Json last = chunk(tail, state->stoppedByText
                                        ? "stop"
                                        : finishReason(event.state));
            if (tokenChunks && event.hasToken) {
              last["choices"][0]["token_ids"] = Json::array({event.token});
            }
            last["usage"] = usageJson(event);
            out += "data: " + dumpJson(last) + "\n\n";
          }
          out += "data: [DONE]\n\n";
        }
        if (!out.empty() && !sink.write(out.data(), out.size())) return false;
        if (state->finished) sink.done();
        return true;
      },
      [this, state, requestId](bool) {
        // Runs when the response is destroyed: a stream that ended before
        // its final event lost its client.
        if (!state->finished) {
          strata_status_t status = strata_scheduler_cancel(scheduler, requestId);
          // NOT_FOUND: the request had ended; only its last events were lost.
          if (!status) ++metrics.disconnects;
          strata_status_free(status);
        }
        finishHandler();
      });
}

Server::Server(strata_scheduler_t* scheduler, const strata_tokenizer_t* tokenizer,
               ServerOptions options)
    : impl_(std::make_unique<Impl>(scheduler, tokenizer, std::move(options))) {}

Server::~Server() = default;

// The accept queue a burst of clients may fill before the connection
// threads take them: Debian's cpp-httplib (a compiled library) listens
// with a backlog of 5, which hundreds of clients connecting at once
// overflow, and the kernel then resets some of them. Listening again on
// the bound socket resizes the queue (the kernel caps it at
// net.core.somaxconn).
constexpr int kListenBacklog = 1024;

bool Server::bind(std::string* error) {
  const ServerOptions& options = impl_->options;
  bool bound = false;
  if (options.port == 0) {
    impl_->boundPort = impl_->http.bind_to_any_port(options.host);
    bound = impl_->boundPort > 0;
  } else if (impl_->http.bind_to_port(options.host, options.port)) {
    impl_->boundPort = options.port;
    bound = true;
  }
  if (bound) {
    if (impl_->listenSocket >= 0) {
      ::listen(impl_->listenSocket, kListenBacklog);
    }
    return true;
  }
  *error = "cannot listen on " + options.host + ":" +
           std::to_string(options.port) + " (in use, or not an address of this host)";
  return false;
}

int Server::port() const { return impl_->boundPort; }

void Server::serve() { impl_->http.listen_after_bind(); }

void Server::drainAndStop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->draining) return;
    impl_->draining = true;
  }
  strata_status_free(
      strata_scheduler_drain(impl_->scheduler, impl_->options.drainTimeoutMs));
  // Every request has had its final event; give the connection threads the
  // write timeout to send it.
  {
    std::unique_lock<std::mutex> lock(impl_->mutex);
    impl_->handlersDone.wait_for(
        lock, std::chrono::seconds(impl_->options.writeTimeoutSeconds + 1),
        [&] { return impl_->activeCompletions == 0; });
  }
  impl_->http.stop();
}

}  // namespace strata::serve
