// RUN: strata-opt %s | strata-opt | FileCheck %s
// RUN: strata-opt %s --mlir-print-op-generic | strata-opt | FileCheck %s
// Every strata op parses, prints and re-parses to the same form.

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<f32>, tensor<2x2xf32>) {
  // CHECK: strata.constant dense<5.000000e-01> : tensor<f32>
  %0 = strata.constant dense<0.5> : tensor<f32>
  // CHECK: strata.constant dense_resource<weight> : tensor<2x2xf32>
  %1 = strata.constant dense_resource<weight> : tensor<2x2xf32>
  return %0, %1 : tensor<f32>, tensor<2x2xf32>
}

// CHECK-LABEL: func.func @elementwise_binary
func.func @elementwise_binary(%a: tensor<2x64xf32>, %b: tensor<64xf32>,
                              %i: tensor<4x4xi64>, %j: tensor<4x1xi64>,
                              %p: tensor<4x4xi1>) {
  // CHECK: strata.add %{{.*}}, %{{.*}} : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  %0 = strata.add %a, %b : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  // CHECK: strata.sub
  %1 = strata.sub %a, %b : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  // CHECK: strata.mul
  %2 = strata.mul %a, %b : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  // CHECK: strata.div
  %3 = strata.div %a, %b : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  // CHECK: strata.pow
  %4 = strata.pow %a, %b : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  // CHECK: strata.mod %{{.*}}, %{{.*}} {fmod} : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  %mod = strata.mod %a, %b {fmod} : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  // CHECK: strata.mod %{{.*}}, %{{.*}} : (tensor<4x4xi64>, tensor<4x1xi64>) -> tensor<4x4xi64>
  %imod = strata.mod %i, %j : (tensor<4x4xi64>, tensor<4x1xi64>) -> tensor<4x4xi64>
  // CHECK: strata.max
  %5 = strata.max %i, %j : (tensor<4x4xi64>, tensor<4x1xi64>) -> tensor<4x4xi64>
  // CHECK: strata.min
  %6 = strata.min %i, %j : (tensor<4x4xi64>, tensor<4x1xi64>) -> tensor<4x4xi64>
  // CHECK: strata.equal %{{.*}} : (tensor<4x4xi64>, tensor<4x1xi64>) -> tensor<4x4xi1>
  %7 = strata.equal %i, %j : (tensor<4x4xi64>, tensor<4x1xi64>) -> tensor<4x4xi1>
  // CHECK: strata.less
  %8 = strata.less %i, %j : (tensor<4x4xi64>, tensor<4x1xi64>) -> tensor<4x4xi1>
  // CHECK: strata.less_equal
  %9 = strata.less_equal %i, %j : (tensor<4x4xi64>, tensor<4x1xi64>) -> tensor<4x4xi1>
  // CHECK: strata.greater
  %10 = strata.greater %a, %b : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xi1>
  // CHECK: strata.greater_equal
  %11 = strata.greater_equal %a, %b : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xi1>
  // CHECK: strata.and
  %12 = strata.and %p, %p : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  // CHECK: strata.or
  %13 = strata.or %p, %7 : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  return
}

