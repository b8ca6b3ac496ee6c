/*===- strata_kernel_abi.h - Generated code <-> runtime contract -*- C -*-===//
 * SPDX-License-Identifier: Apache-2.0
 * The calling convention of the native code in a .strata artifact. Plain C,
 * <stdint.h> only; included by the runtime and by the compiler. Any change
 * bumps STRATA_KERNEL_ABI_VERSION and adds a test (STYLE.md §11).
 *===----------------------------------------------------------------------===*/

#ifndef STRATA_CODEGEN_ABI_STRATA_KERNEL_ABI_H_
#define STRATA_CODEGEN_ABI_STRATA_KERNEL_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this contract. The artifact header records the version its
 * code was generated for; the runtime refuses any other (INCOMPATIBLE).
 * Version 3 gave every entry point, import and parallel task an explicit
 * run context and passes declared state tensors to entry points; version 4
 * added the matmul imports' bias (STRATA_MM_BIAS), version 5 the Winograd
 * convolution (strata_rt_conv_f32_winograd). */
#define STRATA_KERNEL_ABI_VERSION 5u

/* Largest tensor rank an entry point may take or return. */
#define STRATA_MAX_RANK 8

/* Most inputs and state tensors together an entry point may take (the
 * runtime calls entry points through exact function types of up to
 * STRATA_MAX_ENTRY_INPUTS + 3 pointer arguments). */
#define STRATA_MAX_ENTRY_INPUTS 253

/*
 * The run context: everything a run's imports need (the session's buffer
 * cache and allocator, its thread pool, its cancel request, where a failed
 * check or allocation ends the run, kernel scratch). Owned by the runtime
 * and opaque to generated code, which only passes it on: an entry point
 * receives it as its first argument and hands it to every import it calls
 * and to every function that calls one; a parallel task receives the
 * context of the thread that runs it. Nothing of a run lives in
 * thread-local or global state, so any number of runs of one module may be
 * in progress on different threads.
 */
typedef struct strata_rt_context_t strata_rt_context_t;

/*
 * The calling convention (MLIR's C interface plus the context).
 *
 * Each entry point E of the manifest is an exported function, named by the
 * manifest's `symbol` for E, of the form
 *
 *   void symbol(strata_rt_context_t* context,
 *               strata_results_E* results,            // only if E has results
 *               strata_memref_desc_R0* input0, ...,   // one per input
 *               strata_memref_desc_S0* state0, ...,   // one per state tensor
 *               strata_memref_desc_1* weights);       // i8 view of WEIGHTS
 *
 * where every tensor travels as a strided memref descriptor of its rank R
 * (below), inputs in manifest order, then every state tensor the module
 * declares in manifest order (at its full extent, every symbolic dim at its
 * maximum), then a rank-1 i8 descriptor of the mapped weights section.
 * `results` points to the descriptors of every output, laid out back to
 * back in manifest order (each descriptor is a sequence of 8-byte fields,
 * so there is no padding). Every buffer the generated code allocates,
 * outputs included, comes from the import strata_rt_alloc and goes back
 * through strata_rt_free (never the C library's malloc/free); the caller
 * copies the outputs and releases their `allocated` pointers through the
 * same allocator.
 * Tensors are row-major and contiguous: strides are the suffix products of
 * the sizes and offset is 0, for inputs, states and outputs alike.
 *
 * Ownership rules the runtime relies on:
 *  - inputs and the weights are read-only to the generated code;
 *  - state tensors belong to the session: the code reads them and updates
 *    them in place, never frees them and never returns them as outputs.
 *    The runtime zero-fills a state when it allocates it and when it is
 *    reset; a PER_SEQUENCE state's dim 0 counts sequence slots, so one
 *    sequence's part is the slice at its slot;
 *  - every output descriptor's `allocated` is a fresh strata_rt_alloc
 *    result (never an input's, a state's or the weights' buffer, never a
 *    memref.global, whose `allocated` MLIR sets to 0xdeadbeef); two
 *    outputs may share one allocation, which the runtime then frees once;
 *  - an entry takes at most STRATA_MAX_ENTRY_INPUTS inputs and states, so
 *    that a call has at most STRATA_MAX_ENTRY_INPUTS + 3 pointer arguments.
 * One call runs on the calling thread; the generated code itself never
 * starts threads. Work is spread over the runtime's thread pool by the
 * runtime functions it imports (below), which the runtime runs on the pool
 * the context names.
 *
 * The descriptor of rank R is
 *   struct { void* allocated; void* aligned; int64_t offset;
 *            int64_t sizes[R]; int64_t strides[R]; }
 * and the rank-0 one has no arrays. strata_memref_desc_t below has room for
 * STRATA_MAX_RANK; use strata_memref_desc_size() for the packed size of a
 * given rank.
 */
typedef struct strata_memref_desc_t {
  void* allocated;
  void* aligned;
  int64_t offset;
  int64_t sizes_and_strides[2 * STRATA_MAX_RANK];
} strata_memref_desc_t;

/* Bytes a rank-|rank| descriptor occupies in a packed results block. */
static inline uint64_t strata_memref_desc_size(uint32_t rank) {
  return (uint64_t)(3 + 2 * rank) * 8u;
}

/*
 * Imports: functions the runtime provides to generated code.
 *
 * For every import X the generated code calls, the code section defines a
 * writable pointer variable named STRATA_IMPORT_SYMBOL_PREFIX X, initially
 * null, and calls X through it. After loading the code the runtime stores
 * its implementation of X in each such variable it finds; a variable the
 * runtime does not know is a load error (INCOMPATIBLE). No symbol of the
 * runtime is resolved by the dynamic loader, so the runtime library may be
 * loaded with RTLD_LOCAL (as Python's ctypes does).
 *
 * Every import takes the run context first. No import throws, and none
 * returns after a failure that would leave the generated code without what
 * it asked for: on the entry's own thread an allocation that cannot be
 * satisfied, a cancel request or a failed check ends the run (a non-local
 * return to the runtime; generated frames hold no resources and every
 * buffer the run took is taken back), and strata_session_run returns
 * RESOURCE_EXHAUSTED, CANCELLED or INVALID_ARGUMENT with the session still
 * usable. Generated code allocates only on the entry's thread, never inside
 * a parallel task.
 *
 *   void* strata_rt_alloc(strata_rt_context_t* context, uint64_t bytes)
 *     64-byte aligned memory from the session's buffer cache.
 *   void strata_rt_free(strata_rt_context_t* context, void* ptr)
 *     Returns a block of strata_rt_alloc (null is ignored).
 *   void strata_rt_parallel_for(strata_rt_context_t* context,
 *                               strata_rt_task_fn task, void* args,
 *                               int64_t begin, int64_t end, int64_t work)
 *     Runs task over slices of [begin, end) that cover it exactly once, on
 *     the context's pool, and returns when all are done; |work| estimates
 *     the elements written (small loops run on the calling thread). Each
 *     call of |task| receives the context of the thread that runs it.
 */
#define STRATA_IMPORT_SYMBOL_PREFIX "__strata_import_"

typedef void (*strata_rt_task_fn)(strata_rt_context_t* context, void* args,
                                  int64_t begin, int64_t end);

