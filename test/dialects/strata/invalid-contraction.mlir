// RUN: strata-opt %s --split-input-file --verify-diagnostics
// Verifier errors of matmul, linear and attention.

func.func @matmul_inner_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'strata.matmul' op operand shapes 2x3 and 4x5 are not compatible for matmul}}
  %0 = strata.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_wrong_result(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'strata.matmul' op expected result shape 2x5, got 2x6}}
  %0 = strata.matmul %a, %b : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @linear_scalar_input(%x: tensor<f32>, %w: tensor<4x4xf32>) {
  // expected-error @+1 {{'strata.linear' op expected 'input' of rank >= 1}}
  %0 = strata.linear %x, %w : (tensor<f32>, tensor<4x4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<2x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'strata.linear' op expected 2-D 'weight', got rank 1}}
  %0 = strata.linear %x, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_inner_mismatch(%x: tensor<2x4xf32>, %w: tensor<8x16xf32>) {
  // expected-error @+1 {{'strata.linear' op expected the inner dim of 'input' (4) to match dim 0 of 'weight' (8)}}
  %0 = strata.linear %x, %w : (tensor<2x4xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @linear_bias_shape(%x: tensor<2x4xf32>, %w: tensor<4x16xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'strata.linear' op expected 'bias' of shape 16, got 8}}
  %0 = strata.linear %x, %w, %b : (tensor<2x4xf32>, tensor<4x16xf32>, tensor<8xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @linear_wrong_result(%x: tensor<2x4xf32>, %w: tensor<4x16xf32>) {
  // expected-error @+1 {{'strata.linear' op expected result shape 2x16, got 2x4}}
  %0 = strata.linear %x, %w : (tensor<2x4xf32>, tensor<4x16xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @attention_rank(%q: tensor<8x64xf32>, %k: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{'strata.attention' op expected 'query', 'key' and 'value' of rank 4 ([batch, heads, seq, head_dim]), got ranks 2, 4 and 4}}
  %0 = strata.attention %q, %k, %k : (tensor<8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x2x8x64xf32>, %k: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{'strata.attention' op expected equal batch sizes, got 2, 1 and 1}}
  %0 = strata.attention %q, %k, %k : (tensor<2x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<2x2x8x64xf32>
  return
}

// -----

func.func @attention_kv_heads(%q: tensor<1x4x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x4x8x64xf32>) {
  // expected-error @+1 {{'strata.attention' op expected 'key' and 'value' head counts to match, got 2 and 4}}
  %0 = strata.attention %q, %k, %v : (tensor<1x4x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x4x8x64xf32>) -> tensor<1x4x8x64xf32>
  return
}

// -----

func.func @attention_gqa_ratio(%q: tensor<1x6x8x64xf32>, %k: tensor<1x4x8x64xf32>) {
  // expected-error @+1 {{'strata.attention' op expected query heads (6) to be a multiple of key/value heads (4)}}
  %0 = strata.attention %q, %k, %k : (tensor<1x6x8x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) -> tensor<1x6x8x64xf32>
  return
}

// -----

func.func @attention_kv_seq(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x9x64xf32>) {
  // expected-error @+1 {{'strata.attention' op expected 'key' and 'value' sequence lengths to match, got 8 and 9}}
  %0 = strata.attention %q, %k, %v : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x9x64xf32>) -> tensor<1x2x8x64xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<1x2x8x32xf32>, %k: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{'strata.attention' op expected 'query' and 'key' head dims to match, got 32 and 64}}
  %0 = strata.attention %q, %k, %k : (tensor<1x2x8x32xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return
}

// -----

func.func @attention_mask_shape(%q: tensor<1x2x8x64xf32>, %m: tensor<1x1x8x7xf32>) {
  // expected-error @+1 {{'strata.attention' op mask shape 1x1x8x7 does not broadcast to the scores shape 1x2x8x8}}
  %0 = strata.attention %q, %q, %q mask %m : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x1x8x7xf32>) -> tensor<1x2x8x64xf32>
  return
}

// -----

func.func @attention_window(%q: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{'strata.attention' op expected 'window' > 0, got 0}}
  %0 = strata.attention %q, %q, %q {window = 0 : i64} : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return
}

// -----

func.func @attention_negative_sinks(%q: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{'strata.attention' op expected 'sinks' >= 0, got -1}}
  %0 = strata.attention %q, %q, %q {window = 4 : i64, sinks = -1 : i64} : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return
}

// -----

func.func @attention_sinks_without_window(%q: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{'strata.attention' op 'sinks' requires 'window'}}
  %0 = strata.attention %q, %q, %q {sinks = 4 : i64} : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return
}

// -----

