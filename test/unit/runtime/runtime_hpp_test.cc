//===- runtime_hpp_test.cc - The C++ RAII wrapper
//--------------------------===//
// SPDX-License-Identifier: Apache-2.0

#include <gtest/gtest.h>

#include "strata/runtime/runtime.hpp"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

TEST(RuntimeHppTest, LoadInspectRun) {
  AlignedBytes bytes(standardArtifact());
  Module module;
  Status status = Module::load(bytes.span(), &module);
  ASSERT_TRUE(status.ok()) << status.toString();
  EXPECT_EQ(module.entryCount(), 7u);
  EXPECT_TRUE(module.verifyWeights().ok());
  Module shared = module;  // a second reference
  Session session;
  ASSERT_TRUE(Session::create(shared, &session, /*thread_count=*/2).ok());
  EXPECT_EQ(strata_session_thread_count(session.get()), 2u);
  Tensor x;
  const float values[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  ASSERT_TRUE(
      Tensor::fromData(STRATA_DTYPE_F32, {2, 4}, values, sizeof(values), &x)
          .ok());
  std::vector<Tensor> outputs;
  status = session.run("add_bias", {&x}, &outputs);
  ASSERT_TRUE(status.ok()) << status.toString();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].dims(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(outputs[0].data<float>()[5], 7.0f);
}

TEST(RuntimeHppTest, ErrorsCarryCodeAndMessage) {
  Module module;
  Status status = Module::loadFile("/nonexistent/model.strata", &module);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), STRATA_STATUS_NOT_FOUND);
  EXPECT_NE(status.toString().find("NOT_FOUND: "), std::string::npos);
  EXPECT_FALSE(module);

  AlignedBytes bytes(standardArtifact());
  ASSERT_TRUE(Module::load(bytes.span(), &module).ok());
  Session session;
  ASSERT_TRUE(Session::create(module, &session).ok());
  Tensor wrong;
  ASSERT_TRUE(Tensor::create(STRATA_DTYPE_F32, {9, 4}, &wrong).ok());
  std::vector<Tensor> outputs;
  status = session.run("add_bias", {&wrong}, &outputs);
  EXPECT_EQ(status.code(), STRATA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(session.run("nope", {}, &outputs).code(), STRATA_STATUS_NOT_FOUND);
  EXPECT_TRUE(outputs.empty());
  Status moved = std::move(status);
  EXPECT_FALSE(moved.ok());
}

TEST(RuntimeHppTest, CallerMemorySharedPoolAndBinding) {
  AlignedBytes bytes(standardArtifact());
  Module module;
  ASSERT_TRUE(Module::load(bytes.span(), &module).ok());
  ThreadPool pool;
  ASSERT_TRUE(ThreadPool::create(&pool, /*thread_count=*/2).ok());
  EXPECT_EQ(pool.threadCount(), 2u);
  Session session;
  ASSERT_TRUE(Session::create(module, &session).ok());
  ASSERT_TRUE(session.setThreadPool(pool).ok());
  EXPECT_EQ(strata_session_thread_pool(session.get()), pool.get());

  alignas(64) float in[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  alignas(64) float out[8] = {};
  Tensor x, y;
  ASSERT_TRUE(Tensor::wrap(STRATA_DTYPE_F32, {2, 4}, in, sizeof(in), &x).ok());
  ASSERT_TRUE(
      Tensor::wrap(STRATA_DTYPE_F32, {2, 4}, out, sizeof(out), &y).ok());
  Status status = session.runInto("add_bias", {&x}, {&y});
  ASSERT_TRUE(status.ok()) << status.toString();
  EXPECT_EQ(out[5], 7.0f);

  IoBinding binding;
  ASSERT_TRUE(IoBinding::create(module, "add_bias", &binding).ok());
  ASSERT_TRUE(binding.bindInput("x", &x).ok());
  status = session.run(binding);
  ASSERT_TRUE(status.ok()) << status.toString();
  Tensor made;
  ASSERT_TRUE(binding.takeOutput("y", &made).ok());
  EXPECT_EQ(made.data<float>()[6], 9.0f);
  EXPECT_EQ(binding.takeOutput("y", &made).code(),
            STRATA_STATUS_FAILED_PRECONDITION);
  out[0] = -1;
  ASSERT_TRUE(binding.bindOutput("y", &y).ok());
  ASSERT_TRUE(session.run(binding).ok());
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(binding.bindOutput("nope", &y).code(), STRATA_STATUS_NOT_FOUND);
}

}  // namespace
}  // namespace strata::testing
