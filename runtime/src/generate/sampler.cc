//===- sampler.cc - Picks the next token from a step's logits -------------===//
// SPDX-License-Identifier: Apache-2.0
// Every filter works on the candidates' weights exp((logit - max) / T),
// never on normalized probabilities: the most likely token weighs exactly 1,
// so min-p needs no sum and top-p compares against a fraction of one.

#include "generate/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace strata::runtime {
namespace {

uint64_t rotateLeft(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t splitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Where the largest logit is (the first of equals) and its value, or where
// the first NaN is.
struct LogitScan {
  size_t argmax = 0;
  float max = -std::numeric_limits<float>::infinity();
  bool found = false;  // some logit is above -inf
  size_t nanPosition = 0;
  bool hasNaN = false;
};

LogitScan scanLogits(const float* values, size_t vocab) {
  LogitScan scan;
  // Branch-free passes the compiler vectorizes; the position of a NaN or of
  // the maximum is looked for only once it is known to be there.
  bool anyNaN = false;
  float maxValue = -std::numeric_limits<float>::infinity();
  size_t i = 0;
#if defined(__SSE2__)
  // GCC keeps a maximum reduction scalar (a chain of dependent comparisons,
  // one per logit); four independent vectors of four lanes take a fifth of
  // the time. maxps returns its second operand for a NaN, as the scalar
  // loop does.
  __m128 laneMax[4];
  __m128 laneNaN[4];
  for (int v = 0; v < 4; ++v) {
    laneMax[v] = _mm_set1_ps(maxValue);
    laneNaN[v] = _mm_setzero_ps();
  }
  for (; i + 16 <= vocab; i += 16) {
    for (int v = 0; v < 4; ++v) {
      __m128 value = _mm_loadu_ps(values + i + 4 * v);
      laneNaN[v] = _mm_or_ps(laneNaN[v], _mm_cmpunord_ps(value, value));
      laneMax[v] = _mm_max_ps(value, laneMax[v]);
    }
  }
  __m128 combinedMax = _mm_max_ps(_mm_max_ps(laneMax[0], laneMax[1]),
                                  _mm_max_ps(laneMax[2], laneMax[3]));
  __m128 combinedNaN = _mm_or_ps(_mm_or_ps(laneNaN[0], laneNaN[1]),
                                 _mm_or_ps(laneNaN[2], laneNaN[3]));
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, combinedMax);
  for (float lane : lanes) maxValue = lane > maxValue ? lane : maxValue;
  anyNaN = _mm_movemask_ps(combinedNaN) != 0;
#endif
  for (; i < vocab; ++i) {
    float value = values[i];
    anyNaN |= value != value;
    maxValue = value > maxValue ? value : maxValue;
  }
  if (anyNaN) {
    scan.nanPosition = static_cast<size_t>(
        std::find_if(values, values + vocab,
                     [](float value) { return value != value; }) -
        values);
    scan.hasNaN = true;
    return scan;
  }
  scan.max = maxValue;
  scan.found = maxValue > -std::numeric_limits<float>::infinity();
  if (scan.found) {
    scan.argmax = static_cast<size_t>(
        std::find(values, values + vocab, maxValue) - values);
  }
  return scan;
}

// The weight of a logit relative to the largest one. A +inf maximum means
// the +inf logits share everything: they weigh 1, the rest 0.
float weightOf(float value, float maxValue, float temperature) {
  if (std::isinf(maxValue)) return value == maxValue ? 1.0f : 0.0f;
  return std::exp((value - maxValue) / temperature);
}

}  // namespace

strata_status_t validateSamplingParams(const SamplingParams& params) {
  if (!(std::isfinite(params.temperature) && params.temperature >= 0.0f)) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "sampling temperature is %g (must be finite and >= 0; 0 is greedy)",
        static_cast<double>(params.temperature));
  }
  if (params.topK < 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "sampling topK is %d (must be >= 0; 0 is off)",
                              static_cast<int>(params.topK));
  }
  if (!(params.topP > 0.0f && params.topP <= 1.0f)) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "sampling topP is %g (must be in (0, 1]; 1 is off)",
        static_cast<double>(params.topP));
  }
  if (!(params.minP >= 0.0f && params.minP < 1.0f)) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "sampling minP is %g (must be in [0, 1); 0 is off)",
        static_cast<double>(params.minP));
  }
  if (!(std::isfinite(params.repetitionPenalty) &&
        params.repetitionPenalty > 0.0f)) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "sampling repetitionPenalty is %g (must be "
                              "finite and > 0; 1 is off)",
                              static_cast<double>(params.repetitionPenalty));
  }
  return strata_ok_status();
}

