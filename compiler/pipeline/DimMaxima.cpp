//===- DimMaxima.cpp - The compiled maximum of a symbolic dim -------------===//
// SPDX-License-Identifier: Apache-2.0
// The name lists are what exporters write: torch.onnx.export tutorials and
// HF Optimum (batch_size, sequence_length, past_sequence_length, and sums
// such as "past_sequence_length + 1"), transformers.onnx (batch, sequence,
// "past_sequence + sequence"), onnxruntime's GPT-2/Llama tools and the
// onnxruntime-genai builder (seq_len, past_seq_len, total_seq_len,
// total_sequence_length). Names that carry no meaning (torch.export's s0,
// s1, tf2onnx's unk__12, N) are left to --dim.

#include "compiler/pipeline/DimMaxima.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

namespace strata {
namespace {

constexpr llvm::StringLiteral kBatchNames[] = {"batch", "batch_size",
                                               "batchsize"};

constexpr llvm::StringLiteral kSequenceNames[] = {
    // New tokens.
    "sequence", "sequence_length", "sequence_len", "seq", "seq_len", "seqlen",
    // Tokens already in the KV cache.
    "past_sequence", "past_sequence_length", "past_sequence_len", "past_seq",
    "past_seq_len", "past_seqlen",
    // Past plus new (an attention mask's length).
    "total_sequence", "total_sequence_length", "total_seq", "total_seq_len",
    // Encoder-decoder exports.
    "encoder_sequence", "encoder_sequence_length", "decoder_sequence",
    "decoder_sequence_length", "past_encoder_sequence_length",
    "past_decoder_sequence_length"};

bool isOneOf(llvm::StringRef lower, llvm::ArrayRef<llvm::StringLiteral> names) {
  return llvm::is_contained(names, lower);
}

// "past_sequence_length + 1", "past_sequence + sequence": every term a
// sequence name or a non-negative integer, at least one a name.
bool isSequenceSum(llvm::StringRef lower) {
  if (!lower.contains('+'))
    return false;
  llvm::SmallVector<llvm::StringRef> terms;
  lower.split(terms, '+');
  bool named = false;
  for (llvm::StringRef term : terms) {
    term = term.trim();
    uint64_t constant;
    if (!term.getAsInteger(10, constant))
      continue;
    if (!isOneOf(term, kSequenceNames))
      return false;
    named = true;
  }
  return named;
}

} // namespace

llvm::ArrayRef<llvm::StringLiteral> batchDimNames() { return kBatchNames; }

llvm::ArrayRef<llvm::StringLiteral> sequenceDimNames() {
  return kSequenceNames;
}

std::optional<DimBinding> bindDim(llvm::StringRef name,
                                  const DimMaximaOptions &options) {
  if (auto it = options.explicitMaxima.find(name.str());
      it != options.explicitMaxima.end())
    return DimBinding{it->second, DimBindingSource::Explicit};
  std::string lower = name.trim().lower();
  if (isOneOf(lower, kBatchNames))
    return DimBinding{options.maxBatch, DimBindingSource::Batch};
  if (isOneOf(lower, kSequenceNames) || isSequenceSum(lower))
    return DimBinding{options.maxSeq, DimBindingSource::Sequence};
  return std::nullopt;
}

bool parseDimSpec(llvm::StringRef spec, std::string *name, int64_t *max) {
  // The last '=' splits, so a name may itself hold one.
  size_t eq = spec.rfind('=');
  if (eq == llvm::StringRef::npos || eq == 0)
    return false;
  int64_t value;
  if (spec.substr(eq + 1).getAsInteger(10, value) || value < 1)
    return false;
  *name = spec.substr(0, eq).str();
  *max = value;
  return true;
}

std::string describeDimRule() {
  auto join = [](llvm::ArrayRef<llvm::StringLiteral> names) {
    return llvm::join(
        llvm::map_range(
            names, [](llvm::StringLiteral s) { return llvm::StringRef(s); }),
        ", ");
  };
  std::string text =
      "Each symbolic input dim needs a maximum. --dim NAME=MAX gives it by "
      "exact name (an unnamed dim is INPUT.INDEX, e.g. x.0); otherwise "
      "--max-batch binds the names " +
      join(kBatchNames) + "; --max-seq binds the names " +
      join(kSequenceNames) +
      " and sums of them such as 'past_sequence_length + 1' (names compared "
      "ignoring case). Any other symbolic dim is an error.";
  // Wrapped at 79 columns at spaces, never inside a quoted name.
  std::string wrapped;
  size_t lineStart = 0, lastBreak = std::string::npos;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    wrapped += text[i];
    quoted ^= text[i] == '\'';
    if (text[i] == ' ' && !quoted)
      lastBreak = wrapped.size() - 1;
    if (wrapped.size() - lineStart > 79 && lastBreak != std::string::npos) {
      wrapped[lastBreak] = '\n';
      lineStart = lastBreak + 1;
      lastBreak = std::string::npos;
    }
  }
  return wrapped;
}

} // namespace strata
