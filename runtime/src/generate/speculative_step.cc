//===- speculative_step.cc - Draft, verify in one call, keep what agrees --===//
// SPDX-License-Identifier: Apache-2.0
// One speculative step: each sequence drafts up to k tokens (a draft
// model's decode steps, or prompt lookup), one call of the target's
// `verify` entry runs every sequence's last token and its drafts, and the
// acceptance rule keeps the drafts the target agrees with plus one token
// of the target's own. The cache rows of rejected drafts stay behind the
// sequence's length: the next call overwrites them before anything reads
// them (docs/design/prefill-decode.md). As in a plain step, every row is
// decided before any token is accepted, so a failure moves no sequence.

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "generate/draft_acceptance.h"
#include "generate/generator_state.h"

namespace {

using strata::runtime::Clock;
using strata::runtime::millisecondsBetween;
using strata::runtime::Sequence;
using strata::runtime::TensorHolder;

// The sequence's sampler as the acceptance rule's source of draws.
class SamplerDraws final : public strata::runtime::UniformSource {
 public:
  explicit SamplerDraws(strata::runtime::Sampler& sampler)
      : sampler_(sampler) {}
  double uniform() override { return sampler_.uniform(); }

 private:
  strata::runtime::Sampler& sampler_;
};

strata_status_t sequenceError(strata_status_t status, const char* what,
                              uint64_t id) {
  char context[96];
  std::snprintf(context, sizeof(context), "%s of sequence %" PRIu64, what, id);
  return strata_status_annotate(status, context);
}

}  // namespace