Xoshiro256StarStar::Xoshiro256StarStar(uint64_t seed) {
  // splitmix64 never yields four zero words, the one state xoshiro cannot
  // leave.
  uint64_t seedState = seed;
  for (uint64_t& word : state_) word = splitMix64(&seedState);
}

uint64_t Xoshiro256StarStar::next() {
  const uint64_t result = rotateLeft(state_[1] * 5, 7) * 9;
  const uint64_t shifted = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= shifted;
  state_[3] = rotateLeft(state_[3], 45);
  return result;
}

Sampler::Sampler(const SamplingParams& params)
    : params_(params), generator_(params.seed) {}

strata_status_t Sampler::checkArguments(const float* logits, size_t vocab,
                                        const int32_t* history,
                                        size_t historyCount,
                                        const void* out) const {
  STRATA_RETURN_IF_ERROR(validateSamplingParams(params_));
  if (!logits || !out) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "sample: logits and the output must not be "
                              "NULL");
  }
  if (!history && historyCount > 0) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "sample: history is NULL with a historyCount of %zu", historyCount);
  }
  if (vocab == 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "sample: vocab is 0, no token can be sampled");
  }
  if (vocab > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "sample: vocab %zu does not fit a token id",
                              vocab);
  }
  return nullptr;
}

strata_status_t Sampler::sample(const float* logits, size_t vocab,
                                const int32_t* history, size_t historyCount,
                                int32_t* outToken) {
  STRATA_RETURN_IF_ERROR(
      checkArguments(logits, vocab, history, historyCount, outToken));
  int32_t argmax = -1;
  STRATA_RETURN_IF_ERROR(
      selectCandidates(logits, vocab, history, historyCount, &argmax));
  *outToken = argmax >= 0 ? argmax : draw();
  return nullptr;
}

strata_status_t Sampler::distribution(const float* logits, size_t vocab,
                                      const int32_t* history,
                                      size_t historyCount, double* out) {
  STRATA_RETURN_IF_ERROR(
      checkArguments(logits, vocab, history, historyCount, out));
  int32_t argmax = -1;
  STRATA_RETURN_IF_ERROR(
      selectCandidates(logits, vocab, history, historyCount, &argmax));
  std::fill(out, out + vocab, 0.0);
  if (argmax >= 0) {
    out[argmax] = 1.0;
    return nullptr;
  }
  double total = 0.0;
  for (size_t i = 0; i < candidateCount_; ++i) total += candidateWeights_[i];
  for (size_t i = 0; i < candidateCount_; ++i) {
    out[candidateTokens_[i]] = candidateWeights_[i] / total;
  }
  return nullptr;
}

strata_status_t Sampler::selectCandidates(const float* logits, size_t vocab,
                                          const int32_t* history,
                                          size_t historyCount,
                                          int32_t* argmax) {
  // The scratch buffers are the only allocation; a failure must not throw
  // through the C API.
  try {
    growScratchFor(vocab, historyCount);
  } catch (const std::bad_alloc&) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_RESOURCE_EXHAUSTED,
        "sample: out of memory for the scratch buffers of a vocab of %zu",
        vocab);
  }
  const bool greedy = params_.temperature == 0.0f;
  const bool penalize = params_.repetitionPenalty != 1.0f && historyCount > 0;

  const float* values =
      penalize ? applyRepetitionPenalty(logits, vocab, history, historyCount)
               : logits;
  LogitScan scan = scanLogits(values, vocab);
  if (scan.hasNaN) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "sample: logit %zu of %zu is NaN",
                              scan.nanPosition, vocab);
  }
  if (!scan.found) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "sample: all %zu logits are -inf, no token can be sampled", vocab);
  }
  if (greedy) {
    *argmax = static_cast<int32_t>(scan.argmax);
    return nullptr;
  }

  size_t k = static_cast<size_t>(params_.topK);
  double totalWeight;
  if (k > 0 && k < vocab) {
    selectTopK(values, vocab, k);
    totalWeight = weighSelected(values, scan.max);
  } else {
    totalWeight = weighAll(values, vocab, scan.max);
  }
  if (params_.topP < 1.0f) applyTopP(totalWeight);
  if (params_.minP > 0.0f) applyMinP();
  return nullptr;
}

