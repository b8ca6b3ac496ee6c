// RUN: strata-opt %s --split-input-file --verify-diagnostics

// An int8 cache row holds D values and a 4-byte scale: 6 is not D + 4
// with D a multiple of 4.
func.func @int8_row_without_room(%c: tensor<2x1x8x6xi8>, %u: tensor<1x1x1x2xf32>, %s: tensor<1xi64>) -> tensor<2x1x8x6xi8> {
  // expected-error @+1 {{expected the i8 'cache' rows to hold a multiple of 4 values and a 4-byte scale (last dim D + 4), got 6}}
  %0 = strata.cache_write %c, %u, %s, %s : (tensor<2x1x8x6xi8>, tensor<1x1x1x2xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x1x8x6xi8>
  return %0 : tensor<2x1x8x6xi8>
}

// -----

// The update's head dim is the row's value count (8 - 4), not its bytes.
func.func @int8_head_dim(%c: tensor<2x1x8x8xi8>, %u: tensor<1x1x1x8xf32>, %s: tensor<1xi64>) -> tensor<2x1x8x8xi8> {
  // expected-error @+1 {{does not match the heads and head dim of cache}}
  %0 = strata.cache_write %c, %u, %s, %s : (tensor<2x1x8x8xi8>, tensor<1x1x1x8xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x1x8x8xi8>
  return %0 : tensor<2x1x8x8xi8>
}

// -----

// A compressed cache holds fp32 values: a bf16 update does not go into an
// int8 cache.
func.func @bf16_into_int8(%c: tensor<2x1x8x8xi8>, %u: tensor<1x1x1x4xbf16>, %s: tensor<1xi64>) -> tensor<2x1x8x8xi8> {
  // expected-error @+1 {{expected 'cache' of 'bf16' elements, or bf16 or i8 holding f32 values, got 'i8'}}
  %0 = strata.cache_write %c, %u, %s, %s : (tensor<2x1x8x8xi8>, tensor<1x1x1x4xbf16>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x1x8x8xi8>
  return %0 : tensor<2x1x8x8xi8>
}

// -----

// Keys and values share one element type.
func.func @mixed_caches(%q: tensor<1x2x1x4xf32>, %k: tensor<2x1x8x8xi8>, %v: tensor<2x1x8x4xbf16>, %s: tensor<1xi64>) -> tensor<1x2x1x4xf32> {
  // expected-error @+1 {{failed to verify that all of {key_cache, value_cache} have same element type}}
  %0 = strata.cache_attention %q, %k, %v, %s, %s : (tensor<1x2x1x4xf32>, tensor<2x1x8x8xi8>, tensor<2x1x8x4xbf16>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x1x4xf32>
  return %0 : tensor<1x2x1x4xf32>
}

// -----

// The result's last dim is the value cache's value count.
func.func @int8_result_dim(%q: tensor<1x2x1x4xf32>, %k: tensor<2x1x8x8xi8>, %v: tensor<2x1x8x8xi8>, %s: tensor<1xi64>) -> tensor<1x2x1x8xf32> {
  // expected-error @+1 {{result}}
  %0 = strata.cache_attention %q, %k, %v, %s, %s : (tensor<1x2x1x4xf32>, tensor<2x1x8x8xi8>, tensor<2x1x8x8xi8>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x1x8xf32>
  return %0 : tensor<1x2x1x8xf32>
}

// -----

// A ring's attributes come together.
func.func @ring_half(%c: tensor<2x1x8x4xf32>, %u: tensor<1x1x1x4xf32>, %s: tensor<1xi64>) -> tensor<2x1x8x4xf32> {
  // expected-error @+1 {{expected 'ring_kept' and 'ring_context' together}}
  %0 = strata.cache_write %c, %u, %s, %s {ring_kept = 2 : i64} : (tensor<2x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x1x8x4xf32>
  return %0 : tensor<2x1x8x4xf32>
}

// -----

// A ring keeps fewer rows in place than it has, in a context at least as
// long.
func.func @ring_all_kept(%c: tensor<2x1x8x4xf32>, %u: tensor<1x1x1x4xf32>, %s: tensor<1xi64>) -> tensor<2x1x8x4xf32> {
  // expected-error @+1 {{expected 0 <= ring_kept (8) < cache rows (8) <= ring_context (64)}}
  %0 = strata.cache_write %c, %u, %s, %s {ring_kept = 8 : i64, ring_context = 64 : i64} : (tensor<2x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x1x8x4xf32>
  return %0 : tensor<2x1x8x4xf32>
}

// -----

// One write fits in the ring.
func.func @ring_write_too_long(%c: tensor<2x1x8x4xf32>, %u: tensor<1x1x7x4xf32>, %s: tensor<1xi64>) -> tensor<2x1x8x4xf32> {
  // expected-error @+1 {{writes 7 rows into a ring of 6}}
  %0 = strata.cache_write %c, %u, %s, %s {ring_kept = 2 : i64, ring_context = 64 : i64} : (tensor<2x1x8x4xf32>, tensor<1x1x7x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x1x8x4xf32>
  return %0 : tensor<2x1x8x4xf32>
}

// -----

// Attention over a ring needs a window, within the ring with the new rows.
func.func @ring_without_window(%q: tensor<1x2x1x4xf32>, %k: tensor<2x1x8x4xf32>, %s: tensor<1xi64>) -> tensor<1x2x1x4xf32> {
  // expected-error @+1 {{a ring cache requires 'window'}}
  %0 = strata.cache_attention %q, %k, %k, %s, %s {ring_kept = 2 : i64, ring_context = 64 : i64} : (tensor<1x2x1x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x1x4xf32>
  return %0 : tensor<1x2x1x4xf32>
}

// -----

func.func @ring_window_too_wide(%q: tensor<1x2x3x4xf32>, %k: tensor<2x1x8x4xf32>, %s: tensor<1xi64>) -> tensor<1x2x3x4xf32> {
  // expected-error @+1 {{a ring of 6 rows cannot hold a window of 5 and 3 new rows}}
  %0 = strata.cache_attention %q, %k, %k, %s, %s {window = 5 : i64, sinks = 2 : i64, ring_kept = 2 : i64, ring_context = 64 : i64} : (tensor<1x2x3x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x3x4xf32>
  return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @ring_sinks_not_kept(%q: tensor<1x2x1x4xf32>, %k: tensor<2x1x8x4xf32>, %s: tensor<1xi64>) -> tensor<1x2x1x4xf32> {
  // expected-error @+1 {{expected 'sinks' <= ring_kept (1)}}
  %0 = strata.cache_attention %q, %k, %k, %s, %s {window = 4 : i64, sinks = 2 : i64, ring_kept = 1 : i64, ring_context = 64 : i64} : (tensor<1x2x1x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x1x4xf32>
  return %0 : tensor<1x2x1x4xf32>
}

// -----

// Global blocks may choose any earlier key: not over a ring.
func.func @global_blocks_over_ring(%q: tensor<1x2x1x4xf32>, %k: tensor<2x1x8x4xf32>, %s: tensor<1xi64>) -> tensor<1x2x1x4xf32> {
  // expected-error @+1 {{global blocks need the whole cache, not a ring}}
  %0 = strata.cache_attention %q, %k, %k, %s, %s {window = 4 : i64, sinks = 2 : i64, ring_kept = 2 : i64, ring_context = 64 : i64, global_topk = 1 : i64, global_block = 2 : i64} : (tensor<1x2x1x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x1x4xf32>
  return %0 : tensor<1x2x1x4xf32>
}

// -----

func.func @global_blocks_without_window(%q: tensor<1x2x1x4xf32>, %k: tensor<2x1x8x4xf32>, %s: tensor<1xi64>) -> tensor<1x2x1x4xf32> {
  // expected-error @+1 {{global blocks require causal attention with a 'window'}}
  %0 = strata.cache_attention %q, %k, %k, %s, %s {global_topk = 1 : i64, global_block = 2 : i64} : (tensor<1x2x1x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x1x4xf32>
  return %0 : tensor<1x2x1x4xf32>
}

// -----

// A paged cache names each row's blocks in a [rows, blocks] table.
func.func @paged_slots_rank_1(%c: tensor<6x2x4x4xf32>, %u: tensor<1x2x1x4xf32>, %s: tensor<1xi64>) -> tensor<6x2x4x4xf32> {
  // expected-error @+1 {{expected a block table [rows, blocks] with a static block count, got 1}}
  %0 = strata.cache_write %c, %u, %s, %s {block_size = 4 : i64} : (tensor<6x2x4x4xf32>, tensor<1x2x1x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<6x2x4x4xf32>
  return %0 : tensor<6x2x4x4xf32>
}

// -----

func.func @table_without_block_size(%c: tensor<6x2x4x4xf32>, %u: tensor<1x2x1x4xf32>, %t: tensor<1x3xi64>, %s: tensor<1xi64>) -> tensor<6x2x4x4xf32> {
  // expected-error @+1 {{expected 'slots' of rank 1 without 'block_size', got 1x3}}
  %0 = strata.cache_write %c, %u, %t, %s : (tensor<6x2x4x4xf32>, tensor<1x2x1x4xf32>, tensor<1x3xi64>, tensor<1xi64>) -> tensor<6x2x4x4xf32>
  return %0 : tensor<6x2x4x4xf32>
}

// -----

// The cache's rows are one block's positions.
func.func @block_size_not_the_rows(%c: tensor<6x2x4x4xf32>, %u: tensor<1x2x1x4xf32>, %t: tensor<1x3xi64>, %s: tensor<1xi64>) -> tensor<6x2x4x4xf32> {
  // expected-error @+1 {{expected 'block_size' (8) to be the cache's rows per block (4)}}
  %0 = strata.cache_write %c, %u, %t, %s {block_size = 8 : i64} : (tensor<6x2x4x4xf32>, tensor<1x2x1x4xf32>, tensor<1x3xi64>, tensor<1xi64>) -> tensor<6x2x4x4xf32>
  return %0 : tensor<6x2x4x4xf32>
}

// -----

func.func @paged_ring(%c: tensor<6x2x4x4xf32>, %u: tensor<1x2x1x4xf32>, %t: tensor<1x3xi64>, %s: tensor<1xi64>) -> tensor<6x2x4x4xf32> {
  // expected-error @+1 {{a paged cache is not a ring}}
  %0 = strata.cache_write %c, %u, %t, %s {block_size = 4 : i64, ring_kept = 1 : i64, ring_context = 64 : i64} : (tensor<6x2x4x4xf32>, tensor<1x2x1x4xf32>, tensor<1x3xi64>, tensor<1xi64>) -> tensor<6x2x4x4xf32>
  return %0 : tensor<6x2x4x4xf32>
}

// -----

func.func @paged_global_blocks(%q: tensor<1x2x1x4xf32>, %k: tensor<6x1x4x4xf32>, %t: tensor<1x3xi64>, %s: tensor<1xi64>) -> tensor<1x2x1x4xf32> {
  // expected-error @+1 {{global blocks need a contiguous cache, not a paged one}}
  %0 = strata.cache_attention %q, %k, %k, %t, %s {window = 4 : i64, global_topk = 1 : i64, global_block = 2 : i64, block_size = 4 : i64} : (tensor<1x2x1x4xf32>, tensor<6x1x4x4xf32>, tensor<6x1x4x4xf32>, tensor<1x3xi64>, tensor<1xi64>) -> tensor<1x2x1x4xf32>
  return %0 : tensor<1x2x1x4xf32>
}
