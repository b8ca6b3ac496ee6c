//===- CompilerCApiTest.cpp - Compile through the C API, run the result ---===//
// SPDX-License-Identifier: Apache-2.0
// strata_compile_file on a small model, the artifact run through the
// runtime's C API against outputs computed here, and on a fixture export
// with default options against its onnxruntime references; bad paths,
// unbound dims and malformed options come back as statuses and
// diagnostics.

#include "compiler/capi/strata_compiler.h"
#include "strata/runtime/api.h"
#include "Npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" size_t strata_test_options_size_from_c(void);

namespace {

// y = x @ w + b with x[batch, 3] (the case the test checks by hand).
constexpr const char *kAffineModel = R"(<
  ir_version: 8,
  opset_import: ["" : 17]
>
affine (float[batch, 3] x) => (float[batch, 2] y)
<float[3, 2] w = {1, -2, 0.5, 3, -1, 0.25}, float[2] b = {0.5, -1}>
{
  xw = MatMul(x, w)
  y = Add(xw, b)
}
)";

// A dim named like torch.export's automatic dims: no default maximum.
constexpr const char *kAutoDimModel = R"(<
  ir_version: 8,
  opset_import: ["" : 17]
>
g (float[s0, 4] x) => (float[s0, 4] y)
{
  y = Relu(x)
}
)";

// A small GPT-2 with-past export: a causal decoder, so it gets the prefill
// and decode entries.
const std::string kSmallDecoder =
    std::string(STRATA_TEST_MODELS_DIR) + "/gpt2_op17_past/model.onnx";
const std::string kCalibrationIds =
    std::string(STRATA_TEST_TOOLS_INPUTS_DIR) + "/calibration-ids.txt";

// transformers' Llama exported by torch.onnx.export (eager attention, GQA).
const std::string kLlamaFixture =
    std::string(STRATA_TEST_MODELS_DIR) + "/transformers_llama_op17_prefill";

struct Diagnostic {
  strata_compile_severity_t severity;
  std::string location, message;
};

void collect(strata_compile_severity_t severity, const char *location,
             const char *message, void *userData) {
  static_cast<std::vector<Diagnostic> *>(userData)->push_back(
      {severity, location, message});
}

void expectOk(strata_status_t status) {
  if (status) {
    ADD_FAILURE() << strata_status_message(status);
    strata_status_free(status);
  }
}

class CompilerCApiTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/strata-capi-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
  }
  void TearDown() override {
    strata_session_release(session);
    strata_module_release(module);
    std::string cmd = "rm -rf '" + dir + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  std::string write(const std::string &name, const char *text) {
    std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  /// Compiles |model| to DIR/out.strata, keeping diagnostics and the error.
  strata_compile_status_t compile(const std::string &model,
                                  const strata_compile_options_t *options) {
    strata_compiler_error_t *error = nullptr;
    strata_compile_status_t status =
        strata_compile_file(model.c_str(), artifact().c_str(), options, collect,
                            &diagnostics, &error);
    errorText = error ? strata_compiler_error_message(error) : "";
    if (error) {
      EXPECT_EQ(strata_compiler_error_status(error), status);
    }
    strata_compiler_error_free(error);
    return status;
  }
  std::string artifact() const { return dir + "/out.strata"; }
  /// The bytes of the last compiled artifact.
  std::vector<char> artifactBytes() const {
    std::ifstream in(artifact(), std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
  }
  /// Options for the small decoder: two sequences of 64 tokens.
  static strata_compile_options_t smallDecoderOptions() {
    strata_compile_options_t options;
    strata_compile_options_init(&options);
    options.max_batch = 2;
    options.max_seq = 64;
    return options;
  }
  /// Whether the loaded module has an entry named |name|.
  bool hasEntry(const char *name) {
    const strata_entry_signature_t *found = nullptr;
    strata_status_t status = strata_module_find_entry(module, name, &found);
    strata_status_free(status);
    return status == nullptr;
  }
  bool hasError(const std::string &fragment) const {
    for (const Diagnostic &d : diagnostics)
      if (d.severity == STRATA_COMPILE_SEVERITY_ERROR &&
          (d.location + ": " + d.message).find(fragment) != std::string::npos)
        return true;
    return false;
  }

  /// Loads the compiled artifact, finds "main" and opens a session on it
  /// (released by TearDown).
  void openArtifact() {
    expectOk(strata_module_load_file(artifact().c_str(), allocator, &module));
    ASSERT_NE(module, nullptr);
    expectOk(strata_module_find_entry(module, "main", &entry));
    ASSERT_NE(entry, nullptr);
    strata_session_options_t sessionOptions;
    strata_session_options_init(&sessionOptions);
    expectOk(
        strata_session_create(module, &sessionOptions, allocator, &session));
    ASSERT_NE(session, nullptr);
  }

  /// Compiles |fixture|'s model.onnx with default options, opens it and
  /// reads its inputs from the .npy files in |ref| (the caller releases
  /// them).
  void openFixture(const std::string &fixture, const std::string &ref,
                   std::vector<strata_tensor_t *> *inputs) {
    ASSERT_EQ(compile(fixture + "/model.onnx", nullptr),
              STRATA_COMPILE_STATUS_OK)
        << errorText;
    ASSERT_NO_FATAL_FAILURE(openArtifact());
    ASSERT_NO_FATAL_FAILURE(readInputs(ref, inputs));
  }

  /// The entry's inputs from the .npy files in |ref| (the caller releases
  /// them).
  void readInputs(const std::string &ref,
                  std::vector<strata_tensor_t *> *inputs) {
    for (size_t i = 0; i < entry->input_count; ++i) {
      strata::tools::NpyArray array;
      std::string error;
      ASSERT_TRUE(strata::tools::readNpy(ref + entry->inputs[i].name + ".npy",
                                         &array, &error))
          << error;
      strata_tensor_t *tensor = nullptr;
      expectOk(strata_tensor_create_copy(
          static_cast<strata_dtype_t>(array.dtype), array.shape.size(),
          array.shape.data(), array.data.data(), array.data.size(), allocator,
          &tensor));
      inputs->push_back(tensor);
    }
  }

  std::string dir;
  std::vector<Diagnostic> diagnostics;
  std::string errorText;
  strata_allocator_t allocator = strata_allocator_system();
  strata_module_t *module = nullptr;
  const strata_entry_signature_t *entry = nullptr;
  strata_session_t *session = nullptr;
};

TEST_F(CompilerCApiTest, CompiledModelRunsAndMatchesTheAffineMap) {
  strata_compile_options_t options;
  strata_compile_options_init(&options);
  options.max_batch = 4;
  ASSERT_EQ(compile(write("affine.onnxtext", kAffineModel), &options),
            STRATA_COMPILE_STATUS_OK)
      << errorText;
  EXPECT_EQ(errorText, "");

  ASSERT_NO_FATAL_FAILURE(openArtifact());
  ASSERT_EQ(entry->output_count, 1u);
  // The output's batch is the input's: same symbolic dim, max_batch.
  ASSERT_EQ(entry->outputs[0].rank, 2u);
  ASSERT_NE(entry->outputs[0].dims[0].symbol, nullptr);
  EXPECT_STREQ(entry->outputs[0].dims[0].symbol, "batch");
  EXPECT_EQ(entry->outputs[0].dims[0].max, 4);
  EXPECT_EQ(entry->outputs[0].dims[1].extent, 2);

  const float x[3][3] = {{1, 2, 3}, {-1, 0.5f, 4}, {0, 0, -2}};
  const float w[3][2] = {{1, -2}, {0.5f, 3}, {-1, 0.25f}};
  const float b[2] = {0.5f, -1};
  const int64_t dims[2] = {3, 3};
  strata_tensor_t *input = nullptr;
  expectOk(strata_tensor_create_copy(STRATA_DTYPE_F32, 2, dims, x, sizeof(x),
                                     allocator, &input));
  const strata_tensor_t *inputs[] = {input};
  strata_tensor_t *output = nullptr;
  expectOk(strata_session_run(session, "main", inputs, 1, &output, 1));
  ASSERT_NE(output, nullptr);
  ASSERT_EQ(strata_tensor_rank(output), 2u);
  EXPECT_EQ(strata_tensor_dims(output)[0], 3);
  EXPECT_EQ(strata_tensor_dims(output)[1], 2);
  const float *y = static_cast<const float *>(strata_tensor_const_data(output));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      float want = b[j];
      for (int k = 0; k < 3; ++k)
        want += x[i][k] * w[k][j];
      EXPECT_NEAR(y[i * 2 + j], want, 1e-5f) << "y[" << i << "][" << j << "]";
    }
  strata_tensor_release(output);
  strata_tensor_release(input);
}

// transformers' Llama (torch.onnx.export) with default options: every
// output matches the saved onnxruntime outputs within the fp32 tolerance
// of test/e2e/check_fixtures.py (1e-4 relative to the largest magnitude).
TEST_F(CompilerCApiTest, FixtureCompiledWithDefaultsMatchesOnnxruntime) {
  const std::string ref = kLlamaFixture + "/ref/model_b3_s11_p0/";
  std::vector<strata_tensor_t *> inputs;
  ASSERT_NO_FATAL_FAILURE(openFixture(kLlamaFixture, ref, &inputs));
  std::vector<strata_tensor_t *> outputs(entry->output_count);
  expectOk(strata_session_run(
      session, "main", const_cast<const strata_tensor_t *const *>(inputs.data()),
      inputs.size(), outputs.data(), outputs.size()));
  for (size_t o = 0; o < outputs.size(); ++o) {
    ASSERT_NE(outputs[o], nullptr);
    strata::tools::NpyArray want;
    std::string error;
    ASSERT_TRUE(strata::tools::readNpy(
        ref + entry->outputs[o].name + ".npy", &want, &error))
        << error;
    ASSERT_EQ(want.dtype, STRATA_DTYPE_F32);
    ASSERT_EQ(strata_tensor_rank(outputs[o]), want.shape.size());
    for (size_t d = 0; d < want.shape.size(); ++d)
      ASSERT_EQ(strata_tensor_dims(outputs[o])[d], want.shape[d]);
    const float *expected = reinterpret_cast<const float *>(want.data.data());
    const float *got =
        static_cast<const float *>(strata_tensor_const_data(outputs[o]));
    size_t count = want.data.size() / sizeof(float);
    float largest = 1;
    for (size_t k = 0; k < count; ++k)
      largest = std::max(largest, std::abs(expected[k]));
    float worst = 0;
    for (size_t k = 0; k < count; ++k)
      worst = std::max(worst, std::abs(got[k] - expected[k]));
    EXPECT_LE(worst, 1e-4f * largest) << entry->outputs[o].name;
    strata_tensor_release(outputs[o]);
  }
  for (strata_tensor_t *tensor : inputs)
    strata_tensor_release(tensor);
}

// An allocator that fails its |failAt|-th allocation (counting from 0)
// and every one after it while failAt >= 0; frees (a pointer and size 0,
// allocator.h) always go through.
struct FailingAllocator {
  int64_t count = 0;
  int64_t failAt = -1;
  static strata_status_t fn(void *self, size_t size, size_t alignment,
                            void *ptrToFree, void **outPtr) {
    auto *a = static_cast<FailingAllocator *>(self);
    strata_allocator_t system = strata_allocator_system();
    if (ptrToFree)
      return system.fn(system.self, size, alignment, ptrToFree, outPtr);
    if (a->failAt >= 0 && a->count++ >= a->failAt)
      return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                                "injected allocation failure");
    return system.fn(system.self, size, alignment, ptrToFree, outPtr);
  }
  strata_allocator_t allocator() { return {this, &FailingAllocator::fn}; }
};

