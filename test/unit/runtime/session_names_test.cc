//===- session_names_test.cc - Inputs and outputs by name -----------------===//
// SPDX-License-Identifier: Apache-2.0
// Name-to-index lookups of an entry's signature and runs that pass inputs
// and select outputs by name, with every error naming the bad name.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "status_matchers.h"
#include "strata/runtime/runtime.hpp"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

class SessionNamesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STRATA_ASSERT_OK(module.load());
    STRATA_ASSERT_OK(strata_session_create(
        module.get(), nullptr, strata_allocator_system(), &session));
    // two_outputs(a: f32[seq, 3], b: i32[seq]) at seq 2.
    const float a[6] = {1, 2, 3, 4, 5, 6};
    const int32_t b[2] = {10, 20};
    const int64_t aDims[2] = {2, 3};
    const int64_t bDims[1] = {2};
    STRATA_ASSERT_OK(strata_tensor_create_copy(STRATA_DTYPE_F32, 2, aDims, a,
                                               sizeof(a),
                                               strata_allocator_system(), &ta));
    STRATA_ASSERT_OK(strata_tensor_create_copy(STRATA_DTYPE_I32, 1, bDims, b,
                                               sizeof(b),
                                               strata_allocator_system(), &tb));
  }
  void TearDown() override {
    strata_tensor_release(ta);
    strata_tensor_release(tb);
    strata_session_release(session);
  }

  // Runs two_outputs by name and expects |code| with |needle|; no output
  // may be written on failure.
  void expectFails(std::vector<const char*> inputNames,
                   std::vector<const strata_tensor_t*> inputs,
                   const char* const* outputNames, size_t outputCount,
                   strata_status_code_t code, const std::string& needle) {
    std::vector<strata_tensor_t*> outputs(outputCount + 1, nullptr);
    auto [actual, message] = consumeStatus(strata_session_run_named(
        session, "two_outputs", inputNames.data(), inputs.data(),
        inputs.size(), outputNames, outputs.data(), outputCount));
    EXPECT_EQ(actual, code) << message;
    EXPECT_NE(message.find(needle), std::string::npos)
        << "'" << message << "' lacks '" << needle << "'";
    for (strata_tensor_t* t : outputs) EXPECT_EQ(t, nullptr);
  }

  LoadedModule module{standardArtifact()};
  strata_session_t* session = nullptr;
  strata_tensor_t* ta = nullptr;
  strata_tensor_t* tb = nullptr;
};

TEST_F(SessionNamesTest, IndexLookups) {
  size_t index = 99;
  STRATA_ASSERT_OK(
      strata_module_input_index(module.get(), "two_outputs", "b", &index));
  EXPECT_EQ(index, 1u);
  STRATA_ASSERT_OK(
      strata_module_input_index(module.get(), "two_outputs", "a", &index));
  EXPECT_EQ(index, 0u);
  STRATA_ASSERT_OK(strata_module_output_index(module.get(), "two_outputs",
                                              "present.0/doubled", &index));
  EXPECT_EQ(index, 1u);
  STRATA_ASSERT_OK(
      strata_module_input_index(module.get(), "sum8", "x7", &index));
  EXPECT_EQ(index, 7u);
  // An output name is not an input name and vice versa.
  index = 99;
  auto [code, message] = consumeStatus(
      strata_module_input_index(module.get(), "two_outputs", "row_sum",
                                &index));
  EXPECT_EQ(code, STRATA_STATUS_NOT_FOUND);
  EXPECT_NE(message.find("no input 'row_sum'"), std::string::npos) << message;
  EXPECT_NE(message.find("'a', 'b'"), std::string::npos) << message;
  EXPECT_EQ(index, 99u);
  std::tie(code, message) = consumeStatus(
      strata_module_output_index(module.get(), "two_outputs", "a", &index));
  EXPECT_EQ(code, STRATA_STATUS_NOT_FOUND);
  EXPECT_NE(message.find("no output 'a'"), std::string::npos) << message;
  EXPECT_NE(message.find("'row_sum', 'present.0/doubled'"), std::string::npos)
      << message;
  std::tie(code, message) = consumeStatus(
      strata_module_input_index(module.get(), "nope", "a", &index));
  EXPECT_EQ(code, STRATA_STATUS_NOT_FOUND);
  EXPECT_NE(message.find("no entry 'nope'"), std::string::npos) << message;
  EXPECT_EQ(index, 99u);
}

