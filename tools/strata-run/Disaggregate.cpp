//===- Disaggregate.cpp - strata-run generate --disaggregate --------------===//
// SPDX-License-Identifier: Apache-2.0
// Per request rank 0 sends three messages: a fixed header, the prompt's
// ids and its cache rows (every per-sequence state in module order, each
// packed as strata_session_read_state_rows reads it). Both ranks hold the
// same artifact and prompts, so rank 1 checks what arrives against its own
// copy before writing a byte of it. Between decode steps rank 1 admits
// only what has arrived (the communicator's probe).
//===----------------------------------------------------------------------===//

#include "Disaggregate.h"

#include <algorithm>
#include <cstring>

namespace strata::tools {
namespace {

constexpr uint32_t kTagHeader = 1;
constexpr uint32_t kTagIds = 2;
constexpr uint32_t kTagRows = 3;

// The first message of a request. Both ranks run the same binary, so it
// goes as raw bytes.
struct RequestHeader {
  // The prompt's index, or -1: rank 0 failed and sends nothing more.
  int64_t prompt = -1;
  int64_t promptLength = 0;
  int64_t firstToken = 0;
  int64_t kvBytes = 0;
  // Since the common start, on rank 0's clock.
  double prefillStartMs = 0;
  double prefillEndMs = 0;
  double sendStartMs = 0;
};

double msSince(DisaggregateClock::time_point start) {
  return std::chrono::duration<double, std::milli>(DisaggregateClock::now() -
                                                   start)
      .count();
}

std::string statusText(const std::string &context, strata_status_t status) {
  std::string text = context + ": " +
                     strata_status_code_string(strata_status_code(status)) +
                     ": " + strata_status_message(status);
  strata_status_free(status);
  return text;
}

// A per-sequence state whose rows move, and the bytes one position of a
// sequence takes in it (every dim but `slots` and `context`).
struct MovedState {
  size_t index;
  size_t bytesPerPosition;
};

std::vector<MovedState> movedStates(const strata_module_t *module) {
  std::vector<MovedState> moved;
  for (size_t s = 0; s < strata_module_state_count(module); ++s) {
    const strata_state_signature_t *state = strata_module_state(module, s);
    if (state->scope != STRATA_STATE_SCOPE_PER_SEQUENCE)
      continue;
    size_t bytes = strata_dtype_size(state->dtype);
    for (uint32_t d = 1; d < state->rank; ++d)
      if (!state->dims[d].symbol ||
          std::strcmp(state->dims[d].symbol, "context") != 0)
        bytes *= static_cast<size_t>(state->dims[d].max);
    moved.push_back({s, bytes});
  }
  return moved;
}

uint64_t rowBytes(const std::vector<MovedState> &states, size_t positions) {
  uint64_t bytes = 0;
  for (const MovedState &state : states)
    bytes += state.bytesPerPosition * positions;
  return bytes;
}

// Rank 0's part of one request; "" or the problem.
std::string
prefillOne(const strata_communicator_t *comm, const strata_session_t *session,
           strata_generator_t *generator, const std::vector<MovedState> &states,
           size_t index, const std::vector<int64_t> &ids,
           const strata_generation_params_t &params,
           DisaggregateClock::time_point start, std::vector<uint8_t> *rows) {
  const std::string where = "prompt " + std::to_string(index);
  RequestHeader header;
  header.prompt = static_cast<int64_t>(index);
  header.promptLength = static_cast<int64_t>(ids.size());
  header.prefillStartMs = msSince(start);
  uint64_t id = 0;
  strata_status_t status = strata_generator_begin_sequence(
      generator, ids.data(), ids.size(), &params, &id);
  if (status)
    return statusText(where, status);
  // Taken now: a first token that ends the sequence frees the slot, whose
  // rows stay as the prefill wrote them.
  int64_t slot = -1;
  status = strata_generator_sequence_slot(generator, id, &slot);
  if (!status)
    status = strata_generator_prefill(generator, id, ids.size(), nullptr);
  const int64_t *tokens = nullptr;
  size_t count = 0;
  if (!status)
    status = strata_generator_sequence_tokens(generator, id, &tokens, &count);
  if (!status && count != 1)
    status = STRATA_MAKE_STATUS(STRATA_STATUS_INTERNAL,
                                "prefill made %zu tokens, expected 1", count);
  if (status) {
    STRATA_IGNORE_ERROR(strata_generator_remove_sequence(generator, id));
    return statusText(where + ": prefill", status);
  }
  header.firstToken = tokens[0];
  header.prefillEndMs = msSince(start);
  header.kvBytes = static_cast<int64_t>(rowBytes(states, ids.size()));
  rows->resize(static_cast<size_t>(header.kvBytes));
  size_t offset = 0;
  for (const MovedState &state : states) {
    const size_t bytes = state.bytesPerPosition * ids.size();
    status = strata_session_read_state_rows(session, state.index, slot, 0,
                                            header.promptLength,
                                            rows->data() + offset, bytes);
    if (status)
      break;
    offset += bytes;
  }
  STRATA_IGNORE_ERROR(strata_generator_remove_sequence(generator, id));
  if (status)
    return statusText(where + ": reading its cache rows", status);
  header.sendStartMs = msSince(start);
  status = comm->send(comm->self, &header, sizeof(header), 1, kTagHeader);
  if (!status)
    status = comm->send(comm->self, ids.data(), ids.size() * sizeof(int64_t), 1,
                        kTagIds);
  if (!status)
    status = comm->send(comm->self, rows->data(), rows->size(), 1, kTagRows);
  if (status)
    return statusText(where + ": sending to the decode rank", status);
  return "";
}

} // namespace

std::string checkDisaggregateGroup(const strata_communicator_t *comm) {
  if (!comm)
    return "--disaggregate runs as the 2 processes of an MPI job (mpirun "
           "-np 2 strata-run generate ... --disaggregate): rank 0 prefills, "
           "rank 1 decodes; this process has no communicator";
  if (comm->size != 2)
    return "--disaggregate needs exactly 2 ranks (prefill and decode), got " +
           std::to_string(comm->size);
  if (!comm->send || !comm->recv || !comm->probe)
    return "--disaggregate needs a communicator with send, recv and probe";
  return "";
}

std::string checkDisaggregateCache(const strata_session_t *session,
                                   const strata_generator_t *generator) {
  strata_generator_cache_stats_t stats;
  strata_generator_cache_stats_init(&stats);
  strata_status_t status = strata_generator_cache_stats(generator, &stats);
  if (status)
    return statusText("cache stats", status);
  if (stats.block_size > 0)
    return "--disaggregate cannot move a paged KV cache (compiled with "
           "--kv-block-size): its positions are in shared blocks, not rows "
           "of a slot";
  const strata_module_t *module = strata_session_module(session);
  for (size_t s = 0; s < strata_module_state_count(module); ++s) {
    const strata_state_signature_t *state = strata_module_state(module, s);
    if (state->scope != STRATA_STATE_SCOPE_PER_SEQUENCE)
      continue;
    bool positioned = false;
    for (uint32_t d = 1; d < state->rank; ++d)
      positioned |= state->dims[d].symbol &&
                    std::strcmp(state->dims[d].symbol, "context") == 0;
    if (!positioned)
      return std::string("--disaggregate cannot move state '") + state->name +
             "': it has no 'context' dim (the ring cache of a windowed "
             "attention keeps positions modulo its window)";
  }
  return "";
}

std::string startTogether(const strata_communicator_t *comm,
                          DisaggregateClock::time_point *start) {
  // An all-gather returns on both ranks once both have called it.
  uint8_t mine = 0, both[2] = {0, 0};
  strata_status_t status = comm->all_gather(comm->self, &mine, both, 1);
  if (status)
    return statusText("start barrier", status);
  *start = DisaggregateClock::now();
  return "";
}

std::string runPrefillRank(const strata_communicator_t *comm,
                           const strata_session_t *session,
                           strata_generator_t *generator,
                           const std::vector<std::vector<int64_t>> &prompts,
                           const strata_generation_params_t &params,
                           DisaggregateClock::time_point start) {
  const std::vector<MovedState> states =
      movedStates(strata_session_module(session));
  std::vector<uint8_t> rows;
  for (size_t i = 0; i < prompts.size(); ++i) {
    std::string problem = prefillOne(comm, session, generator, states, i,
                                     prompts[i], params, start, &rows);
    if (!problem.empty()) {
      // Rank 1 waits for this request: tell it there is none.
      RequestHeader failed;
      STRATA_IGNORE_ERROR(
          comm->send(comm->self, &failed, sizeof(failed), 1, kTagHeader));
      return problem;
    }
  }
  return "";
}

namespace {

// A request as it arrived.
struct Arrival {
  RequestHeader header;
  std::vector<int64_t> ids;
  std::vector<uint8_t> rows;
  double receivedMs = 0;
  // Why receiving stopped (the transport, or rank 0's failure); empty: OK.
  std::string error;
};

// Receives the requests in order; between decode steps only those that
// have arrived (the communicator's probe), so the steps go on while rank 0
// prefills the next prompt.
class Receiver {
public:
  Receiver(const strata_communicator_t *comm,
           const std::vector<std::vector<int64_t>> &prompts,
           const std::vector<MovedState> &states,
           DisaggregateClock::time_point start)
      : comm_(comm), prompts_(prompts), states_(states), start_(start) {}