void Sampler::growScratchFor(size_t vocab, size_t historyCount) {
  const bool greedy = params_.temperature == 0.0f;
  const bool penalize = params_.repetitionPenalty != 1.0f && historyCount > 0;
  if (penalize || !greedy) growScratch(vocab);
}

void Sampler::growScratch(size_t vocab) {
  if (scratchVocab_ >= vocab) return;
  penalized_.resize(vocab);
  candidateTokens_.resize(vocab);
  candidateWeights_.resize(vocab);
  order_.resize(vocab);
  // Only now: a resize that threw leaves the next call to grow them again.
  scratchVocab_ = vocab;
}

const float* Sampler::applyRepetitionPenalty(const float* logits, size_t vocab,
                                             const int32_t* history,
                                             size_t historyCount) {
  std::copy(logits, logits + vocab, penalized_.begin());
  const float penalty = params_.repetitionPenalty;
  for (size_t i = 0; i < historyCount; ++i) {
    int32_t token = history[i];
    if (token < 0 || static_cast<size_t>(token) >= vocab) continue;
    // From the caller's value, so a token repeated in the history is
    // penalized once, as Hugging Face's gather/scatter does.
    float logit = logits[token];
    penalized_[token] = logit > 0.0f ? logit / penalty : logit * penalty;
  }
  return penalized_.data();
}

void Sampler::selectTopK(const float* values, size_t vocab, size_t k) {
  // A heap of the k best seen so far, worst on top (partial_sort's
  // selection without an index array). Ids arrive in increasing order, so a
  // later token equal to the worst kept one never displaces it: ties at the
  // boundary keep the lowest ids.
  int32_t* heap = candidateTokens_.data();
  auto better = [values](int32_t a, int32_t b) {
    return values[a] > values[b] || (values[a] == values[b] && a < b);
  };
  for (size_t i = 0; i < k; ++i) {
    heap[i] = static_cast<int32_t>(i);
    std::push_heap(heap, heap + i + 1, better);
  }
  float worstKept = values[heap[0]];
  for (size_t i = k; i < vocab; ++i) {
    if (values[i] > worstKept) {
      std::pop_heap(heap, heap + k, better);
      heap[k - 1] = static_cast<int32_t>(i);
      std::push_heap(heap, heap + k, better);
      worstKept = values[heap[0]];
    }
  }
  std::sort(heap, heap + k);
  candidateCount_ = k;
}

double Sampler::weighAll(const float* values, size_t vocab, float maxValue) {
  const float temperature = params_.temperature;
  int32_t* tokens = candidateTokens_.data();
  float* weights = candidateWeights_.data();
  double total = 0.0;
  size_t count = 0;
  for (size_t i = 0; i < vocab; ++i) {
    float weight = weightOf(values[i], maxValue, temperature);
    // Weightless tokens can never be drawn; dropping them keeps the later
    // filters short.
    if (weight > 0.0f) {
      tokens[count] = static_cast<int32_t>(i);
      weights[count] = weight;
      total += weight;
      ++count;
    }
  }
  candidateCount_ = count;
  return total;
}

double Sampler::weighSelected(const float* values, float maxValue) {
  const float temperature = params_.temperature;
  double total = 0.0;
  size_t count = 0;
  for (size_t i = 0; i < candidateCount_; ++i) {
    int32_t token = candidateTokens_[i];
    float weight = weightOf(values[token], maxValue, temperature);
    if (weight > 0.0f) {
      candidateTokens_[count] = token;
      candidateWeights_[count] = weight;
      total += weight;
      ++count;
    }
  }
  candidateCount_ = count;
  return total;
}

