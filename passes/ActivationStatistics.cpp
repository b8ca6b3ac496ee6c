//===- ActivationStatistics.cpp - Per-channel activation statistics -------===//
// SPDX-License-Identifier: Apache-2.0
// Contraction names and the JSON form of calibration statistics.

#include "passes/ActivationStatistics.h"
#include "passes/WeightContractions.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;

namespace strata {

llvm::SmallVector<Operation *> calibratedContractions(func::FuncOp func) {
  return weightContractions(func, /*skipLmHead=*/false);
}

namespace {

/// The NameLoc names under |loc|, joined with ", ".
std::string locationNames(Location loc) {
  std::string out;
  loc->walk([&](Location inner) {
    if (auto name = dyn_cast<NameLoc>(inner)) {
      if (!out.empty())
        out += ", ";
      out += name.getName().str();
      // A name's child location is its source position, not another name.
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  return out.empty() ? std::string("contraction") : out;
}

} // namespace

std::vector<std::string> contractionNames(llvm::ArrayRef<Operation *> ops) {
  std::vector<std::string> names;
  llvm::StringMap<int> seen;
  for (Operation *op : ops) {
    std::string base = locationNames(op->getLoc());
    int n = ++seen[base];
    names.push_back(n == 1 ? base : base + "#" + std::to_string(n));
  }
  return names;
}

FailureOr<ActivationStatistics> parseActivationStatistics(llvm::StringRef json,
                                                          Location loc) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(json);
  if (!value)
    return emitError(loc) << "activation statistics are not valid JSON: "
                          << llvm::toString(value.takeError());
  const llvm::json::Object *root = value->getAsObject();
  const llvm::json::Array *list =
      root ? root->getArray("contractions") : nullptr;
  if (!list)
    return emitError(loc) << "activation statistics need a top-level object "
                             "with an array 'contractions'";
  ActivationStatistics out;
  auto readArray = [&](const llvm::json::Object &entry, llvm::StringRef key,
                       llvm::StringRef name,
                       std::vector<double> &into) -> LogicalResult {
    const llvm::json::Array *array = entry.getArray(key);
    if (!array)
      return emitError(loc) << "activation statistics of '" << name
                            << "' have no array '" << key << "'";
    for (const llvm::json::Value &v : *array) {
      std::optional<double> d = v.getAsNumber();
      if (!d || !std::isfinite(*d) || *d < 0)
        return emitError(loc)
               << "activation statistics of '" << name << "': '" << key
               << "' holds something other than a finite "
                  "number >= 0";
      into.push_back(*d);
    }
    return success();
  };
  for (const llvm::json::Value &item : *list) {
    const llvm::json::Object *entry = item.getAsObject();
    std::optional<llvm::StringRef> name =
        entry ? entry->getString("name") : std::nullopt;
    if (!name)
      return emitError(loc)
             << "each activation statistics entry needs a string 'name'";
    std::optional<int64_t> tokens = entry->getInteger("tokens");
    if (!tokens || *tokens < 1)
      return emitError(loc)
             << "activation statistics of '" << *name << "' need 'tokens' >= 1";
    ChannelStatistics stats;
    stats.tokens = *tokens;
    if (failed(readArray(*entry, "sum_sq", *name, stats.sumSq)) ||
        failed(readArray(*entry, "max_abs", *name, stats.maxAbs)))
      return failure();
    if (stats.sumSq.size() != stats.maxAbs.size() || stats.sumSq.empty())
      return emitError(loc)
             << "activation statistics of '" << *name << "' have "
             << stats.sumSq.size() << " 'sum_sq' and " << stats.maxAbs.size()
             << " 'max_abs' channels; expected the same "
                "number, at least 1";
    if (!out.emplace(name->str(), std::move(stats)).second)
      return emitError(loc)
             << "activation statistics name '" << *name << "' twice";
  }
  return out;
}

std::string printActivationStatistics(const ActivationStatistics &stats) {
  llvm::json::Array list;
  for (const auto &[name, s] : stats) {
    llvm::json::Array sumSq, maxAbs;
    for (double v : s.sumSq)
      sumSq.push_back(v);
    for (double v : s.maxAbs)
      maxAbs.push_back(v);
    list.push_back(llvm::json::Object{{"name", name},
                                      {"tokens", s.tokens},
                                      {"sum_sq", std::move(sumSq)},
                                      {"max_abs", std::move(maxAbs)}});
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:1}", llvm::json::Value(llvm::json::Object{
                                   {"contractions", std::move(list)}}));
  return text;
}

} // namespace strata
