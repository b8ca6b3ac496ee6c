// RUN: strata-opt %s --split-input-file --verify-diagnostics
// Verifier errors of gather, gather_elements, pad, quantized_gather, reshape, transpose, concat, slice, split,
// expand, tile and trilu.

func.func @gather_axis(%d: tensor<8x4xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'strata.gather' op 'axis' 2 is out of range for rank 2}}
  %0 = strata.gather %d, %i {axis = 2 : i64} : (tensor<8x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @gather_wrong_result(%d: tensor<8x4xf32>, %i: tensor<1x2xi64>) {
  // expected-error @+1 {{'strata.gather' op expected result shape 1x2x4, got 2x4}}
  %0 = strata.gather %d, %i : (tensor<8x4xf32>, tensor<1x2xi64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @gather_elements_rank(%d: tensor<8x4xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'strata.gather_elements' op expected 'indices' of rank 2, got 2}}
  %0 = strata.gather_elements %d, %i : (tensor<8x4xf32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @gather_elements_wider(%d: tensor<8x4xf32>, %i: tensor<2x5xi64>) {
  // expected-error @+1 {{'strata.gather_elements' op 'indices' dim 1 (5) exceeds the data's (4)}}
  %0 = strata.gather_elements %d, %i {axis = 0 : i64} : (tensor<8x4xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
  return
}

// -----

func.func @pad_mode(%x: tensor<3xf32>) {
  // expected-error @+1 {{'strata.pad' op expected 'mode' constant, reflect, edge or wrap, got 'mirror'}}
  %0 = strata.pad %x {mode = "mirror", pads = array<i64: 1, 1>} : (tensor<3xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @pad_crops_too_much(%x: tensor<3xf32>) {
  // expected-error @+1 {{'strata.pad' op the pads of dim 0 remove more than its 3 elements}}
  %0 = strata.pad %x {mode = "constant", pads = array<i64: -2, -2>} : (tensor<3xf32>) -> tensor<0xf32>
  return
}

// -----

func.func @quantized_gather_bits(%t: tensor<8x4xi8>, %s: tensor<8x1xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'strata.quantized_gather' op expected 'bits' 8 or 4, got 2}}
  %0 = strata.quantized_gather %t, %s, %i {bits = 2 : i64, group_size = 4 : i64} : (tensor<8x4xi8>, tensor<8x1xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @quantized_gather_nibble_rows(%t: tensor<8x4xi8>, %s: tensor<8x2xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'strata.quantized_gather' op expected 'table' rows of 2 bytes for 4 columns of 4 bits, got 4}}
  %0 = strata.quantized_gather %t, %s, %i {bits = 4 : i64, group_size = 2 : i64} : (tensor<8x4xi8>, tensor<8x2xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @quantized_gather_scales(%t: tensor<8x2xi8>, %s: tensor<8x1xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'strata.quantized_gather' op expected 'scales' of shape 8x2, got 8x1}}
  %0 = strata.quantized_gather %t, %s, %i {bits = 4 : i64, group_size = 2 : i64} : (tensor<8x2xi8>, tensor<8x1xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @quantized_gather_result(%t: tensor<8x4xi8>, %s: tensor<8x1xf32>, %i: tensor<1x2xi64>) {
  // expected-error @+1 {{'strata.quantized_gather' op expected a result of rank 3 with a static last dim (the row width), got 2x4}}
  %0 = strata.quantized_gather %t, %s, %i {bits = 8 : i64, group_size = 4 : i64} : (tensor<8x4xi8>, tensor<8x1xf32>, tensor<1x2xi64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @quantized_gather_group(%t: tensor<8x4xi8>, %s: tensor<8x1xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'strata.quantized_gather' op expected 'group_size' >= 1, got 0}}
  %0 = strata.quantized_gather %t, %s, %i {bits = 8 : i64, group_size = 0 : i64} : (tensor<8x4xi8>, tensor<8x1xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @reshape_element_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'strata.reshape' op expected the same number of elements, got 6 in and 8 out}}
  %0 = strata.reshape %x : (tensor<2x3xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @reshape_dynamic_without_shape(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{'strata.reshape' op expected a 'shape' operand when the result has dynamic dims}}
  %0 = strata.reshape %x : (tensor<?x3xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @reshape_shape_length(%x: tensor<?x3xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{'strata.reshape' op expected 'shape' with 1 entries, got 2}}
  %0 = strata.reshape %x, %s : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?xf32>
  return
}

// -----

func.func @transpose_size(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'strata.transpose' op expected 'permutation' of size 2, got 3}}
  %0 = strata.transpose %x, [0, 1, 2] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'strata.transpose' op 'permutation' is not a permutation of [0, 2)}}
  %0 = strata.transpose %x, [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @transpose_wrong_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'strata.transpose' op expected result shape 3x2, got 2x3}}
  %0 = strata.transpose %x, [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @concat_no_inputs() {
  // expected-error @+1 {{'strata.concat' op expected 1 or more operands, but found 0}}
  %0 = strata.concat {axis = 0 : i64} : () -> tensor<1xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'strata.concat' op 'axis' 2 is out of range for rank 2}}
  %0 = strata.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'strata.concat' op expected every input to have rank 2, input 1 has rank 1}}
  %0 = strata.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_other_dims(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'strata.concat' op input 1 has shape 4x3, incompatible with 2x3 outside axis 1}}
  %0 = strata.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_wrong_result(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'strata.concat' op expected result shape 2x6, got 2x5}}
  %0 = strata.concat %a, %a {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @slice_axis(%x: tensor<8x4xf32>, %s: tensor<1xi64>) {
  // expected-error @+1 {{'strata.slice' op 'axes' 3 is out of range for rank 2}}
  %0 = strata.slice %x, %s, %s, %s {axes = array<i64: 3>} : (tensor<8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4xf32>
  return
}

// -----

func.func @slice_duplicate_axis(%x: tensor<8x4xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{'strata.slice' op axis -2 appears twice in 'axes'}}
  %0 = strata.slice %x, %s, %s, %s {axes = array<i64: 0, -2>} : (tensor<8x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x4xf32>
  return
}

// -----

func.func @slice_starts_length(%x: tensor<8x4xf32>, %s1: tensor<1xi64>, %s2: tensor<2xi64>) {
  // expected-error @+1 {{'strata.slice' op expected 'starts' with 1 entries, got 2}}
  %0 = strata.slice %x, %s2, %s1, %s1 {axes = array<i64: 0>} : (tensor<8x4xf32>, tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4xf32>
  return
}

// -----

func.func @slice_result_rank(%x: tensor<8x4xf32>, %s: tensor<1xi64>) {
  // expected-error @+1 {{'strata.slice' op expected result rank 2, got 1}}
  %0 = strata.slice %x, %s, %s, %s {axes = array<i64: 0>} : (tensor<8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return
}

// -----

func.func @slice_unsliced_dim(%x: tensor<8x4xf32>, %s: tensor<1xi64>) {
  // expected-error @+1 {{'strata.slice' op expected unsliced dim 1 to stay 4, got 3}}
  %0 = strata.slice %x, %s, %s, %s {axes = array<i64: 0>} : (tensor<8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x3xf32>
  return
}

// -----

func.func @split_axis(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'strata.split' op 'axis' 5 is out of range for rank 2}}
  %0:2 = strata.split %x {axis = 5 : i64, sizes = array<i64: 3, 3>} : tensor<2x6xf32> -> tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @split_sizes_count(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'strata.split' op expected 2 entries in 'sizes' (one per result), got 3}}
  %0:2 = strata.split %x {axis = 1 : i64, sizes = array<i64: 2, 2, 2>} : tensor<2x6xf32> -> tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @split_negative_size(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'strata.split' op expected non-negative 'sizes', got -1}}
  %0:2 = strata.split %x {axis = 1 : i64, sizes = array<i64: 7, -1>} : tensor<2x6xf32> -> tensor<2x7xf32>, tensor<2x?xf32>
  return
}

// -----

func.func @split_sum(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'strata.split' op expected 'sizes' to sum to 6, got 5}}
  %0:2 = strata.split %x {axis = 1 : i64, sizes = array<i64: 3, 2>} : tensor<2x6xf32> -> tensor<2x3xf32>, tensor<2x2xf32>
  return
}

