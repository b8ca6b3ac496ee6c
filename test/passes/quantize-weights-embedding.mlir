// RUN: strata-opt %s --split-input-file \
// RUN:   --strata-quantize-weights="functions=decode bits=4 group-size=2" \
// RUN:   | FileCheck %s
// RUN: strata-opt %s --split-input-file \
// RUN:   --strata-quantize-weights="functions=decode" \
// RUN:   | FileCheck %s --check-prefix=INT8
// RUN: strata-opt %s --split-input-file \
// RUN:   --strata-quantize-weights="functions=decode bits=4 group-size=2 keep-fp32-lm-head=true" \
// RUN:   | FileCheck %s --check-prefix=KEEP

// The token table [3, 4] has rows as wide as the LM head's input (its
// weight is [4, 3]): it becomes a quantized gather with the contractions. int4 rows in
// groups of 2 columns: row 0 [1, -2 | 0.5, 4] at scales 2/7 and 4/7, as
// binary16 values (0.28564453, 0.57128906), is [4, -7 | 1, 7], stored +8
// two per byte (even column low): 0x1C, 0xF9; row 1 [2, -4 | 1, 2]:
// [4, -7 | 4, 7]: 0x1C, 0xFC; the zero row keeps scale 1 and zeros: 0x88,
// 0x88.
// CHECK-LABEL: func.func @decode
//       CHECK:   %[[T:.+]] = strata.constant dense_resource<table_rows_q4g2> : tensor<3x2xi8>
//       CHECK:   %[[S:.+]] = strata.constant dense_resource<table_rows_q4g2_scales> : tensor<3x2xf32>
//       CHECK:   strata.quantized_gather %[[T]], %[[S]], %{{.+}} {bits = 4 : i64, group_size = 2 : i64} : (tensor<3x2xi8>, tensor<3x2xf32>, tensor<1x2xi64>) -> tensor<1x2x4xf32>
//       CHECK:   strata.quantized_linear
//       CHECK:   table_rows_q4g2: "0x010000001CF91CFC8888"
// int8, one scale per row (absmax / 127): row 0 [32, -64, 16, 127].
// INT8-LABEL: func.func @decode
//       INT8:   strata.quantized_gather {{.+}} {bits = 8 : i64, group_size = 4 : i64} : (tensor<3x4xi8>, tensor<3x1xf32>, tensor<1x2xi64>) -> tensor<1x2x4xf32>
//       INT8:   table_rows_q8g4: "0x0100000020C0107F
// The LM head and its table stay fp32 together.
// KEEP-LABEL: func.func @decode
//   KEEP-NOT:   strata.quantized_gather
//       KEEP:   strata.gather
module {
  func.func @decode(%ids: tensor<1x2xi64> {strata.name = "input_ids"}, %h: tensor<1x2x4xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x3xf32>) {
    %table = strata.constant dense_resource<table> : tensor<3x4xf32>
    %e = strata.gather %table, %ids {axis = 0 : i64} : (tensor<3x4xf32>, tensor<1x2xi64>) -> tensor<1x2x4xf32>
    %head = strata.constant dense<[[1.0, 0.0, -1.0], [2.0, 0.25, 0.0], [1.0, 1.0, 1.0], [0.5, 0.5, 0.5]]> : tensor<4x3xf32>
    %logits = strata.matmul %h, %head : (tensor<1x2x4xf32>, tensor<4x3xf32>) -> tensor<1x2x3xf32>
    return %e, %logits : tensor<1x2x4xf32>, tensor<1x2x3xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      table: "0x040000000000803F000000C00000003F0000804000000040000080C00000803F0000004000000000000000000000000000000000"
    }
  }
#-}

// -----

