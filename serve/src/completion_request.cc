//===- completion_request.cc - An OpenAI completion request, checked ------===//
// SPDX-License-Identifier: Apache-2.0
// OpenAI's ranges where it has them (temperature in [0, 2], top_p in
// (0, 1], at most 4 stop strings), the sampler's for the extensions (top_k,
// min_p, repetition_penalty). Fields a client library sends by default with
// neutral values (n = 1, echo = false, logprobs = null, penalties = 0) are
// accepted; any other value of a field Strata does not implement is a 400
// naming it, never silently ignored.

#include "completion_request.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace strata::serve {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxStopStrings = 4;
constexpr size_t kMaxStopLength = 256;

std::string typeName(const Json& value) {
  return std::string(value.type_name());
}

ApiError wrongType(const std::string& field, const char* wanted,
                   const Json& value) {
  return ApiError::invalid(field, "'" + field + "' must be " + wanted +
                                      ", not " + typeName(value));
}

// A number field in [low, high] (open ends where told); absent or null
// keeps |*out|.
ApiError readNumber(const Json& body, const char* field, double low,
                    bool lowOpen, double high, bool highOpen, float* out) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return {};
  if (!it->is_number()) return wrongType(field, "a number", *it);
  double value = it->get<double>();
  bool inside = std::isfinite(value) && (lowOpen ? value > low : value >= low) &&
                (highOpen ? value < high : value <= high);
  if (!inside) {
    char text[160];
    std::snprintf(text, sizeof(text), "'%s' is %g; it must be in %c%g, %g%c",
                  field, value, lowOpen ? '(' : '[', low, high,
                  highOpen ? ')' : ']');
    return ApiError::invalid(field, text);
  }
  *out = static_cast<float>(value);
  return {};
}

// An integer field in [low, high]; absent or null keeps |*out|.
ApiError readInteger(const Json& body, const char* field, int64_t low,
                     int64_t high, int64_t* out) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return {};
  if (!it->is_number_integer()) return wrongType(field, "an integer", *it);
  if (it->is_number_unsigned() &&
      it->get<uint64_t>() > static_cast<uint64_t>(high)) {
    return ApiError::invalid(field, "'" + std::string(field) + "' is " +
                                        it->dump() + "; at most " +
                                        std::to_string(high));
  }
  int64_t value = it->get<int64_t>();
  if (value < low || value > high) {
    return ApiError::invalid(field, "'" + std::string(field) + "' is " +
                                        std::to_string(value) + "; it must be in [" +
                                        std::to_string(low) + ", " +
                                        std::to_string(high) + "]");
  }
  *out = value;
  return {};
}

// A field Strata does not implement: accepted only at its neutral value.
ApiError refuseUnlessNeutral(const Json& body, const char* field,
                             const Json& neutral) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null() || *it == neutral) return {};
  return ApiError::invalid(field, "'" + std::string(field) +
                                      "' is not supported by this server "
                                      "(only " + neutral.dump() + ")");
}