TEST_F(SessionNamesTest, IndexLookupsRejectNull) {
  size_t index = 0;
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_module_input_index(nullptr, "add_bias", "x",
                                                    &index));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_module_input_index(module.get(), nullptr, "x",
                                                    &index));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_module_output_index(module.get(), "add_bias",
                                                     nullptr, &index));
  STRATA_EXPECT_STATUS_IS(STRATA_STATUS_INVALID_ARGUMENT,
                          strata_module_output_index(module.get(), "add_bias",
                                                     "y", nullptr));
}

TEST_F(SessionNamesTest, InputsInAnyOrderAllOutputs) {
  const char* names[2] = {"b", "a"};
  const strata_tensor_t* inputs[2] = {tb, ta};
  strata_tensor_t* outputs[2] = {nullptr, nullptr};
  STRATA_ASSERT_OK(strata_session_run_named(session, "two_outputs", names,
                                            inputs, 2, nullptr, outputs, 2));
  const float* sums = static_cast<const float*>(strata_tensor_const_data(outputs[0]));
  const int64_t* doubled =
      static_cast<const int64_t*>(strata_tensor_const_data(outputs[1]));
  EXPECT_EQ(sums[0], 16.0f);
  EXPECT_EQ(sums[1], 35.0f);
  EXPECT_EQ(doubled[0], 20);
  EXPECT_EQ(doubled[1], 40);
  strata_tensor_release(outputs[0]);
  strata_tensor_release(outputs[1]);
}

TEST_F(SessionNamesTest, SelectedOutputsInRequestedOrder) {
  const char* names[2] = {"a", "b"};
  const strata_tensor_t* inputs[2] = {ta, tb};
  const char* wanted[1] = {"present.0/doubled"};
  strata_tensor_t* output = nullptr;
  STRATA_ASSERT_OK(strata_session_run_named(session, "two_outputs", names,
                                            inputs, 2, wanted, &output, 1));
  ASSERT_EQ(strata_tensor_dtype(output), STRATA_DTYPE_I64);
  EXPECT_EQ(static_cast<const int64_t*>(strata_tensor_const_data(output))[1],
            40);
  strata_tensor_release(output);

  const char* both[2] = {"present.0/doubled", "row_sum"};
  strata_tensor_t* outputs[2] = {nullptr, nullptr};
  STRATA_ASSERT_OK(strata_session_run_named(session, "two_outputs", names,
                                            inputs, 2, both, outputs, 2));
  EXPECT_EQ(strata_tensor_dtype(outputs[0]), STRATA_DTYPE_I64);
  EXPECT_EQ(strata_tensor_dtype(outputs[1]), STRATA_DTYPE_F32);
  EXPECT_EQ(static_cast<const float*>(strata_tensor_const_data(outputs[1]))[0],
            16.0f);
  strata_tensor_release(outputs[0]);
  strata_tensor_release(outputs[1]);
}

