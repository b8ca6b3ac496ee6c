//===- attention_kv.cc - Compressed KV cache: scalar kernels and writes ---===//
// SPDX-License-Identifier: Apache-2.0
// The scalar (reference) set of the compressed-KV kernels, the choice of a
// set for the CPU, and strata_rt_kv_quantize: one task per (batch, kv head)
// writing its rows at the slot and positions the params name. The
// attention that reads the cache is strata_rt_attention_kv in
// attention_f32.cc.

#include "attention_kv.h"

#include <cstring>

#include "../run_context.h"
#include "attention_kv_kernels.h"
#include "packed_gemm.h"
#include "param_address.h"
#include "strata_kernel_abi.h"

namespace strata::runtime::kernels {
namespace {

float widenBf16(uint16_t x) {
  const uint32_t bits = static_cast<uint32_t>(x) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

void scalarDotI8(int64_t k, int64_t n, const float* a, const int8_t* b,
                 int64_t bn, const float* scales, int64_t ss, float* c) {
  for (int64_t j = 0; j < n; ++j) {
    float dot = 0.0f;
    for (int64_t e = 0; e < k; ++e) dot += a[e] * float(b[j * bn + e]);
    c[j] = dot * scales[j * ss];
  }
}

void scalarAxpyI8(int64_t k, int64_t n, const float* a, const int8_t* b,
                  int64_t bk, const float* scales, int64_t ss, float* c) {
  for (int64_t e = 0; e < n; ++e) c[e] = 0.0f;
  for (int64_t j = 0; j < k; ++j) {
    const float coef = a[j] * scales[j * ss];
    for (int64_t e = 0; e < n; ++e) c[e] += coef * float(b[j * bk + e]);
  }
}

void scalarDotBf16(int64_t k, int64_t n, const float* a, const uint16_t* b,
                   int64_t bn, float* c) {
  for (int64_t j = 0; j < n; ++j) {
    float dot = 0.0f;
    for (int64_t e = 0; e < k; ++e) dot += a[e] * widenBf16(b[j * bn + e]);
    c[j] = dot;
  }
}

void scalarAxpyBf16(int64_t k, int64_t n, const float* a, const uint16_t* b,
                    int64_t bk, float* c) {
  for (int64_t e = 0; e < n; ++e) c[e] = 0.0f;
  for (int64_t j = 0; j < k; ++j)
    for (int64_t e = 0; e < n; ++e) c[e] += a[j] * widenBf16(b[j * bk + e]);
}

void scalarQuantizeI8(int64_t d, const float* x, int8_t* q, float* scale) {
  kvQuantizeI8Reference(d, x, 1, q, 1, scale);
}

void scalarToBf16(int64_t d, const float* x, uint16_t* y) {
  for (int64_t e = 0; e < d; ++e) y[e] = strata_f32_to_bf16(x[e]);
}

// The value product over runs, each run's values widened one by one.
template <typename T, typename Widen>
void scalarAxpyRuns(int64_t runs, const KvRun* run, int64_t n, int64_t bk,
                    int64_t ss, float* c, Widen widen) {
  for (int64_t e = 0; e < n; ++e) c[e] = 0.0f;
  for (int64_t r = 0; r < runs; ++r) {
    const T* rows = static_cast<const T*>(run[r].rows);
    for (int64_t j = 0; j < run[r].count; ++j) {
      const float coef = run[r].scales
                             ? run[r].probs[j] * run[r].scales[j * ss]
                             : run[r].probs[j];
      for (int64_t e = 0; e < n; ++e) c[e] += coef * widen(rows[j * bk + e]);
    }
  }
}

void scalarAxpyRunsF32(int64_t runs, const KvRun* run, int64_t n, int64_t bk,
                       float* c, bool /*fetchAhead*/) {
  scalarAxpyRuns<float>(runs, run, n, bk, 0, c, [](float x) { return x; });
}

void scalarAxpyRunsI8(int64_t runs, const KvRun* run, int64_t n, int64_t bk,
                      int64_t ss, float* c, bool /*fetchAhead*/) {
  scalarAxpyRuns<int8_t>(runs, run, n, bk, ss, c,
                         [](int8_t x) { return float(x); });
}

void scalarAxpyRunsBf16(int64_t runs, const KvRun* run, int64_t n,
                        int64_t bk, float* c, bool /*fetchAhead*/) {
  scalarAxpyRuns<uint16_t>(runs, run, n, bk, 0, c, widenBf16);
}

// The key dots over runs, each run's rows widened one by one.
template <typename T, typename Widen>
void scalarDotRuns(int64_t runs, const KeyRun* run, int64_t k, const float* a,
                   int64_t bn, int64_t ss, Widen widen) {
  for (int64_t r = 0; r < runs; ++r) {
    const T* rows = static_cast<const T*>(run[r].rows);
    for (int64_t j = 0; j < run[r].count; ++j) {
      float dot = 0.0f;
      for (int64_t e = 0; e < k; ++e) dot += a[e] * widen(rows[j * bn + e]);
      run[r].scores[j] = run[r].scales ? dot * run[r].scales[j * ss] : dot;
    }
  }
}

void scalarDotRunsF32(int64_t runs, const KeyRun* run, int64_t k,
                      const float* a, int64_t bn, bool /*fetchAhead*/) {
  scalarDotRuns<float>(runs, run, k, a, bn, 0, [](float x) { return x; });
}

void scalarDotRunsI8(int64_t runs, const KeyRun* run, int64_t k,
                     const float* a, int64_t bn, int64_t ss,
                     bool /*fetchAhead*/) {
  scalarDotRuns<int8_t>(runs, run, k, a, bn, ss,
                        [](int8_t x) { return float(x); });
}

void scalarDotRunsBf16(int64_t runs, const KeyRun* run, int64_t k,
                       const float* a, int64_t bn, bool /*fetchAhead*/) {
  scalarDotRuns<uint16_t>(runs, run, k, a, bn, 0, widenBf16);
}

const AttentionKvKernels kAttentionKvScalar = {
    "scalar",          scalarDotI8,       scalarAxpyI8,      scalarDotBf16,
    scalarAxpyBf16,    scalarQuantizeI8,  scalarToBf16,      scalarAxpyRunsF32,
    scalarAxpyRunsI8,  scalarAxpyRunsBf16, scalarDotRunsF32,  scalarDotRunsI8,
    scalarDotRunsBf16};

// Loops writing fewer elements run on the calling thread: waking the pool
// costs a few microseconds, more than a decode step's rows take.
constexpr int64_t kMinParallelElements = 16384;

struct QuantizeProblem {
  int64_t dtype, batch, heads, rows, d;
  const float* src;
  int64_t sb, sh, sr, sd;
  uint8_t* dst;  // bytes; element strides below
  int64_t db, dh, dp, dd;
  float* scales;
  int64_t cb, ch, cp;
  const int64_t* slots;
  const int64_t* positions;
  int64_t start;
  // A paged cache: row b's position t in block blockTable[b * blocksPerRow
  // + t / blockSize] (the slot strides step blocks). Null: unpaged.
  const int64_t* blockTable;
  int64_t blocksPerRow, blockSize;
};

// The rows of batch |b|, kv head |h|.
void quantizeHead(const QuantizeProblem& p, const AttentionKvKernels& kv,
                  int64_t b, int64_t h) {
  const int64_t first = p.positions ? p.positions[b] : p.start;
  for (int64_t r = 0; r < p.rows; ++r) {
    const float* x = p.src + b * p.sb + h * p.sh + r * p.sr;
    // The slot (or block) and the position in it.
    int64_t slot = p.slots ? p.slots[b] : b, position = first + r;
    if (p.blockTable) {
      slot = p.blockTable[b * p.blocksPerRow + position / p.blockSize];
      position %= p.blockSize;
    }
    const int64_t at = slot * p.db + h * p.dh + position * p.dp;
    switch (p.dtype) {
      case STRATA_DTYPE_I8: {
        int8_t* q = reinterpret_cast<int8_t*>(p.dst) + at;
        float* scale = p.scales + slot * p.cb + h * p.ch + position * p.cp;
        if (p.sd == 1 && p.dd == 1)
          kv.quantizeI8(p.d, x, q, scale);
        else
          kvQuantizeI8Reference(p.d, x, p.sd, q, p.dd, scale);
        break;
      }
      case STRATA_DTYPE_BF16: {
        uint16_t* y = reinterpret_cast<uint16_t*>(p.dst) + at;
        if (p.sd == 1 && p.dd == 1) {
          kv.toBf16(p.d, x, y);
        } else {
          for (int64_t e = 0; e < p.d; ++e)
            y[e * p.dd] = strata_f32_to_bf16(x[e * p.sd]);
        }
        break;
      }
      default: {
        float* y = reinterpret_cast<float*>(p.dst) + at;
        for (int64_t e = 0; e < p.d; ++e) y[e * p.dd] = x[e * p.sd];
        break;
      }
    }
  }
}

}  // namespace

void kvQuantizeI8Reference(int64_t d, const float* x, int64_t sx, int8_t* q,
                           int64_t sq, float* scale) {
  float amax = 0.0f;
  bool nonFinite = false;
  for (int64_t e = 0; e < d; ++e) {
    const float ax = __builtin_fabsf(x[e * sx]);
    nonFinite |= !(ax <= 3.40282347e38f);
    amax = ax > amax ? ax : amax;  // a NaN compares false: skipped
  }
  const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  for (int64_t e = 0; e < d; ++e) {
    // Clamped first, so that no NaN or infinity reaches the conversion (a
    // NaN passes both clamps and becomes 0; its row's scale is +inf), then
    // rounded half away from zero by truncating y +- 0.5.
    float y = x[e * sx] * inv;
    y = y > 127.0f ? 127.0f : y;
    y = y < -127.0f ? -127.0f : y;
    y = y == y ? y : 0.0f;
    q[e * sq] =
        static_cast<int8_t>(static_cast<int>(y + (y >= 0.0f ? 0.5f : -0.5f)));
  }
  *scale = nonFinite ? __builtin_inff() : amax / 127.0f;
}

const AttentionKvKernels& attentionKvKernels() {
  // Every AVX-512 F CPU can run the AVX-512 set (F is all it uses).
  return pickKernelSet(true, kAttentionKvAvx512, kAttentionKvAvx2,
                       kAttentionKvScalar);
}

namespace {

// Both imports: |paged| reads the block table's fields too.
void kvQuantize(strata_rt_context_t* context, const int64_t* params,
                bool paged) {
  QuantizeProblem p;
  p.dtype = params[STRATA_KVQ_DTYPE];
  if (p.dtype == 0) p.dtype = STRATA_DTYPE_F32;
  p.batch = params[STRATA_KVQ_BATCH];
  p.heads = params[STRATA_KVQ_KV_HEADS];
  p.rows = params[STRATA_KVQ_ROWS];
  p.d = params[STRATA_KVQ_HEAD_DIM];
  p.src = paramAddress<const float>(params[STRATA_KVQ_SRC]);
  p.sb = params[STRATA_KVQ_SRC + 1];
  p.sh = params[STRATA_KVQ_SRC + 2];
  p.sr = params[STRATA_KVQ_SRC + 3];
  p.sd = params[STRATA_KVQ_SRC + 4];
  p.dst = paramAddress<uint8_t>(params[STRATA_KVQ_DST]);
  p.db = params[STRATA_KVQ_DST + 1];
  p.dh = params[STRATA_KVQ_DST + 2];
  p.dp = params[STRATA_KVQ_DST + 3];
  p.dd = params[STRATA_KVQ_DST + 4];
  p.scales = paramAddress<float>(params[STRATA_KVQ_SCALES]);
  p.cb = params[STRATA_KVQ_SCALES + 1];
  p.ch = params[STRATA_KVQ_SCALES + 2];
  p.cp = params[STRATA_KVQ_SCALES + 3];
  p.slots = paramAddress<const int64_t>(params[STRATA_KVQ_SLOTS]);
  p.positions = paramAddress<const int64_t>(params[STRATA_KVQ_POSITIONS]);
  p.start = params[STRATA_KVQ_START];
  p.blockTable = nullptr;
  p.blocksPerRow = p.blockSize = 0;
  int64_t slotCount = params[STRATA_KVQ_SLOT_COUNT];
  const int64_t capacity = params[STRATA_KVQ_CAPACITY];
  if (paged) {
    p.blockTable = paramAddress<const int64_t>(params[STRATA_KVQ_BLOCK_TABLE]);
    p.blocksPerRow = params[STRATA_KVQ_BLOCKS_PER_ROW];
    p.blockSize = params[STRATA_KVQ_BLOCK_SIZE];
    slotCount = params[STRATA_KVQ_BLOCK_COUNT];
    if (!p.blockTable || p.slots || p.blockSize <= 0 ||
        p.blocksPerRow <= 0 || capacity != p.blocksPerRow * p.blockSize) {
      failRunInternal(context, "strata_rt_kv_quantize_paged: block table",
                      p.blockSize);
      return;
    }
  }
  // Only these three element types have readers; int8 needs its scales.
  if (p.dtype != STRATA_DTYPE_F32 && p.dtype != STRATA_DTYPE_I8 &&
      p.dtype != STRATA_DTYPE_BF16) {
    failRunInternal(context, "strata_rt_kv_quantize: DTYPE", p.dtype);
    return;
  }
  if (p.dtype == STRATA_DTYPE_I8 && !p.scales) {
    failRunInternal(context, "strata_rt_kv_quantize: int8 without SCALES", 0);
    return;
  }
  if (p.batch <= 0 || p.heads <= 0 || p.rows <= 0 || p.d <= 0) return;
  // Slots and positions come from values the generated code checked;
  // others mean the code was not generated for this kernel.
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t first = p.positions ? p.positions[b] : p.start;
    if (first < 0 || first > capacity - p.rows) {
      failRunInternal(context, "strata_rt_kv_quantize: position", first);
      return;
    }
    // Each slot, or each block the rows reach.
    const int64_t from = paged ? first / p.blockSize : 0;
    const int64_t to = paged ? (first + p.rows - 1) / p.blockSize : 0;
    for (int64_t n = from; n <= to; ++n) {
      const int64_t slot = paged ? p.blockTable[b * p.blocksPerRow + n]
                           : p.slots ? p.slots[b]
                                     : b;
      if (slot < 0 || slot >= slotCount) {
        failRunInternal(context, "strata_rt_kv_quantize: slot", slot);
        return;
      }
    }
  }
  const AttentionKvKernels& kv = attentionKvKernels();
  const int64_t tasks = p.batch * p.heads;
  if (tasks * p.rows * p.d < kMinParallelElements) {
    for (int64_t t = 0; t < tasks; ++t)
      quantizeHead(p, kv, t / p.heads, t % p.heads);
    return;
  }
  parallelFor(context, static_cast<size_t>(tasks), [&](size_t t, uint32_t) {
    const int64_t task = static_cast<int64_t>(t);
    quantizeHead(p, kv, task / p.heads, task % p.heads);
  });
}

}  // namespace

extern "C" void strataKvQuantize(strata_rt_context_t* context,
                                 const int64_t* params) {
  pollCancel(context);  // before any object: a cancel skips this frame
  kvQuantize(context, params, false);
}

extern "C" void strataKvQuantizePaged(strata_rt_context_t* context,
                                      const int64_t* params) {
  pollCancel(context);  // before any object: a cancel skips this frame
  kvQuantize(context, params, true);
}

}  // namespace strata::runtime::kernels
