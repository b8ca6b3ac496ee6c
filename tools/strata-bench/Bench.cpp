//===- Bench.cpp - Running the workloads of a plan ------------------------===//
// SPDX-License-Identifier: Apache-2.0
// Inputs are bound by name (input_ids, attention_mask, position_ids,
// past_key_values.N.key/value), shapes are checked against the compiled
// maxima before anything large is allocated, and generation feeds each
// call's present.N.* outputs back as the next call's past_key_values.N.*.
//===----------------------------------------------------------------------===//

#include "Bench.h"

#include "strata/runtime/generate.h"

#include <chrono>
#include <cstring>

namespace strata::tools {
namespace {

constexpr const char kPastPrefix[] = "past_key_values.";
constexpr const char kPresentPrefix[] = "present.";

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool startsWith(const std::string &text, const char *prefix) {
  return text.compare(0, std::strlen(prefix), prefix) == 0;
}

// splitmix64: a fixed, portable stream so every round binds the same ids.
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float unit() {
    return static_cast<float>(static_cast<double>(next() >> 11) * 0x1.0p-52 -
                              1.0);
  }
};

// A seed that depends on the workload, not on its place in the plan.
uint64_t workloadSeed(uint64_t seed, const Workload &w) {
  uint64_t h = seed;
  for (int64_t v :
       {static_cast<int64_t>(w.kind), w.batch, w.seq, w.ctx, w.prompt, w.gen})
    h = (h ^ static_cast<uint64_t>(v)) * 0x100000001B3ull;
  return h;
}

std::string dimsText(const std::vector<int64_t> &dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

// Writes |value| into every element of |t| in its dtype.
std::string fill(strata::Tensor &t, int64_t value) {
  size_t n = t.elementCount();
  switch (t.dtype()) {
  case STRATA_DTYPE_I64:
    for (size_t i = 0; i < n; ++i)
      t.data<int64_t>()[i] = value;
    return "";
  case STRATA_DTYPE_I32:
    for (size_t i = 0; i < n; ++i)
      t.data<int32_t>()[i] = static_cast<int32_t>(value);
    return "";
  case STRATA_DTYPE_F32:
    for (size_t i = 0; i < n; ++i)
      t.data<float>()[i] = static_cast<float>(value);
    return "";
  case STRATA_DTYPE_BOOL:
  case STRATA_DTYPE_U8:
  case STRATA_DTYPE_I8:
    std::memset(t.data<uint8_t>(), static_cast<int>(value != 0), n);
    return "";
  default:
    return std::string("dtype ") + strata_dtype_name(t.dtype()) +
           " is not supported for this input";
  }
}

// Stores integer |values| (one per element) in an i64 or i32 tensor.
std::string store(strata::Tensor &t, const std::vector<int64_t> &values) {
  if (t.elementCount() != values.size())
    return "internal: " + std::to_string(values.size()) + " values for " +
           std::to_string(t.elementCount()) + " elements";
  if (t.dtype() == STRATA_DTYPE_I64) {
    std::memcpy(t.data<int64_t>(), values.data(), values.size() * 8);
    return "";
  }
  if (t.dtype() == STRATA_DTYPE_I32) {
    for (size_t i = 0; i < values.size(); ++i)
      t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    return "";
  }
  return std::string("dtype ") + strata_dtype_name(t.dtype()) +
         " is not an integer type strata-bench can fill";
}

} // namespace

std::string Bench::loadModel(const std::string &path, const char *role,
                             uint32_t threads,
                             std::shared_ptr<BenchModel> *out) {
  auto model = std::make_shared<BenchModel>();
  model->path = path;
  double start = now();
  strata::Status status = strata::Module::loadFile(path, &model->module);
  if (!status)
    return path + ": " + status.toString();
  status = strata::Session::create(model->module, &model->session, threads);
  if (!status)
    return path + ": cannot create a session: " + status.toString();
  model->loadSeconds = now() - start;

  // The entry: the only one; else `main`, the export as it is (a decoder
  // also has generation entries, whose contract this harness does not
  // drive yet); else the one named after the role.
  size_t count = model->module.entryCount();
  if (count == 1) {
    model->entry = model->module.entry(0);
  } else if (model->module.findEntry("main", &model->entry)) {
  } else {
    status = model->module.findEntry(role, &model->entry);
    if (!status)
      return path + ": the artifact has " + std::to_string(count) +
             " entries and none is named '" + role + "': " + status.toString();
  }
  const strata_entry_signature_t *e = model->entry;
  bool found = false;
  for (size_t o = 0; o < e->output_count; ++o) {
    if (std::strcmp(e->outputs[o].name, "logits") == 0) {
      model->logitsIndex = o;
      found = true;
    }
  }
  if (!found)
    return path + ": entry '" + e->name + "' has no output 'logits'";
  const strata_tensor_signature_t &logits = e->outputs[model->logitsIndex];
  if (logits.dtype != STRATA_DTYPE_F32 || logits.rank != 3)
    return path + ": output 'logits' is " + strata_dtype_name(logits.dtype) +
           " of rank " + std::to_string(logits.rank) +
           "; strata-bench needs f32 [batch, sequence, vocab]";
  *out = std::move(model);
  return "";
}

std::string Bench::open(const std::string &prefillPath,
                        const std::string &decodePath, uint32_t threads) {
  if (!prefillPath.empty()) {
    std::string problem = loadModel(prefillPath, "prefill", threads, &prefill_);
    if (!problem.empty())
      return problem;
  }
  if (!decodePath.empty()) {
    std::string problem = loadModel(decodePath, "decode", threads, &decode_);
    if (!problem.empty())
      return problem;
  }
  return "";
}

double Bench::prefillLoadSeconds() const {
  return prefill_ ? prefill_->loadSeconds : 0;
}

double Bench::decodeLoadSeconds() const {
  return decode_ ? decode_->loadSeconds : 0;
}

// The dims strata-bench binds to input |sig| for |step|, or a problem.
static std::string inputDims(const strata_tensor_signature_t &sig,
                             int64_t batch, int64_t seq, int64_t past,
                             std::vector<int64_t> *dims) {
  std::string name = sig.name;
  if (name == "input_ids" || name == "position_ids") {
    *dims = {batch, seq};
  } else if (name == "attention_mask") {
    *dims = {batch, past + seq};
  } else if (startsWith(name, kPastPrefix)) {
    // [batch, kv heads, past, head dim]: heads and head dim are static.
    if (sig.rank != 4 || sig.dims[1].symbol || sig.dims[3].symbol)
      return "input '" + name +
             "' is not [batch, heads, past, head_dim] with static heads "
             "and head_dim";
    *dims = {batch, sig.dims[1].extent, past, sig.dims[3].extent};
  } else {
    return "input '" + name +
           "' is not one strata-bench binds (input_ids, attention_mask, "
           "position_ids, past_key_values.*)";
  }
  return "";
}

std::string Bench::checkStep(const BenchModel *model, const char *role,
                             const Step &step) const {
  if (!model)
    return std::string("this workload needs a ") + role + " artifact (--" +
           role + ")";
  const strata_entry_signature_t *e = model->entry;
  if (std::strcmp(role, "decode") == 0) {
    bool hasPast = false;
    for (size_t i = 0; i < e->input_count; ++i)
      hasPast |= startsWith(e->inputs[i].name, kPastPrefix);
    if (!hasPast)
      return model->path + ": entry '" + e->name +
             "' has no past_key_values.* input; --decode needs the "
             "with-past model";
  }
  for (size_t i = 0; i < e->input_count; ++i) {
    const strata_tensor_signature_t &sig = e->inputs[i];
    std::vector<int64_t> dims;
    std::string problem =
        inputDims(sig, step.batch, step.seq, step.past, &dims);
    if (!problem.empty())
      return model->path + ": " + problem;
    if (dims.size() != sig.rank)
      return model->path + ": input '" + sig.name + "' has rank " +
             std::to_string(sig.rank) + ", strata-bench binds " +
             dimsText(dims);
    for (uint32_t d = 0; d < sig.rank; ++d) {
      const strata_dim_t &dim = sig.dims[d];
      if (!dim.symbol && dim.extent != dims[d])
        return model->path + ": input '" + sig.name + "' dim " +
               std::to_string(d) + " is fixed at " +
               std::to_string(dim.extent) +
               " in the artifact; the workload "
               "needs " +
               std::to_string(dims[d]);
      if (dim.symbol && dims[d] > dim.max)
        return model->path + ": input '" + sig.name + "' dim " +
               std::to_string(d) + " (" + dim.symbol + ") would be " +
               std::to_string(dims[d]) + ", above the compiled maximum " +
               std::to_string(dim.max) +
               " (recompile with a larger --max-seq, --max-batch or --dim)";
    }
  }
  return "";
}

// Whether |model|'s module has the generation entries (a decode entry):
// then generation runs through the runtime's generator.
static bool hasGenerationEntries(const BenchModel &model) {
  for (size_t e = 0; e < model.module.entryCount(); ++e)
    if (model.module.entry(e)->kind == STRATA_ENTRY_KIND_DECODE)
      return true;
  return false;
}

std::string Bench::check(const Workload &w) const {
  switch (w.kind) {
  case WorkloadKind::Prefill:
  case WorkloadKind::Ttft:
    return checkStep(prefill_.get(), "prefill", {w.batch, w.seq, 0});
  case WorkloadKind::Decode:
    return checkStep(decode_.get(), "decode", {w.batch, 1, w.ctx - 1});
  case WorkloadKind::Generate: {
    // The generator checks slots and context itself, with clear statuses.
    if (decode_ && hasGenerationEntries(*decode_))
      return "";
    std::string problem =
        checkStep(prefill_.get(), "prefill", {w.batch, w.prompt, 0});
    if (problem.empty() && w.gen > 1)
      problem = checkStep(decode_.get(), "decode",
                          {w.batch, 1, w.prompt + w.gen - 2});
    if (!problem.empty() || w.gen < 2)
      return problem;
    // Every past input must come from a present output of the prefill.
    for (size_t i = 0; i < decode_->entry->input_count; ++i) {
      std::string name = decode_->entry->inputs[i].name;
      if (!startsWith(name, kPastPrefix))
        continue;
      std::string present =
          kPresentPrefix + name.substr(std::strlen(kPastPrefix));
      bool found = false;
      for (const auto *m : {prefill_.get(), decode_.get()}) {
        found = false;
        for (size_t o = 0; o < m->entry->output_count; ++o)
          found |= present == m->entry->outputs[o].name;
        if (!found)
          return m->path + ": no output '" + present + "' to feed '" + name +
                 "' of the decode artifact";
      }
    }
    return "";
  }
  }
  return "unknown workload kind";
}

std::string
Bench::makeInputs(const BenchModel &model, const Step &step,
                  const std::vector<int64_t> &ids,
                  const std::map<std::string, strata::Tensor> &past,
                  uint64_t seed, std::vector<strata::Tensor> *owned,
                  std::vector<const strata::Tensor *> *ordered) const {
  const strata_entry_signature_t *e = model.entry;
  owned->clear();
  owned->reserve(e->input_count);
  ordered->assign(e->input_count, nullptr);
  Rng rng(seed);
  for (size_t i = 0; i < e->input_count; ++i) {
    const strata_tensor_signature_t &sig = e->inputs[i];
    std::string name = sig.name;
    auto fed = past.find(name);
    if (fed != past.end()) {
      (*ordered)[i] = &fed->second;
      continue;
    }
    std::vector<int64_t> dims;
    std::string problem =
        inputDims(sig, step.batch, step.seq, step.past, &dims);
    if (!problem.empty())
      return problem;
    strata::Tensor t;
    strata::Status status = strata::Tensor::create(sig.dtype, dims, &t);
    if (!status)
      return "input '" + name + "' " + dimsText(dims) + ": " +
             status.toString();
    if (name == "input_ids") {
      problem = store(t, ids);
    } else if (name == "position_ids") {
      std::vector<int64_t> positions(t.elementCount());
      for (size_t k = 0; k < positions.size(); ++k)
        positions[k] = step.past + static_cast<int64_t>(k) % step.seq;
      problem = store(t, positions);
    } else if (name == "attention_mask") {
      problem = fill(t, 1);
    } else if (t.dtype() == STRATA_DTYPE_F32) {
      // A past cache of random values in [-1, 1).
      float *data = t.data<float>();
      for (size_t k = 0, n = t.elementCount(); k < n; ++k)
        data[k] = rng.unit();
    } // other dtypes of a past cache stay zero
    if (!problem.empty())
      return "input '" + name + "': " + problem;
    owned->push_back(std::move(t));
    (*ordered)[i] = &owned->back();
  }
  return "";
}

std::string Bench::call(BenchModel &model,
                        const std::vector<const Tensor *> &in,
                        std::vector<strata::Tensor> *outputs) {
  strata::Status status = model.session.run(model.entry->name, in, outputs);
  if (!status)
    return model.path + ": run failed: " + status.toString();
  return "";
}

std::string Bench::argmaxLast(const BenchModel &model,
                              const std::vector<strata::Tensor> &outputs,
                              std::vector<int64_t> *next) const {
  const strata::Tensor &logits = outputs[model.logitsIndex];
  std::vector<int64_t> dims = logits.dims();
  if (dims.size() != 3 || dims[1] < 1 || dims[2] < 1)
    return model.path + ": 'logits' came back as " + dimsText(dims);
  const float *data = logits.data<float>();
  next->assign(dims[0], 0);
  for (int64_t b = 0; b < dims[0]; ++b) {
    const float *row = data + (b * dims[1] + dims[1] - 1) * dims[2];
    int64_t best = 0;
    for (int64_t v = 1; v < dims[2]; ++v) {
      if (row[v] > row[best])
        best = v;
    }
    (*next)[b] = best;
  }
  return "";
}

// Random ids in [0, vocab), vocab read from the logits' last dim.
static std::vector<int64_t> randomIds(const BenchModel &model, int64_t count,
                                      uint64_t seed) {
  const strata_dim_t &v = model.entry->outputs[model.logitsIndex].dims[2];
  uint64_t vocab = static_cast<uint64_t>(v.symbol ? v.max : v.extent);
  Rng rng(seed);
  std::vector<int64_t> ids(count);
  for (int64_t &id : ids)
    id = static_cast<int64_t>(rng.next() % (vocab ? vocab : 1));
  return ids;
}

std::string Bench::timePrefill(const Workload &w, uint64_t seed, bool argmax,
                               double *seconds) {
  Step step{w.batch, w.seq, 0};
  std::vector<int64_t> ids = randomIds(*prefill_, w.batch * w.seq, seed);
  std::vector<strata::Tensor> owned, outputs;
  std::vector<const strata::Tensor *> in;
  std::string problem =
      makeInputs(*prefill_, step, ids, {}, seed + 1, &owned, &in);
  if (!problem.empty())
    return prefill_->path + ": " + problem;
  std::vector<int64_t> next;
  double start = now();
  problem = call(*prefill_, in, &outputs);
  if (problem.empty() && argmax)
    problem = argmaxLast(*prefill_, outputs, &next);
  *seconds = now() - start;
  return problem;
}

std::string Bench::timeDecode(const Workload &w, uint64_t seed, int warmup,
                              double *seconds) {
  Step step{w.batch, 1, w.ctx - 1};
  std::vector<int64_t> ids = randomIds(*decode_, w.batch, seed);
  std::vector<strata::Tensor> owned, outputs;
  std::vector<const strata::Tensor *> in;
  std::string problem =
      makeInputs(*decode_, step, ids, {}, seed + 1, &owned, &in);
  if (!problem.empty())
    return decode_->path + ": " + problem;
  // The same inputs every step, as onnxruntime is timed (bench/engines.py).
  for (int i = 0; i < warmup; ++i) {
    problem = call(*decode_, in, &outputs);
    if (!problem.empty())
      return problem;
  }
  double start = now();
  for (int64_t i = 0; i < w.steps; ++i) {
    // Drop the previous step's outputs first, as the onnxruntime loop does
    // (its results are discarded at once): their blocks go back to the
    // session's buffer cache and this step reuses them instead of touching
    // fresh pages (75 MB of present.* at ctx 1024).
    outputs.clear();
    problem = call(*decode_, in, &outputs);
    if (!problem.empty())
      return problem;
  }
  *seconds = (now() - start) / static_cast<double>(w.steps);
  return "";
}

std::string Bench::timeGeneratorRun(const Workload &w, uint64_t seed,
                                    BenchResult *result) {
  BenchModel &model = *decode_;
  std::vector<int64_t> ids = randomIds(model, w.batch * w.prompt, seed);
  result->promptIds = ids;
  strata_generator_options_t options;
  strata_generator_options_init(&options);
  strata_generator_t *generator = nullptr;
  // Creating it resets every slot: not part of the generation.
  strata::Status status(
      strata_generator_create(model.session.get(), &options, &generator));
  if (!status)
    return model.path + ": " + status.toString();
  struct Release {
    strata_generator_t *g;
    ~Release() { strata_generator_release(g); }
  } release{generator};
  strata_generation_params_t params;
  strata_generation_params_init(&params);
  params.max_new_tokens = w.gen;
  std::vector<uint64_t> sequences(w.batch);
  double start = now();
  for (int64_t b = 0; b < w.batch; ++b) {
    status = strata::Status(strata_generator_add_sequence(
        generator, ids.data() + b * w.prompt, static_cast<size_t>(w.prompt),
        &params, &sequences[b]));
    if (!status)
      return model.path + ": " + status.toString();
  }
  result->ttftSeconds = now() - start;
  for (size_t active = strata_generator_active_count(generator); active;) {
    status = strata::Status(strata_generator_step(generator, &active));
    if (!status)
      return model.path + ": " + status.toString();
  }
  result->seconds = now() - start;
  result->tokens.assign(w.batch * w.gen, 0);
  for (int64_t b = 0; b < w.batch; ++b) {
    const int64_t *tokens = nullptr;
    size_t count = 0;
    status = strata::Status(strata_generator_sequence_tokens(
        generator, sequences[b], &tokens, &count));
    if (!status)
      return model.path + ": " + status.toString();
    for (size_t t = 0; t < count && t < static_cast<size_t>(w.gen); ++t)
      result->tokens[b * w.gen + t] = tokens[t];
  }
  return "";
}

std::string Bench::timeGenerate(const Workload &w, uint64_t seed,
                                BenchResult *result) {
  if (decode_ && hasGenerationEntries(*decode_))
    return timeGeneratorRun(w, seed, result);
  std::vector<int64_t> ids = randomIds(*prefill_, w.batch * w.prompt, seed);
  result->promptIds = ids;
  // Column `token` of the [batch, gen] result.
  std::vector<int64_t> &tokens = result->tokens;
  tokens.assign(w.batch * w.gen, 0);
  auto keep = [&](int64_t token) {
    for (int64_t b = 0; b < w.batch; ++b)
      tokens[b * w.gen + token] = ids[b];
  };
  std::vector<strata::Tensor> owned, outputs;
  std::vector<const strata::Tensor *> in;
  std::map<std::string, strata::Tensor> past;
  std::string problem;
  // Everything from here on is timed, input binding included.
  double start = now();
  problem = makeInputs(*prefill_, {w.batch, w.prompt, 0}, ids, past, seed + 1,
                       &owned, &in);
  if (problem.empty())
    problem = call(*prefill_, in, &outputs);
  if (problem.empty())
    problem = argmaxLast(*prefill_, outputs, &ids);
  if (!problem.empty())
    return problem;
  result->ttftSeconds = now() - start;
  keep(0);
  const strata_entry_signature_t *producer = prefill_->entry;
  for (int64_t token = 1; token < w.gen; ++token) {
    // present.N.* of the last call becomes past_key_values.N.*.
    past.clear();
    for (size_t o = 0; o < producer->output_count; ++o) {
      std::string name = producer->outputs[o].name;
      if (startsWith(name, kPresentPrefix))
        past[kPastPrefix + name.substr(std::strlen(kPresentPrefix))] =
            std::move(outputs[o]);
    }
    Step step{w.batch, 1, w.prompt + token - 1};
    problem = makeInputs(*decode_, step, ids, past, seed + 1, &owned, &in);
    if (!problem.empty())
      return decode_->path + ": " + problem;
    std::vector<strata::Tensor> next;
    problem = call(*decode_, in, &next);
    if (problem.empty())
      problem = argmaxLast(*decode_, next, &ids);
    if (!problem.empty())
      return problem;
    keep(token);
    outputs = std::move(next);
    producer = decode_->entry;
  }
  result->seconds = now() - start;
  return "";
}

std::string Bench::run(const Workload &w, int warmup, uint64_t seed,
                       BenchResult *result) {
  std::string problem = check(w);
  if (!problem.empty())
    return problem;
  uint64_t s = workloadSeed(seed, w);
  BenchResult r;
  switch (w.kind) {
  case WorkloadKind::Prefill:
  case WorkloadKind::Ttft: {
    bool ttft = w.kind == WorkloadKind::Ttft;
    for (int i = 0; i < warmup && problem.empty(); ++i)
      problem = timePrefill(w, s, ttft, &r.seconds);
    if (problem.empty())
      problem = timePrefill(w, s, ttft, &r.seconds);
    if (ttft)
      r.ttftSeconds = r.seconds;
    break;
  }
  case WorkloadKind::Decode:
    problem = timeDecode(w, s, warmup, &r.seconds);
    break;
  case WorkloadKind::Generate:
    for (int i = 0; i < warmup && problem.empty(); ++i)
      problem = timeGenerate(w, s, &r);
    if (problem.empty())
      problem = timeGenerate(w, s, &r);
    break;
  }
  if (!problem.empty())
    return problem;
  *result = r;
  return "";
}

} // namespace strata::tools
