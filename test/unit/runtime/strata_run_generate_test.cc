//===- strata_run_generate_test.cc - strata-run generate end to end -------===//
// SPDX-License-Identifier: Apache-2.0
// Runs `strata-run generate` on the toy language model of the generator
// tests (generator_test_util.h) and checks its tokens against the model's
// rule: streamed ids and text, --json, batches wider than the slots, the
// tokenizers, seeds, and every error's exit status and message.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "generator_test_util.h"
#include "strata_run_test_util.h"

namespace strata::testing {
namespace {

std::string joined(const std::vector<int64_t> &ids, const char *separator) {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i)
    text += (i ? separator : "") + std::to_string(ids[i]);
  return text;
}

// The byte tokenizer's text of |ids|.
std::string bytesOf(const std::vector<int64_t> &ids) {
  std::string text;
  for (int64_t id : ids)
    text += static_cast<char>(id);
  return text;
}

// The "tokens" array of a --json line.
std::vector<int64_t> jsonTokens(const std::string &line) {
  std::vector<int64_t> tokens;
  size_t at = line.find("\"tokens\": [");
  if (at == std::string::npos)
    return tokens;
  at += 11;
  size_t end = line.find(']', at);
  std::string list = line.substr(at, end - at);
  for (size_t start = 0; start < list.size();) {
    size_t comma = list.find(',', start);
    tokens.push_back(std::stoll(list.substr(start, comma - start)));
    start = comma == std::string::npos ? list.size() : comma + 1;
  }
  return tokens;
}

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

class StrataRunGenerateTest : public ::testing::Test {
protected:
  void SetUp() override {
    const char *tmp = std::getenv("TMPDIR");
    dir = std::string(tmp ? tmp : "/tmp") + "/strata_run_generate_test_" +
          std::to_string(getpid()) + "_" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(
        system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()), 0);
    artifact = dir + "/lm.strata";
    writeFile(artifact, lmArtifact());
  }
  void TearDown() override {
    EXPECT_EQ(system(("rm -rf '" + dir + "'").c_str()), 0);
  }

  template <typename Bytes>
  void writeFile(const std::string &path, const Bytes &bytes) {
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr) << path;
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }

  Result generate(const std::string &args, const std::string &prefix = "") {
    return runStrataRun("generate " + artifact + " " + args, prefix);
  }

  std::string dir, artifact;
};

TEST_F(StrataRunGenerateTest, GreedyIdsFollowTheModel) {
  std::vector<int64_t> prompt = lmPrompt(5);
  Result r =
      generate("--prompt-ids " + joined(prompt, ",") + " --max-new-tokens 6");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::vector<std::string> out = lines(r.output);
  ASSERT_EQ(out.size(), 2u) << r.output;
  EXPECT_EQ(out[0], joined(lmReference(prompt, 6), " "));
  EXPECT_EQ(out[1].rfind("prompt 0: 5 prompt tokens, 6 generated; TTFT ", 0),
            0u)
      << out[1];
  for (const char *field :
       {" ms, TPOT ", " ms, p50 ", " ms, p99 ", " tokens/s"})
    EXPECT_NE(out[1].find(field), std::string::npos) << out[1];

  // No limit: until the context (32) is full; a stop id ends it early, and
  // smaller prefill chunks change nothing.
  r = generate("--prompt-ids " + joined(prompt, ","));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(lines(r.output)[0], joined(lmReference(prompt), " "));
  int64_t stop = lmReference(prompt)[3];
  r = generate("--prompt-ids " + joined(prompt, ",") + " --stop-ids 99," +
               std::to_string(stop) + " --prefill-chunk 2 --threads 1");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(lines(r.output)[0], joined(lmReference(prompt, 0, {stop}), " "));
}