// -----

func.func @split_wrong_result(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'strata.split' op expected result shape 2x2, got 2x3}}
  %0:2 = strata.split %x {axis = 1 : i64, sizes = array<i64: 4, 2>} : tensor<2x6xf32> -> tensor<2x4xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @expand_rank(%x: tensor<1x8xf32>, %s: tensor<3xi64>) {
  // expected-error @+1 {{'strata.expand' op expected result rank 3, got 2}}
  %0 = strata.expand %x, %s : (tensor<1x8xf32>, tensor<3xi64>) -> tensor<4x8xf32>
  return
}

// -----

func.func @expand_not_broadcastable(%x: tensor<3x8xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{'strata.expand' op input shape 3x8 does not broadcast to result shape 4x8}}
  %0 = strata.expand %x, %s : (tensor<3x8xf32>, tensor<2xi64>) -> tensor<4x8xf32>
  return
}

// -----

func.func @tile_rank(%x: tensor<2x3xf32>, %r: tensor<2xi64>) {
  // expected-error @+1 {{'strata.tile' op expected result rank 2, got 1}}
  %0 = strata.tile %x, %r : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<12xf32>
  return
}

// -----

func.func @tile_repeats(%x: tensor<2x3xf32>, %r: tensor<3xi64>) {
  // expected-error @+1 {{'strata.tile' op expected 'repeats' with 2 entries, got 3}}
  %0 = strata.tile %x, %r : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  return
}

// -----

func.func @trilu_rank(%x: tensor<8xf32>) {
  // expected-error @+1 {{'strata.trilu' op expected 'input' of rank >= 2, got rank 1}}
  %0 = strata.trilu %x : (tensor<8xf32>) -> tensor<8xf32>
  return
}