// Every allocation of a session's first run of a compiled model (buffers of
// the generated code, kernel scratch, outputs) failing in turn: each gives
// RESOURCE_EXHAUSTED, never a crash, and the same session then runs to the
// same outputs as a session that never failed.
TEST_F(CompilerCApiTest, AllocationFailureAtEveryIndexIsResourceExhausted) {
  const std::string ref = kLlamaFixture + "/ref/model_b3_s11_p0/";
  std::vector<strata_tensor_t *> inputs;
  ASSERT_NO_FATAL_FAILURE(openFixture(kLlamaFixture, ref, &inputs));
  auto run = [&](strata_session_t *on, std::vector<strata_tensor_t *> *out) {
    out->assign(entry->output_count, nullptr);
    return strata_session_run(
        on, "main", const_cast<const strata_tensor_t *const *>(inputs.data()),
        inputs.size(), out->data(), out->size());
  };
  auto bytesOf = [](const std::vector<strata_tensor_t *> &tensors) {
    std::vector<std::string> bytes;
    for (strata_tensor_t *t : tensors)
      bytes.emplace_back(static_cast<const char *>(strata_tensor_const_data(t)),
                         strata_tensor_byte_size(t));
    return bytes;
  };
  std::vector<strata_tensor_t *> expected;
  expectOk(run(session, &expected));
  const std::vector<std::string> want = bytesOf(expected);
  for (strata_tensor_t *t : expected)
    strata_tensor_release(t);

  int64_t failures = 0;
  for (int64_t index = 0; index < 5000; ++index) {
    FailingAllocator failing;
    strata_session_options_t options;
    strata_session_options_init(&options);
    options.thread_count = 2;
    strata_session_t *s = nullptr;
    strata_status_t created =
        strata_session_create(module, &options, failing.allocator(), &s);
    ASSERT_EQ(created, nullptr) << strata_status_message(created);
    failing.failAt = index;
    std::vector<strata_tensor_t *> got;
    strata_status_t status = run(s, &got);
    if (!status) {
      // Past the run's last allocation: every index before it failed.
      EXPECT_EQ(bytesOf(got), want);
      for (strata_tensor_t *t : got)
        strata_tensor_release(t);
      strata_session_release(s);
      break;
    }
    ++failures;
    EXPECT_EQ(strata_status_code(status), STRATA_STATUS_RESOURCE_EXHAUSTED)
        << "allocation " << index << ": " << strata_status_message(status);
    strata_status_free(status);
    for (strata_tensor_t *t : got)
      EXPECT_EQ(t, nullptr);
    // The session is still usable once memory is there again.
    failing.failAt = -1;
    expectOk(run(s, &got));
    EXPECT_EQ(bytesOf(got), want) << "after a failure at allocation " << index;
    for (strata_tensor_t *t : got)
      strata_tensor_release(t);
    strata_session_release(s);
  }
  // Buffers of the generated code, kernel scratch and outputs: many.
  EXPECT_GT(failures, 10);
  for (strata_tensor_t *tensor : inputs)
    strata_tensor_release(tensor);
}