// CHECK-LABEL: func.func @elementwise_unary
func.func @elementwise_unary(%x: tensor<2x?xf32>, %i: tensor<3xi32>, %p: tensor<3xi1>) {
  // CHECK: strata.sqrt %{{.*}} : tensor<2x?xf32>
  %0 = strata.sqrt %x : tensor<2x?xf32>
  // CHECK: strata.rsqrt
  %1 = strata.rsqrt %x : tensor<2x?xf32>
  // CHECK: strata.reciprocal
  %2 = strata.reciprocal %x : tensor<2x?xf32>
  // CHECK: strata.exp
  %3 = strata.exp %x : tensor<2x?xf32>
  // CHECK: strata.log
  %4 = strata.log %x : tensor<2x?xf32>
  // CHECK: strata.erf
  %5 = strata.erf %x : tensor<2x?xf32>
  // CHECK: strata.tanh
  %6 = strata.tanh %x : tensor<2x?xf32>
  // CHECK: strata.sigmoid
  %7 = strata.sigmoid %x : tensor<2x?xf32>
  // CHECK: strata.silu
  %8 = strata.silu %x : tensor<2x?xf32>
  // CHECK: strata.sin
  %9 = strata.sin %x : tensor<2x?xf32>
  // CHECK: strata.cos
  %10 = strata.cos %x : tensor<2x?xf32>
  // CHECK: strata.tan
  %t0 = strata.tan %x : tensor<2x?xf32>
  // CHECK: strata.asin
  %t1 = strata.asin %x : tensor<2x?xf32>
  // CHECK: strata.acos
  %t2 = strata.acos %x : tensor<2x?xf32>
  // CHECK: strata.atan
  %t3 = strata.atan %x : tensor<2x?xf32>
  // CHECK: strata.sinh
  %t4 = strata.sinh %x : tensor<2x?xf32>
  // CHECK: strata.cosh
  %t5 = strata.cosh %x : tensor<2x?xf32>
  // CHECK: strata.asinh
  %t6 = strata.asinh %x : tensor<2x?xf32>
  // CHECK: strata.acosh
  %t7 = strata.acosh %x : tensor<2x?xf32>
  // CHECK: strata.atanh
  %t8 = strata.atanh %x : tensor<2x?xf32>
  // CHECK: strata.floor
  %t9 = strata.floor %x : tensor<2x?xf32>
  // CHECK: strata.ceil
  %t10 = strata.ceil %x : tensor<2x?xf32>
  // CHECK: strata.round
  %t11 = strata.round %x : tensor<2x?xf32>
  // CHECK: strata.neg %{{.*}} : tensor<3xi32>
  %11 = strata.neg %i : tensor<3xi32>
  // CHECK: strata.abs
  %12 = strata.abs %i : tensor<3xi32>
  // CHECK: strata.relu
  %13 = strata.relu %x : tensor<2x?xf32>
  // CHECK: strata.not %{{.*}} : tensor<3xi1>
  %14 = strata.not %p : tensor<3xi1>
  // CHECK: strata.gelu %{{.*}} : tensor<2x?xf32>
  %15 = strata.gelu %x : tensor<2x?xf32>
  // CHECK: strata.gelu %{{.*}} {approximate = "tanh"} : tensor<2x?xf32>
  %16 = strata.gelu %x {approximate = "tanh"} : tensor<2x?xf32>
  return
}

