//===- completion_request.h - An OpenAI completion request, checked -------===//
// SPDX-License-Identifier: Apache-2.0
// The body of POST /v1/completions parsed into what the scheduler takes,
// or the OpenAI-style error that names the offending field.

#ifndef STRATA_SERVE_SRC_COMPLETION_REQUEST_H_
#define STRATA_SERVE_SRC_COMPLETION_REQUEST_H_

#include <cstdint>
#include <string>
#include <vector>

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
  std::vector<int64_t> prompt;
  int64_t maxTokens = 16;
  float temperature = 1.0f;
  float topP = 1.0f;
  int32_t topK = 0;
  float minP = 0.0f;
  float repetitionPenalty = 1.0f;
  uint64_t seed = 0;
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
