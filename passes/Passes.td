//===- Passes.td - Strata pass definitions ---------------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0
// Every strata pass, grouped by stage and alphabetical within a group
// (STYLE.md §6). Each has a lit test in test/passes/<flag without strata->.mlir.

#ifndef STRATA_PASSES_PASSES_TD
#define STRATA_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Import cleanup
//===----------------------------------------------------------------------===//

def FoldShapeArithmeticPass : InterfacePass<"strata-fold-shape-arithmetic",
                                            "mlir::FunctionOpInterface"> {
  let summary = "fold shape-tensor arithmetic and refine result types";
  let description = [{
    Exporters compute sizes through shape tensors (`Shape -> Gather ->
    Unsqueeze -> Concat -> Reshape/Expand`), so an imported graph carries
    dynamic dims that the weights fix (head counts, head sizes). This pass
    reads that arithmetic symbolically (an element of a shape tensor is
    `constant + sum(coeff * extent)`; equal ONNX dim names of the arguments
    are one extent) and, in program order:

    - refines every strata op's result type from its operands: broadcasts,
      matmuls, transposes, concats, slices with constant bounds, gathers,
      reductions, attention, and reshapes, expands, constant_of_shape and
      tiles whose shape elements are known; a reshape's `-1` is inferred
      when the other entries cancel the input's symbolic extents
      (`[B, S, 64] -> [B, S, -1, 16]` gives `4`);
    - replaces a 0-D or 1-D integer value whose elements are all constant
      (at most 64) with a `strata.constant`.

    Values returned from the function, or used by ops of other dialects,
    keep their type through a `tensor.cast`. Canonicalization then drops
    the shape operands of reshapes that became static and the dead shape
    arithmetic.

    ```mlir
    %s = strata.shape %x : tensor<?x?x64xf32> -> tensor<3xi64>
    %b = strata.gather %s, %c0 ...   %n = strata.gather %s, %c1 ...
    %shape = strata.concat %b1, %n1, %minus1, %c16 ...
    %y = strata.reshape %x, %shape : (...) -> tensor<?x?x?x16xf32>
    // becomes
    %y = strata.reshape %x, %shape : (...) -> tensor<?x?x4x16xf32>
    ```
  }];
  let dependentDialects = ["::strata::ir::StrataDialect",
                           "::mlir::tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

def SplitPrefillDecodePass : Pass<"strata-split-prefill-decode",
                                  "mlir::ModuleOp"> {
  let summary = "add prefill and decode entries over a KV cache to a causal "
                "decoder";
  let description = [{
    When `main` is a causal decoder (an `input_ids` input, a `logits`
    output of rank 3, fused causal attention), adds entries `prefill` and
    `decode` with the generation contract's inputs and outputs
    (docs/design/prefill-decode.md), sharing `main`'s weights. Each
    attention's new keys and values (the second operand of a
    `concat(past, new)` on the sequence axis, or the key and value of a
    graph without past) are written into a per-layer cache state tensor
    `[slots, kv_heads, context, head_dim]` by `strata.cache_write`, and
    `strata.cache_attention` reads it; `kv-cache=bf16|int8` compresses it
    (int8 rows: head_dim + 4 bytes, the last 4 the row's scale). An
    attention with a window (`strata-sparse-attention`) gets a ring cache
    of `sinks + window + prefill-length - 1` rows when that is less than
    the context (`ring_kept`/`ring_context` on both cache ops), so its
    memory does not grow with the context. Position ids, an input or
    `range(past_length, past_length + sequence)` indexing a table, become
    the rows' positions; past inputs, present outputs and the attention
    mask go. With `verify-length=N`, a third entry `verify` takes up to N
    tokens of each of several sequences (`input_ids [batch, verify_length]`
    at `positions [batch]`) and returns every position's logits `[batch,
    verify_length, V]`: a target model's check of drafted tokens.
    `main` is unchanged. A graph the split cannot carry over keeps
    `main` only, with a warning.

    ```mlir
    %k = strata.concat %past_k, %new_k {axis = 2 : i64} ...
    %o = strata.attention %q, %k, %v {causal} ...
    // in decode becomes
    %kc1 = strata.cache_write %kc, %new_k, %slots, %positions ...
    %o = strata.cache_attention %q, %kc1, %vc1, %slots, %lengths ...
    ```
  }];
  let options = [
    Option<"slots", "slots", "int64_t", "8",
           "sequences the cache holds (the decode batch maximum)">,
    Option<"context", "context", "int64_t", "1024",
           "tokens one sequence may hold">,
    Option<"prefillLength", "prefill-length", "int64_t", "0",
           "the most tokens one prefill call takes (0: the context); sizes "
           "the ring caches">,
    Option<"verifyLength", "verify-length", "int64_t", "0",
           "adds a `verify` entry taking up to this many tokens per "
           "sequence (at most prefill-length) and returning every "
           "position's logits, for speculative decoding; 0: none">,
    Option<"ringCaches", "ring-caches", "bool", "true",
           "a windowed attention's cache holds its sinks, its window and one "
           "prefill call's rows (a ring) when that is less than the context">,
    Option<"allLogits", "all-logits", "bool", "false",
           "prefill also returns every position's logits (all_logits)">,
    Option<"source", "source", "std::string", "\"main\"",
           "the function the entries are made from: main, or a private "
           "with-past twin of it (two exports compiled together)">,
    Option<"kvCache", "kv-cache", "std::string", "\"fp32\"",
           "the cache's element type for fp32 keys and values: fp32, bf16 "
           "(rounded to nearest even) or int8 (per token and head, each row "
           "followed by its fp32 scale: last dim head_dim + 4)">,
    Option<"kvBlockSize", "kv-block-size", "int64_t", "0",
           "pages the caches: pools of blocks of this many positions, each "
           "sequence's blocks named by a block table input (block_table, "
           "block_tables) instead of a slot; 0: a contiguous cache per "
           "slot">,
    Option<"kvBlocks", "kv-blocks", "int64_t", "0",
           "blocks in each paged cache's pool (0: as many as slots "
           "sequences of the whole context take)">,
  ];
  let dependentDialects = ["::strata::ir::StrataDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AddActivationStatisticsPass
    : Pass<"strata-add-activation-statistics", "mlir::ModuleOp"> {
  let summary = "makes an entry also return per-channel statistics of the "
                "inputs of its weight contractions";
  let description = [{
    The calibration variant of a model: in `function`, for every
    `strata.linear` and every `strata.matmul` of an activation by a constant
    2-D fp32 weight, the entry also returns two vectors over the input's
    last (channel) dim: the sum of `x^2` and the largest `|x|` over all
    other dims (every token of the call). The results are named
    `calibration.<i>.sum_sq` and `calibration.<i>.max_abs`, and the
    function's `strata.calibration` attribute lists the contractions' names
    (their ONNX nodes) in that order. strata-compile compiles this variant,
    runs it on the calibration sequences and sums the results
    (docs/design/precision.md, "Calibration").

    ```mlir
    %y = strata.linear %x, %w, %b : (tensor<?x256xf32>, tensor<256x768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
    // also gives
    %sq = strata.mul %x, %x : (tensor<?x256xf32>, tensor<?x256xf32>) -> tensor<?x256xf32>
    %sum = strata.reduce_sum %sq {axes = array<i64: 0>, keepdims = false} : tensor<?x256xf32> -> tensor<256xf32>
    %abs = strata.abs %x : tensor<?x256xf32>
    %max = strata.reduce_max %abs {axes = array<i64: 0>, keepdims = false} : tensor<?x256xf32> -> tensor<256xf32>
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", "\"prefill\"",
           "the entry that returns the statistics">,
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def ApplyActivationScalesPass
    : Pass<"strata-apply-activation-scales", "mlir::ModuleOp"> {
  let summary = "activation-aware per-channel scaling of weight "
                "contractions before quantization";
  let description = [{
    Reads per-channel activation statistics (the JSON that calibration
    makes; `statistics` is its path) and, in the functions named by
    `functions`, scales each measured contraction's weight rows by `s` and
    divides its input by `s`, an identity in exact arithmetic that moves
    quantization error away from the channels with large activations.
    `method=awq`: `s = rms(x)^alpha`, `alpha` in {0, 0.1, ..., 1} chosen per
    input for the smallest `sum_k E[x_k^2] * ||dq(q(w_k s_k)) / s_k -
    w_k||^2` with the weights quantized as `bits`/`group-size` will quantize
    them (alpha 0 leaves the contraction alone). `method=smooth`
    (SmoothQuant, for W8A8): `s = max|x|^a / max|w|^(1 - a)`, `a` =
    `smooth-alpha`. Contractions reading one input share one `s`. `1/s` goes
    into the producing `strata.layer_norm`/`strata.rms_norm`'s scale (and
    bias) when that norm feeds only those contractions, else into a
    `strata.mul` before the contraction. Statistics naming no contraction,
    or with another channel count, are errors.

    ```mlir
    %n = strata.layer_norm %x, %g, %b : ...
    %y = strata.linear %n, %w, %c : ...
    // becomes
    %n = strata.layer_norm %x, %g_over_s, %b_over_s : ...
    %y = strata.linear %n, %s_times_w, %c : ...
    ```
  }];
  let options = [
    Option<"statistics", "statistics", "std::string", "\"\"",
           "the statistics' JSON file">,
    ListOption<"functions", "functions", "std::string",
               "the functions whose contractions are scaled">,
    Option<"method", "method", "std::string", "\"awq\"",
           "awq (weight-only int4/int8) or smooth (W8A8)">,
    Option<"bits", "bits", "int64_t", "4",
           "awq: the weight bits the search quantizes with (4 or 8)">,
    Option<"groupSize", "group-size", "int64_t", "32",
           "awq: rows of a column sharing one scale; 0: the whole column">,
    Option<"smoothAlpha", "smooth-alpha", "double", "0.5",
           "smooth: the migration strength a in [0, 1]">,
    Option<"keepFp32LmHead", "keep-fp32-lm-head", "bool", "false",
           "leave the contraction producing a returned value alone">,
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def ShardTensorParallelPass : Pass<"strata-shard-tensor-parallel",
                                     "mlir::ModuleOp"> {
  let summary = "one rank's share of a model whose layers are split over "
                "several processes (Megatron-style tensor parallelism)";
  let description = [{
    Rewrites every entry into what rank `rank` of `ranks` computes. A
    contraction by a constant weight whose input is whole becomes
    column-parallel (the rank keeps its share of the weight's columns,
    taken part by part when a split of the result follows: fused q/k/v or
    gate/up); the values computed from its result stay split through
    elementwise ops, reshapes that split or merge the split axis (heads),
    transposes, slices, concatenations, attention and the KV cache (whose
    state tensors hold the rank's heads), up to a contraction whose input
    is split along its reduction dim: row-parallel (the rank keeps its
    rows, and a `strata.all_reduce` sums the partial results, the bias
    added after it). A split value an entry returns (the logits of a
    vocabulary-parallel LM head, a with-past export's present keys) goes
    through `strata.all_gather`; a whole operand combined with a split one
    is sliced (biases, past keys). A contraction whose split would reach
    anything else (a norm, a softmax over the split axis) stays whole on
    every rank, with a remark; an attention that cannot be split (heads
    or key/value heads that `ranks` does not divide) is an error, as the
    rank would then hold the whole KV cache.

    ```mlir
    %qkv = strata.linear %x, %w, %b : (tensor<?x64xf32>, tensor<64x192xf32>, tensor<192xf32>) -> tensor<?x192xf32>
    // rank 1 of 2: columns 32..63, 96..127 and 160..191 of %w and %b
    %qkv = strata.linear %x, %w1, %b1 : (tensor<?x64xf32>, tensor<64x96xf32>, tensor<96xf32>) -> tensor<?x96xf32>
    ```
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1",
           "processes each layer is split over (1: no change)">,
    Option<"rank", "rank", "int64_t", "0", "the rank this module is for">,
  ];
  let statistics = [
    Statistic<"numColumnParallel", "column-parallel",
              "contractions split by output columns">,
    Statistic<"numRowParallel", "row-parallel",
              "contractions split by reduction rows">,
    Statistic<"numAllReduce", "all-reduces", "strata.all_reduce ops inserted">,
    Statistic<"numAllGather", "all-gathers", "strata.all_gather ops inserted">,
  ];
}

def SplitPipelineStagesPass : Pass<"strata-split-pipeline-stages",
                                    "mlir::ModuleOp"> {
  let summary = "one stage of a model whose layers are split into "
                "consecutive stages run by separate processes (pipeline "
                "parallelism)";
  let description = [{
    Rewrites every entry into what pipeline stage `stage` of `stages`
    computes. An entry is cut where exactly one value of the activation
    stream (what depends on an attention, or feeds a weight contraction
    before the first) is defined before and used after (a pre-norm
    decoder: after each attention's and each MLP's residual add); of those
    places, the `stages - 1` that divide the weights' bytes most evenly.
    Stage s > 0 starts with a `strata.recv` of the stream from stage s - 1,
    stage s < stages - 1 ends with a `strata.send` of it to stage s + 1;
    each non-state output goes from the stage that computes it to every
    other (`strata.send` there, `strata.recv` here, in output order), so
    every stage returns the whole entry's outputs. The bookkeeping a stage
    reads from before its part (masks, positions, rotary tables: computed
    from the inputs, not from the stream) is computed again there. A
    stage keeps only the states (KV caches) it computes, the same in every
    entry. An entry without attention, or with fewer places to cut than
    `stages - 1`, is an error.

    ```mlir
    // stage 1 of 2
    %h = strata.recv %shape {stage = 0 : i64} : (tensor<3xi64>) -> tensor<?x?x768xf32>
    ...
    %logits = ...
    strata.send %logits {stage = 0 : i64} : tensor<?x50257xf32>
    ```
  }];
  let options = [
    Option<"stages", "stages", "int64_t", "1",
           "processes the layers are split over, one stage each (1: no "
           "change)">,
    Option<"stage", "stage", "int64_t", "0", "the stage this module is for">,
  ];
  let statistics = [
    Statistic<"numSends", "sends", "strata.send ops inserted">,
    Statistic<"numRecvs", "recvs", "strata.recv ops inserted">,
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def SparseAttentionPass : Pass<"strata-sparse-attention", "mlir::ModuleOp"> {
  let summary = "sliding-window and attention-sink sparsity on causal attention";
  let description = [{
    Every causal `strata.attention` (and `strata.cache_attention`) of every
    function gets `window = W` (each query sees its last W keys) and, with
    `sinks = S`, `sinks = S` (the first S keys stay visible too): long
    contexts then cost O(T * W) attention instead of O(T^2). `layers`
    restricts it to the attention ops with those indices, counted in
    program order within each function (a decoder's layers; every function
    of one model counts its layers alike). Non-causal attention (an
    encoder's) and an op that already has a window (the model's own) are
    left alone. `global-topk = K` also gives each windowed op
    `global_topk = K, global_block = B` (`global-block`, default 64): each
    query adds the K earlier key blocks of B keys it scores highest to its
    window (block-sparse global attention, as MoBA selects them).

    ```mlir
    %o = strata.attention %q, %k, %v {causal} : ...
    // with window=256 sinks=4 becomes
    %o = strata.attention %q, %k, %v {causal, sinks = 4 : i64, window = 256 : i64} : ...
    ```
  }];
  let options = [
    Option<"window", "window", "int64_t", "0",
           "keys each query sees, counting back from its own (0: dense)">,
    Option<"sinks", "sinks", "int64_t", "0",
           "leading keys every query sees besides its window">,
    ListOption<"layers", "layers", "int64_t",
               "indices of the attention ops to window (default: all)">,
    Option<"globalTopk", "global-topk", "int64_t", "0",
           "key blocks each query adds to its window, those it scores "
           "highest (0: none)">,
    Option<"globalBlock", "global-block", "int64_t", "64",
           "keys per global block">,
  ];
  let statistics = [
    Statistic<"numWindowed", "windowed-attention",
              "attention ops given a window">,
  ];
}

def Bf16ContractionsPass : Pass<"strata-bf16-contractions", "mlir::ModuleOp"> {
  let summary = "marks the linear layers of chosen entries to compute in bf16";
  let description = [{
    In the functions named by `functions`, every `strata.linear`, and every
    `strata.matmul` of an activation by a constant 2-D fp32 weight, gets
    `strata.compute_type = bf16`: its weight is stored as bf16 and its
    products are of bf16-rounded operands, summed in fp32 (the CPU back end
    calls `strata_rt_matmul_f32_bf16`). Its fp32 `strata.attention` and
    `strata.cache_attention` ops get the same mark: their two products
    (query-key, probability-value) may read bf16-rounded operands, with
    the softmax between them in fp32 (the CPU back end sets
    STRATA_ATTN_FLAG_BF16_PRODUCTS; AMX hosts run them on tiles). Norms,
    the softmax, the residual stream and the logits stay fp32. With
    `keep-fp32-lm-head` the contraction that produces a returned value (the
    LM head) is left alone.

    ```mlir
    %y = strata.linear %x, %w, %b : (tensor<?x768xf32>, tensor<768x2304xf32>, tensor<2304xf32>) -> tensor<?x2304xf32>
    // becomes
    %y = strata.linear %x, %w, %b {strata.compute_type = bf16} : (tensor<?x768xf32>, tensor<768x2304xf32>, tensor<2304xf32>) -> tensor<?x2304xf32>
    ```
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "the functions whose linear layers compute in bf16">,
    Option<"keepFp32LmHead", "keep-fp32-lm-head", "bool", "false",
           "leave the contraction producing a returned value in fp32">,
  ];
  let statistics = [
    Statistic<"numMarked", "bf16-contractions",
              "contractions marked to compute in bf16">,
  ];
}

def QuantizeWeightsPass : Pass<"strata-quantize-weights", "mlir::ModuleOp"> {
  let summary = "weight-only quantization of the constant weights of "
                "chosen entries";
  let description = [{
    In the functions named by `functions`, every `strata.linear`, and every
    `strata.matmul` of an activation by a constant 2-D weight, becomes a
    `strata.quantized_linear` over the weight quantized at compile time:
    symmetric, absmax per `group-size` rows of each column (0: one scale per
    output column), `bits` 8 or 4. Activations, accumulation, norms,
    softmax, the residual stream and the logits stay fp32: this is the only
    quantization boundary, so nothing else changes. A weight used by several
    chosen functions is quantized once and shared. With `keep-fp32-lm-head`
    the contraction that produces a returned value (the LM head) keeps its
    fp32 weight. With `activation-bits=8` (8-bit weights, one scale per
    column) the contractions also quantize their activations per row at
    run time (W8A8, for the compute-bound prefill): the weight is the same
    int8 tensor a weight-only entry would read, so the two share it.
    `activation-block=B` rounds them per block of B k instead (the int8
    decode policy: 32), which the back end multiplies in integers too.
    Embedding tables follow the policy too: a constant [R, D] fp32 table
    gathered along axis 0 whose rows are as wide as the hidden state the LM
    head reads (D its weight's K: token and learned position embeddings,
    not a rotary cache, which is a head wide) becomes a
    `strata.quantized_gather` over rows quantized per `group-size` columns
    (0: one scale per row), when that removes its fp32 copy: every use of
    the table is such a gather in a chosen function. The token table (the
    one gathered by the `input_ids` argument) takes `bits`; another (learned
    positions: few rows, whose int4 error costs accuracy out of proportion
    to their bytes) is int8, one scale per row. `keep-fp32-lm-head`
    keeps them fp32 as well (the token table and the LM head are often one
    tied tensor).

    ```mlir
    %y = strata.linear %x, %w, %b : (tensor<?x768xf32>, tensor<768x2304xf32>, tensor<2304xf32>) -> tensor<?x2304xf32>
    // becomes
    %y = strata.quantized_linear %x, %q, %s, %b {bits = 8 : i64, group_size = 768 : i64} : (tensor<?x768xf32>, tensor<768x2304xi8>, tensor<1x2304xf32>, tensor<2304xf32>) -> tensor<?x2304xf32>
    ```
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "the functions whose weights are quantized">,
    Option<"bits", "bits", "int64_t", "8", "8 (int8) or 4 (int4)">,
    Option<"groupSize", "group-size", "int64_t", "0",
           "rows of a column sharing one scale; 0: the whole column">,
    Option<"keepFp32LmHead", "keep-fp32-lm-head", "bool", "false",
           "leave the contraction producing a returned value in fp32">,
    Option<"activationBits", "activation-bits", "int64_t", "0",
           "0: weight-only; 8: activations quantized per row at run time "
           "(W8A8; needs bits=8 and group-size 0)">,
    Option<"activationBlock", "activation-block", "int64_t", "0",
           "with activation-bits=8: 0 quantizes each row whole (per "
           "token), B > 0 per block of B k">,
  ];
  let statistics = [
    Statistic<"numQuantized", "quantized-contractions",
              "contractions now reading a quantized weight">,
    Statistic<"numWeights", "quantized-weights",
              "distinct weights quantized">,
    Statistic<"numTables", "quantized-embedding-tables",
              "embedding gathers now reading a quantized table">,
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def FuseAttentionPass : InterfacePass<"strata-fuse-attention",
                                      "mlir::FunctionOpInterface"> {
  let summary = "fuse matmul/softmax/matmul attention into strata.attention";
  let description = [{
    Anchored on a `strata.softmax` over the last axis of a rank-4 tensor.
    Matches `softmax(S) V` where `S = matmul(Q, K^T)` and `K^T` is a rank-4
    `strata.transpose` (K is its input permuted back), optionally scaled by
    `/ c`, `* c` or `c *` with a constant scalar `c` (also a scalar
    expression of constants such as GPT-2's `sqrt(float(d))`), or with the
    scale applied to `Q` (also before its heads are transposed), `K^T`, `K`
    before its transpose or the unrepeated `K` of grouped-query attention
    (the split SDPA `sqrt(scale)`; the scale is the product). A clamp
    `max(S, c)` right before the softmax with `c` at or below the lowest
    float (transformers' `finfo.min`) is absorbed: hidden keys score the
    lowest float anyway, and an additive mask that may hold `-inf` becomes
    `max(mask, lowest)`. Then masks, nested in any
    order: additive float masks `S + M` (either order), bool masks
    `where(C, S, fill)` (C keeps) or `where(C, fill, S)` (C hides) with
    `fill <= -1e4`. A mask that hides exactly the keys after each query,
    aligned to the end (`j > i + Sk - Sq`), becomes the `causal` attribute:
    a lower-triangular constant sliced to rows `[Sk - Sq, Sk)` and columns
    `[0, Sk)` (HF GPT-2's bias buffer), `trilu` of a constant or
    `constant_of_shape` (upper with a `-inf` fill, or lower of ones), and
    `not`/`equal(x, 0)`/`where(c, 0, fill)` over those, and comparisons of
    key and query positions built with `range` (`kv_idx <= q_idx`, query
    positions shifted by the past length; a block of past columns
    concatenated in front). The causal part of a combined mask is split
    off: `and(causal, padding)` in a bool or `where(C, 0, fill)` mask
    (transformers' masking utilities) leaves the padding as the mask, and
    `causal + padding` (older releases) leaves the padding with
    `mask_hidden`. `Sq` and `Sk` are compared symbolically
    (passes/ShapeArithmetic.h) through the `shape`/`slice`/`gather`
    arithmetic, the ops between them and the ONNX dim names of the
    arguments. What is left must
    be one bool mask (a hiding one is negated) or additive masks (summed
    into one). Every intermediate value must have no other users. `scale`
    is set unless it equals `1/sqrt(D)`. K and V both spelled as HF's
    `repeat_kv` (`reshape(expand(reshape(kv, [B, Hkv, 1, S, D]),
    [B, Hkv, n, S, D]), [B, Hkv * n, S, D])`, extents checked symbolically)
    are passed unrepeated: grouped-query attention. So are K and V repeated
    alike by `tile` or a `concat` of copies of the unsqueezed heads
    (passes/RepeatedHeads.h), K before or after its transpose.

    ```mlir
    %kt = strata.transpose %k, [0, 1, 3, 2] ...  %s = strata.matmul %q, %kt ...
    %d = strata.div %s, %c8 ...                  %a = strata.add %d, %m ...
    %p = strata.softmax %a {axis = -1 : i64} ... %o = strata.matmul %p, %v ...
    // becomes
    %o = strata.attention %q, %k, %v mask %m ...
    ```
  }];
  let options = [
    Option<"reportMissed", "report-missed", "bool", /*default=*/"false",
           "emit a remark at every rank-4 softmax that did not fuse, with "
           "the reason">,
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def FuseGeluPass : InterfacePass<"strata-fuse-gelu",
                                 "mlir::FunctionOpInterface"> {
  let summary = "fuse the erf and tanh forms of GELU into strata.gelu";
  let description = [{
    Recognizes GELU by what a chain computes, not how it is spelled
    (passes/Activations.h). Around every `erf`, `tanh`, `sigmoid` and `exp`
    it takes the chains of elementwise ops (add, sub, mul, div, pow, max,
    min, neg, abs, sqrt, rsqrt, reciprocal, exp, log, erf, tanh, sigmoid,
    relu) that read one non-constant value `x`, the other operands being
    scalar constants, evaluates each in double precision at 28 sample points
    (24 in [-5.7, 5.8], and +-10, +-30) and compares it with
    `0.5 x (1 + erf(x / sqrt(2)))` and `0.5 x (1 + tanh(sqrt(2/pi) (x +
    0.044715 x^3)))`: the largest chain within 1e-5 (f32; f16 1e-4, bf16
    1e-3) of `max(1, |reference|)`, and at most half as far from it as from
    any other activation, becomes `strata.gelu` with `approximate = "none"`
    or `"tanh"`. The two GELUs differ by up to 4.7e-4, so they are never
    confused. Every intermediate value must have no users outside the
    chain, and every op the type of `x`. So torch's, Keras', TF's, HF's
    `gelu_new`, Megatron's, distributed forms (`h + h * erf(...)`), the
    sigmoid form of the tanh GELU (`x * sigmoid(1.5958 (x + 0.044715 x^3))`)
    and any other arrangement match. (Opset-20 `Gelu` and contrib
    `Gelu`/`FastGelu`/`BiasGelu` are imported as `strata.gelu` directly.)

    ```mlir
    %0 = strata.div %x, %sqrt2 ...   %1 = strata.erf %0 ...
    %2 = strata.add %1, %one ...     %3 = strata.mul %x, %2 ...
    %4 = strata.mul %3, %half ...
    // becomes
    %4 = strata.gelu %x : tensor<...>
    ```
  }];
  let options = [
    Option<"reportMissed", "report-missed", "bool", /*default=*/"false",
           "emit a remark at every erf or tanh that did not fuse, with the "
           "reason">,
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def FuseLayerNormPass : InterfacePass<"strata-fuse-layer-norm",
                                      "mlir::FunctionOpInterface"> {
  let summary = "fuse decomposed layer normalization into strata.layer_norm";
  let description = [{
    Matches the mean/variance chain of torch (opset < 17) and Keras exports:
    `mean = reduce_mean(x)` over trailing contiguous axes with keepdims,
    `d = x - mean` (one `sub`, or two identical ones), `var` the mean of
    `d * d` or `pow(d, 2)` over the same axes, `+ epsilon` (a constant
    scalar), then `d / sqrt(var + eps)`, `d * reciprocal(sqrt(...))`,
    `d * (1 / sqrt(...))` or `d * rsqrt(var + eps)`, followed by an optional
    `* scale` and `+ bias` of the normalized shape (either operand order).
    An fp32 island (f16/bf16 `d` widened to f32 and the result cast back) is
    absorbed. Every intermediate value must have no other users; without a
    scale a ones constant is used.

    ```mlir
    %m = strata.reduce_mean %x ...   %d = strata.sub %x, %m ...
    %p = strata.pow %d, %two ...     %v = strata.reduce_mean %p ...
    %e = strata.add %v, %eps ...     %s = strata.sqrt %e ...
    %n = strata.div %d, %s ...       %g = strata.mul %n, %scale ...
    %y = strata.add %g, %bias ...
    // becomes
    %y = strata.layer_norm %x, %scale, %bias {axis = 2 : i64, epsilon = 1.0e-05 : f32} ...
    ```
  }];
  let options = [
    Option<"reportMissed", "report-missed", "bool", /*default=*/"false",
           "emit a remark at every 'x - mean(x)' mean that did not fuse, "
           "with the reason">,
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def FuseRmsNormPass : InterfacePass<"strata-fuse-rms-norm",
                                    "mlir::FunctionOpInterface"> {
  let summary = "fuse decomposed RMS normalization into strata.rms_norm";
  let description = [{
    Matches `x * rsqrt(mean(x^2) + eps) * weight` as Llama-style exports spell
    it: the square as `x * x` or `pow(x, 2)`, the mean over trailing
    contiguous axes with keepdims, a constant scalar epsilon, then
    `x / sqrt(...)`, `x * reciprocal(sqrt(...))`, `x * (1 / sqrt(...))` or
    `x * rsqrt(...)`, and an optional `* weight` of the normalized shape
    (either operand order). An fp32 island (f16/bf16 `x` cast to f32 before
    and back after, as HF does) is absorbed. A squared `x - mean(x)` is left
    to strata-fuse-layer-norm.

    ```mlir
    %p = strata.pow %x, %two ...     %v = strata.reduce_mean %p ...
    %e = strata.add %v, %eps ...     %s = strata.sqrt %e ...
    %r = strata.div %one, %s ...     %n = strata.mul %x, %r ...
    %y = strata.mul %w, %n ...
    // becomes
    %y = strata.rms_norm %x, %w {axis = 2 : i64, epsilon = 1.0e-06 : f32} ...
    ```
  }];
  let options = [
    Option<"reportMissed", "report-missed", "bool", /*default=*/"false",
           "emit a remark at every mean of a square that did not fuse, "
           "with the reason">,
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def FoldChannelAffinePass : InterfacePass<"strata-fold-channel-affine",
                                          "mlir::FunctionOpInterface"> {
  let summary = "fold per-channel scale/shift ops into the conv or linear before";
  let description = [{
    An op that multiplies, divides, adds or subtracts a per-output-channel
    constant (computed from constants: an inference BatchNormalization's
    `(y - mean) / sqrt(var + eps) * scale + bias`, a layer scale) on the
    only use of a `strata.conv` or `strata.linear` with constant fp32
    weight and bias that nothing else reads is folded into them: the
    weight's rows (conv) or columns (linear) of channel c scaled by s[c],
    the bias s[c] b[c] + t[c]. Repeated to a fixpoint; the layer keeps the
    fused location and counts the ops in `strata.folded_channel_ops`.

    ```mlir
    %y = strata.conv %x, %w {...} : (...) -> tensor<1x8x4x4xf32>
    %z = strata.mul %y, %s : (tensor<1x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
    // becomes
    %z = strata.conv %x, %w2, %b2 {strata.folded_channel_ops = 1 : i64, ...}
    ```
  }];
}

def ConvChannelsLastPass : InterfacePass<"strata-conv-channels-last",
                                          "mlir::FunctionOpInterface"> {
  let summary = "run fp32 convolutions over channels-last tensors";
  let description = [{
    Every fp32 `strata.conv` with one group, no input dilations, a
    constant weight and static channel and spatial dims becomes a
    `channels_last` convolution between transposes: the input to [N,
    S..., C], the weight to [K..., C, M] (a constant transpose, folded by
    `strata-fold-constant-transposes`), the result back to [N, M, O...].
    The transposes back then sink below the elementwise float ops after
    them (operands all transposed alike, or single elements) so that
    consecutive convolutions cancel theirs: a run of convolutions, ReLUs
    and residual adds stays channels last, transposed only at its edges.

    ```mlir
    %y = strata.conv %x, %w {...} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
    // becomes
    %t = strata.transpose %x, [0, 2, 3, 1] : tensor<1x64x56x56xf32> -> tensor<1x56x56x64xf32>
    %y2 = strata.conv %t, %w2 {channels_last, ...} : (tensor<1x56x56x64xf32>, tensor<3x3x64x64xf32>) -> tensor<1x56x56x64xf32>
    %y = strata.transpose %y2, [0, 3, 1, 2] : tensor<1x56x56x64xf32> -> tensor<1x64x56x56xf32>
    ```
  }];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def FoldConstantTransposesPass
    : InterfacePass<"strata-fold-constant-transposes",
                    "mlir::FunctionOpInterface"> {
  let summary = "transpose constants at compile time";
  let description = [{
    A `strata.transpose` of a `strata.constant` with a static shape that
    nothing else reads becomes a constant holding the permuted elements
    (the spelling of ONNX Gemm's `transB = 1` weight), so that the
    contraction reading it sees a constant weight: packed at compile time,
    quantized by the precision passes, and no copy of it at run time. A
    constant with other readers is left alone (folding would keep two
    copies of it).

    ```mlir
    %w = strata.constant dense<...> : tensor<1000x2048xf32>
    %t = strata.transpose %w, [1, 0] : tensor<1000x2048xf32> -> tensor<2048x1000xf32>
    // becomes
    %t = strata.constant dense_resource<w.transposed> : tensor<2048x1000xf32>
    ```
  }];
}

def FuseSiblingLinearsPass : InterfacePass<"strata-fuse-sibling-linears",
                                           "mlir::FunctionOpInterface"> {
  let summary = "fuse linears of one input into one linear and a split";
  let description = [{
    Llama-style exports project one activation separately into queries,
    keys and values, and into the MLP's gate and up halves; each is its own
    matmul call at run time. Every group of two or more `strata.linear` ops
    (or of `strata.matmul` ops of an activation of rank >= 2 by a 2-D
    weight, the spelling of a projection without bias) in one block that
    read the same input, with constant weights of the same K and element
    type that nothing else uses, and all with or all without a constant
    bias that nothing else uses, becomes one op of the same kind over the
    weights (and biases) concatenated along N, followed by a `strata.split`
    of its last axis that gives each original its columns. The fused ops
    sit in front of the group's first member and carry the fused location
    of the members. Every output column is the same sum over K as before,
    and a per-column quantization of the fused weight equals the members'
    quantizations side by side. Weights the pass cannot
    read (an elided resource) leave their group unfused; a weight with
    other users is left alone, since its concatenated copy would add its
    bytes to the artifact.

    ```mlir
    %q = strata.linear %x, %wq : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %k = strata.linear %x, %wk : (tensor<?x64xf32>, tensor<64x16xf32>) -> tensor<?x16xf32>
    // becomes
    %qk = strata.linear %x, %wqk : (tensor<?x64xf32>, tensor<64x80xf32>) -> tensor<?x80xf32>
    %q, %k = strata.split %qk {axis = 1 : i64, sizes = array<i64: 64, 16>} : tensor<?x80xf32> -> tensor<?x64xf32>, tensor<?x16xf32>
    ```
  }];
  let statistics = [
    Statistic<"numGroups", "fused-groups",
              "groups of sibling linears fused into one">,
    Statistic<"numFused", "fused-linears",
              "linears replaced by a fused sibling group">,
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def FuseSiluPass : InterfacePass<"strata-fuse-silu",
                                 "mlir::FunctionOpInterface"> {
  let summary = "fuse x * sigmoid(x) into strata.silu";
  let description = [{
    Recognizes SiLU (swish) by value, as strata-fuse-gelu does GELU: the
    largest single-input elementwise chain through a `sigmoid`, `exp` or
    `tanh` that computes `x * sigmoid(x)` within the tolerance of its type
    (`sigmoid(x) * x`, `x / (1 + exp(-x))`, `0.5 x (1 + tanh(x / 2))`, ...)
    becomes `strata.silu`, when its intermediate values have no other users
    and its ops the type of `x`.

    ```mlir
    %s = strata.sigmoid %x ...   %y = strata.mul %x, %s ...
    // becomes
    %y = strata.silu %x : tensor<...>
    ```
  }];
  let options = [
    Option<"reportMissed", "report-missed", "bool", /*default=*/"false",
           "emit a remark at every sigmoid that did not fuse, with the reason">,
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

def LowerToLinalgPass : InterfacePass<"strata-lower-to-linalg",
                                      "mlir::FunctionOpInterface"> {
  let summary = "lower strata ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Every strata op becomes linalg/tensor ops on tensors: elementwise ops one
    broadcasting `linalg.generic`, contractions `linalg.generic`s with
    reduction iterators, norms and softmax reductions plus elementwise
    generics (norms accumulate in fp32), attention two contractions around a
    masked softmax, data movement `tensor`/`linalg` ops with ONNX index
    semantics. Weights stay `dense_resource` constants. An op that cannot be
    lowered is an error at its location (`signalPassFailure`).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // STRATA_PASSES_PASSES_TD
