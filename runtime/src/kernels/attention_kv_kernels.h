//===- attention_kv_kernels.h - Per-ISA pieces of compressed-KV attention -===//
// SPDX-License-Identifier: Apache-2.0
// The decode-row kernels of strata_rt_attention_kv over int8 and bf16 K/V
// (widened to fp32 in registers, never stored wider) and the row
// conversions of strata_rt_kv_quantize, one set per ISA, each in its own
// translation unit built with that ISA's flags (attention_kv_avx512.cc,
// attention_kv_avx2.cc; the scalar set and the choice are in
// attention_kv.cc). Declarations only: an inline function defined here and
// compiled into an AVX-512 unit could be the copy the linker keeps for
// every caller.

#ifndef STRATA_RUNTIME_SRC_KERNELS_ATTENTION_KV_KERNELS_H_
#define STRATA_RUNTIME_SRC_KERNELS_ATTENTION_KV_KERNELS_H_

#include <cstdint>

namespace strata::runtime::kernels {

/// c[j] = scales[j * ss] * dot(a[0..k), q[j * bn + 0..k)) for j in [0, n):
/// one query row against |n| int8 key rows (unit element stride), the dot
/// product in fp32 and the token's scale applied once to it.
using KvDotI8Fn = void (*)(int64_t k, int64_t n, const float* a,
                           const int8_t* b, int64_t bn, const float* scales,
                           int64_t ss, float* c);

/// c[0..n) = sum_j (a[j] * scales[j * ss]) * q[j * bk + 0..n) over j in
/// [0, k): probabilities times |k| int8 value rows (unit element stride),
/// each token's scale folded into its probability.
using KvAxpyI8Fn = void (*)(int64_t k, int64_t n, const float* a,
                            const int8_t* b, int64_t bk, const float* scales,
                            int64_t ss, float* c);

/// As KvDotI8Fn and KvAxpyI8Fn over bf16 rows (no scales).
using KvDotBf16Fn = void (*)(int64_t k, int64_t n, const float* a,
                             const uint16_t* b, int64_t bn, float* c);
using KvAxpyBf16Fn = void (*)(int64_t k, int64_t n, const float* a,
                              const uint16_t* b, int64_t bk, float* c);

/// One run of consecutive V rows of a paged cache (its rows, unit element
/// stride, |count| of them; int8: their scales) and the probabilities that
/// weigh them.
struct KvRun {
  const void* rows;
  const float* scales;
  const float* probs;
  int64_t count;
};

/// One run of consecutive K rows of a paged cache (or a slot's rows), as
/// KvRun, and where their scores go.
struct KeyRun {
  const void* rows;
  const float* scales;
  float* scores;
  int64_t count;
};

/// r.scores[j] = (int8: r.scales[j * ss] *) dot(a[0..k), row j of r) for
/// each of the |runs| runs r and j < r.count (rows |bn| elements apart, of
/// fp32, int8 or bf16): a decode row's keys that lie in blocks, in one call
/// instead of one per block. With |fetchAhead|, the rows are pulled toward
/// L2 ahead of their reads (the first pass over rows not yet in a cache).
using KvDotRunsF32Fn = void (*)(int64_t runs, const KeyRun* run, int64_t k,
                                const float* a, int64_t bn, bool fetchAhead);
using KvDotRunsI8Fn = void (*)(int64_t runs, const KeyRun* run, int64_t k,
                               const float* a, int64_t bn, int64_t ss,
                               bool fetchAhead);
using KvDotRunsBf16Fn = void (*)(int64_t runs, const KeyRun* run, int64_t k,
                                 const float* a, int64_t bn, bool fetchAhead);

/// c[0..n) = sum over the |runs| runs r, j < r.count of r.probs[j] *
/// (int8: r.scales[j * ss]) * row j of r (rows |bk| elements apart, of
/// fp32, int8 or bf16): the value product of a row whose keys lie in
/// blocks, summed in registers across them (one call per row instead of
/// one per block). With |fetchAhead|, the rows are pulled toward L2 ahead
/// of their reads (the first pass over rows not yet in a cache).
using KvAxpyRunsF32Fn = void (*)(int64_t runs, const KvRun* run, int64_t n,
                                 int64_t bk, float* c, bool fetchAhead);
using KvAxpyRunsI8Fn = void (*)(int64_t runs, const KvRun* run, int64_t n,
                                int64_t bk, int64_t ss, float* c,
                                bool fetchAhead);
using KvAxpyRunsBf16Fn = void (*)(int64_t runs, const KvRun* run, int64_t n,
                                  int64_t bk, float* c, bool fetchAhead);

/// One token of one head, x[0..d) (unit stride), quantized to int8 as the
/// ABI header defines for strata_rt_kv_quantize: q[0..d) and *scale.
using KvQuantizeI8Fn = void (*)(int64_t d, const float* x, int8_t* q,
                                float* scale);

/// y[e] = strata_f32_to_bf16(x[e]) for e in [0, d) (unit strides).
using KvToBf16Fn = void (*)(int64_t d, const float* x, uint16_t* y);

struct AttentionKvKernels {
  const char* name;
  KvDotI8Fn dotI8;
  KvAxpyI8Fn axpyI8;
  KvDotBf16Fn dotBf16;
  KvAxpyBf16Fn axpyBf16;
  KvQuantizeI8Fn quantizeI8;
  KvToBf16Fn toBf16;
  KvAxpyRunsF32Fn axpyRunsF32;
  KvAxpyRunsI8Fn axpyRunsI8;
  KvAxpyRunsBf16Fn axpyRunsBf16;
  KvDotRunsF32Fn dotRunsF32;
  KvDotRunsI8Fn dotRunsI8;
  KvDotRunsBf16Fn dotRunsBf16;
};

/// The reference quantizer, for any strides |sx| and |sq| between x's and
/// q's elements; the vector sets match it bit for bit (the same fp32
/// operations on each element; max is exact, so its order is free).
void kvQuantizeI8Reference(int64_t d, const float* x, int64_t sx, int8_t* q,
                           int64_t sq, float* scale);

/// With AVX-512 F and with AVX2 + FMA.
extern const AttentionKvKernels kAttentionKvAvx512;
extern const AttentionKvKernels kAttentionKvAvx2;

/// The set for the ISA the fp32 kernels use (which tests may force lower).
const AttentionKvKernels& attentionKvKernels();

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_ATTENTION_KV_KERNELS_H_
