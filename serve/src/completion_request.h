//===- completion_request.h - An OpenAI completion request, checked -------===//
// SPDX-License-Identifier: Apache-2.0
// The body of POST /v1/completions parsed into what the scheduler takes,
// or the OpenAI-style error that names the offending field.

#ifndef STRATA_SERVE_SRC_COMPLETION_REQUEST_H_
#define STRATA_SERVE_SRC_COMPLETION_REQUEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/runtime/generate.h"
#include "strata/tokenizers/tokenizer.h"

namespace strata::serve {

/// An error answered with an OpenAI error object:
/// {"error": {"message", "type", "param", "code"}}.
struct ApiError {
  int httpStatus = 0;  // 0: no error
  std::string message;
  std::string type;   // "invalid_request_error", ...
  std::string param;  // the field, or empty
  std::string code;   // machine-readable, or empty

  explicit operator bool() const { return httpStatus != 0; }
  static ApiError invalid(const std::string& param, const std::string& message);
  std::string json() const;
};

/// A completion request as the scheduler and the stream need it.
struct CompletionRequest {
  /// OpenAI's defaults: temperature 1 and 16 tokens at most (the generator's
  /// would be greedy and until the context is full).
  CompletionRequest() {
    strata_generation_params_init(&params);
    params.temperature = 1.0f;
    params.max_new_tokens = 16;
  }
  std::vector<int64_t> prompt;
  /// Sampling and max_tokens (max_new_tokens); no stop tokens (stop
  /// strings are matched on the text).
  strata_generation_params_t params;
  /// Whether the request named a seed (else the server draws one).
  bool hasSeed = false;
  std::vector<std::string> stop;
  bool stream = false;
  int32_t priority = 0;
};

/// What the server knows when it checks a request.
struct RequestLimits {
  std::string modelName;
  uint64_t context = 0;
  int64_t vocab = 0;
  const strata_tokenizer_t* tokenizer = nullptr;  // null: token ids only
};

/// Parses |body| into |*out|; returns a 400 naming the field for malformed
/// JSON, a wrong type, an unknown model, a prompt longer than the context,
/// out-of-range or unsupported parameters.
ApiError parseCompletionRequest(const std::string& body,
                                const RequestLimits& limits,
                                CompletionRequest* out);

}  // namespace strata::serve

#endif  // STRATA_SERVE_SRC_COMPLETION_REQUEST_H_