// A table another function reads in fp32 (a prefill entry left at fp32)
// stays: quantizing it would add a copy. So does a table narrower than the
// hidden state (a rotary cos/sin cache gathered by position).
// CHECK-LABEL: func.func @main
//       CHECK:   strata.gather
// CHECK-LABEL: func.func @decode
//   CHECK-NOT:   strata.quantized_gather
//       CHECK:   strata.gather %{{.+}}, %{{.+}} : (tensor<3x4xf32>
//       CHECK:   strata.gather %{{.+}}, %{{.+}} : (tensor<8x2xf32>
module {
  func.func @main(%ids: tensor<1x2xi64>) -> tensor<1x2x4xf32> {
    %table = strata.constant dense<1.0> : tensor<3x4xf32>
    %e = strata.gather %table, %ids {axis = 0 : i64} : (tensor<3x4xf32>, tensor<1x2xi64>) -> tensor<1x2x4xf32>
    return %e : tensor<1x2x4xf32>
  }
  func.func @decode(%ids: tensor<1x2xi64>, %pos: tensor<1x2xi64>, %h: tensor<1x2x4xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x2xf32>, tensor<1x2x3xf32>) {
    %table = strata.constant dense<1.0> : tensor<3x4xf32>
    %e = strata.gather %table, %ids {axis = 0 : i64} : (tensor<3x4xf32>, tensor<1x2xi64>) -> tensor<1x2x4xf32>
    %rotary = strata.constant dense<0.5> : tensor<8x2xf32>
    %r = strata.gather %rotary, %pos {axis = 0 : i64} : (tensor<8x2xf32>, tensor<1x2xi64>) -> tensor<1x2x2xf32>
    %head = strata.constant dense<2.0> : tensor<4x3xf32>
    %logits = strata.matmul %h, %head : (tensor<1x2x4xf32>, tensor<4x3xf32>) -> tensor<1x2x3xf32>
    return %e, %r, %logits : tensor<1x2x4xf32>, tensor<1x2x2xf32>, tensor<1x2x3xf32>
  }
}

// -----

// A table with another use than a gather (here transposed into the LM
// head) keeps its fp32 copy for that use, so its gather stays fp32.
// CHECK-LABEL: func.func @decode
//   CHECK-NOT:   strata.quantized_gather
//       CHECK:   strata.gather
module {
  func.func @decode(%ids: tensor<1x2xi64>, %h: tensor<1x2x4xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x3xf32>) {
    %table = strata.constant dense<1.0> : tensor<3x4xf32>
    %e = strata.gather %table, %ids {axis = 0 : i64} : (tensor<3x4xf32>, tensor<1x2xi64>) -> tensor<1x2x4xf32>
    %head = strata.transpose %table, [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
    %logits = strata.matmul %h, %head : (tensor<1x2x4xf32>, tensor<4x3xf32>) -> tensor<1x2x3xf32>
    return %e, %logits : tensor<1x2x4xf32>, tensor<1x2x3xf32>
  }
}

// -----

// Learned position embeddings (a table of hidden-state rows gathered by
// computed positions) are int8, one scale per row, under an int4 policy;
// the token table, gathered by the reshaped input_ids, follows the policy.
// CHECK-LABEL: func.func @decode
//       CHECK:   strata.quantized_gather {{.+}} {bits = 4 : i64, group_size = 2 : i64} {{.+}} -> tensor<1x2x4xf32>
//       CHECK:   strata.quantized_gather {{.+}} {bits = 8 : i64, group_size = 4 : i64} : (tensor<16x4xi8>, tensor<16x1xf32>, tensor<1x2xi64>) -> tensor<1x2x4xf32>
//   CHECK-NOT:   strata.gather
module {
  func.func @decode(%ids: tensor<2xi64> {strata.name = "input_ids"}, %h: tensor<1x2x4xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x3xf32>) {
    %table = strata.constant dense<1.0> : tensor<3x4xf32>
    %flat = strata.reshape %ids : (tensor<2xi64>) -> tensor<1x2xi64>
    %e = strata.gather %table, %flat {axis = 0 : i64} : (tensor<3x4xf32>, tensor<1x2xi64>) -> tensor<1x2x4xf32>
    %positions = strata.constant dense<[[0, 1]]> : tensor<1x2xi64>
    %wpe = strata.constant dense<0.5> : tensor<16x4xf32>
    %p = strata.gather %wpe, %positions {axis = 0 : i64} : (tensor<16x4xf32>, tensor<1x2xi64>) -> tensor<1x2x4xf32>
    %head = strata.constant dense<2.0> : tensor<4x3xf32>
    %logits = strata.matmul %h, %head : (tensor<1x2x4xf32>, tensor<4x3xf32>) -> tensor<1x2x3xf32>
    return %e, %p, %logits : tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x3xf32>
  }
}
