// RUN: strata-opt %s --strata-shard-tensor-parallel="ranks=2 rank=1" | FileCheck %s
// RUN: strata-opt %s --strata-shard-tensor-parallel="ranks=2 rank=0" | FileCheck %s --check-prefix=RANK0
// RUN: strata-opt %s --strata-shard-tensor-parallel="ranks=1 rank=0" | FileCheck %s --check-prefix=WHOLE
// RUN: not strata-opt %s --strata-shard-tensor-parallel="ranks=2 rank=2" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: tensor-parallel rank 2 of 2 is not a rank of the group

// An attention block as GPT-2 exports it: one q/k/v projection (weight
// element [k, n] = n, bias 100 + n) split in three, two heads of 2. Rank 1
// of 2 keeps the second head of each part: columns 2-3, 6-7 and 10-11; the
// output projection (row k = k) keeps rows 2-3, then sums over the ranks
// and adds the bias once.
// CHECK-LABEL: func.func @attention_block(
//       CHECK:   %[[W:.+]] = strata.constant dense<{{\[\[}}2.000000e+00, 3.000000e+00, 6.000000e+00, 7.000000e+00, 1.000000e+01, 1.100000e+01]{{.*}} : tensor<4x6xf32>
//       CHECK:   %[[B:.+]] = strata.constant dense<[1.020000e+02, 1.030000e+02, 1.060000e+02, 1.070000e+02, 1.100000e+02, 1.110000e+02]> : tensor<6xf32>
//       CHECK:   strata.linear %{{.+}}, %[[W]], %[[B]] {strata.tensor_parallel = "column"} : (tensor<?x?x4xf32>, tensor<4x6xf32>, tensor<6xf32>) -> tensor<?x?x6xf32>
//       CHECK:   strata.split {{.+}} {axis = 2 : i64, sizes = array<i64: 2, 2, 2>}
//       CHECK:   %[[HEADS:.+]] = strata.constant dense<[0, 0, 1, 2]> : tensor<4xi64>
//       CHECK:   strata.reshape %{{.+}}, %[[HEADS]] : (tensor<?x?x2xf32>, tensor<4xi64>) -> tensor<?x?x1x2xf32>
//       CHECK:   strata.attention {{.+}} : (tensor<?x1x?x2xf32>, tensor<?x1x?x2xf32>, tensor<?x1x?x2xf32>) -> tensor<?x1x?x2xf32>
//       CHECK:   %[[MERGE:.+]] = strata.constant dense<[0, 0, 2]> : tensor<3xi64>
//       CHECK:   strata.reshape %{{.+}}, %[[MERGE]] : (tensor<?x?x1x2xf32>, tensor<3xi64>) -> tensor<?x?x2xf32>
//       CHECK:   %[[WO:.+]] = strata.constant dense<{{\[\[}}2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00], [3.000000e+00, {{.*}} : tensor<2x4xf32>
//       CHECK:   %[[PART:.+]] = strata.linear %{{.+}}, %[[WO]] {strata.tensor_parallel = "row"} : (tensor<?x?x2xf32>, tensor<2x4xf32>) -> tensor<?x?x4xf32>
//       CHECK:   %[[SUM:.+]] = strata.all_reduce %[[PART]] {ranks = 2 : i64} : tensor<?x?x4xf32>
//       CHECK:   strata.add %[[SUM]], %{{.+}} : (tensor<?x?x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
// RANK0-LABEL: func.func @attention_block(
//       RANK0:   strata.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 4.000000e+00, 5.000000e+00, 8.000000e+00, 9.000000e+00]{{.*}} : tensor<4x6xf32>
// WHOLE-LABEL: func.func @attention_block(
//   WHOLE-NOT:   all_reduce
//       WHOLE:   strata.linear {{.+}} -> tensor<?x?x12xf32>
func.func @attention_block(%x: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  %wqkv = strata.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0],
                                 [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0],
                                 [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0],
                                 [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0]]> : tensor<4x12xf32>
  %bqkv = strata.constant dense<[100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0]> : tensor<12xf32>
  %wo = strata.constant dense<[[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0]]> : tensor<4x4xf32>
  %bo = strata.constant dense<0.5> : tensor<4xf32>
  %s4 = strata.constant dense<[0, 0, 2, 2]> : tensor<4xi64>
  %s3 = strata.constant dense<[0, 0, 4]> : tensor<3xi64>
  %qkv = strata.linear %x, %wqkv, %bqkv : (tensor<?x?x4xf32>, tensor<4x12xf32>, tensor<12xf32>) -> tensor<?x?x12xf32>
  %q, %k, %v = strata.split %qkv {axis = 2 : i64, sizes = array<i64: 4, 4, 4>} : tensor<?x?x12xf32> -> tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>
  %qh = strata.reshape %q, %s4 : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x?x2x2xf32>
  %kh = strata.reshape %k, %s4 : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x?x2x2xf32>
  %vh = strata.reshape %v, %s4 : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x?x2x2xf32>
  %qt = strata.transpose %qh, [0, 2, 1, 3] : tensor<?x?x2x2xf32> -> tensor<?x2x?x2xf32>
  %kt = strata.transpose %kh, [0, 2, 1, 3] : tensor<?x?x2x2xf32> -> tensor<?x2x?x2xf32>
  %vt = strata.transpose %vh, [0, 2, 1, 3] : tensor<?x?x2x2xf32> -> tensor<?x2x?x2xf32>
  %o = strata.attention %qt, %kt, %vt {causal} : (tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>) -> tensor<?x2x?x2xf32>
  %ot = strata.transpose %o, [0, 2, 1, 3] : tensor<?x2x?x2xf32> -> tensor<?x?x2x2xf32>
  %om = strata.reshape %ot, %s3 : (tensor<?x?x2x2xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  %y = strata.linear %om, %wo, %bo : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  %r = strata.add %y, %x : (tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  return %r : tensor<?x?x4xf32>
}

// An MLP (contiguous halves of the hidden units) and a vocabulary-parallel
// LM head whose logits are gathered back to 6 columns.
// CHECK-LABEL: func.func @mlp_and_head(
//       CHECK:   strata.matmul {{.+}} {strata.tensor_parallel = "column"} : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
//       CHECK:   strata.gelu %{{.+}} : tensor<?x4xf32>
//       CHECK:   %[[DOWN:.+]] = strata.matmul {{.+}} {strata.tensor_parallel = "row"} : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
//       CHECK:   strata.all_reduce %[[DOWN]] {ranks = 2 : i64} : tensor<?x4xf32>
//       CHECK:   %[[LOGITS:.+]] = strata.matmul {{.+}} {strata.tensor_parallel = "column"} : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
//       CHECK:   %[[ALL:.+]] = strata.all_gather %[[LOGITS]] {axis = 1 : i64, ranks = 2 : i64} : (tensor<?x3xf32>) -> tensor<?x6xf32>
//       CHECK:   return %[[ALL]] : tensor<?x6xf32>
func.func @mlp_and_head(%x: tensor<?x4xf32>) -> tensor<?x6xf32> {
  %up = strata.constant dense<0.25> : tensor<4x8xf32>
  %down = strata.constant dense<0.125> : tensor<8x4xf32>
  %head = strata.constant dense<0.5> : tensor<4x6xf32>
  %h = strata.matmul %x, %up : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  %g = strata.gelu %h : tensor<?x8xf32>
  %y = strata.matmul %g, %down : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  %z = strata.add %y, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %logits = strata.matmul %z, %head : (tensor<?x4xf32>, tensor<4x6xf32>) -> tensor<?x6xf32>
  return %logits : tensor<?x6xf32>
}

// A decode step over a KV cache: the state tensors hold the rank's heads.
// CHECK-LABEL: func.func @decode(
//  CHECK-SAME:     %{{.+}}: tensor<2x1x8x2xf32> {strata.state = "kv_cache.0.key"}, %{{.+}}: tensor<2x1x8x2xf32> {strata.state = "kv_cache.0.value"})
//  CHECK-SAME:     -> (tensor<?x1x4xf32>, tensor<2x1x8x2xf32> {strata.state = "kv_cache.0.key"}, tensor<2x1x8x2xf32> {strata.state = "kv_cache.0.value"})
//       CHECK:   strata.cache_write {{.+}} : (tensor<2x1x8x2xf32>, tensor<?x1x1x2xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<2x1x8x2xf32>
//       CHECK:   strata.cache_attention {{.+}} -> tensor<?x1x1x2xf32>
//       CHECK:   strata.all_reduce
func.func @decode(%x: tensor<?x1x4xf32>, %slots: tensor<?xi64>, %pos: tensor<?xi64>,
                  %kc: tensor<2x2x8x2xf32> {strata.state = "kv_cache.0.key"},
                  %vc: tensor<2x2x8x2xf32> {strata.state = "kv_cache.0.value"})
    -> (tensor<?x1x4xf32>, tensor<2x2x8x2xf32> {strata.state = "kv_cache.0.key"},
        tensor<2x2x8x2xf32> {strata.state = "kv_cache.0.value"}) {
  %wqkv = strata.constant dense<0.25> : tensor<4x12xf32>
  %wo = strata.constant dense<0.5> : tensor<4x4xf32>
  %s4 = strata.constant dense<[0, 0, 2, 2]> : tensor<4xi64>
  %s3 = strata.constant dense<[0, 0, 4]> : tensor<3xi64>
  %qkv = strata.matmul %x, %wqkv : (tensor<?x1x4xf32>, tensor<4x12xf32>) -> tensor<?x1x12xf32>
  %q, %k, %v = strata.split %qkv {axis = 2 : i64, sizes = array<i64: 4, 4, 4>} : tensor<?x1x12xf32> -> tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>
  %qh = strata.reshape %q, %s4 : (tensor<?x1x4xf32>, tensor<4xi64>) -> tensor<?x1x2x2xf32>
  %kh = strata.reshape %k, %s4 : (tensor<?x1x4xf32>, tensor<4xi64>) -> tensor<?x1x2x2xf32>
  %vh = strata.reshape %v, %s4 : (tensor<?x1x4xf32>, tensor<4xi64>) -> tensor<?x1x2x2xf32>
  %qt = strata.transpose %qh, [0, 2, 1, 3] : tensor<?x1x2x2xf32> -> tensor<?x2x1x2xf32>
  %kt = strata.transpose %kh, [0, 2, 1, 3] : tensor<?x1x2x2xf32> -> tensor<?x2x1x2xf32>
  %vt = strata.transpose %vh, [0, 2, 1, 3] : tensor<?x1x2x2xf32> -> tensor<?x2x1x2xf32>
  %kc1 = strata.cache_write %kc, %kt, %slots, %pos : (tensor<2x2x8x2xf32>, tensor<?x2x1x2xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<2x2x8x2xf32>
  %vc1 = strata.cache_write %vc, %vt, %slots, %pos : (tensor<2x2x8x2xf32>, tensor<?x2x1x2xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<2x2x8x2xf32>
  %o = strata.cache_attention %qt, %kc1, %vc1, %slots, %pos : (tensor<?x2x1x2xf32>, tensor<2x2x8x2xf32>, tensor<2x2x8x2xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x2x1x2xf32>
  %ot = strata.transpose %o, [0, 2, 1, 3] : tensor<?x2x1x2xf32> -> tensor<?x1x2x2xf32>
  %om = strata.reshape %ot, %s3 : (tensor<?x1x2x2xf32>, tensor<3xi64>) -> tensor<?x1x4xf32>
  %y = strata.matmul %om, %wo : (tensor<?x1x4xf32>, tensor<4x4xf32>) -> tensor<?x1x4xf32>
  return %y, %kc1, %vc1 : tensor<?x1x4xf32>, tensor<2x2x8x2xf32>, tensor<2x2x8x2xf32>
}

// An LM head of 5 columns over 2 ranks: each computes 3 (rank 1: columns 3
// and 4, then a zero column), gathered at once and cut back to 5.
// CHECK-LABEL: func.func @odd_vocabulary(
//       CHECK:   %[[W:.+]] = strata.constant dense<{{\[\[}}3.000000e+00, 4.000000e+00, 0.000000e+00]{{.*}} : tensor<2x3xf32>
//       CHECK:   %[[Y:.+]] = strata.matmul %{{.+}}, %[[W]] {strata.tensor_parallel = "column"} : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
//       CHECK:   %[[ALL:.+]] = strata.all_gather %[[Y]] {axis = 1 : i64, ranks = 2 : i64} : (tensor<?x3xf32>) -> tensor<?x6xf32>
//       CHECK:   %[[CUT:.+]] = strata.slice %[[ALL]], {{.+}} {axes = array<i64: 1>} : (tensor<?x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x5xf32>
//       CHECK:   return %[[CUT]]
func.func @odd_vocabulary(%x: tensor<?x2xf32>) -> tensor<?x5xf32> {
  %w = strata.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 2.0, 3.0, 4.0]]> : tensor<2x5xf32>
  %y = strata.matmul %x, %w : (tensor<?x2xf32>, tensor<2x5xf32>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// A norm over a whole split projection (OLMo-2's q norm): gathered,
// normalized whole, and the rank's share cut again.
// CHECK-LABEL: func.func @norm_over_split(
//       CHECK:   %[[Q:.+]] = strata.matmul {{.+}} -> tensor<?x2xf32>
//       CHECK:   %[[ALL:.+]] = strata.all_gather %[[Q]] {axis = 1 : i64, ranks = 2 : i64} : (tensor<?x2xf32>) -> tensor<?x4xf32>
//       CHECK:   %[[N:.+]] = strata.rms_norm %[[ALL]], {{.+}} -> tensor<?x4xf32>
//       CHECK:   strata.slice %[[N]], {{.+}} -> tensor<?x2xf32>
//       CHECK:   strata.all_reduce
func.func @norm_over_split(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %wq = strata.constant dense<0.5> : tensor<4x4xf32>
  %wo = strata.constant dense<0.25> : tensor<4x4xf32>
  %g = strata.constant dense<1.0> : tensor<4xf32>
  %q = strata.matmul %x, %wq : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %n = strata.rms_norm %q, %g {axis = 1 : i64} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %y = strata.matmul %n, %wo : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