ApiError readPrompt(const Json& body, const RequestLimits& limits,
                    std::vector<int64_t>* out) {
  auto it = body.find("prompt");
  if (it == body.end() || it->is_null()) {
    return ApiError::invalid("prompt", "'prompt' is required");
  }
  const Json* text = nullptr;
  if (it->is_string()) {
    text = &*it;
  } else if (it->is_array() && it->size() == 1 && (*it)[0].is_string()) {
    text = &(*it)[0];
  } else if (it->is_array() && !it->empty() && (*it)[0].is_number()) {
    out->reserve(it->size());
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& id = (*it)[i];
      if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
          (id.is_number_unsigned() &&
           id.get<uint64_t>() >= static_cast<uint64_t>(limits.vocab)) ||
          id.get<int64_t>() >= limits.vocab) {
        return ApiError::invalid(
            "prompt", "'prompt' token " + std::to_string(i) + " (" +
                          id.dump() + ") is not a token id in [0, " +
                          std::to_string(limits.vocab) + ")");
      }
      out->push_back(id.get<int64_t>());
    }
    return {};
  } else if (it->is_array() && it->size() > 1) {
    return ApiError::invalid("prompt",
                             "'prompt' holds several prompts; this server "
                             "takes one per request");
  } else {
    return wrongType("prompt", "a string or an array of token ids", *it);
  }
  if (!limits.tokenizer) {
    return ApiError::invalid("prompt",
                             "this server has no tokenizer: send the prompt "
                             "as token ids");
  }
  const std::string& value = text->get_ref<const std::string&>();
  size_t count = 0;
  strata_status_t status = strata_tokenizer_encode(
      limits.tokenizer, value.data(), value.size(), nullptr, 0, &count);
  std::vector<int32_t> ids(count);
  if (!status && count) {
    status = strata_tokenizer_encode(limits.tokenizer, value.data(),
                                     value.size(), ids.data(), count, &count);
  }
  if (status) {
    std::string message = strata_status_message(status);
    strata_status_free(status);
    return ApiError::invalid("prompt", "'prompt' cannot be tokenized: " + message);
  }
  out->assign(ids.begin(), ids.end());
  return {};
}

ApiError readStop(const Json& body, std::vector<std::string>* out) {
  auto it = body.find("stop");
  if (it == body.end() || it->is_null()) return {};
  std::vector<const Json*> items;
  if (it->is_string()) {
    items.push_back(&*it);
  } else if (it->is_array()) {
    for (const Json& item : *it) items.push_back(&item);
  } else {
    return wrongType("stop", "a string or an array of strings", *it);
  }
  if (items.size() > kMaxStopStrings) {
    return ApiError::invalid("stop", "'stop' has " + std::to_string(items.size()) +
                                         " strings; at most 4");
  }
  for (const Json* item : items) {
    if (!item->is_string()) return wrongType("stop", "an array of strings", *item);
    const std::string& value = item->get_ref<const std::string&>();
    if (value.empty() || value.size() > kMaxStopLength) {
      return ApiError::invalid("stop", "'stop' strings must hold 1 to 256 bytes");
    }
    out->push_back(value);
  }
  return {};
}

}  // namespace

ApiError ApiError::invalid(const std::string& param,
                           const std::string& message) {
  ApiError error;
  error.httpStatus = 400;
  error.message = message;
  error.type = "invalid_request_error";
  error.param = param;
  return error;
}

std::string ApiError::json() const {
  Json error = {{"message", message},
                {"type", type},
                {"param", param.empty() ? Json() : Json(param)},
                {"code", code.empty() ? Json() : Json(code)}};
  return Json{{"error", error}}.dump(-1, ' ', false,
                                     Json::error_handler_t::replace);
}

