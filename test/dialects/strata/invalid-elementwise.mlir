// RUN: strata-opt %s --split-input-file --verify-diagnostics
// Verifier errors of the elementwise, selection and conversion ops.

func.func @add_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'strata.add' op operand shapes 2x3 and 4 are not broadcast-compatible}}
  %0 = strata.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @mul_wrong_result_shape(%a: tensor<2x64xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{'strata.mul' op expected result shape 2x64, got 3x64}}
  %0 = strata.mul %a, %b : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<3x64xf32>
  return
}

// -----

func.func @sub_mixed_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'strata.sub' op failed to verify that all of {lhs, rhs} have same element type}}
  %0 = strata.sub %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @div_result_element_type(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'strata.div' op failed to verify that all of {lhs, result} have same element type}}
  %0 = strata.div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @sqrt_of_integers(%a: tensor<4xi32>) {
  // expected-error @+1 {{'strata.sqrt' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = strata.sqrt %a : tensor<4xi32>
  return
}

// -----

func.func @mod_not_broadcastable(%a: tensor<3xi32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'strata.mod' op operand shapes 3 and 4 are not broadcast-compatible}}
  %0 = strata.mod %a, %b : (tensor<3xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @compare_result_not_bool(%a: tensor<4xi64>) {
  // expected-error @+1 {{'strata.less' op result #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xi64>'}}
  %0 = strata.less %a, %a : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @equal_wrong_result_shape(%a: tensor<4x1xi64>, %b: tensor<1x4xi64>) {
  // expected-error @+1 {{'strata.equal' op expected result shape 4x4, got 4x1}}
  %0 = strata.equal %a, %b : (tensor<4x1xi64>, tensor<1x4xi64>) -> tensor<4x1xi1>
  return
}

// -----

func.func @and_of_floats(%a: tensor<4xf32>) {
  // expected-error @+1 {{'strata.and' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = strata.and %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @unranked_operand(%a: tensor<*xf32>) {
  // expected-error @+1 {{'strata.exp' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<*xf32>'}}
  %0 = "strata.exp"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @unary_type_change(%a: tensor<4xf32>) {
  // expected-error @+1 {{'strata.tanh' op requires the same type for all operands and results}}
  %0 = "strata.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @gelu_bad_approximation(%a: tensor<4xf32>) {
  // expected-error @+1 {{'strata.gelu' op attribute 'approximate' failed to satisfy constraint: string attribute 'none' or 'tanh'}}
  %0 = strata.gelu %a {approximate = "fast"} : tensor<4xf32>
  return
}

// -----

func.func @where_not_broadcastable(%c: tensor<3xi1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'strata.where' op operand shapes 3, 4 and 4 are not broadcast-compatible}}
  %0 = strata.where %c, %x, %x : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @where_wrong_result(%c: tensor<2x1xi1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'strata.where' op expected result shape 2x4, got 4}}
  %0 = strata.where %c, %x, %x : (tensor<2x1xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @where_condition_not_bool(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'strata.where' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = strata.where %c, %x, %x : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @cast_changes_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'strata.cast' op requires the same shape for all operands and results}}
  %0 = strata.cast %x : tensor<4xf32> -> tensor<5xf16>
  return
}

// -----

func.func @constant_type_mismatch() {
  // expected-error @+1 {{'strata.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "strata.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<2xf32>
  return
}