TEST_F(StrataRunGenerateTest, JsonIsOneObjectPerPrompt) {
  std::vector<int64_t> prompt = lmPrompt(3, 1);
  Result r = generate("--prompt-ids " + joined(prompt, ",") +
                      " --max-new-tokens 4 --json");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::vector<std::string> out = lines(r.output);
  ASSERT_EQ(out.size(), 1u) << r.output;
  EXPECT_EQ(out[0].rfind("{\"prompt\": 0, \"tokens\": [" +
                             joined(lmReference(prompt, 4), ", ") +
                             "], \"text\": null, \"ttft_ms\": ",
                         0),
            0u)
      << out[0];
  for (const char *field :
       {"\"tpot_ms\": ", "\"p50_ms\": ", "\"p99_ms\": ", "\"tokens_per_s\": "})
    EXPECT_NE(out[0].find(field), std::string::npos) << out[0];
  EXPECT_EQ(out[0].back(), '}');

  // With a tokenizer the text is decoded: the byte tokenizer's bytes.
  r = generate("--prompt-ids " + joined(prompt, ",") +
               " --max-new-tokens 4 --json --tokenizer byte");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::string text;
  for (int64_t id : lmReference(prompt, 4)) {
    char escaped[8];
    std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<int>(id));
    text += escaped; // every toy id is a control character
  }
  EXPECT_NE(r.output.find("\"text\": \"" + text + "\""), std::string::npos)
      << r.output;
}

// Six prompts on four slots: the last two wait for free slots, and each
// prompt's tokens are those it gets alone.
TEST_F(StrataRunGenerateTest, BatchWiderThanTheSlots) {
  std::vector<std::vector<int64_t>> prompts;
  std::string file;
  for (int64_t i = 0; i < 6; ++i) {
    prompts.push_back(lmPrompt(2 + static_cast<size_t>(i), i));
    file += joined(prompts.back(), ",") + "\n";
  }
  writeFile(dir + "/prompts.txt", file);
  Result r = generate("--batch-prompt-ids " + dir +
                      "/prompts.txt --max-new-tokens 9 --json");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::vector<std::string> out = lines(r.output);
  ASSERT_EQ(out.size(), 6u) << r.output;
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(out[i].rfind("{\"prompt\": " + std::to_string(i) + ",", 0), 0u);
    EXPECT_EQ(jsonTokens(out[i]), lmReference(prompts[i], 9)) << out[i];
  }

  r = generate("--batch-prompt-ids " + dir + "/prompts.txt --max-new-tokens 9");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (size_t i = 0; i < 6; ++i) {
    std::string block = "== prompt " + std::to_string(i) + " ==\n" +
                        joined(lmReference(prompts[i], 9), " ") + "\n";
    EXPECT_NE(r.output.find(block), std::string::npos) << block << r.output;
    EXPECT_NE(r.output.find("prompt " + std::to_string(i) + ": " +
                            std::to_string(prompts[i].size()) +
                            " prompt tokens, 9 generated;"),
              std::string::npos)
        << r.output;
  }
}

// Text prompts through the byte tokenizer: the toy vocabulary is 16, so the
// prompts are control bytes (not newlines).
TEST_F(StrataRunGenerateTest, ByteTokenizerText) {
  std::vector<int64_t> prompt = {1, 2, 3};
  // popen runs sh, which lacks $'...': printf makes the bytes.
  Result r = runStrataRun("generate " + artifact +
                          " --prompt \"$(printf '\\001\\002\\003')\" "
                          "--max-new-tokens 5");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::vector<int64_t> expected = lmReference(prompt, 5);
  EXPECT_EQ(r.output.rfind(bytesOf(expected) + "\nprompt 0: 3 prompt tokens, "
                                               "5 generated;",
                           0),
            0u)
      << r.output;

  // A batch of text lines; "\x0b" and "\x0c" stay clear of the newline.
  std::vector<std::vector<int64_t>> prompts = {{1, 2}, {11, 12, 5}, {7}};
  std::string file;
  for (const auto &p : prompts)
    file += bytesOf(p) + "\n";
  writeFile(dir + "/text.txt", file);
  r = generate("--batch-prompts " + dir + "/text.txt --max-new-tokens 4");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (size_t i = 0; i < prompts.size(); ++i)
    EXPECT_NE(r.output.find("== prompt " + std::to_string(i) + " ==\n" +
                            bytesOf(lmReference(prompts[i], 4)) + "\n"),
              std::string::npos)
        << i << r.output;

  // Printable text is outside the toy vocabulary: the tool says so (the
  // runtime itself takes any id).
  r = generate("--prompt hi");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.output.find("strata-run: error: prompt 0: token 104 at position "
                          "0 is outside the model's vocabulary (16 ids)"),
            std::string::npos)
      << r.output;
}