strata_status_t strata_generator_t::speculativeStep() {
  // Without a plain decode time the draft length has nothing to beat.
  if (!costs.decodeMeasured()) return decodeStep();
  // Every row's tokens must fit the context, padding included.
  int64_t room = contract.context;
  for (Sequence* sequence : rows) {
    room = std::min(room, contract.context - sequence->position());
  }
  const size_t roomForDrafts = room > 1 ? static_cast<size_t>(room - 1) : 0;
  size_t longest = 0;
  for (Sequence* sequence : rows) {
    // Drafting past the last token the sequence may make is wasted.
    const size_t remaining = sequence->maxGenerated - sequence->tokens.size();
    const size_t limit =
        std::min({roomForDrafts, remaining > 0 ? remaining - 1 : 0, maxDraft});
    size_t count = 0;
    if (promptLookup) {
      // The copy first: how long a match it follows decides how far it is
      // trusted; no match, no drafts (and no evidence either way).
      size_t matched = 0;
      const size_t found = strata::runtime::lookupDraft(
          sequence->history.data(), sequence->history.size(), lookupParams,
          limit, sequence->drafts.data(), &matched);
      sequence->draftEvidence = strata::runtime::lookupMatchClass(matched);
      if (found > 0) {
        count = sequence->draftLength.choose(costs, found,
                                             sequence->draftEvidence);
      }
    } else {
      sequence->draftEvidence = 0;
      count = sequence->draftLength.choose(costs, limit);
    }
    sequence->draftCount = count;
    longest = std::max(longest, count);
  }
  if (longest == 0) return decodeStep();
  // A paged cache: every position the verify call writes (drafts and
  // padding) needs a block of the row's own, or its writes would land in
  // the valid block its table is padded with. Where the pool is short, this
  // step decodes plainly (which may preempt) rather than preempt for
  // drafts; blocks taken here serve the positions the sequence reaches
  // next.
  if (pool) {
    for (Sequence* sequence : rows) {
      const size_t positions =
          static_cast<size_t>(sequence->position()) + longest + 1;
      if (!reserveBlocks(sequence, positions)) return decodeStep();
    }
  }
  if (draftSession) {
    const Clock::time_point started = Clock::now();
    STRATA_RETURN_IF_ERROR(draftTokens(longest));
    costs.recordDraftToken(millisecondsBetween(started, Clock::now()) /
                           static_cast<double>(longest));
  }

  // One verify call: row r holds its last token and its drafts, padded to
  // the call's length with copies of the last of them (valid ids whose
  // logits and cache rows are ignored).
  const size_t count = rows.size();
  const size_t length = longest + 1;
  const int64_t width = contract.blocksPerSequence;
  for (size_t row = 0; row < count; ++row) {
    Sequence* sequence = rows[row];
    int64_t* ids = verifyIds.data() + row * length;
    ids[0] = sequence->tokens.back();
    for (size_t i = 1; i < length; ++i) {
      ids[i] = i <= sequence->draftCount ? sequence->drafts[i - 1] : ids[i - 1];
    }
    rowSlots[row] = sequence->slot;
    rowPositions[row] = sequence->position();
    if (pool) tableRow(sequence, rowTables.data() + row * width);
  }
  TensorHolder logits;
  const Clock::time_point started = Clock::now();
  const strata::runtime::RowPlaces places =
      pool ? strata::runtime::RowPlaces{rowTables.data(), width}
           : strata::runtime::RowPlaces{rowSlots.data(), 0};
  strata_status_t status =
      strata::runtime::runRows(session, "verify", verifyIds.data(), length,
                               places, rowPositions.data(), count, &logits);
  if (status) return strata_status_annotate(status, "verify step");
  const Clock::time_point now = Clock::now();
  costs.recordVerify(length, millisecondsBetween(started, now));

  // Decide every row before accepting anything.
  const auto* values =
      static_cast<const float*>(strata_tensor_const_data(logits.tensor));
  const size_t vocab = static_cast<size_t>(contract.vocab);
  for (size_t row = 0; row < count; ++row) {
    Sequence* sequence = rows[row];
    const size_t drafted = sequence->draftCount;
    const float* rowLogits = values + row * length * vocab;
    // Position i's distribution sees the drafts before it as history.
    const size_t historyLength = sequence->history.size();
    for (size_t i = 0; i <= drafted && !status; ++i) {
      if (i > 0) sequence->history.push_back(sequence->drafts[i - 1]);
      status = sequence->sampler.distribution(
          rowLogits + i * vocab, vocab, sequence->history.data(),
          sequence->history.size(), targetDistributions.data() + i * vocab);
    }
    sequence->history.resize(historyLength);
    if (status) return sequenceError(status, "sampling", sequence->id);
    const double* draftDistributions = sequence->draftDistributions.data();
    if (promptLookup) {
      // A copied token is certain: one-hot.
      std::fill(certainDrafts.begin(), certainDrafts.begin() + drafted * vocab,
                0.0);
      for (size_t i = 0; i < drafted; ++i) {
        const int32_t token = sequence->drafts[i];
        if (token >= 0 && static_cast<size_t>(token) < vocab) {
          certainDrafts[i * vocab + static_cast<size_t>(token)] = 1.0;
        }
      }
      draftDistributions = certainDrafts.data();
    }
    SamplerDraws draws(sequence->sampler);
    const strata::runtime::DraftVerdict verdict = strata::runtime::acceptDrafts(
        targetDistributions.data(), draftDistributions,
        sequence->drafts.data(), drafted, vocab, draws, residual.data());
    verdictAccepted[row] = verdict.accepted;
    verdictNext[row] = verdict.next;
  }

  for (size_t row = 0; row < count; ++row) {
    Sequence* sequence = rows[row];
    const size_t drafted = sequence->draftCount;
    const size_t accepted = verdictAccepted[row];
    const int64_t before = static_cast<int64_t>(sequence->history.size());
    sequence->draftLength.record(drafted, accepted, sequence->draftEvidence);
    sequence->draftTokens += drafted;
    sequence->acceptedDraftTokens += accepted;
    ++sequence->targetSteps;
    if (draftSession && drafted > 0) {
      // The draft cached the last token and drafts 1 .. drafted - 1; those
      // the target kept stay valid.
      sequence->draftCached =
          before + static_cast<int64_t>(std::min(accepted, drafted - 1));
    }
    for (size_t i = 0; i < accepted && !sequence->finished; ++i) {
      accept(sequence, sequence->drafts[i], now);
    }
    if (!sequence->finished) accept(sequence, verdictNext[row], now);
  }
  return nullptr;
}