void Sampler::applyTopP(double totalWeight) {
  const size_t count = candidateCount_;
  const double target = static_cast<double>(params_.topP) * totalWeight;
  const float* weights = candidateWeights_.data();
  // Candidates are in increasing id order, so a lower position is a lower
  // id: equal weights enter the nucleus lowest id first.
  auto heavierFirst = [weights](uint32_t a, uint32_t b) {
    return weights[a] > weights[b] || (weights[a] == weights[b] && a < b);
  };
  // Tokens lighter than (1 - topP) * total / count weigh less than
  // (1 - topP) * total all together, so the nucleus lies among the heavier
  // ones and only those need sorting. Rounding can make them fall just
  // short of the target; then all are sorted.
  const double lightBound = (1.0 - static_cast<double>(params_.topP)) *
                            totalWeight / static_cast<double>(count);
  size_t sorted = 0;
  for (size_t i = 0; i < count; ++i) {
    if (static_cast<double>(weights[i]) >= lightBound) {
      order_[sorted++] = static_cast<uint32_t>(i);
    }
  }
  size_t nucleus = 0;
  for (int attempt = 0; attempt < 2 && nucleus == 0; ++attempt) {
    if (attempt == 1) {
      sorted = count;
      for (size_t i = 0; i < count; ++i) order_[i] = static_cast<uint32_t>(i);
    }
    std::sort(order_.begin(), order_.begin() + static_cast<ptrdiff_t>(sorted),
              heavierFirst);
    double cumulative = 0.0;
    for (size_t j = 0; j < sorted; ++j) {
      cumulative += weights[order_[j]];
      if (cumulative >= target) {
        nucleus = j + 1;
        break;
      }
    }
    if (nucleus == 0 && sorted == count) nucleus = count;
  }
  // Back to increasing id order, then packed to the front in place (every
  // position moves down or stays).
  std::sort(order_.begin(), order_.begin() + static_cast<ptrdiff_t>(nucleus));
  for (size_t j = 0; j < nucleus; ++j) {
    candidateTokens_[j] = candidateTokens_[order_[j]];
    candidateWeights_[j] = candidateWeights_[order_[j]];
  }
  candidateCount_ = nucleus;
}

void Sampler::applyMinP() {
  // The most likely candidate weighs exactly 1 and always survives.
  const float minWeight = params_.minP;
  size_t count = 0;
  for (size_t i = 0; i < candidateCount_; ++i) {
    if (candidateWeights_[i] >= minWeight) {
      candidateTokens_[count] = candidateTokens_[i];
      candidateWeights_[count] = candidateWeights_[i];
      ++count;
    }
  }
  candidateCount_ = count;
}

int32_t Sampler::draw() {
  double total = 0.0;
  for (size_t i = 0; i < candidateCount_; ++i) total += candidateWeights_[i];
  // Inverse CDF in double precision over the unnormalized weights.
  const double u = generator_.nextDouble() * total;
  double cumulative = 0.0;
  for (size_t i = 0; i < candidateCount_; ++i) {
    cumulative += candidateWeights_[i];
    if (u < cumulative) return candidateTokens_[i];
  }
  // u rounded up to the total: the last candidate (every one weighs > 0).
  return candidateTokens_[candidateCount_ - 1];
}

std::vector<int32_t> Sampler::lastCandidateTokens() const {
  return std::vector<int32_t>(
      candidateTokens_.begin(),
      candidateTokens_.begin() + static_cast<ptrdiff_t>(candidateCount_));
}

std::vector<double> Sampler::lastCandidateProbabilities() const {
  double total = 0.0;
  for (size_t i = 0; i < candidateCount_; ++i) total += candidateWeights_[i];
  std::vector<double> probabilities(candidateCount_);
  for (size_t i = 0; i < candidateCount_; ++i) {
    probabilities[i] = candidateWeights_[i] / total;
  }
  return probabilities;
}

}  // namespace strata::runtime
