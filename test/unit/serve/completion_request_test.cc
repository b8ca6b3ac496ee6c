//===- completion_request_test.cc - OpenAI request bodies, checked --------===//
// SPDX-License-Identifier: Apache-2.0

#include "completion_request.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::serve {
namespace {

class CompletionRequestTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(strata_tokenizer_create_byte(&tokenizer), nullptr);
    limits.modelName = "bytegpt";
    limits.context = 64;
    limits.vocab = 256;
    limits.tokenizer = tokenizer;
  }
  void TearDown() override { strata_tokenizer_release(tokenizer); }

  ApiError parse(const std::string& body) {
    request = CompletionRequest();
    return parseCompletionRequest(body, limits, &request);
  }
  // The field a 400 names, or "ok".
  std::string refusedField(const std::string& body) {
    ApiError error = parse(body);
    if (!error) return "ok";
    EXPECT_EQ(error.httpStatus, 400) << body;
    return error.param.empty() ? "(body)" : error.param;
  }

  strata_tokenizer_t* tokenizer = nullptr;
  RequestLimits limits;
  CompletionRequest request;
};

TEST_F(CompletionRequestTest, ReadsEveryField) {
  ASSERT_FALSE(parse(R"({"model": "bytegpt", "prompt": "Hi", "max_tokens": 5,
      "temperature": 0.5, "top_p": 0.9, "top_k": 40, "seed": 7,
      "stop": ["\n", "END"], "stream": true, "priority": 3, "n": 1,
      "echo": false, "logprobs": null, "user": "u"})"));
  EXPECT_EQ(request.prompt, (std::vector<int64_t>{'H', 'i'}));
  EXPECT_EQ(request.params.max_new_tokens, 5);
  EXPECT_FLOAT_EQ(request.params.temperature, 0.5f);
  EXPECT_FLOAT_EQ(request.params.top_p, 0.9f);
  EXPECT_EQ(request.params.top_k, 40);
  EXPECT_TRUE(request.hasSeed);
  EXPECT_EQ(request.params.seed, 7u);
  EXPECT_EQ(request.stop, (std::vector<std::string>{"\n", "END"}));
  EXPECT_TRUE(request.stream);
  EXPECT_EQ(request.priority, 3);
}

TEST_F(CompletionRequestTest, DefaultsFollowOpenAI) {
  ASSERT_FALSE(parse(R"({"prompt": [1, 2, 3]})"));
  EXPECT_EQ(request.prompt, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(request.params.max_new_tokens, 16);
  EXPECT_FLOAT_EQ(request.params.temperature, 1.0f);
  EXPECT_FALSE(request.stream);
  // The default max_tokens shrinks to what the context leaves.
  ASSERT_FALSE(parse(R"({"prompt": ")" + std::string(60, 'a') + R"("})"));
  EXPECT_EQ(request.params.max_new_tokens, 4);
}

TEST_F(CompletionRequestTest, BadRequestsNameTheirField) {
  EXPECT_EQ(refusedField("{not json"), "(body)");
  EXPECT_EQ(refusedField("[1, 2]"), "(body)");
  EXPECT_EQ(refusedField(R"({"model": "gpt-4", "prompt": "x"})"), "model");
  EXPECT_EQ(refusedField(R"({"model": 3, "prompt": "x"})"), "model");
  EXPECT_EQ(refusedField(R"({})"), "prompt");
  EXPECT_EQ(refusedField(R"({"prompt": ""})"), "prompt");
  EXPECT_EQ(refusedField(R"({"prompt": 12})"), "prompt");
  EXPECT_EQ(refusedField(R"({"prompt": ["a", "b"]})"), "prompt");
  EXPECT_EQ(refusedField(R"({"prompt": [1, 256]})"), "prompt");
  EXPECT_EQ(refusedField(R"({"prompt": [1, -1]})"), "prompt");
  EXPECT_EQ(refusedField(R"({"prompt": [1, 2.5]})"), "prompt");
  EXPECT_EQ(refusedField(R"({"prompt": ")" + std::string(64, 'a') + R"("})"),
            "prompt");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "max_tokens": 0})"), "max_tokens");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "max_tokens": -5})"), "max_tokens");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "max_tokens": 64})"), "max_tokens");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "max_tokens": "10"})"), "max_tokens");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "max_tokens": 1e300})"), "max_tokens");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "max_tokens": 18446744073709551615})"),
            "max_tokens");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "temperature": -1})"), "temperature");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "temperature": 3})"), "temperature");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "temperature": "hot"})"), "temperature");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "top_p": 0})"), "top_p");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "top_p": 1.5})"), "top_p");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "top_k": -1})"), "top_k");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "top_k": 100000000000})"), "top_k");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "seed": "s"})"), "seed");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "stop": 5})"), "stop");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "stop": ["a","b","c","d","e"]})"), "stop");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "stop": [""]})"), "stop");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "stream": "yes"})"), "stream");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "n": 2})"), "n");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "echo": true})"), "echo");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "logprobs": 3})"), "logprobs");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "presence_penalty": 1})"),
            "presence_penalty");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "priority": 1e10})"), "priority");
  EXPECT_EQ(refusedField(R"({"prompt": "x", "user": 5})"), "user");
}

TEST_F(CompletionRequestTest, ErrorsAreOpenAIErrorObjects) {
  ApiError error = parse(R"({"prompt": "x", "top_p": 2})");
  EXPECT_EQ(error.json(),
            R"({"error":{"code":null,"message":"'top_p' is 2; it must be in (0, 1]",)"
            R"("param":"top_p","type":"invalid_request_error"}})");
}

TEST_F(CompletionRequestTest, WithoutATokenizerPromptsAreIds) {
  limits.tokenizer = nullptr;
  EXPECT_EQ(refusedField(R"({"prompt": "text"})"), "prompt");
  EXPECT_EQ(refusedField(R"({"prompt": [5, 6]})"), "ok");
  EXPECT_EQ(refusedField(R"({"prompt": [5, 6], "stop": "a"})"), "stop");
}

}  // namespace
}  // namespace strata::serve