/*
 * Matmul imports, one per element-type combination, named
 * strata_rt_matmul_<A and B types>[_<weight type>]; all take the run
 * context and a params block of int64 values at the STRATA_MM_* indices
 * below. The layout of B is a field of the block (STRATA_MM_B_LAYOUT).
 *
 * strata_rt_matmul_f32(strata_rt_context_t* context, const int64_t* params)
 *
 * C[b, m, n] (+)= sum_k A[b, m, k] * B[b, k, n] over fp32 operands, with up
 * to STRATA_MM_MAX_BATCH batch dims (a stride of 0 broadcasts). Addresses
 * are byte addresses of element [0, 0, 0]; strides count elements. With
 * STRATA_MM_BIAS the byte address of N fp32 values (0: none) and
 * FLAG_ACCUMULATE clear, each output starts from bias[n] instead of 0 (a
 * bias set with FLAG_ACCUMULATE ends the run, INTERNAL); this holds for
 * every matmul import below. The kernel adds it where it writes the
 * output, not in a pass of its own over C. B's
 * layout is STRATA_MM_LAYOUT_STRIDED (its strides apply) or
 * STRATA_MM_LAYOUT_PANEL_F32 (a weight pre-packed at compile time in the
 * panel layout below; its stride fields are ignored and its batch strides
 * must be 0). The quantization fields are ignored.
 *
 * strata_rt_matmul_f32_i8(strata_rt_context_t* context,
 *                         const int64_t* params)
 *
 * Weight-only int8: as strata_rt_matmul_f32 with B a symmetric int8 weight
 * in STRATA_MM_LAYOUT_PANEL_I8, dequantized in registers:
 *   B(k, n) = q(k, n) * scales[(k / GROUP_SIZE) * ldS + n],
 *   ldS = ceil(N / STRATA_PACK_PANEL_WIDTH) * STRATA_PACK_PANEL_WIDTH,
 * B_SCALES the byte address of the fp32 scales (ceil(K / GROUP_SIZE) rows
 * of ldS, zero past N), GROUP_SIZE >= 1 (K: one scale per column).
 * Accumulation is fp32. B_ZERO_POINTS must be 0 (symmetric) and B's batch
 * strides 0.
 *
 * With B in STRATA_MM_LAYOUT_PANEL_I8_QUADS instead (same scales, GROUP_SIZE
 * a multiple of 16), the products are integer: each row of A (of up to
 * 16 rows whose quantized copy fits the kernel's scratch; other products
 * take the fp32 products above) is quantized at run time to int8 per
 * group of
 * strata_i8_activation_group(GROUP_SIZE) k, as for _i4 below, and
 *   C(m, n) (+)= sum_h a_scale(m, h) * b_scale(h, n) * sum_{k in h} qa * qb
 * over those activation groups h (each inside one weight group). Widening
 * int8 weights to fp32 held one core below its share of the memory
 * bandwidth; four int8 products per lane (vpdpbusd) do not.
 *
 * strata_rt_matmul_f32_i4(strata_rt_context_t* context,
 *                         const int64_t* params)
 *
 * Weight-only int4 with int8 products: B a symmetric int4 weight in
 * STRATA_MM_LAYOUT_PANEL_I4_F16_BLOCKS (fp16 scales inside the panels,
 * B_SCALES 0) or STRATA_MM_LAYOUT_PANEL_I4_GROUPS (scales as for _i8:
 * ceil(K / GROUP_SIZE) rows of ldS floats at B_SCALES); GROUP_SIZE a
 * multiple of 4. Each row of A is
 * quantized at run time to int8 per group of GROUP_SIZE k (absmax / 127),
 * products summed exactly in int32 per group, then
 *   C(m, n) (+)= sum_g a_scale(m, g) * b_scale(g, n) * sum_{k in g} qa * qb.
 * (Integer dot products are what make 4-bit weights faster than 8-bit ones:
 * widening them to fp32 costs more instructions than the bytes saved.)
 * B_ZERO_POINTS must be 0 and B's batch strides 0.
 *
 * strata_rt_matmul_f32_w8a8(strata_rt_context_t* context,
 *                           const int64_t* params)
 *
 * W8A8 (int8 weights and activations, for prefill): as strata_rt_matmul_f32
 * (A fp32 with its strides, C fp32, FLAG_ACCUMULATE adds to C, batch dims
 * as for the other quantized imports: B's batch strides are taken as 0)
 * with B a symmetric int8 weight (values in [-127, 127]) in
 * STRATA_MM_LAYOUT_PANEL_I8_QUADS and one fp32 scale per column: B_SCALES
 * the byte address of ldS floats, ldS = ceil(N / STRATA_PACK_PANEL_WIDTH) *
 * STRATA_PACK_PANEL_WIDTH, zero past N. GROUP_SIZE must equal K, K must be
 * in [1, STRATA_MM_W8A8_MAX_K] and B_ZERO_POINTS 0; other values end the
 * run (INTERNAL). Each row of A is quantized at run time over the whole
 * row (dynamic per token):
 *   a_scale(m) = absmax_k |A(m, k)| / 127,
 *   qa(m, k) = clamp(A(m, k) * (127 / absmax), -127, 127) rounded half
 *              away from zero (fp32 arithmetic; an all-zero row gives 0),
 * a row holding a NaN or infinity getting a_scale = +inf, so that its
 * outputs are not finite (as the fp32 product's would not be). Products
 * are summed exactly in int32, then
 *   C(m, n) (+)= a_scale(m) * b_scale(n) * sum_k qa(m, k) * qb(k, n).
 * Any M >= 1 and N >= 1. Where the runtime's kernels are AVX2 (no AVX-512
 * VNNI), A is quantized to 7 bits instead: 63 in place of 127 above
 * (a_scale = absmax / 63, qa in [-63, 63]), because vpmaddubsw sums each
 * pair of u8 x s8 products in saturating int16, exactly only for offset
 * activations below 128; outputs then differ from other CPUs' by that
 * coarser rounding of A.
 *
 * strata_rt_matmul_f32_bf16(strata_rt_context_t* context,
 *                           const int64_t* params)
 *
 * bf16 weights (for prefill): as strata_rt_matmul_f32 (A fp32 with its
 * strides, C fp32, FLAG_ACCUMULATE adds to C, batch dims as for the
 * quantized imports: B's batch strides are taken as 0) with B a bf16
 * weight in STRATA_MM_LAYOUT_PANEL_BF16_PAIRS. B_SCALES, B_ZERO_POINTS and
 * GROUP_SIZE must be 0 and K >= 1; other values end the run (INTERNAL).
 * A is rounded to bf16 at run time by strata_f32_to_bf16 (below). With
 * a(k) = bf16(A(m, k)), b(k) = B(k, n), both 0 for k >= K, each output is
 *   s = C(m, n) if FLAG_ACCUMULATE else 0;
 *   for t = 0 .. ceil(K / 2) - 1:
 *     s = s + a(2t + 1) * b(2t + 1);  s = s + a(2t) * b(2t);
 *   C(m, n) = s
 * in fp32: each product of two bf16 values is exact in fp32 and each sum
 * is rounded to nearest even, odd k of a pair first (the order Intel
 * documents for AVX512-BF16's vdpbf16ps). On CPUs with AVX512-BF16 the
 * sums are that instruction's, which also reads bf16 denormals as 0 and
 * flushes sums below 2^-126 in magnitude to 0; other CPUs keep them. So
 * every CPU gives the same bits unless a product or partial sum falls
 * below 2^-126 in magnitude (or B holds bf16 denormals, which
 * strata_pack_b_bf16_pairs never writes). A NaN or infinity in A or B
 * reaches the outputs as the fp32 sums carry it. Any M, N >= 1.
 */
#define STRATA_MM_MAX_BATCH 4
/* Largest K of strata_rt_matmul_f32_w8a8: 127 * 127 * K stays below 2^31,
 * so its int32 sums cannot overflow. */