TEST_F(StrataRunGenerateTest, Gpt2Tokenizer) {
  std::string data = STRATA_GPT2_BPE_DIR;
  if (access((data + "/encoder.json").c_str(), R_OK) != 0)
    GTEST_SKIP() << "no GPT-2 vocabulary at " << data;
  // GPT-2's ids 0..15 are the characters '!' .. '0'.
  std::vector<int64_t> prompt = {4, 9};
  Result r = generate("--prompt-ids 4,9 --max-new-tokens 3 --tokenizer gpt2",
                      "STRATA_GPT2_BPE_DIR='" + data + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::string text;
  for (int64_t id : lmReference(prompt, 3))
    text += static_cast<char>('!' + id);
  EXPECT_EQ(r.output.rfind(joined(lmReference(prompt, 3), " ") +
                               "\ntext: " + text + "\n",
                           0),
            0u)
      << r.output;

  r = generate("--prompt-ids 4 --tokenizer gpt2",
               "STRATA_GPT2_BPE_DIR='" + dir + "/none'");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.output.find("--tokenizer gpt2: no encoder.json in " + dir +
                          "/none ($STRATA_GPT2_BPE_DIR)"),
            std::string::npos)
      << r.output;
}

// Sampling: one seed gives one result, alone or in a batch; another seed
// another.
TEST_F(StrataRunGenerateTest, SeedsAreReproducible) {
  std::string sampling =
      " --max-new-tokens 20 --temperature 2 --top-k 8 --top-p 0.95 "
      "--min-p 0.01 --repetition-penalty 1.1 --json";
  std::vector<int64_t> prompt = lmPrompt(4, 2);
  std::string ids = " --prompt-ids " + joined(prompt, ",");
  Result a = generate(ids + sampling + " --seed 7");
  Result b = generate(ids + sampling + " --seed 7");
  Result c = generate(ids + sampling + " --seed 8");
  ASSERT_EQ(a.exitCode, 0) << a.output;
  ASSERT_EQ(c.exitCode, 0) << c.output;
  std::vector<int64_t> tokens = jsonTokens(a.output);
  EXPECT_EQ(tokens.size(), 20u);
  EXPECT_EQ(tokens, jsonTokens(b.output));
  EXPECT_NE(tokens, jsonTokens(c.output));
  EXPECT_NE(tokens, lmReference(prompt, 20)); // not greedy

  writeFile(dir + "/batch.txt",
            joined(lmPrompt(6), ",") + "\n" + joined(prompt, ",") + "\n");
  Result batch = generate("--batch-prompt-ids " + dir + "/batch.txt" +
                          sampling + " --seed 7");
  ASSERT_EQ(batch.exitCode, 0) << batch.output;
  ASSERT_EQ(lines(batch.output).size(), 2u) << batch.output;
  EXPECT_EQ(jsonTokens(lines(batch.output)[1]), tokens);
}

TEST_F(StrataRunGenerateTest, ContractAndModelFailures) {
  // Not a prefill/decode module: the generator's contract error.
  std::string error;
  ASSERT_TRUE(standardWriter().writeToFile(dir + "/standard.strata", &error));
  Result r =
      runStrataRun("generate " + dir + "/standard.strata --prompt-ids 1");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.output.find("strata-run: error: cannot generate with " + dir +
                          "/standard.strata: FAILED_PRECONDITION: "),
            std::string::npos)
      << r.output;
  LmSpec noDecode;
  noDecode.withDecode = false;
  writeFile(artifact, lmArtifact(noDecode));
  r = generate("--prompt-ids 1");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.output.find("FAILED_PRECONDITION"), std::string::npos)
      << r.output;

  // A model whose run fails midway: its status, no crash.
  LmSpec failing;
  failing.failSlot = 0;
  failing.failPosition = 6;
  writeFile(artifact, lmArtifact(failing));
  r = generate("--prompt-ids 1,2");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.output.find("strata-run: error: generation failed: "),
            std::string::npos)
      << r.output;
}