func.func @attention_wrong_result(%q: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x32xf32>) {
  // expected-error @+1 {{'strata.attention' op expected result shape 1x2x8x32, got 1x2x8x64}}
  %0 = strata.attention %q, %q, %v : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x32xf32>) -> tensor<1x2x8x64xf32>
  return
}

// -----

func.func @quantized_linear_bits(%x: tensor<2x8xf32>, %q: tensor<8x3xi8>, %s: tensor<1x3xf32>) {
  // expected-error @+1 {{'strata.quantized_linear' op expected 'bits' 8 or 4, got 2}}
  %0 = strata.quantized_linear %x, %q, %s {bits = 2 : i64, group_size = 8 : i64} : (tensor<2x8xf32>, tensor<8x3xi8>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @quantized_linear_scales(%x: tensor<2x8xf32>, %q: tensor<8x3xi8>, %s: tensor<1x3xf32>) {
  // expected-error @+1 {{'strata.quantized_linear' op expected 'scales' of shape 2x3, got 1x3}}
  %0 = strata.quantized_linear %x, %q, %s {bits = 8 : i64, group_size = 4 : i64} : (tensor<2x8xf32>, tensor<8x3xi8>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @quantized_linear_group(%x: tensor<2x8xf32>, %q: tensor<8x3xi8>, %s: tensor<1x3xf32>) {
  // expected-error @+1 {{'strata.quantized_linear' op expected 'group_size' >= 1, got 0}}
  %0 = strata.quantized_linear %x, %q, %s {bits = 8 : i64, group_size = 0 : i64} : (tensor<2x8xf32>, tensor<8x3xi8>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @quantized_linear_inner(%x: tensor<2x6xf32>, %q: tensor<8x3xi8>, %s: tensor<1x3xf32>) {
  // expected-error @+1 {{'strata.quantized_linear' op expected the inner dim of 'input' (6) to match dim 0 of 'weight' (8)}}
  %0 = strata.quantized_linear %x, %q, %s {bits = 8 : i64, group_size = 8 : i64} : (tensor<2x6xf32>, tensor<8x3xi8>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @quantized_linear_activation_bits(%x: tensor<2x8xf32>, %q: tensor<8x3xi8>, %s: tensor<1x3xf32>) {
  // expected-error @+1 {{'strata.quantized_linear' op expected 'activation_bits' 0 or 8, got 4}}
  %0 = strata.quantized_linear %x, %q, %s {activation_bits = 4 : i64, bits = 8 : i64, group_size = 8 : i64} : (tensor<2x8xf32>, tensor<8x3xi8>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @quantized_linear_activation_block_without_bits(%x: tensor<2x8xf32>, %q: tensor<8x3xi8>, %s: tensor<1x3xf32>) {
  // expected-error @+1 {{'strata.quantized_linear' op expected 'activation_block' 0, or > 0 with activation_bits 8, got 32}}
  %0 = strata.quantized_linear %x, %q, %s {activation_block = 32 : i64, bits = 8 : i64, group_size = 8 : i64} : (tensor<2x8xf32>, tensor<8x3xi8>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @quantized_linear_w8a8_groups(%x: tensor<2x8xf32>, %q: tensor<8x3xi8>, %s: tensor<2x3xf32>) {
  // expected-error @+1 {{'strata.quantized_linear' op expected int8 activations with 8-bit weights and one scale per column (group_size 8), got bits 8 and group_size 4}}
  %0 = strata.quantized_linear %x, %q, %s {activation_bits = 8 : i64, bits = 8 : i64, group_size = 4 : i64} : (tensor<2x8xf32>, tensor<8x3xi8>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @attention_topk_without_block(%q: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{'strata.attention' op expected 'global_topk' and 'global_block' together}}
  %0 = strata.attention %q, %q, %q {causal, window = 4 : i64, global_topk = 2 : i64} : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return
}

// -----

func.func @attention_topk_zero(%q: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{'strata.attention' op expected 'global_topk' and 'global_block' >= 1, got 0 and 16}}
  %0 = strata.attention %q, %q, %q {causal, window = 4 : i64, global_topk = 0 : i64, global_block = 16 : i64} : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return
}

// -----

func.func @attention_topk_without_window(%q: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{'strata.attention' op global blocks require causal attention with a 'window'}}
  %0 = strata.attention %q, %q, %q {causal, global_topk = 2 : i64, global_block = 16 : i64} : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return
}

// -----

func.func @attention_topk_not_causal(%q: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{'strata.attention' op global blocks require causal attention with a 'window'}}
  %0 = strata.attention %q, %q, %q {window = 4 : i64, global_topk = 2 : i64, global_block = 16 : i64} : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return
}
