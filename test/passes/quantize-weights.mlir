// RUN: strata-opt %s --split-input-file \
// RUN:   --strata-quantize-weights="functions=decode" | FileCheck %s
// RUN: strata-opt %s --split-input-file \
// RUN:   --strata-quantize-weights="functions=decode,main group-size=2 keep-fp32-lm-head=true" \
// RUN:   | FileCheck %s --check-prefix=GROUPED
// RUN: strata-opt %s --split-input-file \
// RUN:   --strata-quantize-weights="functions=decode bits=4 group-size=2" \
// RUN:   | FileCheck %s --check-prefix=INT4
// RUN: strata-opt %s --split-input-file \
// RUN:   --strata-quantize-weights="functions=decode activation-bits=8" \
// RUN:   | FileCheck %s --check-prefix=W8A8
// RUN: strata-opt %s --split-input-file \
// RUN:   --strata-quantize-weights="functions=decode activation-bits=8 activation-block=32" \
// RUN:   | FileCheck %s --check-prefix=BLOCKS
// RUN: not strata-opt %s --split-input-file \
// RUN:   --strata-quantize-weights="functions=decode activation-block=32" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-BLOCK

// Only the chosen function changes. Its linear and its matmul by a constant
// 2-D weight (the LM head) read int8 weights with one scale per column:
// column 0 of w holds [1, -2, 0.5, 4] (absmax 4: scale 4/127, values
// round(x * 127 / 4) = [32, -64, 16, 127]), column 1 [2, -4, 1, 2]
// ([64, -127, 32, 64]); the matmul by an activation stays.
// CHECK-LABEL: func.func @main
//   CHECK-NOT:   strata.quantized_linear
//       CHECK:   strata.linear
// CHECK-LABEL: func.func @decode
//       CHECK:   %[[Q:.+]] = strata.constant dense_resource<weight_q8g4> : tensor<4x2xi8>
//       CHECK:   %[[S:.+]] = strata.constant dense_resource<weight_q8g4_scales> : tensor<1x2xf32>
//       CHECK:   strata.quantized_linear %{{.+}}, %[[Q]], %[[S]], %{{.+}} {bits = 8 : i64, group_size = 4 : i64} : (tensor<?x4xf32>, tensor<4x2xi8>, tensor<1x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
//       CHECK:   strata.matmul %{{.+}}, %{{.+}} : (tensor<?x2xf32>, tensor<2x?xf32>)
//       CHECK:   strata.quantized_linear %{{.+}} {bits = 8 : i64, group_size = 2 : i64} : (tensor<1x?x2xf32>, tensor<2x3xi8>, tensor<1x3xf32>) -> tensor<1x?x3xf32>

// Groups of 2 rows: two scales per column. The LM head (its result
// reshaped into a returned value) keeps fp32 with keep-fp32-lm-head.
// GROUPED-LABEL: func.func @main
//       GROUPED:   strata.quantized_linear {{.+}} {bits = 8 : i64, group_size = 2 : i64} : (tensor<?x4xf32>, tensor<4x2xi8>, tensor<2x2xf32>, tensor<2xf32>)
// GROUPED-LABEL: func.func @decode
//       GROUPED:   strata.quantized_linear {{.+}} {bits = 8 : i64, group_size = 2 : i64} : (tensor<?x4xf32>, tensor<4x2xi8>, tensor<2x2xf32>, tensor<2xf32>)
//       GROUPED:   strata.matmul %{{.+}}, %{{.+}} : (tensor<1x?x2xf32>, tensor<2x3xf32>)

// int4 in i8 storage, groups of 2 rows. 4-bit scales are rounded to
// binary16 values: 2/7 -> 0.28564453 (0x3E924000), 4/7 -> 0.57128906
// (0x3F124000), and the values quantized with them: column 0's groups
// [1, -2] and [0.5, 4] are [4, -7] (1 / 0.28564453 is just over 3.5) and
// [1, 7]; column 1's [2, -4] and [1, 2]: [4, -7] and [4, 7].
// INT4-LABEL: func.func @decode
//       INT4:   strata.quantized_linear {{.+}} {bits = 4 : i64, group_size = 2 : i64}
//       INT4:   weight_q4g2: "0x010000000404F9F901040707"
//       INT4:   weight_q4g2_scales: "0x040000000040923E0040123F0040123F0040923E"
// With int8 activations (W8A8) the same weights, marked for run-time
// quantization of the rows.
// W8A8-LABEL: func.func @decode
//       W8A8:   strata.quantized_linear {{.+}} {activation_bits = 8 : i64, bits = 8 : i64, group_size = 4 : i64}
//       W8A8:   strata.quantized_linear {{.+}} {activation_bits = 8 : i64, bits = 8 : i64, group_size = 2 : i64}
//       W8A8:   weight_q8g4: "0x010000002040C08110207F40"
// Per block of 32 k (the int8 decode policy): the same weights again.
// BLOCKS-LABEL: func.func @decode
//       BLOCKS:   strata.quantized_linear {{.+}} {activation_bits = 8 : i64, activation_block = 32 : i64, bits = 8 : i64, group_size = 4 : i64}
//       BLOCKS:   weight_q8g4: "0x010000002040C08110207F40"
// BAD-BLOCK: activation-block must be 0, or > 0 with activation-bits=8, got 32
module {
  // Not an LM head: an activation lies between the linear and the return.
  func.func @main(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
    %w = strata.constant dense<[[1.0, 2.0], [-2.0, -4.0], [0.5, 1.0], [4.0, 2.0]]> : tensor<4x2xf32>
    %b = strata.constant dense<[0.5, -0.5]> : tensor<2xf32>
    %y = strata.linear %x, %w, %b : (tensor<?x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %r = strata.relu %y : tensor<?x2xf32>
    return %r : tensor<?x2xf32>
  }
  func.func @decode(%x: tensor<?x4xf32>, %kt: tensor<2x?xf32>, %h: tensor<1x?x2xf32>) -> (tensor<?x?xf32>, tensor<?x3xf32>) {
    %w = strata.constant dense<[[1.0, 2.0], [-2.0, -4.0], [0.5, 1.0], [4.0, 2.0]]> : tensor<4x2xf32>
    %b = strata.constant dense<[0.5, -0.5]> : tensor<2xf32>
    %y = strata.linear %x, %w, %b : (tensor<?x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %s = strata.matmul %y, %kt : (tensor<?x2xf32>, tensor<2x?xf32>) -> tensor<?x?xf32>
    %head = strata.constant dense<[[1.0, 0.0, -1.0], [2.0, 0.25, 0.0]]> : tensor<2x3xf32>
    %logits = strata.matmul %h, %head : (tensor<1x?x2xf32>, tensor<2x3xf32>) -> tensor<1x?x3xf32>
    %shape = strata.constant dense<[-1, 3]> : tensor<2xi64>
    %flat = strata.reshape %logits, %shape : (tensor<1x?x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
    return %s, %flat : tensor<?x?xf32>, tensor<?x3xf32>
  }
}

// The blobs, row-major: [[32, 64], [-64, -127], [16, 32], [127, 64]] and
// two scales of 4/127 (0x3D010204).
//       CHECK:   weight_q8g4: "0x010000002040C08110207F40"
//       CHECK:   weight_q8g4_scales: "0x040000000402013D0402013D"