#define STRATA_MM_W8A8_MAX_K 133144
enum {
  STRATA_MM_FLAGS = 0,
  STRATA_MM_M = 1,
  STRATA_MM_N = 2,
  STRATA_MM_K = 3,
  STRATA_MM_BATCH_RANK = 4,
  STRATA_MM_BATCH_SIZES = 5,   /* [STRATA_MM_MAX_BATCH] */
  STRATA_MM_A_ADDR = 9,
  STRATA_MM_A_BATCH_STRIDES = 10, /* [STRATA_MM_MAX_BATCH] */
  STRATA_MM_A_STRIDE_M = 14,
  STRATA_MM_A_STRIDE_K = 15,
  STRATA_MM_B_ADDR = 16,
  STRATA_MM_B_BATCH_STRIDES = 17,
  STRATA_MM_B_STRIDE_K = 21,
  STRATA_MM_B_STRIDE_N = 22,
  STRATA_MM_C_ADDR = 23,
  STRATA_MM_C_BATCH_STRIDES = 24,
  STRATA_MM_C_STRIDE_M = 28,
  STRATA_MM_C_STRIDE_N = 29,
  STRATA_MM_B_LAYOUT = 30,    /* a strata_mm_layout_t */
  /* Quantization: byte addresses, 0 when absent (A_SCALES is unused). */
  STRATA_MM_A_SCALES = 31,
  STRATA_MM_B_SCALES = 32,
  STRATA_MM_B_ZERO_POINTS = 33,
  STRATA_MM_GROUP_SIZE = 34,
  STRATA_MM_BIAS = 35,
  STRATA_MM_PARAM_COUNT = 36
};
/* C += A*B instead of C = A*B. */
#define STRATA_MM_FLAG_ACCUMULATE 1

/* How B is laid out in memory. */
typedef enum strata_mm_layout_e {
  /* Element (k, n) at B_ADDR + k * B_STRIDE_K + n * B_STRIDE_N. */
  STRATA_MM_LAYOUT_STRIDED = 0,
  /* fp32 panels of STRATA_PACK_PANEL_WIDTH columns (below). */
  STRATA_MM_LAYOUT_PANEL_F32 = 1,
  /* bf16 panels of W = STRATA_PACK_PANEL_WIDTH = 32 columns over K rounded
   * up to Kp = ceil(K / 2) * 2, in pairs of rows: element (k, n) is the
   * uint16 at index
   *   (n / W) * Kp * W + (k / 2) * 2 * W + (n % W) * 2 + k % 2,
   * so a 128-byte pair-row holds rows 2t and 2t + 1 of the panel's 32
   * columns, the pair of a column in one 32-bit lane with row 2t in its
   * low half (the order of AVX512-BF16's vdpbf16ps and of AMX bf16
   * tiles). Padding rows and columns hold 0 (+0.0).
   * strata_pack_b_bf16_pairs below. */
  STRATA_MM_LAYOUT_PANEL_BF16_PAIRS = 2,
  /* int8 panels of W = STRATA_PACK_PANEL_WIDTH = 32 columns over K rounded
   * up to Kp = ceil(K / 4) * 4, in quads of 4 rows: element (k, n) at byte
   *   (n / W) * Kp * W + (k / 4) * 4 * W + (n % W) * 4 + k % 4,
   * so a 128-byte quad-row holds rows 4t..4t+3 of the panel's 32 columns,
   * the 4 rows of a column in one 32-bit lane (the order of VNNI's
   * vpdpbusd and of AMX int8 tiles). Padding rows and columns hold 0.
   * strata_pack_b_i8_quads below. */
  STRATA_MM_LAYOUT_PANEL_I8_QUADS = 3,
  /* int4 panels of W = 32 columns over K rounded up to Kp, a multiple of
   * GROUP_SIZE (itself a multiple of 4), in quads of 4 rows: quad t of
   * panel p is 64 bytes at ((p * Kp / 4) + t) * 64, byte j holding
   * q(4t + j % 4, 32p + j / 4) + 8 in its low nibble and
   * q(4t + j % 4, 32p + 16 + j / 4) + 8 in its high one (q in [-8, 7];
   * padding is q = 0). The 4 rows of a column sit in one 32-bit lane: the
   * order of VNNI's vpdpbusd. strata_pack_b_i4 below. */
  STRATA_MM_LAYOUT_PANEL_I4_GROUPS = 4,
  /* int8 panels in the geometry of PANEL_F32 (element (k, n) at byte
   * (n / W) * K * W + k * W + n % W): weight-only kernels read a panel row
   * as one 32-byte load and widen it to fp32 in registers. */
  STRATA_MM_LAYOUT_PANEL_I8 = 5,
  /* PANEL_I4_GROUPS with each group's scales beside its quads, as fp16:
   * panel p is Kp / GROUP_SIZE blocks of GROUP_SIZE * 16 + 64 bytes, block
   * g holding the GROUP_SIZE / 4 quads of rows [g * GROUP_SIZE,
   * (g + 1) * GROUP_SIZE) (each as in PANEL_I4_GROUPS), then 32 IEEE
   * binary16 scales, those of columns 32p .. 32p + 31 (0 past N). The
   * weight is one sequential stream; B_SCALES must be 0.
   * strata_pack_b_i4_f16_blocks below. */
  STRATA_MM_LAYOUT_PANEL_I4_F16_BLOCKS = 6,
} strata_mm_layout_t;

/*
 * strata_rt_attention_f32(strata_rt_context_t* context,
 *                         const int64_t* params)
 *
 * O[b, h, i, :] = softmax_j(scale * Q[b, h, i, :] . K[b, h / g, j, :]
 *                           + MASK[b, h, i, j]) V[b, h / g, j, :]
 * with g = H / HKV (grouped-query attention) over fp32 strided operands of
 * rank 4 ([batch, heads, sequence, head dim]). Key j is visible to query i
 * when (no CAUSAL or j <= i + SK - SQ) and (no WINDOW or j > i + SK - SQ -
 * WINDOW or j < SINKS); invisible keys score the lowest finite float, as
 * strata.attention defines. MASK is optional (address 0), fp32 and added;
 * its strides may be 0 to broadcast. SCALE holds the bits of an fp32 value
 * in its low 32 bits. Reserved: strata_rt_attention_bf16 (Q, K, V bf16,
 * softmax and O in fp32) with this params block.
 */
enum {
  STRATA_ATTN_FLAGS = 0,
  STRATA_ATTN_BATCH = 1,
  STRATA_ATTN_HEADS = 2,
  STRATA_ATTN_KV_HEADS = 3,
  STRATA_ATTN_SQ = 4,
  STRATA_ATTN_SK = 5,
  STRATA_ATTN_HEAD_DIM = 6,
  STRATA_ATTN_VALUE_DIM = 7,
  STRATA_ATTN_SCALE = 8,
  STRATA_ATTN_WINDOW = 9,
  STRATA_ATTN_SINKS = 10,
  /* Each operand: address, then 4 strides (batch, head, sequence, dim). */
  STRATA_ATTN_Q = 11,
  STRATA_ATTN_K = 16,
  STRATA_ATTN_V = 21,
  STRATA_ATTN_MASK = 26, /* strides: batch, head, query, key */
  STRATA_ATTN_O = 31,
  /* A cache of sequences (decode): address of BATCH int64 slots, row b
   * reading K and V at batch index slots[b] (each in [0, KV_SLOT_COUNT));
   * 0: row b reads batch b. */
  STRATA_ATTN_KV_SLOTS = 36,
  STRATA_ATTN_KV_SLOT_COUNT = 37,
  /* Address of BATCH int64 key counts, row b seeing keys [0, lengths[b])
   * of its K and V (each in [0, SK]; the causal diagonal and the window
   * follow the row's own count); 0: every row has SK keys. */
  STRATA_ATTN_KV_LENGTHS = 38,
  STRATA_ATTN_PARAM_COUNT = 39
};
#define STRATA_ATTN_FLAG_CAUSAL 1
#define STRATA_ATTN_FLAG_WINDOW 2
/* A hidden key scores the lowest finite float plus its MASK value (as
 * strata.attention's mask_hidden), instead of the lowest float alone. */
