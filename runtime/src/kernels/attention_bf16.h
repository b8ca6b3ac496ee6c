//===- attention_bf16.h - bf16 products of attention's prefill blocks -----===//
// SPDX-License-Identifier: Apache-2.0
// The query-key and probability-value products of strata_rt_attention_f32's
// prefill blocks in bf16, for artifacts whose attention carries
// STRATA_ATTN_FLAG_BF16_PRODUCTS (the bf16 prefill policy): K and V are
// packed once per head as bf16 pairs, the query rows of a block and their
// probabilities converted to bf16 rows; sums stay fp32 and the softmax
// between the two products is attention_f32.cc's. The products run on AMX
// tiles (attention_amx.h) or, without them, with AVX512-BF16's vdpbf16ps
// (below). Defined in attention_bf16.cc, built with AVX-512 F/BW and
// AVX512-BF16 flags: call only where the CPU has them.
//
// Layouts (uint16 bf16 bits, every region 64-byte aligned, padding 0):
// - key pairs: panels of 32 keys, each dp / 2 pair rows of 32 keys x 2
//   (dims 2p and 2p + 1), dp = d rounded up to 32: the B operand of
//   Q K^T, as PANEL_BF16_PAIRS lays out a weight;
// - value pairs: panels of 32 value columns, each skp / 2 rows of 32
//   columns x 2 (keys 2q and 2q + 1), skp = keys rounded up to 32;
// - rows: row-major, |ld| elements apart, rows padded to a multiple of 32.

#ifndef STRATA_RUNTIME_SRC_KERNELS_ATTENTION_BF16_H_
#define STRATA_RUNTIME_SRC_KERNELS_ATTENTION_BF16_H_

#include <cstdint>

namespace strata::runtime::kernels {

/// |n| rounded up to a whole step of the products (32).
inline constexpr int64_t bf16RoundUp32(int64_t n) { return (n + 31) / 32 * 32; }

/// Keys [0, sk) of one head (row j at k + j * ss, d contiguous floats)
/// into key pairs of dp = bf16RoundUp32(d), keys up to bf16RoundUp32(sk).
void packKeyPairs(const float* k, int64_t ss, int64_t sk, int64_t d,
                  uint16_t* out);

/// Values [0, sk) of one head (row j at v + j * ss, dv contiguous floats)
/// into value pairs of skp = bf16RoundUp32(sk) keys, bf16RoundUp32(dv)
/// columns.
void packValuePairs(const float* v, int64_t ss, int64_t sk, int64_t dv,
                    uint16_t* out);

/// |rows| rows of |cols| floats (row i at src + i * lds) to bf16 rows of
/// |ld| elements (cols <= ld, ld a multiple of 32), rows up to
/// bf16RoundUp32(rows) and columns [cols, ld) zero.
void convertRowsToBf16(const float* src, int64_t lds, int64_t rows,
                       int64_t cols, uint16_t* dst, int64_t ld);

/// scores[i * ldS + j] = q row i . key j, for rows [0, bf16RoundUp32(rows))
/// and the keys of panels [p0, p1): |q| rows of dp elements, |keyPairs|
/// packed with dp = bf16RoundUp32(d). With vdpbf16ps.
void queryKeyProductsBf16(int64_t rows, int64_t dp, const uint16_t* q,
                          const uint16_t* keyPairs, int64_t p0, int64_t p1,
                          float* scores, int64_t ldS);

/// out[i * 32 + c] = sum over keys [0, keys) of probs row i x value
/// column 32 * panel + c, rows [0, bf16RoundUp32(rows)): |probs| rows of
/// |ldP| elements (keys a multiple of 32, <= ldP), |valuePairs| packed for
/// skp keys. With vdpbf16ps.
void probValueProductsBf16(int64_t rows, int64_t keys, const uint16_t* probs,
                           int64_t ldP, const uint16_t* valuePairs,
                           int64_t skp, int64_t panel, float* out);

}  // namespace strata::runtime::kernels

#endif  // STRATA_RUNTIME_SRC_KERNELS_ATTENTION_BF16_H_