// A module whose entry updates a state tensor: the generated code writes
// the session's state in place, so a second run sees the first one's sum;
// resetting a sequence slot zeroes its part; an entry that does not use
// the state runs as well.
TEST_F(CompilerCApiTest, StateTensorsAreUpdatedInPlaceAcrossRuns) {
  ASSERT_EQ(compile(std::string(STRATA_TEST_TOOLS_INPUTS_DIR) +
                        "/state_entries.mlir",
                    nullptr),
            STRATA_COMPILE_STATUS_OK)
      << errorText;
  expectOk(strata_module_load_file(artifact().c_str(), allocator, &module));
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(strata_module_state_count(module), 1u);
  expectOk(strata_session_create(module, nullptr, allocator, &session));
  ASSERT_NE(session, nullptr);
  const float x[8] = {1, 2, 3, 4, 10, 20, 30, 40};
  const int64_t xDims[2] = {2, 4};
  strata_tensor_t *input = nullptr;
  expectOk(strata_tensor_create_copy(STRATA_DTYPE_F32, 2, xDims, x, sizeof x,
                                     allocator, &input));
  auto accumulate = [&] {
    strata_tensor_t *total = nullptr;
    expectOk(strata_session_run(session, "accumulate", &input, 1, &total, 1));
    std::vector<float> values(4, -1.0f);
    if (total) {
      const float *data =
          static_cast<const float *>(strata_tensor_const_data(total));
      values.assign(data, data + 4);
    }
    strata_tensor_release(total);
    return values;
  };
  EXPECT_EQ(accumulate(), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(accumulate(), (std::vector<float>{22, 44, 66, 88}));
  strata_tensor_t *state = nullptr;
  expectOk(strata_session_read_state(session, 0, &state));
  ASSERT_NE(state, nullptr);
  const float *acc = static_cast<const float *>(strata_tensor_const_data(state));
  EXPECT_EQ(std::vector<float>(acc, acc + 8),
            (std::vector<float>{2, 4, 6, 8, 20, 40, 60, 80}));
  strata_tensor_release(state);
  expectOk(strata_session_reset_state(session, 1));
  EXPECT_EQ(accumulate(), (std::vector<float>{13, 26, 39, 52}));

  const float v[4] = {1, -2, 3, -4};
  const int64_t vDims[1] = {4};
  strata_tensor_t *vector = nullptr, *doubled = nullptr;
  expectOk(strata_tensor_create_copy(STRATA_DTYPE_F32, 1, vDims, v, sizeof v,
                                     allocator, &vector));
  expectOk(strata_session_run(session, "scale", &vector, 1, &doubled, 1));
  ASSERT_NE(doubled, nullptr);
  const float *y = static_cast<const float *>(strata_tensor_const_data(doubled));
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{2, -4, 6, -8}));
  strata_tensor_release(doubled);
  strata_tensor_release(vector);
  strata_tensor_release(input);
}

