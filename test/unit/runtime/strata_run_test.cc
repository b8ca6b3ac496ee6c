//===- strata_run_test.cc - The strata-run tool end to end
//-----------------===//
// SPDX-License-Identifier: Apache-2.0
// Runs the built strata-run (STRATA_RUN_PATH) on the standard test artifact
// and checks outputs, timings, --json, --inspect, --verify and every error
// path's exit status and message.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "Npy.h"
#include "strata_run_test_util.h"
#include "test_artifacts.h"

namespace strata::testing {
namespace {

using tools::NpyArray;

class StrataRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    dir = std::string(tmp ? tmp : "/tmp") + "/strata_run_test_" +
          std::to_string(getpid()) + "_" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(
        system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()), 0);
    artifact = dir + "/model.strata";
    std::string error;
    ASSERT_TRUE(standardWriter().writeToFile(artifact, &error)) << error;
    const int64_t shape[2] = {2, 4};
    const float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    ASSERT_TRUE(tools::writeNpy(dir + "/x.npy", STRATA_DTYPE_F32, shape, 2, x,
                                sizeof(x), &error));
  }
  void TearDown() override {
    EXPECT_EQ(system(("rm -rf '" + dir + "'").c_str()), 0);
  }

  Result run(const std::string& args) { return runStrataRun(args); }

  std::string dir, artifact;
};

TEST_F(StrataRunTest, RunsAndWritesOutputs) {
  Result r = run(artifact + " --entry add_bias --input x=" + dir +
                 "/x.npy --output-dir " + dir + "/out --repeat 3");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("run 3: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("entry add_bias: 3 run(s), median"),
            std::string::npos);
  EXPECT_NE(r.output.find("output y: f32[2, 4] -> " + dir + "/out/y.npy"),
            std::string::npos)
      << r.output;
  NpyArray y;
  std::string error;
  ASSERT_TRUE(tools::readNpy(dir + "/out/y.npy", &y, &error)) << error;
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 4}));
  const float* values = reinterpret_cast<const float*>(y.data.data());
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[7], 11.0f);
}

TEST_F(StrataRunTest, SanitizesOutputNames) {
  const int64_t shape[2] = {3, 3};
  const float a[9] = {};
  const int64_t bshape[1] = {3};
  const int32_t b[3] = {1, 2, 3};
  std::string error;
  ASSERT_TRUE(tools::writeNpy(dir + "/a.npy", STRATA_DTYPE_F32, shape, 2, a,
                              sizeof(a), &error));
  ASSERT_TRUE(tools::writeNpy(dir + "/b.npy", STRATA_DTYPE_I32, bshape, 1, b,
                              sizeof(b), &error));
  Result r = run(artifact + " --entry two_outputs --input a=" + dir +
                 "/a.npy --input b=" + dir + "/b.npy --output-dir " + dir);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  NpyArray doubled;
  ASSERT_TRUE(tools::readNpy(dir + "/present.0_doubled.npy", &doubled, &error))
      << error;
  EXPECT_EQ(doubled.dtype, static_cast<uint32_t>(STRATA_DTYPE_I64));
  EXPECT_EQ(reinterpret_cast<const int64_t*>(doubled.data.data())[2], 6);
}

TEST_F(StrataRunTest, JsonIsOneObject) {
  Result r = run(artifact + " --entry add_bias --input x=" + dir +
                 "/x.npy --repeat 2 --json");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  ASSERT_FALSE(r.output.empty());
  EXPECT_EQ(r.output.front(), '{');
  EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << r.output;
  EXPECT_NE(r.output.find("\"entry\": \"add_bias\""), std::string::npos);
  EXPECT_NE(r.output.find("\"runs_ms\": ["), std::string::npos);
  EXPECT_NE(r.output.find("\"median_ms\": "), std::string::npos);
  EXPECT_NE(r.output.find("\"shape\": [2, 4]"), std::string::npos) << r.output;
}

