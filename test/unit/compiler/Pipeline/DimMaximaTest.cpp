//===- DimMaximaTest.cpp - The rule that gives symbolic dims maxima -------===//
// SPDX-License-Identifier: Apache-2.0
// Exact --dim names first, then exporters' batch and sequence names
// (ignoring case) and sums of sequence names; nothing else binds.

#include "compiler/pipeline/DimMaxima.h"

#include <gtest/gtest.h>

using strata::bindDim;
using strata::DimBindingSource;
using strata::DimMaximaOptions;

namespace {

class DimMaximaTest : public ::testing::Test {
protected:
  DimMaximaTest() {
    options.maxBatch = 4;
    options.maxSeq = 100;
  }
  std::optional<int64_t> maxOf(llvm::StringRef name) const {
    std::optional<strata::DimBinding> b = bindDim(name, options);
    return b ? std::optional<int64_t>(b->max) : std::nullopt;
  }
  DimMaximaOptions options;
};

TEST_F(DimMaximaTest, ExporterBatchAndSequenceNamesBind) {
  for (const char *name : {"batch", "batch_size", "Batch_Size", "BATCH"})
    EXPECT_EQ(maxOf(name), 4) << name;
  for (const char *name :
       {"sequence", "sequence_length", "seq_len", "past_sequence_length",
        "past_seq_len", "total_sequence_length", "total_seq_len",
        "encoder_sequence_length", "Sequence"})
    EXPECT_EQ(maxOf(name), 100) << name;
  EXPECT_EQ(bindDim("batch", options)->source, DimBindingSource::Batch);
  EXPECT_EQ(bindDim("seq", options)->source, DimBindingSource::Sequence);
}

TEST_F(DimMaximaTest, SumsOfSequenceNamesAreTotals) {
  EXPECT_EQ(maxOf("past_sequence_length + 1"), 100);
  EXPECT_EQ(maxOf("past_sequence + sequence"), 100);
  EXPECT_EQ(maxOf("past_sequence_length+sequence_length"), 100);
  // Every term must be a sequence name or an integer, one at least a name.
  EXPECT_EQ(maxOf("1 + 2"), std::nullopt);
  EXPECT_EQ(maxOf("batch_size + 1"), std::nullopt);
  EXPECT_EQ(maxOf("past_sequence_length + heads"), std::nullopt);
}

TEST_F(DimMaximaTest, NamesWithoutMeaningDoNotBind) {
  // No substring guesses: these contain "batch", "seq" or "len".
  for (const char *name :
       {"s0", "s27", "N", "unk__12", "x_dynamic_axes_1", "batches", "minibatch",
        "seqs", "length", "max_len", "height", "num_channels"})
    EXPECT_EQ(maxOf(name), std::nullopt) << name;
}

TEST_F(DimMaximaTest, ExplicitDimsWinAndAreExact) {
  options.explicitMaxima["batch"] = 2;
  options.explicitMaxima["s0"] = 16;
  options.explicitMaxima["x.1"] = 5;
  EXPECT_EQ(maxOf("batch"), 2);
  EXPECT_EQ(bindDim("batch", options)->source, DimBindingSource::Explicit);
  EXPECT_EQ(maxOf("s0"), 16);
  EXPECT_EQ(maxOf("x.1"), 5);
  // Explicit names are case-sensitive: "S0" is not "s0", "Batch" falls
  // back to the batch list.
  EXPECT_EQ(maxOf("S0"), std::nullopt);
  EXPECT_EQ(maxOf("Batch"), 4);
}

TEST_F(DimMaximaTest, DimSpecsParse) {
  std::string name;
  int64_t max = 0;
  EXPECT_TRUE(strata::parseDimSpec("batch=8", &name, &max));
  EXPECT_EQ(name, "batch");
  EXPECT_EQ(max, 8);
  EXPECT_TRUE(strata::parseDimSpec("past_sequence_length + 1=9", &name, &max));
  EXPECT_EQ(name, "past_sequence_length + 1");
  EXPECT_EQ(max, 9);
  for (const char *bad :
       {"batch", "=8", "batch=", "batch=0", "batch=-1", "batch=x", "batch=8x"})
    EXPECT_FALSE(strata::parseDimSpec(bad, &name, &max)) << bad;
}

TEST_F(DimMaximaTest, TheRuleTextListsEveryName) {
  std::string text = strata::describeDimRule();
  for (llvm::StringRef name : strata::batchDimNames())
    EXPECT_NE(text.find(name.str()), std::string::npos) << name.str();
  for (llvm::StringRef name : strata::sequenceDimNames())
    EXPECT_NE(text.find(name.str()), std::string::npos) << name.str();
}

} // namespace