#define STRATA_ATTN_FLAG_MASK_HIDDEN 4
/* The products Q K^T and P V may read their operands rounded to bf16 (sums
 * in fp32; the softmax between them fp32): the bf16 precision policy's
 * licence, as strata.compute_type = bf16 on a contraction. A kernel may
 * ignore it and compute them in fp32. */
#define STRATA_ATTN_FLAG_BF16_PRODUCTS 8

/*
 * strata_rt_attention_kv(strata_rt_context_t* context,
 *                        const int64_t* params)
 *
 * strata_rt_attention_f32 over a compressed KV cache: the same params at
 * the same indices (0 .. STRATA_ATTN_PARAM_COUNT - 1, same semantics:
 * causal, window and sinks, mask and MASK_HIDDEN, slots, lengths, grouped
 * heads), followed by the fields below, STRATA_ATTN_KV_PARAM_COUNT in all.
 * Q, MASK and O stay fp32; K and V hold elements of KV_DTYPE, both the
 * same type, their strides counting elements of that type:
 *  - STRATA_DTYPE_F32 (or 0): as strata_rt_attention_f32;
 *  - STRATA_DTYPE_BF16: bf16 bits (strata_f32_to_bf16), widened exactly;
 *  - STRATA_DTYPE_I8: symmetric int8 with one fp32 scale per (batch index,
 *    kv head, position): element e of position j of K is
 *      K[b, h, j, e] = q[b, h, j, e] * scale[b * SB + h * SH + j * SS]
 *    with scale the float at K_SCALES and SB, SH, SS its strides in floats
 *    (V likewise with V_SCALES); b is the K/V batch index (the slot).
 * Scores are computed as scale_k(j) * dot(Q row, q(j)) and the output as
 * sum_j (p(j) * scale_v(j)) * q_v(j), in fp32: the result is attention over
 * the dequantized K and V up to fp32 rounding. strata_rt_kv_quantize
 * writes such a cache. Another KV_DTYPE, or int8 without both scale
 * addresses, ends the run (INTERNAL). strata_rt_attention_f32 keeps its
 * 39-value block (code compiled for it allocates exactly that many). Like
 * the matmul imports before them, this import and strata_rt_kv_quantize
 * were appended without a version bump: code that does not import them
 * runs as before, and a runtime that predates them refuses code that
 * does (INCOMPATIBLE when it binds the imports).
 */
enum {
  STRATA_ATTN_KV_DTYPE = 39, /* a strata_dtype_t: F32 (or 0), I8, BF16 */
  /* Each: address of fp32 scales, then 3 strides (batch, head, sequence). */
  STRATA_ATTN_K_SCALES = 40,
  STRATA_ATTN_V_SCALES = 44,
  STRATA_ATTN_KV_PARAM_COUNT = 48
};

/*
 * strata_rt_attention_ring(strata_rt_context_t* context,
 *                          const int64_t* params)
 *
 * strata_rt_attention_kv over a ring-buffer cache (the sliding-window
 * layers' cache: a sequence's first RING_KEPT positions, its sinks, and its
 * last RING_ROWS - RING_KEPT ones): the same params at the same indices,
 * then the two below, STRATA_ATTN_RING_PARAM_COUNT in all. Key j of a row
 * (position j of its sequence) is at sequence index
 *   j                                          for j < RING_KEPT,
 *   RING_KEPT + (j - RING_KEPT) % (RING_ROWS - RING_KEPT)   otherwise
 * of K and V (whose sequence dims hold RING_ROWS rows); SK bounds the
 * lengths, not the rows. CAUSAL, WINDOW and KV_LENGTHS are required, and
 * SINKS <= RING_KEPT < RING_ROWS and SQ + WINDOW - 1 <= RING_ROWS -
 * RING_KEPT (every key a query row sees still in the ring after the SQ new
 * ones were written); anything else ends the run (INTERNAL). A new import
 * rather than a flag, so that a runtime without rings refuses the code.
 */
enum {
  STRATA_ATTN_RING_KEPT = 48,
  STRATA_ATTN_RING_ROWS = 49,
  STRATA_ATTN_RING_PARAM_COUNT = 50
};

/*
 * strata_rt_attention_global(strata_rt_context_t* context,
 *                            const int64_t* params)
 *
 * strata_rt_attention_kv with top-k global key blocks (block-sparse global
 * attention beside a sliding window): the same params at the same indices,
 * then the two below, STRATA_ATTN_GLOBAL_PARAM_COUNT in all. With L the
 * row's key count and last = i + L - SQ query i's own key, key block c is
 * keys [c * BLOCK, (c + 1) * BLOCK); it is a candidate for query i when
 * SINKS < (c + 1) * BLOCK <= last - WINDOW + 1 (wholly before the window,
 * not wholly among the sinks), and its score for query head h is
 *   Q[b, h, i, :] . sum_{j in block c} K[b, h / g, j, :]
 * (dequantized keys; the block sum is formed in fp32, the order of its
 * terms unspecified). Query i of head h also sees the keys of the TOPK
 * candidates that score highest (ties to the lower c). CAUSAL and WINDOW
 * are required, TOPK >= 1 and BLOCK >= 1; anything else ends the run
 * (INTERNAL). A new import rather than a flag, so that a runtime without
 * global blocks refuses the code.
 */
enum {
  STRATA_ATTN_GLOBAL_TOPK = 48,
  STRATA_ATTN_GLOBAL_BLOCK = 49,
  STRATA_ATTN_GLOBAL_PARAM_COUNT = 50
};

/*
 * strata_rt_attention_paged(strata_rt_context_t* context,
 *                           const int64_t* params)
 *
 * strata_rt_attention_kv over a paged cache: the same params at the same
 * indices, then the four below, STRATA_ATTN_PAGED_PARAM_COUNT in all. K and
 * V are pools of BLOCK_COUNT blocks of BLOCK_SIZE positions each
 * ([blocks, kv heads, BLOCK_SIZE, dim]: the batch strides of K, V and the
 * int8 scales step from block to block, the sequence strides through a
 * block's positions). Position j of batch row b lies in block
 *   BLOCK_TABLE[b * BLOCKS_PER_ROW + j / BLOCK_SIZE]
 * at position j % BLOCK_SIZE of it. KV_LENGTHS is required and KV_SLOTS
 * must be 0 (the table names each row's blocks); every block a row's
 * length reaches must lie in [0, BLOCK_COUNT) and the length within
 * BLOCKS_PER_ROW * BLOCK_SIZE; anything else ends the run (INTERNAL).
 * Blocks may be shared between rows (a common prefix); the kernel only
 * reads them. A new import rather than a flag, so that a runtime without
 * paging refuses the code.
 */
enum {
  STRATA_ATTN_BLOCK_TABLE = 48, /* address of BATCH * BLOCKS_PER_ROW int64 */
  STRATA_ATTN_BLOCKS_PER_ROW = 49,
  STRATA_ATTN_BLOCK_SIZE = 50,
  STRATA_ATTN_BLOCK_COUNT = 51,
  STRATA_ATTN_PAGED_PARAM_COUNT = 52
};