  // The next request, waiting for it when |wait|; false when it has not
  // arrived (and |wait| is false).
  bool next(bool wait, Arrival *out) {
    *out = Arrival();
    if (!wait) {
      int ready = 0;
      strata_status_t status =
          comm_->probe(comm_->self, 0, kTagHeader, &ready);
      if (status) {
        out->error = statusText("waiting for the prefill rank", status);
        return true;
      }
      if (!ready)
        return false;
    }
    receive(out);
    ++next_;
    return true;
  }

private:
  void receive(Arrival *a) {
    const std::string where = "prompt " + std::to_string(next_);
    strata_status_t status =
        comm_->recv(comm_->self, &a->header, sizeof(a->header), 0, kTagHeader);
    if (status) {
      a->error = statusText(where + ": receiving from the prefill rank", status);
      return;
    }
    if (a->header.prompt < 0) {
      a->error = where + ": the prefill rank failed (its error says why)";
      return;
    }
    const std::vector<int64_t> &prompt = prompts_[next_];
    const uint64_t expectedBytes = rowBytes(states_, prompt.size());
    if (a->header.prompt != static_cast<int64_t>(next_) ||
        a->header.promptLength != static_cast<int64_t>(prompt.size()) ||
        a->header.kvBytes != static_cast<int64_t>(expectedBytes)) {
      a->error = where + ": the prefill rank sent prompt " +
                 std::to_string(a->header.prompt) + " of " +
                 std::to_string(a->header.promptLength) + " tokens and " +
                 std::to_string(a->header.kvBytes) + " cache bytes, expected " +
                 std::to_string(prompt.size()) + " tokens and " +
                 std::to_string(expectedBytes) +
                 " bytes: were the ranks given the same artifact and "
                 "prompts?";
      return;
    }
    a->ids.resize(prompt.size());
    a->rows.resize(expectedBytes);
    status = comm_->recv(comm_->self, a->ids.data(),
                         a->ids.size() * sizeof(int64_t), 0, kTagIds);
    if (!status)
      status = comm_->recv(comm_->self, a->rows.data(), a->rows.size(), 0,
                           kTagRows);
    if (status) {
      a->error = statusText(where + ": receiving from the prefill rank", status);
      return;
    }
    a->receivedMs = msSince(start_);
    if (a->ids != prompt)
      a->error = where + ": the prefill rank's prompt differs from this "
                         "rank's: were both given the same prompts?";
  }