TEST_F(CompilerCApiTest, DefaultOptionsAndTwoCompilesInOneProcess) {
  std::string model = write("affine.onnxtext", kAffineModel);
  ASSERT_EQ(compile(model, nullptr), STRATA_COMPILE_STATUS_OK) << errorText;
  ASSERT_EQ(compile(model, nullptr), STRATA_COMPILE_STATUS_OK) << errorText;
  ASSERT_NO_FATAL_FAILURE(openArtifact());
  EXPECT_EQ(entry->inputs[0].dims[0].max, 8);
}

TEST_F(CompilerCApiTest, MissingModelIsNotFound) {
  std::string missing = dir + "/no-such-model.onnx";
  EXPECT_EQ(compile(missing, nullptr), STRATA_COMPILE_STATUS_NOT_FOUND);
  EXPECT_TRUE(hasError(missing + ": no such model file")) << errorText;
  EXPECT_NE(errorText.find("no such model file"), std::string::npos);
  EXPECT_NE(access(artifact().c_str(), F_OK), 0) << "no artifact on failure";
}

TEST_F(CompilerCApiTest, UnboundDimIsAnErrorNamingTheFlag) {
  std::string model = write("auto.onnxtext", kAutoDimModel);
  EXPECT_EQ(compile(model, nullptr), STRATA_COMPILE_STATUS_FAILED_PRECONDITION);
  const char *expected = "input 'x' dim 0 ('s0') is not a batch or sequence "
                         "name: give its maximum with --dim s0=MAX";
  EXPECT_TRUE(hasError(expected)) << errorText;
  EXPECT_NE(errorText.find(expected), std::string::npos) << errorText;
  EXPECT_NE(access(artifact().c_str(), F_OK), 0);

  // The dims option binds it.
  diagnostics.clear();
  strata_compile_options_t options;
  strata_compile_options_init(&options);
  const char *dims[] = {"s0=16"};
  options.dims = dims;
  options.dim_count = 1;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_OK) << errorText;
}

TEST_F(CompilerCApiTest, MalformedOptionsAreInvalidArguments) {
  std::string model = write("affine.onnxtext", kAffineModel);
  strata_compile_options_t options;
  strata_compile_options_init(&options);
  const char *dims[] = {"batch"};
  options.dims = dims;
  options.dim_count = 1;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("dims[0] must be NAME=MAX with MAX >= 1, got 'batch'"))
      << errorText;

  strata_compile_options_init(&options);
  options.max_seq = 0;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);

  strata_compile_options_init(&options);
  options.struct_size = sizeof(size_t);
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(errorText.find("smaller than any version"), std::string::npos)
      << errorText;

  // A newer caller's struct: accepted while its extra fields are zero.
  struct Newer {
    strata_compile_options_t v1;
    int64_t future_field;
  } newer;
  strata_compile_options_init(&newer.v1);
  newer.v1.struct_size = sizeof(newer);
  newer.future_field = 0;
  EXPECT_EQ(compile(model, &newer.v1), STRATA_COMPILE_STATUS_OK) << errorText;
  newer.future_field = 1;
  EXPECT_EQ(compile(model, &newer.v1), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);

  strata_compile_options_init(&options);
  options.target_cpu = "no-such-cpu";
  EXPECT_EQ(compile(model, &options),
            STRATA_COMPILE_STATUS_FAILED_PRECONDITION);
  EXPECT_TRUE(hasError("unknown target CPU 'no-such-cpu'")) << errorText;

  EXPECT_EQ(strata_compile_file(nullptr, artifact().c_str(), nullptr, nullptr,
                                nullptr, nullptr),
            STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
}