strata_status_t strata_generator_t::draftTokens(size_t longest) {
  const size_t vocab = static_cast<size_t>(contract.vocab);
  // Catch up: a sequence whose drafts were all kept (or that did not draft
  // for a while) has tokens the draft has not seen; all but the last go
  // through the draft's prefill.
  const size_t chunk = static_cast<size_t>(draftContract.prefillLength);
  for (Sequence* sequence : rows) {
    if (sequence->draftCount == 0) continue;
    // A paged draft cache: blocks for the catch-up and this step's drafts,
    // or no drafts for this sequence this step.
    if (!reserveDraftBlocks(sequence, static_cast<size_t>(sequence->position()) +
                                          sequence->draftCount)) {
      sequence->draftCount = 0;
      continue;
    }
    const int64_t last = static_cast<int64_t>(sequence->history.size()) - 1;
    while (sequence->draftCached < last) {
      const size_t length = std::min(
          static_cast<size_t>(last - sequence->draftCached), chunk);
      // History ids are the tokens (ids outside int32 never got this far).
      const auto from = sequence->history.begin() + sequence->draftCached;
      std::copy(from, from + static_cast<int64_t>(length), catchUpIds.begin());
      TensorHolder logits;
      strata_status_t status = strata::runtime::runPrefill(
          draftSession, draftPlace(sequence, 0), catchUpIds.data(),
          static_cast<int64_t>(length), sequence->draftCached, &logits);
      if (status) return sequenceError(status, "draft prefill", sequence->id);
      sequence->draftCached += static_cast<int64_t>(length);
    }
  }
  // Round j feeds each drafting sequence its last token (j = 0) or its
  // draft j and draws draft j + 1 from the draft's distribution.
  for (size_t j = 0; j < longest; ++j) {
    draftRows.clear();
    for (Sequence* sequence : rows) {
      if (sequence->draftCount <= j) continue;
      const size_t row = draftRows.size();
      rowIds[row] = j == 0 ? sequence->tokens.back() : sequence->drafts[j - 1];
      rowSlots[row] = sequence->slot;
      rowPositions[row] = sequence->position() + static_cast<int64_t>(j);
      if (draftPool) draftPlace(sequence, row);
      draftRows.push_back(sequence);
    }
    if (draftRows.empty()) break;
    TensorHolder logits;
    const strata::runtime::RowPlaces places =
        draftPool ? strata::runtime::RowPlaces{draftTables.data(),
                                               draftContract.blocksPerSequence}
                  : strata::runtime::RowPlaces{rowSlots.data(), 0};
    strata_status_t status = strata::runtime::runRows(
        draftSession, "decode", rowIds.data(), 1, places, rowPositions.data(),
        draftRows.size(), &logits);
    if (status) return strata_status_annotate(status, "draft decode step");
    const auto* values =
        static_cast<const float*>(strata_tensor_const_data(logits.tensor));
    for (size_t row = 0; row < draftRows.size(); ++row) {
      Sequence* sequence = draftRows[row];
      double* distribution = sequence->draftDistributions.data() + j * vocab;
      const size_t historyLength = sequence->history.size();
      for (size_t i = 0; i < j; ++i) {
        sequence->history.push_back(sequence->drafts[i]);
      }
      status = sequence->draftSampler.distribution(
          values + row * vocab, vocab, sequence->history.data(),
          sequence->history.size(), distribution);
      sequence->history.resize(historyLength);
      if (status) return sequenceError(status, "draft sampling", sequence->id);
      sequence->drafts[j] = strata::runtime::drawFromWeights(
          distribution, vocab, sequence->draftSampler.uniform());
    }
  }
  return nullptr;
}
