//===- Calibration.cpp - Activation statistics from sample tokens ---------===//
// SPDX-License-Identifier: Apache-2.0
// The statistics come from running the model, not from a model of it: the
// compiler runs its own calibration variant through the runtime C API,
// which is why the compiler links the runtime (never the reverse).

#include "compiler/pipeline/Calibration.h"

#include "strata/runtime/allocator.h"
#include "strata/runtime/module.h"
#include "strata/runtime/session.h"
#include "strata/runtime/status.h"
#include "strata/runtime/tensor.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

using namespace mlir;

namespace strata {

FailureOr<std::vector<std::vector<int64_t>>>
readCalibrationSequences(const std::string &path, CalibrationFormat format,
                         int64_t vocab, int64_t context, Location loc) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!file)
    return emitError(loc) << "cannot read calibration data '" << path
                          << "': " << file.getError().message();
  llvm::StringRef text = (*file)->getBuffer();
  std::vector<std::vector<int64_t>> sequences;
  if (format == CalibrationFormat::Bytes) {
    if (vocab < 256)
      return emitError(loc) << "--calibration-format bytes needs a byte-level "
                               "model (a vocabulary of at least 256), this "
                               "one has "
                            << vocab;
    for (size_t i = 0; i < text.size(); i += size_t(context)) {
      llvm::StringRef part = text.substr(i, size_t(context));
      sequences.emplace_back(part.bytes_begin(), part.bytes_end());
    }
  } else {
    llvm::SmallVector<llvm::StringRef> lines;
    text.split(lines, '\n');
    for (auto [index, line] : llvm::enumerate(lines)) {
      llvm::SmallVector<llvm::StringRef> tokens;
      line.split(tokens, ' ', -1, /*KeepEmpty=*/false);
      std::vector<int64_t> ids;
      for (llvm::StringRef token : tokens) {
        token = token.trim();
        if (token.empty())
          continue;
        int64_t id;
        if (token.getAsInteger(10, id) || id < 0 || id >= vocab)
          return emitError(loc)
                 << "calibration data '" << path << "' line " << index + 1
                 << ": token '" << token << "' is not a token id in [0, "
                 << vocab << ")";
        ids.push_back(id);
      }
      if (ids.empty())
        continue;
      if (int64_t(ids.size()) > context)
        return emitError(loc)
               << "calibration data '" << path << "' line " << index + 1 << ": "
               << ids.size() << " tokens, more than the model's context of "
               << context << " (--max-seq)";
      sequences.push_back(std::move(ids));
    }
  }
  if (sequences.empty())
    return emitError(loc) << "calibration data '" << path
                          << "' holds no tokens";
  return sequences;
}

namespace {

/// Owns a runtime object or status and releases it.
struct StatusFree {
  void operator()(void *status) {
    strata_status_free(static_cast<strata_status_t>(status));
  }
};
struct ModuleRelease {
  void operator()(strata_module_t *m) { strata_module_release(m); }
};
struct SessionRelease {
  void operator()(strata_session_t *s) { strata_session_release(s); }
};
struct TensorRelease {
  void operator()(strata_tensor_t *t) { strata_tensor_release(t); }
};
using TensorPtr = std::unique_ptr<strata_tensor_t, TensorRelease>;

/// Reports a failed runtime call at |loc|; success for OK.
LogicalResult check(strata_status_t status, Location loc,
                    llvm::StringRef what) {
  if (!status)
    return success();
  std::unique_ptr<void, StatusFree> owned(status);
  return emitError(loc) << "calibration: " << what
                        << " failed: " << strata_status_message(status);
}

TensorPtr scalarI64(int64_t value, Location loc) {
  strata_tensor_t *t = nullptr;
  if (failed(check(strata_tensor_create_copy(STRATA_DTYPE_I64, 0, nullptr,
                                             &value, sizeof(value),
                                             strata_allocator_system(), &t),
                   loc, "creating an input")))
    return nullptr;
  return TensorPtr(t);
}

} // namespace