/*
 * strata_rt_all_reduce_f32(strata_rt_context_t* context,
 *                          const int64_t* params)
 * strata_rt_all_gather_f32(strata_rt_context_t* context,
 *                          const int64_t* params)
 *
 * The collectives of a tensor-parallel rank (an artifact with a PARALLEL
 * section), over the communicator the session was given; RANKS is the
 * group size the code was compiled for. IN is an fp32 tensor viewed as
 * rank 4 (a lower rank padded with leading dims of 1) with SIZES and
 * STRIDES (in elements); OUT a contiguous fp32 buffer the code allocated.
 *  - all_reduce: OUT (IN's sizes) = the elementwise sum over the ranks of
 *    their IN, added in rank order (rank 0's + rank 1's + ...) so that
 *    every rank holds the same bits whatever the transport.
 *  - all_gather: OUT has IN's sizes but SIZES[AXIS] * RANKS along AXIS;
 *    rank r's IN lies at [r * SIZES[AXIS], (r + 1) * SIZES[AXIS]) there.
 * Every rank of the group must call the same collectives in the same
 * order with the same sizes. A run without a communicator, with one whose
 * size is not RANKS, or whose transport fails ends (FAILED_PRECONDITION,
 * UNAVAILABLE); an AXIS outside [0, 4) ends it (INTERNAL).
 */
enum {
  STRATA_COLL_IN = 0,      /* address of IN's element 0 */
  STRATA_COLL_SIZES = 1,   /* 4 sizes */
  STRATA_COLL_STRIDES = 5, /* 4 strides, in elements */
  STRATA_COLL_OUT = 9,     /* address of OUT's element 0 (contiguous) */
  STRATA_COLL_AXIS = 10,   /* all_gather: the dim the ranks' parts stack on */
  STRATA_COLL_RANKS = 11,
  STRATA_COLL_PARAM_COUNT = 12
};

/*
 * strata_rt_send_f32(strata_rt_context_t* context, const int64_t* params)
 * strata_rt_recv_extents_f32(strata_rt_context_t* context,
 *                            const int64_t* params)
 * strata_rt_recv_f32(strata_rt_context_t* context, const int64_t* params)
 *
 * The hand-over between the pipeline stages of a split model (an artifact
 * whose PARALLEL section has 2 or more pipeline stages): stage s's rank of
 * tensor rank t sends to, and receives from, stage STAGE's rank of the same
 * tensor rank (world rank STAGE * tensor_ranks + t), over the session's
 * communicator. BUF is an fp32 tensor viewed as rank 4 (leading dims of 1)
 * with SIZES.
 *  - send: two messages, BUF's 4 SIZES (int64) and then its elements,
 *    read with STRIDES (in elements).
 *  - recv_extents: takes the first message; the int64[4] at EXTENTS holds
 *    the sizes the code expects (-1 for a dynamic dim), and a message that
 *    differs in one it fixes ends the run; on return it holds the
 *    message's (the code allocates BUF from them).
 *  - recv: takes the second message into BUF, contiguous with SIZES
 *    (STRIDES ignored); a message of another byte count ends the run.
 * Sender and receiver call in the same order. A run without a
 * communicator able to send and receive, a STAGE that is not another stage
 * of the model, negative or overflowing sizes, or a failed transport ends
 * the run (FAILED_PRECONDITION, INTERNAL, DATA_LOSS, UNAVAILABLE).
 */
enum {
  STRATA_P2P_BUF = 0,     /* address of BUF's element 0 */
  STRATA_P2P_SIZES = 1,   /* 4 sizes */
  STRATA_P2P_STRIDES = 5, /* 4 strides, in elements (send) */
  STRATA_P2P_STAGE = 9,   /* the peer's pipeline stage */
  STRATA_P2P_EXTENTS = 10, /* recv_extents: address of an int64[4] */
  STRATA_P2P_PARAM_COUNT = 11
};

/*
 * strata_rt_attention_append(strata_rt_context_t* context,
 *                            const int64_t* params)
 *
 * strata_rt_attention_f32 whose K and V are each the concatenation along
 * the sequence of a past and a new part (how a with-past export grows its
 * cache: present = Concat(past, new)), and which also writes that
 * concatenation out. The STRATA_ATTN_* params at the same indices, with K
 * and V the past parts and SK the keys of past and new together, then the
 * fields below, STRATA_ATTN_APPEND_PARAM_COUNT in all. Key j is row j of K
 * (V) for j < PAST and row j - PAST of K_NEW (V_NEW) after; every key's
 * row is also written to row j of K_PRESENT (V_PRESENT), fp32 strided
 * [BATCH, KV_HEADS, SK, HEAD_DIM] ([.., VALUE_DIM]), which must not overlap
 * any input. KV_SLOTS and KV_LENGTHS must be 0 and PAST in [0, SK]; anything
 * else ends the run (INTERNAL). Reading the past rows once for both the
 * products and the copy, the copy written around the caches, saves a pass
 * over the past and the read for ownership of the present.
 */
enum {
  /* K_NEW, V_NEW, K_PRESENT, V_PRESENT: address, 4 strides each. */
  STRATA_ATTN_K_NEW = 39,
  STRATA_ATTN_V_NEW = 44,
  STRATA_ATTN_K_PRESENT = 49,
  STRATA_ATTN_V_PRESENT = 54,
  STRATA_ATTN_PAST = 59,
  STRATA_ATTN_APPEND_PARAM_COUNT = 60
};

/*
 * strata_rt_kv_quantize(strata_rt_context_t* context, const int64_t* params)
 *
 * Writes fp32 rows X[b, h, r, :] (b < BATCH, h < KV_HEADS, r < ROWS, each
 * HEAD_DIM values; strided) into a KV cache of DTYPE elements (the layouts
 * strata_rt_attention_kv reads) at slot s = slots[b] (SLOTS 0: s = b),
 * position t = start(b) + r, start(b) = positions[b] (POSITIONS 0: START for
 * every b). Each s must lie in [0, SLOT_COUNT) and [start(b), start(b) +
 * ROWS) in [0, CAPACITY): generated code checks both first
 * (STRATA_CHECK_CACHE_SLOT, STRATA_CHECK_CACHE_POSITIONS), so other values
 * end the run (INTERNAL), as does an unknown DTYPE or int8 without SCALES.
 *  - STRATA_DTYPE_F32 (or 0): copied; SCALES ignored.
 *  - STRATA_DTYPE_BF16: strata_f32_to_bf16 of each value; SCALES ignored.
 *  - STRATA_DTYPE_I8: per row (one token of one head), in fp32:
 *      amax = max_e |x(e)|,  scale = amax / 127,  inv = 127 / amax (0 when
 *      amax is 0),  y(e) = clamp(x(e) * inv, -127, 127),
 *      q(e) = trunc(y(e) + 0.5) if y(e) >= 0, else trunc(y(e) - 0.5)
 *             (halves away from zero; the sum is rounded in fp32),
 *    where a NaN x(e) gives q(e) = 0 (amax skips it); scale is written to
 *    SCALES[s * SB + h * SH + t * SS] (strides in floats). An all-zero row
 *    gives q = 0 and scale 0. A row holding a NaN or an infinity gets
 *    scale +inf, so each of its dequantized values q * scale is an
 *    infinity or a NaN: attention reads that token as non-finite, as it
 *    would read the fp32 row. No NaN or infinity is ever converted to an
 *    integer.
 * Every ISA writes the same bytes and scales.
 */
enum {
  STRATA_KVQ_DTYPE = 0, /* a strata_dtype_t: F32 (or 0), I8, BF16 */
  STRATA_KVQ_BATCH = 1,
  STRATA_KVQ_KV_HEADS = 2,
  STRATA_KVQ_ROWS = 3,
  STRATA_KVQ_HEAD_DIM = 4,
  STRATA_KVQ_SRC = 5,     /* fp32: address, strides batch, head, row, dim */
  STRATA_KVQ_DST = 10,    /* cache: address, strides slot, head, position,
                             dim (in elements of DTYPE) */
  STRATA_KVQ_SCALES = 15, /* address, strides slot, head, position */
  STRATA_KVQ_SLOTS = 19,  /* address of BATCH int64, or 0 */
  STRATA_KVQ_SLOT_COUNT = 20,
  STRATA_KVQ_POSITIONS = 21, /* address of BATCH int64, or 0 */
  STRATA_KVQ_START = 22,
  STRATA_KVQ_CAPACITY = 23, /* positions per slot and head */
  STRATA_KVQ_PARAM_COUNT = 24
};