ApiError parseCompletionRequest(const std::string& body,
                                const RequestLimits& limits,
                                CompletionRequest* out) {
  Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return ApiError::invalid("", "the body is not valid JSON");
  }
  if (!json.is_object()) {
    return ApiError::invalid("", "the body must be a JSON object, not " +
                                     typeName(json));
  }
  auto model = json.find("model");
  if (model != json.end() && !model->is_null()) {
    if (!model->is_string()) return wrongType("model", "a string", *model);
    if (model->get_ref<const std::string&>() != limits.modelName) {
      ApiError error = ApiError::invalid(
          "model", "the model '" + model->get<std::string>() +
                       "' does not exist; this server serves '" +
                       limits.modelName + "'");
      error.code = "model_not_found";
      return error;
    }
  }
  if (ApiError error = readPrompt(json, limits, &out->prompt)) return error;
  if (out->prompt.empty()) return ApiError::invalid("prompt", "'prompt' is empty");
  const uint64_t context = limits.context;
  if (out->prompt.size() >= context) {
    return ApiError::invalid(
        "prompt", "the prompt has " + std::to_string(out->prompt.size()) +
                      " tokens; the model's context holds " +
                      std::to_string(context) +
                      ", with room for at least one generated token");
  }
  const int64_t room = static_cast<int64_t>(context - out->prompt.size());
  int64_t maxTokens = std::min<int64_t>(out->params.max_new_tokens, room);
  auto maxField = json.find("max_tokens");
  if (maxField != json.end() && !maxField->is_null()) {
    if (ApiError error = readInteger(json, "max_tokens", 1,
                                     std::numeric_limits<int32_t>::max(),
                                     &maxTokens)) {
      return error;
    }
    if (maxTokens > room) {
      return ApiError::invalid(
          "max_tokens", "'max_tokens' is " + std::to_string(maxTokens) +
                            "; the prompt's " +
                            std::to_string(out->prompt.size()) +
                            " tokens leave room for " + std::to_string(room) +
                            " in the model's context of " +
                            std::to_string(context));
    }
  }
  out->params.max_new_tokens = maxTokens;
  if (ApiError e = readNumber(json, "temperature", 0, false, 2, false,
                              &out->params.temperature)) {
    return e;
  }
  if (ApiError e = readNumber(json, "top_p", 0, true, 1, false, &out->params.top_p)) return e;
  if (ApiError e = readNumber(json, "min_p", 0, false, 1, true, &out->params.min_p)) return e;
  if (ApiError e = readNumber(json, "repetition_penalty", 0, true, 100, false,
                              &out->params.repetition_penalty)) {
    return e;
  }
  int64_t topK = 0;
  if (ApiError e = readInteger(json, "top_k", 0, std::max<int64_t>(limits.vocab, 0),
                               &topK)) {
    return e;
  }
  out->params.top_k = static_cast<int32_t>(topK);
  auto seed = json.find("seed");
  if (seed != json.end() && !seed->is_null()) {
    if (!seed->is_number_integer()) return wrongType("seed", "an integer", *seed);
    out->params.seed = seed->is_number_unsigned()
                    ? seed->get<uint64_t>()
                    : static_cast<uint64_t>(seed->get<int64_t>());
    out->hasSeed = true;
  }
  if (ApiError e = readStop(json, &out->stop)) return e;
  if (!out->stop.empty() && !limits.tokenizer) {
    return ApiError::invalid("stop", "'stop' strings need a tokenizer; this "
                                     "server has none");
  }
  auto stream = json.find("stream");
  if (stream != json.end() && !stream->is_null()) {
    if (!stream->is_boolean()) return wrongType("stream", "a boolean", *stream);
    out->stream = stream->get<bool>();
  }
  auto streamOptions = json.find("stream_options");
  if (streamOptions != json.end() && !streamOptions->is_null() &&
      !streamOptions->is_object()) {
    return wrongType("stream_options", "an object", *streamOptions);
  }
  int64_t priority = 0;
  if (ApiError e = readInteger(json, "priority", std::numeric_limits<int32_t>::min(),
                               std::numeric_limits<int32_t>::max(), &priority)) {
    return e;
  }
  out->priority = static_cast<int32_t>(priority);
  if (ApiError e = refuseUnlessNeutral(json, "n", 1)) return e;
  if (ApiError e = refuseUnlessNeutral(json, "best_of", 1)) return e;
  if (ApiError e = refuseUnlessNeutral(json, "echo", false)) return e;
  if (ApiError e = refuseUnlessNeutral(json, "logprobs", 0)) return e;
  if (ApiError e = refuseUnlessNeutral(json, "suffix", "")) return e;
  if (ApiError e = refuseUnlessNeutral(json, "frequency_penalty", 0)) return e;
  if (ApiError e = refuseUnlessNeutral(json, "presence_penalty", 0)) return e;
  if (ApiError e = refuseUnlessNeutral(json, "logit_bias", Json::object())) return e;
  auto user = json.find("user");
  if (user != json.end() && !user->is_null() && !user->is_string()) {
    return wrongType("user", "a string", *user);
  }
  return {};
}

}  // namespace strata::serve
