//===- generator_bindings.cpp - Generation over prefill/decode ------------===//
// SPDX-License-Identifier: Apache-2.0
// The runtime's generator, stepped from Python: the package's
// strata.Generator streams each step's new tokens as they come. No Python
// callback runs inside the runtime; prefill and decode run without the GIL.

#include <nanobind/stl/vector.h>

#include <mutex>
#include <vector>

#include "runtime_bindings.h"
#include "status.h"
#include "strata/runtime/generate.h"

namespace nb = nanobind;

namespace strata::python {

strata_session_t* sessionHandle(nb::handle session);
std::mutex& sessionTurn(nb::handle session);

namespace {

class Generator {
 public:
  Generator(nb::handle session, int64_t prefillChunk)
      : turn_(sessionTurn(session)) {
    strata_generator_options_t options;
    strata_generator_options_init(&options);
    options.prefill_chunk = prefillChunk;
    strata_session_t* handle = sessionHandle(session);
    throwIfFailed(inTurn(turn_, [&] {
      return strata_generator_create(handle, &options, &generator_);
    }));
  }
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;
  ~Generator() {
    // Resets the slots still in flight: the session's state, in its turn.
    inTurn(turn_, [&] { strata_generator_release(generator_); });
  }

  uint64_t addSequence(const std::vector<int64_t>& prompt, float temperature,
                       int32_t topK, float topP, float minP,
                       float repetitionPenalty, uint64_t seed,
                       int64_t maxNewTokens,
                       const std::vector<int64_t>& stopTokens) {
    strata_generation_params_t params;
    strata_generation_params_init(&params);
    params.temperature = temperature;
    params.top_k = topK;
    params.top_p = topP;
    params.min_p = minP;
    params.repetition_penalty = repetitionPenalty;
    params.seed = seed;
    params.max_new_tokens = maxNewTokens;
    params.stop_tokens = stopTokens.data();
    params.stop_token_count = stopTokens.size();
    uint64_t id = 0;
    throwIfFailed(inTurn(turn_, [&] {
      return strata_generator_add_sequence(generator_, prompt.data(),
                                           prompt.size(), &params, &id);
    }));
    return id;
  }

  size_t step() {
    size_t active = 0;
    throwIfFailed(inTurn(
        turn_, [&] { return strata_generator_step(generator_, &active); }));
    return active;
  }

  // Tokens of |id| from |from| on, copied in the generator's turn (the
  // runtime's pointer is valid only until its next call).
  std::vector<int64_t> tokens(uint64_t id, size_t from) {
    std::vector<int64_t> out;
    throwIfFailed(inTurn(turn_, [&] {
      const int64_t* tokens = nullptr;
      size_t count = 0;
      strata_status_t status =
          strata_generator_sequence_tokens(generator_, id, &tokens, &count);
      if (!status && from < count) out.assign(tokens + from, tokens + count);
      return status;
    }));
    return out;
  }

  bool finished(uint64_t id) {
    int done = 0;
    throwIfFailed(inTurn(turn_, [&] {
      return strata_generator_sequence_finished(generator_, id, &done);
    }));
    return done != 0;
  }

  void cancel(uint64_t id) {
    throwIfFailed(inTurn(
        turn_, [&] { return strata_generator_cancel(generator_, id); }));
  }
  void remove(uint64_t id) {
    throwIfFailed(inTurn(turn_, [&] {
      return strata_generator_remove_sequence(generator_, id);
    }));
  }

  nb::dict metrics(uint64_t id) {
    strata_generation_metrics_t m;
    strata_generation_metrics_init(&m);
    throwIfFailed(inTurn(
        turn_, [&] { return strata_generator_metrics(generator_, id, &m); }));
    nb::dict out;
    out["prompt_tokens"] = m.prompt_tokens;
    out["generated_tokens"] = m.generated_tokens;
    out["ttft_ms"] = m.ttft_ms;
    out["tpot_ms"] = m.tpot_ms;
    out["p50_ms"] = m.p50_ms;
    out["p99_ms"] = m.p99_ms;
    out["tokens_per_second"] = m.tokens_per_second;
    return out;
  }

  size_t activeCount() {
    return inTurn(turn_,
                  [&] { return strata_generator_active_count(generator_); });
  }
  size_t slotCount() {
    return inTurn(turn_,
                  [&] { return strata_generator_slot_count(generator_); });
  }

 private:
  // Every call is made in the session's turn: the generator runs the
  // session and is not synchronized itself (generate.h), while Python
  // threads may call it at once (cancel from another thread).
  std::mutex& turn_;  // the session's (it outlives the generator)
  strata_generator_t* generator_ = nullptr;
};

}  // namespace

void bindGenerator(nb::module_& m) {
  nb::class_<Generator>(m, "Generator")
      .def(nb::init<nb::handle, int64_t>(), nb::arg("session"),
           nb::arg("prefill_chunk") = 0, nb::keep_alive<1, 2>())
      .def("add_sequence", &Generator::addSequence, nb::arg("prompt"),
           nb::arg("temperature"), nb::arg("top_k"), nb::arg("top_p"),
           nb::arg("min_p"), nb::arg("repetition_penalty"), nb::arg("seed"),
           nb::arg("max_new_tokens"), nb::arg("stop_tokens"))
      .def("step", &Generator::step)
      .def("tokens", &Generator::tokens, nb::arg("id"), nb::arg("start") = 0)
      .def("finished", &Generator::finished)
      .def("cancel", &Generator::cancel)
      .def("remove", &Generator::remove)
      .def("metrics", &Generator::metrics)
      .def("active_count", &Generator::activeCount)
      .def("slot_count", &Generator::slotCount);
}

}  // namespace strata::python