TEST_F(CompilerCApiTest, GenerationAndPrecisionOptions) {
  // Prompts in chunks of 16, every position's logits.
  strata_compile_options_t options = smallDecoderOptions();
  options.prefill_chunk = 16;
  options.prefill_all_logits = 1;
  ASSERT_EQ(compile(kSmallDecoder, &options), STRATA_COMPILE_STATUS_OK)
      << errorText;
  const size_t fp32Bytes = artifactBytes().size();
  expectOk(strata_module_load_file(artifact().c_str(), allocator, &module));
  const strata_entry_signature_t *prefill = nullptr;
  expectOk(strata_module_find_entry(module, "prefill", &prefill));
  ASSERT_NE(prefill, nullptr);
  EXPECT_TRUE(hasEntry("decode"));
  size_t index = 0;
  expectOk(strata_module_output_index(module, "prefill", "all_logits", &index));
  expectOk(strata_module_input_index(module, "prefill", "input_ids", &index));
  EXPECT_EQ(prefill->inputs[index].dims[1].max, 16);
  // The verify entry of speculative decoding, 9 tokens per row by default.
  const strata_entry_signature_t *verify = nullptr;
  expectOk(strata_module_find_entry(module, "verify", &verify));
  ASSERT_NE(verify, nullptr);
  EXPECT_EQ(verify->inputs[0].dims[1].max, 9);
  strata_module_release(module);
  module = nullptr;

  // verify_length 0 leaves it out; a negative one is refused.
  options = smallDecoderOptions();
  options.verify_length = 0;
  ASSERT_EQ(compile(kSmallDecoder, &options), STRATA_COMPILE_STATUS_OK)
      << errorText;
  expectOk(strata_module_load_file(artifact().c_str(), allocator, &module));
  EXPECT_TRUE(hasEntry("decode"));
  EXPECT_FALSE(hasEntry("verify"));
  strata_module_release(module);
  module = nullptr;
  options.verify_length = -2;
  EXPECT_EQ(compile(kSmallDecoder, &options),
            STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("verify_length must be >= 0 (0: no verify entry), got -2"))
      << errorText;

  // int4 decode weights, calibrated, read by prefill too (one int4 copy
  // instead of the fp32 one), and an int8 KV cache.
  options = smallDecoderOptions();
  options.decode_precision = "int4";
  options.shared_prefill_weights = 1;
  options.kv_cache_precision = "int8";
  options.calibration_data = kCalibrationIds.c_str();
  ASSERT_EQ(compile(kSmallDecoder, &options), STRATA_COMPILE_STATUS_OK)
      << errorText;
  EXPECT_LT(artifactBytes().size(), fp32Bytes) << fp32Bytes;

  // A missing calibration file is named.
  std::string missing = dir + "/no-such-calibration.txt";
  options.calibration_data = missing.c_str();
  EXPECT_EQ(compile(kSmallDecoder, &options),
            STRATA_COMPILE_STATUS_FAILED_PRECONDITION);
  EXPECT_TRUE(hasError("cannot read calibration data '" + missing))
      << errorText;

  // No generation entries: main only; its first attention layer windowed.
  options = smallDecoderOptions();
  options.no_generation_entries = 1;
  const int64_t layers[] = {0};
  options.attention_window = 8;
  options.attention_sinks = 2;
  options.attention_layers = layers;
  options.attention_layer_count = 1;
  ASSERT_EQ(compile(kSmallDecoder, &options), STRATA_COMPILE_STATUS_OK)
      << errorText;
  expectOk(strata_module_load_file(artifact().c_str(), allocator, &module));
  EXPECT_EQ(strata_module_entry_count(module), 1u);
  EXPECT_FALSE(hasEntry("decode"));
}