  const strata_communicator_t *comm_;
  const std::vector<std::vector<int64_t>> &prompts_;
  const std::vector<MovedState> &states_;
  DisaggregateClock::time_point start_;
  size_t next_ = 0;
};

} // namespace

std::string runDecodeRank(const strata_communicator_t *comm,
                          strata_session_t *session,
                          strata_generator_t *generator,
                          const std::vector<std::vector<int64_t>> &prompts,
                          const strata_generation_params_t &params,
                          DisaggregateClock::time_point start,
                          const std::function<void(size_t, uint64_t)> &onBegin,
                          const std::function<std::string()> &onTokens,
                          std::vector<HandoffTimes> *times) {
  const std::vector<MovedState> states =
      movedStates(strata_session_module(session));
  const size_t slots = strata_generator_slot_count(generator);
  times->assign(prompts.size(), HandoffTimes());
  // Each admitted request's sequence and when its cache arrived, until its
  // second token.
  struct Pending {
    size_t prompt;
    uint64_t id;
    double receivedMs;
  };
  std::vector<Pending> pending;
  size_t admitted = 0;
  Receiver receiver(comm, prompts, states, start);
  while (true) {
    // Requests that have arrived join between steps while slots are free;
    // with nothing to decode, wait for the next one.
    Arrival a;
    while (admitted < prompts.size() &&
           strata_generator_active_count(generator) < slots &&
           receiver.next(strata_generator_active_count(generator) == 0, &a)) {
      if (!a.error.empty())
        return a.error;
      const std::string where = "prompt " + std::to_string(admitted);
      HandoffTimes &t = (*times)[admitted];
      t.queueMs = a.header.prefillStartMs;
      t.prefillMs = a.header.prefillEndMs - a.header.prefillStartMs;
      // The two clocks agree to within the start barrier's latency.
      t.transferMs = std::max(0.0, a.receivedMs - a.header.sendStartMs);
      t.kvBytes = a.rows.size();
      uint64_t id = 0;
      strata_status_t status = strata_generator_begin_sequence(
          generator, a.ids.data(), a.ids.size(), &params, &id);
      if (status)
        return statusText(where, status);
      onBegin(admitted, id);
      int64_t slot = -1;
      status = strata_generator_sequence_slot(generator, id, &slot);
      size_t offset = 0;
      for (size_t s = 0; !status && s < states.size(); ++s) {
        const size_t bytes = states[s].bytesPerPosition * a.ids.size();
        status = strata_session_write_state_rows(
            session, states[s].index, slot, 0,
            static_cast<int64_t>(a.ids.size()), a.rows.data() + offset, bytes);
        offset += bytes;
      }
      if (!status)
        status = strata_generator_resume_prefilled(generator, id,
                                                   a.header.firstToken);
      if (status)
        return statusText(where + ": resuming its decode", status);
      t.ttftMs = msSince(start);
      pending.push_back({admitted, id, a.receivedMs});
      ++admitted;
      std::string problem = onTokens();
      if (!problem.empty())
        return problem;
    }
    if (strata_generator_active_count(generator) == 0) {
      if (admitted == prompts.size())
        break;
      continue;
    }
    strata_status_t status = strata_generator_step(generator, nullptr);
    if (status)
      return statusText("generation failed", status);
    const double nowMs = msSince(start);
    // A request's first decode step ends at its second token; one that
    // ended at its first token has none.
    for (size_t p = 0; p < pending.size();) {
      const int64_t *tokens = nullptr;
      size_t count = 0;
      int finished = 0;
      status = strata_generator_sequence_tokens(generator, pending[p].id,
                                                &tokens, &count);
      if (!status)
        status = strata_generator_sequence_finished(generator, pending[p].id,
                                                    &finished);
      if (status)
        return statusText("prompt " + std::to_string(pending[p].prompt),
                          status);
      if (count >= 2 || finished) {
        if (count >= 2)
          (*times)[pending[p].prompt].firstDecodeMs =
              nowMs - pending[p].receivedMs;
        pending.erase(pending.begin() + static_cast<ptrdiff_t>(p));
      } else {
        ++p;
      }
    }
    std::string problem = onTokens();
    if (!problem.empty())
      return problem;
  }
  return "";
}

} // namespace strata::tools