TEST_F(StrataRunGenerateTest, ErrorsExitWithOne) {
  writeFile(dir + "/bad_ids.txt", std::string("1,2\n3,x\n"));
  writeFile(dir + "/blank.txt", std::string("1,2\n\n3\n"));
  writeFile(dir + "/ids.txt", std::string("1,2\n3\n"));
  writeFile(dir + "/empty.txt", std::string());
  std::string longPrompt = joined(lmPrompt(40), ",");
  struct Case {
    std::string args;
    std::string needle;
  };
  const std::string a = artifact + " ";
  const Case cases[] = {
      {"", "no artifact given"},
      {a, "no prompt given (--prompt, --prompt-ids"},
      {a + "--prompt x --prompt-ids 1",
       "give one prompt source, not --prompt and --prompt-ids"},
      {a + "--prompt-ids 1 --bogus", "unknown option '--bogus'"},
      {a + "--prompt", "--prompt needs a value"},
      {a + "--prompt-ids 1,,2", "--prompt-ids expects comma-separated token"},
      {a + "--prompt-ids -1", "--prompt-ids expects comma-separated token"},
      {a + "--prompt-ids 1 --max-new-tokens -1",
       "--max-new-tokens expects a count >= 0, got '-1'"},
      {a + "--prompt-ids 1 --temperature abc",
       "--temperature expects a number >= 0, got 'abc'"},
      {a + "--prompt-ids 1 --temperature -0.5", "--temperature expects"},
      {a + "--prompt-ids 1 --temperature nan", "--temperature expects"},
      {a + "--prompt-ids 1 --top-k 2.5", "--top-k expects a count >= 0"},
      {a + "--prompt-ids 1 --top-p 1.5", "--top-p expects a number in (0, 1]"},
      {a + "--prompt-ids 1 --top-p 0", "--top-p expects"},
      {a + "--prompt-ids 1 --min-p 1", "--min-p expects a number in [0, 1)"},
      {a + "--prompt-ids 1 --repetition-penalty 0",
       "--repetition-penalty expects a number > 0"},
      {a + "--prompt-ids 1 --seed -3", "--seed expects an integer"},
      {a + "--prompt-ids 1 --seed 99999999999999999999", "--seed expects"},
      {a + "--prompt-ids 1 --stop-ids 1,a", "--stop-ids expects"},
      {a + "--prompt-ids 1 --prefill-chunk -1", "--prefill-chunk expects"},
      {a + "--prompt-ids 1 --threads -2", "--threads expects a count in"},
      {a + "--prompt-ids 1 --prefill-chunk 9",
       "cannot generate with " + artifact + ": INVALID_ARGUMENT"},
      {a + "--batch-prompts " + dir + "/none.txt",
       "cannot read --batch-prompts " + dir + "/none.txt"},
      {a + "--batch-prompt-ids " + dir + "/bad_ids.txt",
       dir + "/bad_ids.txt line 2: expected comma-separated token ids, got "
             "'3,x'"},
      {a + "--batch-prompt-ids " + dir + "/blank.txt",
       dir + "/blank.txt line 2: empty prompt"},
      {a + "--batch-prompt-ids " + dir + "/empty.txt",
       "--batch-prompt-ids " + dir + "/empty.txt holds no prompt"},
      {a + "--prompt ''", "--prompt is empty"},
      {a + "--prompt x --tokenizer " + dir + "/none.model",
       "--tokenizer " + dir + "/none.model: "},
      {a + "--prompt-ids " + longPrompt,
       "prompt 0: OUT_OF_RANGE: a prompt of 40 tokens plus max_new_tokens 0 "
       "exceeds the context of 32 tokens"},
      {a + "--prompt-ids 1,2,3,4,5 --max-new-tokens 30",
       "prompt 0: OUT_OF_RANGE"},
      {a + "--prompt-ids 1,16",
       "prompt 0: token 16 at position 1 is outside the model's vocabulary"},
      {dir + "/missing.strata --prompt-ids 1", "cannot load: NOT_FOUND"},
      {a + "--prompt-ids 1 --disaggregate",
       "--disaggregate runs as the 2 processes of an MPI job"},
      {a + "--prompt-ids 1 --disaggregate --prompt-lookup",
       "--disaggregate does not support speculative decoding"},
      {a + "--prompt-ids 1 --micro-batches 0",
       "--micro-batches expects a count in [1, 64]"},
      {a + "--prompt-ids 1 --micro-batches 2 --prompt-lookup",
       "--micro-batches runs plain generation"},
      {a + "--batch-prompt-ids " + dir + "/ids.txt --micro-batches 2",
       "--micro-batches needs a pipeline-parallel model"},
  };
  for (const Case &c : cases) {
    Result r = runStrataRun("generate " + c.args);
    EXPECT_EQ(r.exitCode, 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find("strata-run: error: " + c.needle),
              std::string::npos)
        << c.args << "\n"
        << r.output;
  }
  Result help = runStrataRun("generate --help");
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.output.find("$STRATA_GPT2_BPE_DIR"), std::string::npos);
}

} // namespace
} // namespace strata::testing