TEST_F(StrataRunTest, InspectAndVerify) {
  Result r = run(artifact + " --inspect --verify");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("weights: checksum OK"), std::string::npos);
  EXPECT_NE(r.output.find("dim sequence <= 16"), std::string::npos);
  EXPECT_NE(r.output.find("entry add_bias (symbol strata_test_add_bias)"),
            std::string::npos);
  EXPECT_NE(r.output.find("  input  x: f32[batch<=8, 4]"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("  output present.0/doubled: i64[sequence<=16]"),
            std::string::npos);

  std::vector<uint8_t> bytes = readFileBytes(artifact);
  bytes.back() ^= 0x10;  // the weights are last
  FILE* f = std::fopen(artifact.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  r = run(artifact + " --verify --inspect");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.output.find("DATA_LOSS: weights checksum mismatch"),
            std::string::npos)
      << r.output;
}

// Entry kinds and declared state tensors are part of --inspect, in text and
// in JSON.
TEST_F(StrataRunTest, InspectShowsEntryKindsAndStates) {
  codegen::ArtifactWriter writer;
  int64_t slots = writer.addSymbolicDim("batch", 4);
  writer.addEntry({"bump",
                   "strata_test_bump",
                   {{"slot", STRATA_DTYPE_I64, {}}},
                   {{"count", STRATA_DTYPE_I64, {}}},
                   STRATA_ENTRY_KIND_DECODE});
  writer.addStateTensor({{"counter", STRATA_DTYPE_I64, {slots, 2}},
                         STRATA_STATE_SCOPE_PER_SEQUENCE});
  writer.setWeights(testWeights().data(), testWeights().size());
  writer.setCpuCode(testKernelBytes().data(), testKernelBytes().size());
  std::string error;
  ASSERT_TRUE(writer.writeToFile(artifact, &error)) << error;
  Result r = run(artifact + " --inspect");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("entry bump (symbol strata_test_bump, decode)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("state counter: i64[batch<=4, 2], per-sequence"),
            std::string::npos)
      << r.output;
  r = run(artifact + " --inspect --json");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("\"kind\": \"decode\""), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\"states\": [{\"name\": \"counter\", \"dtype\": "
                          "\"i64\", \"dims\": [{\"symbol\": \"batch\", "
                          "\"max\": 4}, 2], \"scope\": \"per-sequence\"}]"),
            std::string::npos)
      << r.output;
}

TEST_F(StrataRunTest, ErrorsExitWithOne) {
  std::string x = " --input x=" + dir + "/x.npy";
  std::string bad = dir + "/bad.npy";
  FILE* f = std::fopen(bad.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("not a numpy file at all", f);
  std::fclose(f);
  struct Case {
    std::string args;
    std::string needle;
  };
  const Case cases[] = {
      {"", "no artifact given"},
      {artifact + " --bogus", "unknown option '--bogus'"},
      {artifact + " --repeat 0", "--repeat expects a count"},
      {artifact + " --input x", "--input expects NAME=FILE.npy"},
      {artifact + " --entry", "--entry needs a value"},
      {dir + "/missing.strata", "cannot load: NOT_FOUND"},
      {x.substr(1) + " " + dir + "/x.npy", "DATA_LOSS"},
      {artifact + x, "several entries (add_bias, two_outputs"},
      {artifact + " --entry nope", "NOT_FOUND: no entry 'nope'"},
      {artifact + " --entry add_bias", "missing --input x=FILE.npy"},
      {artifact + " --entry add_bias" + x + x, "input 'x' given twice"},
      {artifact + " --entry add_bias" + x + " --input y=" + dir + "/x.npy",
       "has no input 'y'"},
      {artifact + " --entry add_bias --input x=" + bad, "bad magic"},
      {artifact + " --entry add_bias --input x=" + dir + "/none.npy",
       "cannot open"},
      {artifact + " --entry sum8 --input x0=" + dir + "/x.npy",
       "missing --input x1"},
      {artifact + " --entry scale --input x=" + dir + "/x.npy",
       "INVALID_ARGUMENT: input 'x' has rank 2, expected 0"},
      {artifact + " --entry bad_size --input x=" + dir + "/x.npy",
       "INVALID_ARGUMENT: input 'x' has rank 2, expected 1"},
  };
  for (const Case& c : cases) {
    Result r = run(c.args);
    EXPECT_EQ(r.exitCode, 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.needle), std::string::npos) << c.args << "\n"
                                                          << r.output;
  }
}

}  // namespace
}  // namespace strata::testing