/*
 * strata_rt_kv_quantize_paged(strata_rt_context_t* context,
 *                             const int64_t* params)
 *
 * strata_rt_kv_quantize into a paged cache (the layout
 * strata_rt_attention_paged reads): the same params at the same indices,
 * then the four below, STRATA_KVQ_PAGED_PARAM_COUNT in all. Position t of
 * row b is written to block BLOCK_TABLE[b * BLOCKS_PER_ROW + t / BLOCK_SIZE]
 * at position t % BLOCK_SIZE of it: DST's and SCALES' slot strides step
 * from block to block, their position strides through a block. SLOTS must
 * be 0, CAPACITY is BLOCKS_PER_ROW * BLOCK_SIZE, and every block written
 * must lie in [0, BLOCK_COUNT); anything else ends the run (INTERNAL).
 * Two rows must not write the same block position in one call.
 */
enum {
  STRATA_KVQ_BLOCK_TABLE = 24, /* address of BATCH * BLOCKS_PER_ROW int64 */
  STRATA_KVQ_BLOCKS_PER_ROW = 25,
  STRATA_KVQ_BLOCK_SIZE = 26,
  STRATA_KVQ_BLOCK_COUNT = 27,
  STRATA_KVQ_PAGED_PARAM_COUNT = 28
};

/*
 * strata_rt_check_failed(strata_rt_context_t* context, const char* node,
 *                        const char* input, int64_t kind, int64_t a,
 *                        int64_t b, int64_t c)
 *
 * Called by an entry function, on the thread that called the entry and
 * never from inside a parallel task, when a run-time check on input values
 * or data-dependent shapes fails (an index out of range, extents that do
 * not broadcast, ...). It does not return: the runtime ends the run there
 * (a non-local return to where it called the entry; generated frames hold
 * no resources, and every buffer the run allocated is taken back), and
 * strata_session_run returns INVALID_ARGUMENT with a message built from
 * |kind| and its values (below), naming ONNX node |node| and, when the
 * checked tensor is a model input, that input (|input|, else ""). Both are
 * NUL-terminated strings in the code section. Checks sit right before the
 * op they guard, so a failing run never executes it.
 */
typedef enum strata_check_kind_e {
  /* index a is outside [b, c] (ONNX: negative indices count from the end) */
  STRATA_CHECK_INDEX_RANGE = 1,
  /* extent a of an operand does not broadcast to extent b (output dim c) */
  STRATA_CHECK_BROADCAST = 2,
  /* a elements cannot be reshaped into a shape of b elements */
  STRATA_CHECK_RESHAPE = 3,
  /* integer division or remainder by zero */
  STRATA_CHECK_DIVISION_BY_ZERO = 4,
  /* an extent computed from data, a, is outside [b, c] */
  STRATA_CHECK_EXTENT_RANGE = 5,
  /* extent a cannot be expanded to extent b (output dim c) */
  STRATA_CHECK_EXPAND = 6,
  /* extents a and b must be equal (operand dim c) */
  STRATA_CHECK_EXTENT_MISMATCH = 7,
  /* KV cache slot a is outside [0, b) */
  STRATA_CHECK_CACHE_SLOT = 8,
  /* KV cache positions [a, b) fall outside the context [0, c) */
  STRATA_CHECK_CACHE_POSITIONS = 9,
  /* a new rows at once exceed the b a ring-buffer KV cache holds */
  STRATA_CHECK_CACHE_RING = 10,
} strata_check_kind_t;

/* The largest extent a dim computed from tensor values (Range, Expand,
 * ConstantOfShape, Tile, Reshape targets) may take; larger ones fail with
 * STRATA_CHECK_EXTENT_RANGE instead of sizing a buffer. */
#define STRATA_MAX_DATA_EXTENT ((int64_t)1 << 31)

/*
 * Packed panel layout of a K x N fp32 weight: ceil(N / W) panels of W =
 * STRATA_PACK_PANEL_WIDTH columns; panel p holds rows k = 0..K-1 of columns
 * p*W .. p*W+W-1, each row W contiguous floats, columns past N zero. So
 * element (k, n) is at  (n / W) * K * W + k * W + n % W,  and the packed
 * weight has ceil(N / W) * K * W floats. One layout for every ISA: AVX-512
 * reads a panel row as 2 vectors, AVX2 as 4.
 */
#define STRATA_PACK_PANEL_WIDTH 32

static inline uint64_t strata_packed_b_f32_elements(int64_t k, int64_t n) {
  return (uint64_t)((n + STRATA_PACK_PANEL_WIDTH - 1) /
                    STRATA_PACK_PANEL_WIDTH) *
         (uint64_t)k * STRATA_PACK_PANEL_WIDTH;
}

/* Reference packing (compile time, tests): B(k, n) = src[k*sk + n*sn]. */
static inline void strata_pack_b_f32(const float* src, int64_t k, int64_t n,
                                     int64_t sk, int64_t sn, float* dst) {
  const int64_t w = STRATA_PACK_PANEL_WIDTH;
  for (int64_t p = 0; p * w < n; ++p)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < w; ++j) {
        int64_t col = p * w + j;
        dst[(p * k + kk) * w + j] = col < n ? src[kk * sk + col * sn] : 0.0f;
      }
}

/* int8 panels (STRATA_MM_LAYOUT_PANEL_I8) of a K x N int8 weight with
 * element (k, n) at src[k*sk + n*sn]; as strata_pack_b_f32, one byte an
 * element, columns past N zero. */
static inline void strata_pack_b_i8(const int8_t* src, int64_t k, int64_t n,
                                    int64_t sk, int64_t sn, int8_t* dst) {
  const int64_t w = STRATA_PACK_PANEL_WIDTH;
  for (int64_t p = 0; p * w < n; ++p)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < w; ++j) {
        int64_t col = p * w + j;
        dst[(p * k + kk) * w + j] = col < n ? src[kk * sk + col * sn] : 0;
      }
}

/* The activation group of strata_rt_matmul_f32_i8 on PANEL_I8_QUADS
 * weights with GROUP_SIZE |group| (a multiple of 16): 32 k where it
 * divides the group (the block llama.cpp's Q8_0 quantizes activations in;
 * the int8 step of an activation outlier stays inside its block), else 16. */
static inline int64_t strata_i8_activation_group(int64_t group) {
  return group % 32 == 0 ? 32 : 16;
}

/* Bytes of a K x N int8 weight in STRATA_MM_LAYOUT_PANEL_I8_QUADS. */
static inline uint64_t strata_packed_b_i8_quads_bytes(int64_t k, int64_t n) {
  const int64_t w = STRATA_PACK_PANEL_WIDTH;
  return (uint64_t)((n + w - 1) / w) * (uint64_t)((k + 3) / 4 * 4) * w;
}

/* PANEL_I8_QUADS packing of a K x N int8 weight with element (k, n) at
 * src[k*sk + n*sn]; padding rows and columns hold 0. */
static inline void strata_pack_b_i8_quads(const int8_t* src, int64_t k,
                                          int64_t n, int64_t sk, int64_t sn,
                                          int8_t* dst) {
  const int64_t w = STRATA_PACK_PANEL_WIDTH;
  const int64_t kp = (k + 3) / 4 * 4;
  for (int64_t p = 0; p * w < n; ++p)
    for (int64_t kk = 0; kk < kp; ++kk)
      for (int64_t j = 0; j < w; ++j) {
        const int64_t col = p * w + j;
        dst[p * kp * w + (kk / 4) * 4 * w + j * 4 + kk % 4] =
            kk < k && col < n ? src[kk * sk + col * sn] : 0;
      }
}

