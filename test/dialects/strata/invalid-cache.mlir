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
