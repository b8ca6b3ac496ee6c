//===- Accuracy.cpp - Fidelity of artifacts against a reference -----------===//
// SPDX-License-Identifier: Apache-2.0
// Every artifact runs the same call before the next one starts, so only one
// call's logits are held at a time whatever the vocabulary and data size.
// Scores are computed in double from log-softmax, as check_precision.py does.
//===----------------------------------------------------------------------===//

#include "Accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "strata/runtime/runtime.hpp"

namespace strata::tools {

/// One loaded artifact, its session and the compiled maxima it runs under.
struct ScoredModel {
  std::string path;
  strata::Module module;
  strata::Session session;
  int64_t vocab = 0;
  int64_t slots = 0;
  int64_t context = 0;
  int64_t prefillLength = 0;
};

/// One call every artifact runs: its named inputs, the output scored, and
/// the token each of its |rows| logits rows should predict.
struct AccuracyRun::Call {
  const char *entry = "";
  const char *output = "logits";
  std::vector<std::pair<std::string, const strata::Tensor *>> inputs;
  std::vector<int64_t> targets;
  /// Which sequence and position, for error messages.
  std::string where;
};

double AccuracyResult::natsPerToken() const {
  return positions ? nllSum / static_cast<double>(positions) : 0;
}

double AccuracyResult::bitsPerToken() const {
  return natsPerToken() / std::log(2.0);
}

double AccuracyResult::top1Agreement() const {
  return positions ? static_cast<double>(top1Agreements) /
                         static_cast<double>(positions)
                   : 0;
}

double AccuracyResult::meanKl() const {
  return positions ? klSum / static_cast<double>(positions) : 0;
}

namespace {

// The maximum of symbolic dim |name| in |module|'s dim table, 0 if absent.
int64_t dimMax(const strata::Module &module, const char *name) {
  for (size_t i = 0, n = strata_module_symbolic_dim_count(module.get()); i < n;
       ++i) {
    const strata_symbolic_dim_t *dim =
        strata_module_symbolic_dim(module.get(), i);
    if (dim && std::strcmp(dim->name, name) == 0)
      return dim->max;
  }
  return 0;
}

// Checks that |entry| of |module| exists with |kind| and exactly the inputs
// |names| of the generation contract (docs/design/prefill-decode.md).
std::string checkEntry(const strata::Module &module, const char *entry,
                       strata_entry_kind_t kind,
                       const std::vector<const char *> &names,
                       const strata_entry_signature_t **out) {
  const strata_entry_signature_t *e = nullptr;
  if (!module.findEntry(entry, &e) || e->kind != kind)
    return std::string("no '") + entry +
           "' generation entry (compile the decoder without "
           "--no-generation-entries; strata-bench --accuracy teacher-forces "
           "the prefill and decode entries)";
  bool exact = e->input_count == names.size();
  for (size_t i = 0; exact && i < names.size(); ++i) {
    size_t index = 0;
    exact = static_cast<bool>(module.inputIndex(entry, names[i], &index));
  }
  if (!exact) {
    std::string list;
    for (const char *name : names)
      list += std::string(list.empty() ? "" : ", ") + name;
    return std::string("entry '") + entry + "' does not take exactly (" + list +
           ")";
  }
  *out = e;
  return "";
}

// The vocabulary of output |name| of |e|, whose last dim it is and which
// must be static f32 of |rank|; 0 and |problem| set otherwise.
int64_t outputVocab(const strata_entry_signature_t *e, const char *name,
                    uint32_t rank, std::string *problem) {
  for (size_t o = 0; o < e->output_count; ++o) {
    const strata_tensor_signature_t &sig = e->outputs[o];
    if (std::strcmp(sig.name, name) != 0)
      continue;
    if (sig.dtype != STRATA_DTYPE_F32 || sig.rank != rank ||
        sig.dims[rank - 1].symbol || sig.dims[rank - 1].extent < 1) {
      *problem = std::string("output '") + name + "' of entry '" + e->name +
                 "' is not f32 of rank " + std::to_string(rank) +
                 " with a static vocabulary";
      return 0;
    }
    return sig.dims[rank - 1].extent;
  }
  *problem = std::string("entry '") + e->name + "' has no output '" + name +
             "'" +
             (std::strcmp(name, "all_logits") == 0
                  ? " (compile with --prefill-logits all to score prefill)"
                  : "");
  return 0;
}

// log_softmax of |n| logits into |out|; false if any logit is not finite.
bool logSoftmax(const float *logits, int64_t n, double *out) {
  double max = -INFINITY;
  for (int64_t v = 0; v < n; ++v) {
    if (!std::isfinite(logits[v]))
      return false;
    max = std::fmax(max, static_cast<double>(logits[v]));
  }
  double sum = 0;
  for (int64_t v = 0; v < n; ++v)
    sum += std::exp(static_cast<double>(logits[v]) - max);
  double shift = max + std::log(sum);
  for (int64_t v = 0; v < n; ++v)
    out[v] = static_cast<double>(logits[v]) - shift;
  return true;
}

// The first index of the largest logit (numpy's argmax).
int64_t argmax(const float *logits, int64_t n) {
  int64_t best = 0;
  for (int64_t v = 1; v < n; ++v)
    if (logits[v] > logits[best])
      best = v;
  return best;
}

std::string tensorOf(const std::vector<int64_t> &values,
                     const std::vector<int64_t> &dims, strata::Tensor *out) {
  strata::Status status =
      strata::Tensor::fromData(STRATA_DTYPE_I64, dims, values.data(),
                               values.size() * sizeof(int64_t), out);
  return status ? "" : "cannot make an input tensor: " + status.toString();
}

} // namespace

AccuracyRun::AccuracyRun() = default;
AccuracyRun::~AccuracyRun() = default;

std::string AccuracyRun::open(const std::vector<std::string> &paths,
                              ScoredEntry entry, uint32_t threads) {
  entry_ = entry;
  models_.clear();
  for (const std::string &path : paths) {
    auto model = std::make_unique<ScoredModel>();
    model->path = path;
    strata::Status status = strata::Module::loadFile(path, &model->module);
    if (!status)
      return path + ": " + status.toString();
    const strata_entry_signature_t *prefill = nullptr, *decode = nullptr;
    std::string problem =
        checkEntry(model->module, "prefill", STRATA_ENTRY_KIND_PREFILL,
                   {"input_ids", "slot", "start"}, &prefill);
    if (problem.empty() && entry == ScoredEntry::Decode)
      problem = checkEntry(model->module, "decode", STRATA_ENTRY_KIND_DECODE,
                           {"input_ids", "slots", "positions"}, &decode);
    if (!problem.empty())
      return path + ": " + problem;
    // Every logits output scored must have the same vocabulary.
    int64_t vocab = outputVocab(prefill, "logits", 2, &problem);
    if (problem.empty() && entry == ScoredEntry::Decode &&
        outputVocab(decode, "logits", 2, &problem) != vocab && problem.empty())
      problem = "the decode and prefill logits differ in vocabulary";
    if (problem.empty() && entry == ScoredEntry::Prefill &&
        outputVocab(prefill, "all_logits", 3, &problem) != vocab &&
        problem.empty())
      problem = "'all_logits' and 'logits' differ in vocabulary";
    if (!problem.empty())
      return path + ": " + problem;
    model->vocab = vocab;
    model->slots = dimMax(model->module, "slots");
    model->context = dimMax(model->module, "context");
    model->prefillLength = dimMax(model->module, "prefill_length");
    if (model->slots < 1 || model->context < 1 || model->prefillLength < 1)
      return path + ": the dim table lacks a maximum of 'slots', 'context' "
                    "or 'prefill_length'";
    if (!models_.empty() && vocab != models_[0]->vocab)
      return path + ": vocabulary of " + std::to_string(vocab) +
             " tokens, the reference " + models_[0]->path + " has " +
             std::to_string(models_[0]->vocab) +
             " (artifacts must come from the same model)";
    status = strata::Session::create(model->module, &model->session, threads);
    if (!status)
      return path + ": cannot create a session: " + status.toString();
    models_.push_back(std::move(model));
  }
  return "";
}

int64_t AccuracyRun::vocab() const {
  return models_.empty() ? 0 : models_[0]->vocab;
}

int64_t AccuracyRun::slots() const {
  int64_t least = 0;
  for (const auto &m : models_)
    least = least ? std::min(least, m->slots) : m->slots;
  return least;
}

int64_t AccuracyRun::context() const {
  int64_t least = 0;
  for (const auto &m : models_)
    least = least ? std::min(least, m->context) : m->context;
  return least;
}

int64_t AccuracyRun::prefillLength() const {
  int64_t least = 0;
  for (const auto &m : models_)
    least = least ? std::min(least, m->prefillLength) : m->prefillLength;
  return least;
}

std::string AccuracyRun::check(const std::vector<TokenSequence> &sequences,
                               int64_t slots) const {
  for (const auto &m : models_) {
    if (slots > m->slots)
      return m->path + ": --slots " + std::to_string(slots) +
             " is more than its " + std::to_string(m->slots) +
             " sequence slots (recompile with a larger --max-batch or pass "
             "a smaller --slots)";
  }
  for (size_t s = 0; s < sequences.size(); ++s) {
    const TokenSequence &seq = sequences[s];
    // The last token is only predicted, never fed: the cache holds the rest.
    int64_t fed = static_cast<int64_t>(seq.size()) - 1;
    for (const auto &m : models_) {
      if (fed > m->context)
        return "sequence " + std::to_string(s + 1) + " has " +
               std::to_string(seq.size()) + " tokens, " + std::to_string(fed) +
               " of them fed, more than the context " +
               std::to_string(m->context) + " of " + m->path +
               " (recompile with a larger --max-seq or pass a smaller "
               "--length)";
      if (entry_ == ScoredEntry::Prefill && fed > m->prefillLength)
        return "sequence " + std::to_string(s + 1) + " feeds " +
               std::to_string(fed) +
               " tokens in one prefill call, more "
               "than the prefill_length " +
               std::to_string(m->prefillLength) + " of " + m->path +
               " (recompile with a larger --max-seq or pass a smaller "
               "--length)";
    }
    for (size_t t = 0; t < seq.size(); ++t)
      if (seq[t] >= vocab())
        return "sequence " + std::to_string(s + 1) + ", token " +
               std::to_string(t + 1) + ": id " + std::to_string(seq[t]) +
               " is outside the vocabulary [0, " + std::to_string(vocab()) +
               ")";
  }
  return "";
}

std::string AccuracyRun::scoreCall(const Call &call,
                                   std::vector<AccuracyResult> *results) {
  int64_t rows = static_cast<int64_t>(call.targets.size());
  int64_t vocab = this->vocab();
  std::vector<double> refLp(rows * vocab), lp(vocab);
  std::vector<int64_t> refTop(rows);
  for (size_t m = 0; m < models_.size(); ++m) {
    ScoredModel &model = *models_[m];
    std::vector<strata::Tensor> outputs;
    strata::Status status = model.session.runNamed(call.entry, call.inputs,
                                                   {call.output}, &outputs);
    if (!status)
      return model.path + ": '" + call.entry + "' failed at " + call.where +
             ": " + status.toString();
    const strata::Tensor &logits = outputs[0];
    if (logits.elementCount() != static_cast<size_t>(rows * vocab))
      return model.path + ": '" + call.output + "' of '" + call.entry +
             "' has " + std::to_string(logits.elementCount()) + " values at " +
             call.where + ", expected " + std::to_string(rows) + " x " +
             std::to_string(vocab);
    AccuracyResult &result = (*results)[m];
    for (int64_t r = 0; r < rows; ++r) {
      const float *row = logits.data<float>() + r * vocab;
      double *out = m == 0 ? refLp.data() + r * vocab : lp.data();
      if (!logSoftmax(row, vocab, out))
        return model.path + ": non-finite logits at " + call.where +
               (rows > 1 ? " (row " + std::to_string(r) + ")" : "");
      int64_t top = argmax(row, vocab);
      if (m == 0)
        refTop[r] = top;
      const double *ref = refLp.data() + r * vocab;
      double kl = 0;
      for (int64_t v = 0; v < vocab; ++v)
        kl += std::exp(ref[v]) * (ref[v] - out[v]);
      result.nllSum -= out[call.targets[r]];
      result.klSum += kl;
      result.top1Agreements += top == refTop[r];
      ++result.positions;
    }
  }
  return "";
}

std::string AccuracyRun::score(const std::vector<TokenSequence> &sequences,
                               int64_t slots,
                               std::vector<AccuracyResult> *results) {
  std::string problem = check(sequences, slots);
  if (!problem.empty())
    return problem;
  results->assign(models_.size(), AccuracyResult());
  for (size_t m = 0; m < models_.size(); ++m)
    (*results)[m].path = models_[m]->path;
  strata::Tensor zero;
  problem = tensorOf({0}, {}, &zero);
  for (size_t first = 0; problem.empty() && first < sequences.size();
       first += static_cast<size_t>(slots)) {
    size_t count =
        std::min(sequences.size() - first, static_cast<size_t>(slots));
    // Each group starts from empty caches, as the generator's slots do.
    for (auto &m : models_) {
      strata::Status status(strata_session_reset_state(m->session.get(), -1));
      if (!status)
        return m->path + ": cannot reset the cache: " + status.toString();
    }
    // Prefill: the whole sequence but its last token (prefill scoring), or
    // its first token (decode scoring).
    int64_t longest = 0;
    for (size_t i = 0; problem.empty() && i < count; ++i) {
      const TokenSequence &seq = sequences[first + i];
      longest = std::max(longest, static_cast<int64_t>(seq.size()));
      int64_t fed = entry_ == ScoredEntry::Prefill
                        ? static_cast<int64_t>(seq.size()) - 1
                        : 1;
      strata::Tensor ids, slot;
      problem = tensorOf(TokenSequence(seq.begin(), seq.begin() + fed),
                         {1, fed}, &ids);
      if (problem.empty())
        problem = tensorOf({static_cast<int64_t>(i)}, {}, &slot);
      Call call;
      call.entry = "prefill";
      call.output = entry_ == ScoredEntry::Prefill ? "all_logits" : "logits";
      call.inputs = {{"input_ids", &ids}, {"slot", &slot}, {"start", &zero}};
      call.targets.assign(seq.begin() + 1, seq.begin() + fed + 1);
      call.where = "sequence " + std::to_string(first + i + 1) + " (prefill)";
      if (problem.empty())
        problem = scoreCall(call, results);
    }
    if (entry_ == ScoredEntry::Prefill)
      continue;
    // Decode step t feeds token t of every sequence still longer than
    // t + 1 and scores its prediction of token t + 1.
    for (int64_t t = 1; problem.empty() && t + 1 < longest; ++t) {
      std::vector<int64_t> ids, rowSlots, positions;
      Call call;
      for (size_t i = 0; i < count; ++i) {
        const TokenSequence &seq = sequences[first + i];
        if (t + 1 >= static_cast<int64_t>(seq.size()))
          continue;
        ids.push_back(seq[t]);
        rowSlots.push_back(static_cast<int64_t>(i));
        positions.push_back(t);
        call.targets.push_back(seq[t + 1]);
      }
      int64_t rows = static_cast<int64_t>(ids.size());
      strata::Tensor idsT, slotsT, positionsT;
      problem = tensorOf(ids, {rows, 1}, &idsT);
      if (problem.empty())
        problem = tensorOf(rowSlots, {rows}, &slotsT);
      if (problem.empty())
        problem = tensorOf(positions, {rows}, &positionsT);
      call.entry = "decode";
      call.inputs = {
          {"input_ids", &idsT}, {"slots", &slotsT}, {"positions", &positionsT}};
      call.where = "decode position " + std::to_string(t) + " of sequences " +
                   std::to_string(first + 1) + "-" +
                   std::to_string(first + count);
      if (problem.empty())
        problem = scoreCall(call, results);
    }
  }
  return problem;
}

} // namespace strata::tools