FailureOr<ActivationStatistics> measureActivations(
    const std::vector<uint8_t> &bytes, llvm::ArrayRef<std::string> names,
    const std::vector<std::vector<int64_t>> &sequences, Location loc) {
  // The loader wants the artifact 64-byte aligned.
  size_t padded = (bytes.size() + 63) / 64 * 64;
  std::unique_ptr<void, decltype(&std::free)> data(
      std::aligned_alloc(64, padded), &std::free);
  if (!data)
    return emitError(loc) << "calibration: out of memory for the artifact";
  std::memcpy(data.get(), bytes.data(), bytes.size());
  strata_module_t *rawModule = nullptr;
  if (failed(check(strata_module_load(
                       {static_cast<const uint8_t *>(data.get()), bytes.size()},
                       strata_allocator_system(), &rawModule),
                   loc, "loading the calibration variant")))
    return failure();
  std::unique_ptr<strata_module_t, ModuleRelease> module(rawModule);
  strata_session_t *rawSession = nullptr;
  if (failed(
          check(strata_session_create(module.get(), nullptr,
                                      strata_allocator_system(), &rawSession),
                loc, "creating a session")))
    return failure();
  std::unique_ptr<strata_session_t, SessionRelease> session(rawSession);

  std::vector<std::string> outputNames;
  for (size_t i = 0; i < names.size(); ++i) {
    outputNames.push_back("calibration." + std::to_string(i) + ".sum_sq");
    outputNames.push_back("calibration." + std::to_string(i) + ".max_abs");
  }
  std::vector<const char *> outputPtrs;
  for (const std::string &name : outputNames)
    outputPtrs.push_back(name.c_str());
  const char *inputNames[] = {"input_ids", "slot", "start"};

  ActivationStatistics stats;
  TensorPtr slot = scalarI64(0, loc), start = scalarI64(0, loc);
  if (!slot || !start)
    return failure();
  for (const std::vector<int64_t> &ids : sequences) {
    // Each sequence starts from an empty cache.
    if (failed(check(strata_session_reset_state(session.get(), -1), loc,
                     "resetting the cache")))
      return failure();
    int64_t dims[2] = {1, int64_t(ids.size())};
    strata_tensor_t *rawIds = nullptr;
    if (failed(check(
            strata_tensor_create_copy(STRATA_DTYPE_I64, 2, dims, ids.data(),
                                      ids.size() * sizeof(int64_t),
                                      strata_allocator_system(), &rawIds),
            loc, "creating an input")))
      return failure();
    TensorPtr input(rawIds);
    const strata_tensor_t *inputs[] = {input.get(), slot.get(), start.get()};
    std::vector<strata_tensor_t *> outputs(outputPtrs.size(), nullptr);
    if (failed(check(strata_session_run_named(
                         session.get(), "prefill", inputNames, inputs, 3,
                         outputPtrs.data(), outputs.data(), outputs.size()),
                     loc, "running the calibration prefill")))
      return failure();
    std::vector<TensorPtr> owned;
    for (strata_tensor_t *t : outputs)
      owned.emplace_back(t);
    for (size_t i = 0; i < names.size(); ++i) {
      const strata_tensor_t *sumSq = outputs[2 * i];
      const strata_tensor_t *maxAbs = outputs[2 * i + 1];
      size_t k = strata_tensor_element_count(sumSq);
      if (strata_tensor_dtype(sumSq) != STRATA_DTYPE_F32 ||
          strata_tensor_element_count(maxAbs) != k)
        return emitError(loc)
               << "calibration: malformed statistics of '" << names[i] << "'";
      const auto *sq =
          static_cast<const float *>(strata_tensor_const_data(sumSq));
      const auto *mx =
          static_cast<const float *>(strata_tensor_const_data(maxAbs));
      ChannelStatistics &s = stats[names[i]];
      if (s.sumSq.empty()) {
        s.sumSq.assign(k, 0.0);
        s.maxAbs.assign(k, 0.0);
      }
      for (size_t c = 0; c < k; ++c) {
        s.sumSq[c] += sq[c];
        s.maxAbs[c] = std::max(s.maxAbs[c], double(mx[c]));
      }
      s.tokens += int64_t(ids.size());
    }
  }
  for (const auto &[name, s] : stats)
    for (size_t c = 0; c < s.sumSq.size(); ++c)
      if (!std::isfinite(s.sumSq[c]) || !std::isfinite(s.maxAbs[c]))
        return emitError(loc) << "calibration: the activations entering '"
                              << name << "' are not finite";
  return stats;
}

} // namespace strata