// CHECK-LABEL: func.func @select_and_cast
func.func @select_and_cast(%c: tensor<1x1x8x8xi1>, %z: tensor<f32>, %x: tensor<2x64xf16>)
    -> (tensor<1x1x8x8xf32>, tensor<2x64xf32>) {
  // CHECK: strata.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x1x8x8xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x8x8xf32>
  %0 = strata.where %c, %z, %z : (tensor<1x1x8x8xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x8x8xf32>
  // CHECK: strata.cast %{{.*}} : tensor<2x64xf16> -> tensor<2x64xf32>
  %1 = strata.cast %x : tensor<2x64xf16> -> tensor<2x64xf32>
  // CHECK: strata.cast %{{.*}} : tensor<2x64xf32> -> tensor<2x64xf8E4M3FN>
  %f8 = strata.cast %1 : tensor<2x64xf32> -> tensor<2x64xf8E4M3FN>
  return %0, %1 : tensor<1x1x8x8xf32>, tensor<2x64xf32>
}

// CHECK-LABEL: func.func @contractions
func.func @contractions(%q: tensor<1x12x8x64xf32>, %kt: tensor<1x12x64x8xf32>,
                        %x: tensor<?x?x768xf32>, %w: tensor<768x2304xf32>,
                        %b: tensor<2304xf32>) {
  // CHECK: strata.matmul %{{.*}}, %{{.*}} : (tensor<1x12x8x64xf32>, tensor<1x12x64x8xf32>) -> tensor<1x12x8x8xf32>
  %0 = strata.matmul %q, %kt : (tensor<1x12x8x64xf32>, tensor<1x12x64x8xf32>) -> tensor<1x12x8x8xf32>
  // CHECK: strata.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<768x2304xf32>, tensor<2304xf32>) -> tensor<?x?x2304xf32>
  %1 = strata.linear %x, %w, %b : (tensor<?x?x768xf32>, tensor<768x2304xf32>, tensor<2304xf32>) -> tensor<?x?x2304xf32>
  // CHECK: strata.linear %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<768x2304xf32>) -> tensor<?x?x2304xf32>
  %2 = strata.linear %x, %w : (tensor<?x?x768xf32>, tensor<768x2304xf32>) -> tensor<?x?x2304xf32>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x8x64xf32>, %m: tensor<2x8xi64>) {
  // CHECK: strata.reduce_sum %{{.*}} {axes = array<i64: 2>} : tensor<2x8x64xf32> -> tensor<2x8x1xf32>
  %0 = strata.reduce_sum %x {axes = array<i64: 2>} : tensor<2x8x64xf32> -> tensor<2x8x1xf32>
  // CHECK: strata.reduce_mean %{{.*}} {axes = array<i64: -1>, keepdims = false} : tensor<2x8x64xf32> -> tensor<2x8xf32>
  %1 = strata.reduce_mean %x {axes = array<i64: -1>, keepdims = false} : tensor<2x8x64xf32> -> tensor<2x8xf32>
  // CHECK: strata.reduce_max %{{.*}} {axes = array<i64: 0, 1>} : tensor<2x8x64xf32> -> tensor<1x1x64xf32>
  %2 = strata.reduce_max %x {axes = array<i64: 0, 1>} : tensor<2x8x64xf32> -> tensor<1x1x64xf32>
  // CHECK: strata.softmax %{{.*}} : tensor<2x8x64xf32>
  %3 = strata.softmax %x : tensor<2x8x64xf32>
  // CHECK: strata.log_softmax %{{.*}} {axis = 1 : i64} : tensor<2x8x64xf32>
  %4 = strata.log_softmax %x {axis = 1 : i64} : tensor<2x8x64xf32>
  // CHECK: strata.cumsum %{{.*}} {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x8xi64>
  %5 = strata.cumsum %m {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x8xi64>
  return
}

// CHECK-LABEL: func.func @normalization
func.func @normalization(%x: tensor<1x?x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) {
  // CHECK: strata.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999997E-7 : f32} : (tensor<1x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x?x768xf32>
  %0 = strata.layer_norm %x, %g, %b {epsilon = 1.0e-6 : f32} : (tensor<1x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x?x768xf32>
  // CHECK: strata.layer_norm %{{.*}}, %{{.*}} : (tensor<1x?x768xf32>, tensor<768xf32>) -> tensor<1x?x768xf32>
  %1 = strata.layer_norm %x, %g : (tensor<1x?x768xf32>, tensor<768xf32>) -> tensor<1x?x768xf32>
  // CHECK: strata.rms_norm %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<1x?x768xf32>, tensor<768xf32>) -> tensor<1x?x768xf32>
  %2 = strata.rms_norm %x, %g {axis = 2 : i64} : (tensor<1x?x768xf32>, tensor<768xf32>) -> tensor<1x?x768xf32>
  return
}

// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                     %mask: tensor<1x1x?x?xf32>, %pad: tensor<1x1x1x?xi1>) {
  // CHECK: strata.attention %{{.*}}, %{{.*}}, %{{.*}} {causal} : (tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>) -> tensor<1x8x?x64xf32>
  %0 = strata.attention %q, %k, %k {causal} : (tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>) -> tensor<1x8x?x64xf32>
  // CHECK: strata.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {scale = 1.250000e-01 : f32} : (tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x1x?x?xf32>) -> tensor<1x8x?x64xf32>
  %1 = strata.attention %q, %k, %k mask %mask {scale = 0.125 : f32} : (tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x1x?x?xf32>) -> tensor<1x8x?x64xf32>
  // CHECK: strata.attention %{{.*}} mask %{{.*}} {causal, sinks = 4 : i64, window = 256 : i64}
  %2 = strata.attention %q, %k, %k mask %pad {causal, window = 256 : i64, sinks = 4 : i64} : (tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x1x1x?xi1>) -> tensor<1x8x?x64xf32>
  return
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%wte: tensor<512x64xf32>, %ids: tensor<1x?xi64>,
                         %x: tensor<1x8x768xf32>, %d: tensor<?x768xf32>,
                         %s3: tensor<3xi64>, %s1: tensor<1xi64>, %s2: tensor<2xi64>,
                         %s4: tensor<4xi64>, %m: tensor<1x1x8x8xi1>,
                         %k: tensor<i64>, %ones: tensor<8x8xf32>) {
  // CHECK: strata.gather %{{.*}}, %{{.*}} : (tensor<512x64xf32>, tensor<1x?xi64>) -> tensor<1x?x64xf32>
  %0 = strata.gather %wte, %ids : (tensor<512x64xf32>, tensor<1x?xi64>) -> tensor<1x?x64xf32>
  // CHECK: strata.reshape %{{.*}} : (tensor<1x8x768xf32>) -> tensor<1x8x12x64xf32>
  %1 = strata.reshape %x : (tensor<1x8x768xf32>) -> tensor<1x8x12x64xf32>
  // CHECK: strata.reshape %{{.*}}, %{{.*}} : (tensor<?x768xf32>, tensor<3xi64>) -> tensor<?x12x64xf32>
  %2 = strata.reshape %d, %s3 : (tensor<?x768xf32>, tensor<3xi64>) -> tensor<?x12x64xf32>
  // CHECK: strata.transpose %{{.*}}, [0, 2, 1, 3] : tensor<1x8x12x64xf32> -> tensor<1x12x8x64xf32>
  %3 = strata.transpose %1, [0, 2, 1, 3] : tensor<1x8x12x64xf32> -> tensor<1x12x8x64xf32>
  // CHECK: strata.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<?x768xf32>, tensor<?x768xf32>) -> tensor<?x768xf32>
  %4 = strata.concat %d, %d {axis = 0 : i64} : (tensor<?x768xf32>, tensor<?x768xf32>) -> tensor<?x768xf32>
  // CHECK: strata.slice %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {axes = array<i64: 0>} : (tensor<512x64xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x64xf32>
  %5 = strata.slice %wte, %s1, %s1, %s1 {axes = array<i64: 0>} : (tensor<512x64xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x64xf32>
  // CHECK: strata.split %{{.*}} {axis = 2 : i64, sizes = array<i64: 256, 512>} : tensor<1x8x768xf32> -> tensor<1x8x256xf32>, tensor<1x8x512xf32>
  %6:2 = strata.split %x {axis = 2 : i64, sizes = array<i64: 256, 512>} : tensor<1x8x768xf32> -> tensor<1x8x256xf32>, tensor<1x8x512xf32>
  // CHECK: strata.expand %{{.*}}, %{{.*}} : (tensor<1x1x8x8xi1>, tensor<4xi64>) -> tensor<2x12x8x8xi1>
  %7 = strata.expand %m, %s4 : (tensor<1x1x8x8xi1>, tensor<4xi64>) -> tensor<2x12x8x8xi1>
  // CHECK: strata.tile %{{.*}}, %{{.*}} : (tensor<8x8xf32>, tensor<2xi64>) -> tensor<16x8xf32>
  %8 = strata.tile %ones, %s2 : (tensor<8x8xf32>, tensor<2xi64>) -> tensor<16x8xf32>
  // CHECK: strata.trilu %{{.*}} {upper = false} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %9 = strata.trilu %ones {upper = false} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  // CHECK: strata.trilu %{{.*}}, %{{.*}} : (tensor<8x8xf32>, tensor<i64>) -> tensor<8x8xf32>
  %10 = strata.trilu %ones, %k : (tensor<8x8xf32>, tensor<i64>) -> tensor<8x8xf32>
  return
}

// CHECK-LABEL: func.func @shape_computation
func.func @shape_computation(%x: tensor<?x8x768xf32>, %s: tensor<i64>) {
  // CHECK: strata.shape %{{.*}} : tensor<?x8x768xf32> -> tensor<3xi64>
  %0 = strata.shape %x : tensor<?x8x768xf32> -> tensor<3xi64>
  // CHECK: strata.shape %{{.*}} {end = 1 : i64} : tensor<?x8x768xf32> -> tensor<1xi64>
  %1 = strata.shape %x {end = 1 : i64} : tensor<?x8x768xf32> -> tensor<1xi64>
  // CHECK: strata.constant_of_shape %{{.*}} {value = 0.000000e+00 : f32} : (tensor<3xi64>) -> tensor<?x8x768xf32>
  %2 = strata.constant_of_shape %0 {value = 0.0 : f32} : (tensor<3xi64>) -> tensor<?x8x768xf32>
  // CHECK: strata.range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %3 = strata.range %s, %s, %s : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return
}

{-#
  dialect_resources: {
    builtin: {
      weight: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// CHECK-LABEL: func.func @quantized_gather
func.func @quantized_gather(%t: tensor<512x32xi8>, %s: tensor<512x2xf32>, %ids: tensor<1x?xi64>) -> tensor<1x?x64xf32> {
  // CHECK: strata.quantized_gather %{{.*}}, %{{.*}}, %{{.*}} {bits = 4 : i64, group_size = 32 : i64} : (tensor<512x32xi8>, tensor<512x2xf32>, tensor<1x?xi64>) -> tensor<1x?x64xf32>
  %0 = strata.quantized_gather %t, %s, %ids {bits = 4 : i64, group_size = 32 : i64} : (tensor<512x32xi8>, tensor<512x2xf32>, tensor<1x?xi64>) -> tensor<1x?x64xf32>
  return %0 : tensor<1x?x64xf32>
}

// CHECK-LABEL: func.func @collectives
func.func @collectives(%x: tensor<?x1x4xf32>) -> tensor<?x1x8xf32> {
  // CHECK: strata.all_reduce %{{.*}} {ranks = 2 : i64} : tensor<?x1x4xf32>
  %0 = strata.all_reduce %x {ranks = 2 : i64} : tensor<?x1x4xf32>
  // CHECK: strata.all_gather %{{.*}} {axis = 2 : i64, ranks = 2 : i64} : (tensor<?x1x4xf32>) -> tensor<?x1x8xf32>
  %1 = strata.all_gather %0 {axis = 2 : i64, ranks = 2 : i64} : (tensor<?x1x4xf32>) -> tensor<?x1x8xf32>
  return %1 : tensor<?x1x8xf32>
}
