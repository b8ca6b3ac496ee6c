//===- EinsumConverter.cpp - ONNX Einsum onto strata.einsum
//----------------===//
// SPDX-License-Identifier: Apache-2.0
// Rewrites ONNX's equation into the explicit form strata.einsum carries:
// the ellipsis becomes letters the equation does not use (numpy's
// right-aligned broadcasting of the dims it covers), and an implicit result
// becomes the ellipsis dims, then the letters used once, alphabetically.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "dialects/strata/IR/EinsumEquation.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include "llvm/ADT/StringExtras.h"

#include <onnx/onnx_pb.h>

#include <map>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

namespace {

// Letters of one side of the equation with "..." kept as '.'.
FailureOr<std::string> compactTerm(ImportContext &ctx, StringRef term) {
  std::string out;
  for (size_t i = 0; i < term.size(); ++i) {
    char c = term[i];
    if (c == ' ')
      continue;
    if (term.substr(i).starts_with("...")) {
      if (out.find('.') != std::string::npos)
        return ctx.error() << "more than one ellipsis in term '" << term << "'";
      out.push_back('.');
      i += 2;
      continue;
    }
    if (!llvm::isAlpha(c))
      return ctx.error() << "unexpected character '" << c << "' in equation";
    out.push_back(c);
  }
  return out;
}

} // namespace

LogicalResult convertEinsum(ImportContext &ctx) {
  FailureOr<std::string> text = ctx.stringAttr("equation", "");
  if (failed(text))
    return failure();
  auto [lhs, rhs] = StringRef(*text).split("->");
  const bool explicitResult = lhs.size() != text->size();
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  const unsigned n = ctx.node().input_size();
  if (terms.size() != n)
    return ctx.error() << "equation '" << *text << "' names " << terms.size()
                       << " operands, the node has " << n;
  SmallVector<std::string> words;
  SmallVector<Value> inputs;
  int64_t ellipsisRank = 0;
  Type element;
  for (unsigned i = 0; i < n; ++i) {
    if (!ctx.input(i))
      return ctx.error() << "operand " << i << " is missing";
    FailureOr<std::string> word = compactTerm(ctx, terms[i]);
    if (failed(word))
      return failure();
    RankedTensorType type = ctx.inputType(i);
    if (i == 0)
      element = type.getElementType();
    else if (type.getElementType() != element)
      return ctx.error() << "expected operands of one element type";
    const int64_t named = static_cast<int64_t>(word->size()) -
                          (word->find('.') != std::string::npos);
    const bool ellipsis = word->find('.') != std::string::npos;
    if (ellipsis ? named > type.getRank() : named != type.getRank())
      return ctx.error() << "term '" << terms[i] << "' does not fit operand "
                         << i << " of shape " << formatShape(type.getShape());
    if (ellipsis)
      ellipsisRank = std::max(ellipsisRank, type.getRank() - named);
    words.push_back(*word);
    inputs.push_back(ctx.input(i));
  }
  // Letters for the ellipsis dims: ones the equation does not use.
  std::string spare;
  for (char c = 'A';
       c <= 'z' && static_cast<int64_t>(spare.size()) < ellipsisRank; ++c)
    if (llvm::isAlpha(c) && text->find(c) == std::string::npos)
      spare.push_back(c);
  if (static_cast<int64_t>(spare.size()) < ellipsisRank)
    return ctx.error() << "the ellipsis covers more dims than letters remain";
  auto expand = [&](const std::string &word, int64_t rank) {
    size_t at = word.find('.');
    if (at == std::string::npos)
      return word;
    const int64_t covered = rank - static_cast<int64_t>(word.size()) + 1;
    return word.substr(0, at) + spare.substr(ellipsisRank - covered) +
           word.substr(at + 1);
  };
  EinsumEquation eq;
  for (unsigned i = 0; i < n; ++i)
    eq.operands.push_back(expand(words[i], ctx.inputType(i).getRank()));
  if (explicitResult) {
    FailureOr<std::string> word = compactTerm(ctx, rhs);
    if (failed(word))
      return failure();
    eq.result = expand(*word, ellipsisRank + word->size() -
                                  (word->find('.') != std::string::npos));
  } else {
    std::map<char, int> uses;
    for (const std::string &word : words)
      for (char c : word)
        if (c != '.')
          ++uses[c];
    eq.result = spare;
    for (auto [c, count] : uses)
      if (count == 1)
        eq.result.push_back(c);
  }
  std::string form = llvm::join(eq.operands, ",") + "->" + eq.result;
  std::string error;
  if (!parseEinsumEquation(form, eq, error))
    return ctx.error() << "equation '" << *text << "': " << error;
  // Result extents: the largest static one of each letter (1s broadcast).
  SmallVector<int64_t> dims;
  for (char c : eq.result) {
    int64_t extent = 1;
    for (auto [word, input] : llvm::zip(eq.operands, inputs))
      for (auto [d, letter] : llvm::enumerate(word)) {
        int64_t e = typeOf(input).getDimSize(d);
        if (letter != c || e == 1)
          continue;
        if (!ShapedType::isDynamic(e) || extent == 1)
          extent = e;
      }
    dims.push_back(extent);
  }
  ctx.setOutput(0, EinsumOp::create(ctx.b(), ctx.loc(),
                                    RankedTensorType::get(dims, element),
                                    inputs, ctx.b().getStringAttr(form)));
  return success();
}

} // namespace strata::import