TEST_F(CompilerCApiTest, PagedKvCacheOptions) {
  // Blocks of 16 positions, a pool of 10: the entries take block tables
  // of ceil(64 / 16) = 4 blocks instead of slots.
  strata_compile_options_t options = smallDecoderOptions();
  options.kv_block_size = 16;
  options.kv_blocks = 10;
  ASSERT_EQ(compile(kSmallDecoder, &options), STRATA_COMPILE_STATUS_OK)
      << errorText;
  expectOk(strata_module_load_file(artifact().c_str(), allocator, &module));
  const strata_entry_signature_t *decode = nullptr;
  expectOk(strata_module_find_entry(module, "decode", &decode));
  ASSERT_NE(decode, nullptr);
  size_t index = 0;
  expectOk(strata_module_input_index(module, "decode", "block_tables", &index));
  ASSERT_LT(index, decode->input_count);
  EXPECT_EQ(decode->inputs[index].dims[1].max, 4);
  strata_status_t status =
      strata_module_input_index(module, "decode", "slots", &index);
  EXPECT_NE(status, nullptr);
  strata_status_free(status);
  expectOk(strata_module_input_index(module, "prefill", "block_table", &index));
  ASSERT_GT(strata_module_state_count(module), 0u);
  const strata_state_signature_t *cache = strata_module_state(module, 0);
  EXPECT_EQ(cache->scope, STRATA_STATE_SCOPE_SHARED);
  EXPECT_EQ(cache->dims[0].max, 10);

  // The driver's refusals are argument errors: kv_blocks alone, a negative
  // count, a pool short of one context, a window.
  options = smallDecoderOptions();
  options.kv_blocks = 8;
  EXPECT_EQ(compile(kSmallDecoder, &options),
            STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("--kv-blocks only with --kv-block-size, got 0 and 8"))
      << errorText;
  options.kv_block_size = -16;
  EXPECT_EQ(compile(kSmallDecoder, &options),
            STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  options.kv_block_size = 16;
  options.kv_blocks = 3;
  EXPECT_EQ(compile(kSmallDecoder, &options),
            STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("3 KV blocks of 16 cannot hold one sequence of the "
                       "context (64 tokens: 4 blocks)"))
      << errorText;
  options.kv_blocks = 0;
  options.attention_window = 8;
  EXPECT_EQ(compile(kSmallDecoder, &options),
            STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("a paged KV cache (--kv-block-size) does not combine "
                       "with windowed"))
      << errorText;
}

TEST_F(CompilerCApiTest, TensorParallelRank) {
  // Rank 1 of 2: a PARALLEL section naming it, the KV cache with half the
  // key/value heads of the whole model's.
  strata_compile_options_t options = smallDecoderOptions();
  ASSERT_EQ(compile(kSmallDecoder, &options), STRATA_COMPILE_STATUS_OK)
      << errorText;
  expectOk(strata_module_load_file(artifact().c_str(), allocator, &module));
  ASSERT_GT(strata_module_state_count(module), 0u);
  const int64_t wholeHeads = strata_module_state(module, 0)->dims[1].max;
  strata_module_release(module);
  module = nullptr;
  options.tensor_ranks = 2;
  options.tensor_rank = 1;
  ASSERT_EQ(compile(kSmallDecoder, &options), STRATA_COMPILE_STATUS_OK)
      << errorText;
  expectOk(strata_module_load_file(artifact().c_str(), allocator, &module));
  uint32_t rank = 0, ranks = 0;
  strata_module_parallel(module, &rank, &ranks);
  EXPECT_EQ(rank, 1u);
  EXPECT_EQ(ranks, 2u);
  EXPECT_EQ(strata_module_state(module, 0)->dims[1].max, wholeHeads / 2);

  // A rank outside the group is an argument error.
  options.tensor_rank = 2;
  EXPECT_EQ(compile(kSmallDecoder, &options),
            STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("tensor-parallel rank 2 of 2 ranks is not a rank of "
                       "the group"))
      << errorText;
}

TEST_F(CompilerCApiTest, PipelineStage) {
  // Stage 1 of 2 of tensor rank 0 of 2: world rank 2 of 4, holding fewer
  // KV caches than the whole model.
  strata_compile_options_t options = smallDecoderOptions();
  ASSERT_EQ(compile(kSmallDecoder, &options), STRATA_COMPILE_STATUS_OK)
      << errorText;
  expectOk(strata_module_load_file(artifact().c_str(), allocator, &module));
  const size_t wholeStates = strata_module_state_count(module);
  strata_module_release(module);
  module = nullptr;
  options.tensor_ranks = 2;
  options.tensor_rank = 0;
  options.pipeline_stages = 2;
  options.pipeline_stage = 1;
  ASSERT_EQ(compile(kSmallDecoder, &options), STRATA_COMPILE_STATUS_OK)
      << errorText;
  expectOk(strata_module_load_file(artifact().c_str(), allocator, &module));
  uint32_t rank = 0, ranks = 0, t = 9, tensorRanks = 0, stage = 0, stages = 0;
  strata_module_parallel(module, &rank, &ranks);
  strata_module_parallel_layout(module, &t, &tensorRanks, &stage, &stages);
  EXPECT_EQ(rank, 2u);
  EXPECT_EQ(ranks, 4u);
  EXPECT_EQ(t, 0u);
  EXPECT_EQ(tensorRanks, 2u);
  EXPECT_EQ(stage, 1u);
  EXPECT_EQ(stages, 2u);
  EXPECT_LT(strata_module_state_count(module), wholeStates);

  options.pipeline_stage = 2;
  EXPECT_EQ(compile(kSmallDecoder, &options),
            STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("pipeline stage 2 of 2 stages is not a stage of the "
                       "model"))
      << errorText;
}

TEST_F(CompilerCApiTest, OlderOptionsStructGetsTheNewDefaults) {
  // A 1.0 caller's struct ends before decode_precision: what follows it in
  // memory is not read.
  std::string model = write("affine.onnxtext", kAffineModel);
  strata_compile_options_t options;
  strata_compile_options_init(&options);
  options.struct_size = STRATA_COMPILE_OPTIONS_SIZE_1_0;
  options.decode_precision = "not read";
  options.int4_group = 3;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_OK) << errorText;

  // Nor is what follows a 1.3 caller's, which ends before kv_block_size.
  strata_compile_options_init(&options);
  options.struct_size = offsetof(strata_compile_options_t, kv_block_size);
  options.kv_block_size = -1;
  options.kv_blocks = -1;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_OK) << errorText;
}