/* The bf16 bits of fp32 |x|, as strata_pack_b_bf16_pairs packs weights and
 * strata_rt_matmul_f32_bf16 rounds A: to nearest, ties to even; values
 * past the largest bf16 become infinities; a NaN stays a NaN (sign and top
 * payload bits kept, quiet bit set); an fp32 denormal becomes a zero of
 * its sign (as vcvtne2ps2bf16 does), so no bf16 denormal ever arises. */
static inline uint16_t strata_f32_to_bf16(float x) {
  union { float f; uint32_t u; } v;
  v.f = x;
  if ((v.u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((v.u >> 16) | 0x40u);
  if ((v.u & 0x7f800000u) == 0) return (uint16_t)((v.u >> 16) & 0x8000u);
  return (uint16_t)((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);
}

/* uint16 elements of a K x N weight in STRATA_MM_LAYOUT_PANEL_BF16_PAIRS. */
static inline uint64_t strata_packed_b_bf16_pairs_elements(int64_t k,
                                                           int64_t n) {
  const int64_t w = STRATA_PACK_PANEL_WIDTH;
  return (uint64_t)((n + w - 1) / w) * (uint64_t)((k + 1) / 2 * 2) * w;
}

/* PANEL_BF16_PAIRS packing of a K x N fp32 weight with element (k, n) at
 * src[k*sk + n*sn], each rounded by strata_f32_to_bf16; padding rows and
 * columns hold 0. */
static inline void strata_pack_b_bf16_pairs(const float* src, int64_t k,
                                            int64_t n, int64_t sk,
                                            int64_t sn, uint16_t* dst) {
  const int64_t w = STRATA_PACK_PANEL_WIDTH;
  const int64_t kp = (k + 1) / 2 * 2;
  for (int64_t p = 0; p * w < n; ++p)
    for (int64_t kk = 0; kk < kp; ++kk)
      for (int64_t j = 0; j < w; ++j) {
        const int64_t col = p * w + j;
        dst[p * kp * w + (kk / 2) * 2 * w + j * 2 + kk % 2] =
            kk < k && col < n ? strata_f32_to_bf16(src[kk * sk + col * sn])
                              : (uint16_t)0;
      }
}

/* Bytes of a K x N int4 weight in STRATA_MM_LAYOUT_PANEL_I4_GROUPS. */
static inline uint64_t strata_packed_b_i4_bytes(int64_t k, int64_t n,
                                                int64_t group) {
  const int64_t w = STRATA_PACK_PANEL_WIDTH;
  const int64_t kp = (k + group - 1) / group * group;
  return (uint64_t)((n + w - 1) / w) * (uint64_t)kp * w / 2;
}

/* Quad t of panel p of a K x N int4 weight (values in [-8, 7], element
 * (k, n) at src[k*sk + n*sn]) as 64 bytes at |dst| (PANEL_I4_GROUPS). */
static inline void strata_pack_i4_quad(const int8_t* src, int64_t k,
                                       int64_t n, int64_t sk, int64_t sn,
                                       int64_t p, int64_t t, uint8_t* dst) {
  const int64_t w = STRATA_PACK_PANEL_WIDTH;
  for (int64_t j = 0; j < 64; ++j) {
    const int64_t row = 4 * t + j % 4;
    const int64_t lo = p * w + j / 4, hi = lo + 16;
    int lov = row < k && lo < n ? src[row * sk + lo * sn] : 0;
    int hiv = row < k && hi < n ? src[row * sk + hi * sn] : 0;
    dst[j] = (uint8_t)((lov + 8) | ((hiv + 8) << 4));
  }
}

/* PANEL_I4_GROUPS packing of a K x N weight of values in [-8, 7] with
 * element (k, n) at src[k*sk + n*sn]. */
static inline void strata_pack_b_i4(const int8_t* src, int64_t k, int64_t n,
                                    int64_t sk, int64_t sn, int64_t group,
                                    uint8_t* dst) {
  const int64_t w = STRATA_PACK_PANEL_WIDTH;
  const int64_t kp = (k + group - 1) / group * group;
  for (int64_t p = 0; p * w < n; ++p)
    for (int64_t t = 0; t < kp / 4; ++t)
      strata_pack_i4_quad(src, k, n, sk, sn, p, t,
                          dst + (p * (kp / 4) + t) * 64);
}

/* The IEEE binary16 bits of fp32 |x|, rounded to nearest, ties to even
 * (subnormal results included); values that round past 65504 become
 * infinities; a NaN stays a quiet NaN of its sign. */
static inline uint16_t strata_f32_to_f16(float x) {
  union { float f; uint32_t u; } v;
  v.f = x;
  const uint16_t sign = (uint16_t)((v.u >> 16) & 0x8000u);
  const uint32_t a = v.u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  uint32_t q, rem, half;
  if (a >= 0x38800000u) {  /* a normal binary16: rebias, drop 13 bits */
    const uint32_t r = a - 0x38000000u;
    q = r >> 13;
    rem = r & 0x1fffu;
    half = 0x1000u;
  } else {  /* a subnormal one (or 0): units of 2^-24 */
    const uint32_t e = a >> 23;
    if (e < 102) return sign;  /* below 2^-25: rounds to 0 */
    const uint32_t m = (a & 0x7fffffu) | 0x800000u, shift = 126 - e;
    q = m >> shift;
    rem = m & ((1u << shift) - 1u);
    half = 1u << (shift - 1u);
  }
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return (uint16_t)(sign | q);
}

/* The fp32 value of binary16 bits |h| (exact: every binary16 value is an
 * fp32 value). */
static inline float strata_f16_to_f32(uint16_t h) {
  union { float f; uint32_t u; } v;
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) {
    v.u = sign | 0x7f800000u | (m << 13);
  } else if (e != 0) {
    v.u = sign | ((e + 112u) << 23) | (m << 13);
  } else {
    v.f = (float)m * 5.9604644775390625e-08f;  /* m * 2^-24, exact */
    v.u |= sign;
  }
  return v.f;
}

/* Bytes of a K x N int4 weight in STRATA_MM_LAYOUT_PANEL_I4_F16_BLOCKS. */
static inline uint64_t strata_packed_b_i4_f16_blocks_bytes(int64_t k,
                                                           int64_t n,
                                                           int64_t group) {
  const int64_t w = STRATA_PACK_PANEL_WIDTH;
  const int64_t groups = (k + group - 1) / group;
  return (uint64_t)((n + w - 1) / w) * (uint64_t)groups *
         (uint64_t)(group * 16 + 64);
}

/* PANEL_I4_F16_BLOCKS packing of a K x N weight of values in [-8, 7] with
 * element (k, n) at src[k*sk + n*sn] and fp32 scales
 * scales[g * N + n] (ceil(K / group) rows), each rounded by
 * strata_f32_to_f16. */
static inline void strata_pack_b_i4_f16_blocks(const int8_t* src, int64_t k,
                                               int64_t n, int64_t sk,
                                               int64_t sn, int64_t group,
                                               const float* scales,
                                               uint8_t* dst) {
  const int64_t w = STRATA_PACK_PANEL_WIDTH;
  const int64_t groups = (k + group - 1) / group;
  for (int64_t p = 0; p * w < n; ++p)
    for (int64_t g = 0; g < groups; ++g) {
      uint8_t* block = dst + (p * groups + g) * (group * 16 + 64);
      for (int64_t t = 0; t < group / 4; ++t)
        strata_pack_i4_quad(src, k, n, sk, sn, p, g * group / 4 + t,
                            block + t * 64);
      for (int64_t j = 0; j < w; ++j) {
        const uint16_t h = p * w + j < n
                               ? strata_f32_to_f16(scales[g * n + p * w + j])
                               : (uint16_t)0;
        block[group * 16 + 2 * j] = (uint8_t)(h & 0xffu);
        block[group * 16 + 2 * j + 1] = (uint8_t)(h >> 8);
      }
    }
}

/*
 * strata_rt_conv_f32(strata_rt_context_t* context, const int64_t* params)
 *
 * A channels-last fp32 convolution with one group, params at the
 * STRATA_CONV_* indices: out[n, o..., m] = bias[m] + sum over taps t and
 * channels c of in[n, o * stride + t * dilation - pad_begin, c] * W[t, c,
 * m] (zero outside the input), plus residual[n, o..., m] where
 * STRATA_CONV_RESIDUAL is an address (0: none), then max(0, .) with
 * STRATA_CONV_FLAG_RELU.
 * D = STRATA_CONV_SPATIAL (1..3) spatial dims; the per-dim fields hold D
 * values. The input [N, S..., C] and the output [N, O..., M] are
 * contiguous at byte addresses (a residual too, shaped as the output:
 * either the output's own address, which the result is then written over,
 * or not overlapping it; the input never overlaps the output); the weight,
 * [K..., C, M] read as a (K * C)
 * x M matrix, is packed at compile time in STRATA_MM_LAYOUT_PANEL_F32;
 * bias (M floats) is an address or 0. The runtime multiplies the
 * convolution's columns (row: an output position, k: a tap's channel)
 * block by block, gathered from the input as it goes, with the matmul's
 * fp32 tiles.
 */
enum {
  STRATA_CONV_FLAGS = 0,
  STRATA_CONV_BATCH = 1,         /* N */
  STRATA_CONV_SPATIAL = 2,       /* D */
  STRATA_CONV_CHANNELS = 3,      /* C */
  STRATA_CONV_OUT_CHANNELS = 4,  /* M */
  STRATA_CONV_IN_SIZES = 5,      /* [3] S */
  STRATA_CONV_OUT_SIZES = 8,     /* [3] O */
  STRATA_CONV_KERNEL = 11,       /* [3] K */
  STRATA_CONV_STRIDES = 14,      /* [3] */
  STRATA_CONV_DILATIONS = 17,    /* [3] */
  STRATA_CONV_PADS_BEGIN = 20,   /* [3] */
  STRATA_CONV_INPUT = 23,
  STRATA_CONV_WEIGHT = 24,
  STRATA_CONV_BIAS = 25,
  STRATA_CONV_OUTPUT = 26,
  STRATA_CONV_RESIDUAL = 27,
  STRATA_CONV_PARAM_COUNT = 28
};
/* max(0, x) on every output element, after the bias and residual. */
#define STRATA_CONV_FLAG_RELU 1

/*
 * strata_rt_conv_f32_winograd(strata_rt_context_t* context,
 *                             const int64_t* params)
 *
 * The same convolution as strata_rt_conv_f32, with the same params, for a
 * 2-D 3 x 3 kernel with unit strides and dilations, computed with
 * Winograd's F(2 x 2, 3 x 3) algorithm: 16 products per channel pair for
 * each 2 x 2 block of outputs instead of 36. The weight is its transform U
 * (strata_winograd_f23_weight), a (16 * C) x M matrix whose row
 * point * C + c holds G w[., ., c, .] G^T at |point| (row-major in the 4 x
 * 4 transform), packed in STRATA_MM_LAYOUT_PANEL_F32.
 */
/* Rows of the transformed weight per input channel. */
#define STRATA_WINOGRAD_F23_POINTS 16

/* The transform U (16 x C x M floats, point-major) of a 3 x 3 weight
 * w[3][3][C][M]: U[point][c][m] = (G g G^T)[point / 4][point % 4] with
 * g = w[., ., c, m] and G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1],
 * computed in double and rounded once. */
static inline void strata_winograd_f23_weight(const float* w, int64_t c,
                                              int64_t m, float* u) {
  const int64_t plane = c * m;
  for (int64_t i = 0; i < plane; ++i) {
    double g[3][3], gg[4][3];
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) g[r][s] = (double)w[(r * 3 + s) * plane + i];
    for (int s = 0; s < 3; ++s) {
      gg[0][s] = g[0][s];
      gg[1][s] = 0.5 * (g[0][s] + g[1][s] + g[2][s]);
      gg[2][s] = 0.5 * (g[0][s] - g[1][s] + g[2][s]);
      gg[3][s] = g[2][s];
    }
    for (int r = 0; r < 4; ++r) {
      const double row[4] = {gg[r][0], 0.5 * (gg[r][0] + gg[r][1] + gg[r][2]),
                             0.5 * (gg[r][0] - gg[r][1] + gg[r][2]), gg[r][2]};
      for (int s = 0; s < 4; ++s) u[(r * 4 + s) * plane + i] = (float)row[s];
    }
  }
}

/* Element types, as recorded in the manifest (values never change). New
 * values are only appended; that leaves the calling convention as it is, so
 * it keeps STRATA_KERNEL_ABI_VERSION (a runtime that predates a value
 * refuses a manifest using it as an unknown dtype). */
typedef enum strata_dtype_e {
  STRATA_DTYPE_F32 = 1,
  STRATA_DTYPE_F16 = 2,
  STRATA_DTYPE_BF16 = 3,
  STRATA_DTYPE_F64 = 4,
  STRATA_DTYPE_I8 = 5,
  STRATA_DTYPE_I16 = 6,
  STRATA_DTYPE_I32 = 7,
  STRATA_DTYPE_I64 = 8,
  STRATA_DTYPE_U8 = 9,
  STRATA_DTYPE_U16 = 10,
  STRATA_DTYPE_U32 = 11,
  STRATA_DTYPE_U64 = 12,
  STRATA_DTYPE_BOOL = 13, /* one byte per element, 0 or 1 */
  /* fp8: one byte per element, the raw code of the format (ONNX FLOAT8*). */
  STRATA_DTYPE_F8E4M3FN = 14,
  STRATA_DTYPE_F8E4M3FNUZ = 15,
  STRATA_DTYPE_F8E5M2 = 16,
  STRATA_DTYPE_F8E5M2FNUZ = 17,
  /* 4-bit types: one element per byte (not packed two to a byte); the low
   * four bits hold the value (two's complement for I4, the E2M1 code for
   * F4E2M1) and the high four bits are not part of it. Generated code
   * ignores them when it reads an input and may leave any value there in
   * an output. */
  STRATA_DTYPE_I4 = 18,
  STRATA_DTYPE_U4 = 19,
  STRATA_DTYPE_F4E2M1 = 20,
} strata_dtype_t;

/* Size in bytes of one element of |dtype|, 0 if unknown. */
static inline uint32_t strata_dtype_size(uint32_t dtype) {
  switch (dtype) {
    case STRATA_DTYPE_F32: case STRATA_DTYPE_I32: case STRATA_DTYPE_U32:
      return 4;
    case STRATA_DTYPE_F16: case STRATA_DTYPE_BF16: case STRATA_DTYPE_I16:
    case STRATA_DTYPE_U16:
      return 2;
    case STRATA_DTYPE_F64: case STRATA_DTYPE_I64: case STRATA_DTYPE_U64:
      return 8;
    case STRATA_DTYPE_I8: case STRATA_DTYPE_U8: case STRATA_DTYPE_BOOL:
    case STRATA_DTYPE_F8E4M3FN: case STRATA_DTYPE_F8E4M3FNUZ:
    case STRATA_DTYPE_F8E5M2: case STRATA_DTYPE_F8E5M2FNUZ:
    case STRATA_DTYPE_I4: case STRATA_DTYPE_U4: case STRATA_DTYPE_F4E2M1:
      return 1;
    default:
      return 0;
  }
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_CODEGEN_ABI_STRATA_KERNEL_ABI_H_ */
