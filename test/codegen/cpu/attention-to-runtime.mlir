// RUN: strata-opt %s --strata-cpu-attention-to-runtime | FileCheck %s

// fp32 grouped-query attention (4 query heads over 2 key/value heads)
// becomes one call of the runtime's kernel: the operands enter through
// read-only to_buffer (tagged per call, so CSE cannot merge two calls'
// reads), the result is a fresh buffer returned as a tensor; the parameter
// block carries the head counts. Other element types keep strata.attention
// for the generic lowering.
// CHECK:       func.func private @strata_rt_attention_f32(index) attributes {strata.runtime_import}
// CHECK-LABEL: func.func @attention
//       CHECK:   %[[PARAMS:.+]] = memref.alloca() : memref<39xi64>
//       CHECK:   bufferization.to_buffer %arg0 read_only {strata.runtime_call = 0 : i64}
//       CHECK:   bufferization.to_buffer %arg1 read_only {strata.runtime_call = 0 : i64}
//       CHECK:   bufferization.to_buffer %arg2 read_only {strata.runtime_call = 0 : i64}
//       CHECK:   %[[OUT:.+]] = memref.alloc() : memref<1x4x8x16xf32>
//       CHECK:   %[[H:.+]] = arith.constant 4 : index
//       CHECK:   %[[HKV:.+]] = arith.constant 2 : index
//       CHECK:   arith.index_cast %[[H]] : index to i64
//       CHECK:   arith.index_cast %[[HKV]] : index to i64
//       CHECK:   %[[ADDR:.+]] = memref.extract_aligned_pointer_as_index %[[PARAMS]]
//       CHECK:   call @strata_rt_attention_f32(%[[ADDR]])
//       CHECK:   %[[R:.+]] = bufferization.to_tensor %[[OUT]] restrict writable
//       CHECK:   return %[[R]]
//   CHECK-NOT:   strata.attention
// CHECK-LABEL: func.func @attention_f16
//       CHECK:   strata.attention
//   CHECK-NOT:   call @strata_rt_attention_f32
func.func @attention(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %o = strata.attention %q, %k, %v {causal} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
func.func @attention_f16(%q: tensor<1x4x8x16xf16>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16> {
  %o = strata.attention %q, %k, %v : (tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf16>
  return %o : tensor<1x4x8x16xf16>
}