TEST_F(SessionNamesTest, ErrorsNameTheName) {
  expectFails({"a", "c"}, {ta, tb}, nullptr, 2, STRATA_STATUS_NOT_FOUND,
              "no input 'c'");
  expectFails({"a", "a"}, {ta, tb}, nullptr, 2, STRATA_STATUS_INVALID_ARGUMENT,
              "input 'a' of entry 'two_outputs' is given twice");
  expectFails({"b"}, {tb}, nullptr, 2, STRATA_STATUS_INVALID_ARGUMENT,
              "needs input 'a'");
  expectFails({"a", nullptr}, {ta, tb}, nullptr, 2,
              STRATA_STATUS_INVALID_ARGUMENT, "input name 1 is null");
  const char* unknown[1] = {"row_sums"};
  expectFails({"a", "b"}, {ta, tb}, unknown, 1, STRATA_STATUS_NOT_FOUND,
              "no output 'row_sums'");
  const char* twice[2] = {"row_sum", "row_sum"};
  expectFails({"a", "b"}, {ta, tb}, twice, 2, STRATA_STATUS_INVALID_ARGUMENT,
              "output 'row_sum' of entry 'two_outputs' is requested twice");
  // The positional checks still apply, naming the input.
  expectFails({"b", "a"}, {ta, tb}, nullptr, 2, STRATA_STATUS_INVALID_ARGUMENT,
              "input 'a' has dtype i32");
  expectFails({"a", "b"}, {ta, tb}, nullptr, 1, STRATA_STATUS_INVALID_ARGUMENT,
              "has 2 outputs, got room for 1");
  const char* names[1] = {"x"};
  strata_tensor_t* out = nullptr;
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_NOT_FOUND,
      strata_session_run_named(session, "nope", names, nullptr, 0, nullptr,
                               &out, 0));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_session_run_named(nullptr, "two_outputs", names, nullptr, 0,
                               nullptr, &out, 0));
  STRATA_EXPECT_STATUS_IS(
      STRATA_STATUS_INVALID_ARGUMENT,
      strata_session_run_named(session, "two_outputs", nullptr, nullptr, 2,
                               nullptr, &out, 2));
  EXPECT_EQ(out, nullptr);
}

TEST(RuntimeHppNamesTest, IndexAndRunNamed) {
  AlignedBytes bytes(standardArtifact());
  Module module;
  ASSERT_TRUE(Module::load(bytes.span(), &module).ok());
  size_t index = 0;
  ASSERT_TRUE(module.inputIndex("two_outputs", "b", &index).ok());
  EXPECT_EQ(index, 1u);
  ASSERT_TRUE(module.outputIndex("two_outputs", "row_sum", &index).ok());
  EXPECT_EQ(index, 0u);
  Status status = module.outputIndex("two_outputs", "nope", &index);
  EXPECT_EQ(status.code(), STRATA_STATUS_NOT_FOUND);
  EXPECT_NE(status.message().find("'nope'"), std::string::npos);

  Session session;
  ASSERT_TRUE(Session::create(module, &session).ok());
  Tensor a, b;
  const float av[3] = {1, 2, 3};
  const int32_t bv[1] = {4};
  ASSERT_TRUE(Tensor::fromData(STRATA_DTYPE_F32, {1, 3}, av, sizeof(av), &a)
                  .ok());
  ASSERT_TRUE(Tensor::fromData(STRATA_DTYPE_I32, {1}, bv, sizeof(bv), &b).ok());
  std::vector<Tensor> outputs;
  status = session.runNamed("two_outputs", {{"b", &b}, {"a", &a}}, {},
                            &outputs);
  ASSERT_TRUE(status.ok()) << status.toString();
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].data<float>()[0], 10.0f);
  EXPECT_EQ(outputs[1].data<int64_t>()[0], 8);
  status = session.runNamed("two_outputs", {{"a", &a}, {"b", &b}},
                            {"present.0/doubled"}, &outputs);
  ASSERT_TRUE(status.ok()) << status.toString();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].dtype(), STRATA_DTYPE_I64);
  EXPECT_EQ(outputs[0].data<int64_t>()[0], 8);
  status = session.runNamed("two_outputs", {{"a", &a}}, {}, &outputs);
  EXPECT_EQ(status.code(), STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("'b'"), std::string::npos);
  EXPECT_EQ(outputs.size(), 1u);  // untouched on failure
  EXPECT_EQ(session.runNamed("nope", {}, {}, &outputs).code(),
            STRATA_STATUS_NOT_FOUND);
}

}  // namespace
}  // namespace strata::testing