TEST_F(CompilerCApiTest, BadPrecisionValuesAreInvalidArguments) {
  std::string model = write("affine.onnxtext", kAffineModel);
  strata_compile_options_t options;
  strata_compile_options_init(&options);
  options.decode_precision = "int3";
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("unsupported decode precision 'int3' (supported: "
                       "fp32, bf16, int8, int4)"))
      << errorText;

  strata_compile_options_init(&options);
  options.int4_group = 48;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("unsupported int4 group size 48")) << errorText;

  strata_compile_options_init(&options);
  options.kv_cache_precision = "fp8";
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);

  strata_compile_options_init(&options);
  options.prefill_precision = "int8";
  options.shared_prefill_weights = 1;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);

  strata_compile_options_init(&options);
  options.calibration_data = kCalibrationIds.c_str();
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("--calibration-data scales quantized weights"))
      << errorText;

  strata_compile_options_init(&options);
  options.attention_sinks = 4;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("attention sinks and layers need a window"))
      << errorText;
  options.attention_window = 16;
  options.attention_layer_count = 1;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);

  strata_compile_options_init(&options);
  options.attention_global_topk = 2;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("global attention blocks are added to a window"))
      << errorText;
  options.attention_window = 16;
  options.attention_block = -4;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(hasError("global top-k must be >= 0 and its block >= 1, got 2 "
                       "and -4"))
      << errorText;

  strata_compile_options_init(&options);
  options.prefill_chunk = -1;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(access(artifact().c_str(), F_OK), 0);
}

// An op the importer does not support (its node is Det_0).
const char *const kDetModel = R"(<
  ir_version: 8,
  opset_import: ["" : 17]
>
g (float[2, 4, 4] x) => (float[2] y)
{
  y = Det(x)
}
)";

TEST_F(CompilerCApiTest, ModelErrorsCarryTheNodeLocation) {
  std::string model = write("bad.onnxtext", kDetModel);
  EXPECT_EQ(compile(model, nullptr), STRATA_COMPILE_STATUS_FAILED_PRECONDITION);
  EXPECT_TRUE(hasError("unsupported ONNX op 'Det'")) << errorText;
  bool located = false;
  for (const Diagnostic &d : diagnostics)
    located |= d.location.find("Det_0") != std::string::npos;
  EXPECT_TRUE(located) << errorText;
}

TEST_F(CompilerCApiTest, ReportArrivesAsJsonOnSuccessAndFailure) {
  std::string json;
  const auto collect = [](const char *text, void *user) {
    *static_cast<std::string *>(user) += text;
  };
  strata_compile_options_t options = smallDecoderOptions();
  options.report = collect;
  options.report_user_data = &json;
  ASSERT_EQ(compile(kSmallDecoder, &options), STRATA_COMPILE_STATUS_OK)
      << errorText;
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  for (const char *field :
       {"\"fused_ops\":{", "\"strata.attention\":", "\"missed_fusions\":[",
        "\"codegen_done\":true", "\"memory_plan\":{", "\"arena_bytes\":",
        "\"dispatches\":[", "\"entry\":\"decode\"", "\"weights_bytes\":"})
    EXPECT_NE(json.find(field), std::string::npos) << field << " in " << json;

  // A failed compile reports as far as it got, once.
  json.clear();
  std::string model = write("bad.onnxtext", kDetModel);
  strata_compile_options_init(&options);
  options.report = collect;
  options.report_user_data = &json;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(json.find("\"codegen_done\":false"), std::string::npos) << json;
  EXPECT_EQ(json.find('{'), 0u);
  EXPECT_EQ(json.rfind("\"codegen_done\""), json.find("\"codegen_done\""));

  // So does one whose options the driver refuses.
  json.clear();
  const char *dims[] = {"batch"};
  options.dims = dims;
  options.dim_count = 1;
  EXPECT_EQ(compile(model, &options), STRATA_COMPILE_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(json.find("\"fusion_done\":false"), std::string::npos) << json;
}

TEST_F(CompilerCApiTest, VersionAndStructMatchTheHeaderInCAndCxx) {
  EXPECT_EQ(strata_compiler_api_version(),
            uint32_t(STRATA_COMPILER_API_VERSION));
  EXPECT_EQ(strata_test_options_size_from_c(),
            sizeof(strata_compile_options_t));
}

} // namespace
