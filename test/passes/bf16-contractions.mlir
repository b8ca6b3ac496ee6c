// RUN: strata-opt %s --strata-bf16-contractions="functions=prefill,prefill_attention" | FileCheck %s
// RUN: strata-opt %s --strata-bf16-contractions="functions=prefill keep-fp32-lm-head=true" | FileCheck %s --check-prefix=HEAD

// Only the chosen function's linear layers are marked: its linear and its
// matmul by a constant 2-D weight (the LM head), not the matmul of two
// activations; main keeps fp32. With keep-fp32-lm-head the LM head (its
// result reshaped into a returned value) stays unmarked.
// CHECK-LABEL: func.func @main
//   CHECK-NOT:   strata.compute_type
// CHECK-LABEL: func.func @prefill
//       CHECK:   strata.linear {{.+}} {strata.compute_type = bf16}
//       CHECK:   strata.matmul %{{.+}}, %{{.+}} : (tensor<?x2xf32>, tensor<2x?xf32>)
//       CHECK:   strata.matmul {{.+}} {strata.compute_type = bf16} : (tensor<1x?x2xf32>, tensor<2x3xf32>)
// The chosen function's fp32 attention is marked too (its products), an
// fp16 one is not.
// CHECK-LABEL: func.func @prefill_attention
//       CHECK:   strata.attention {{.+}}strata.compute_type = bf16{{.+}} : (tensor<1x2x8x16xf32>
//       CHECK:   strata.attention
//   CHECK-NOT:   strata.compute_type
// HEAD-LABEL: func.func @prefill
//       HEAD:   strata.linear {{.+}} {strata.compute_type = bf16}
//   HEAD-NOT:   strata.compute_type
module {
  func.func @main(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
    %w = strata.constant dense<1.0> : tensor<4x2xf32>
    %y = strata.linear %x, %w : (tensor<?x4xf32>, tensor<4x2xf32>) -> tensor<?x2xf32>
    return %y : tensor<?x2xf32>
  }
  func.func @prefill(%x: tensor<?x4xf32>, %kt: tensor<2x?xf32>, %h: tensor<1x?x2xf32>) -> (tensor<?x?xf32>, tensor<?x3xf32>) {
    %w = strata.constant dense<1.0> : tensor<4x2xf32>
    %y = strata.linear %x, %w : (tensor<?x4xf32>, tensor<4x2xf32>) -> tensor<?x2xf32>
    %s = strata.matmul %y, %kt : (tensor<?x2xf32>, tensor<2x?xf32>) -> tensor<?x?xf32>
    %head = strata.constant dense<0.5> : tensor<2x3xf32>
    %logits = strata.matmul %h, %head : (tensor<1x?x2xf32>, tensor<2x3xf32>) -> tensor<1x?x3xf32>
    %shape = strata.constant dense<[-1, 3]> : tensor<2xi64>
    %flat = strata.reshape %logits, %shape : (tensor<1x?x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
    return %s, %flat : tensor<?x?xf32>, tensor<?x3xf32>
  }
  func.func @prefill_attention(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>,
                               %h: tensor<1x2x8x16xf16>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf16>) {
    %o = strata.attention %q, %k, %v {causal} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
    %o16 = strata.attention %h, %h, %h : (tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>) -> tensor<1x2x8x16xf16>
    return %o, %o16 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf16>
  }
}
