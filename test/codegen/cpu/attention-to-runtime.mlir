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

// Attention over a KV cache: the same kernel, the caches read in place
// (their slot extent is the kernel's slot count), row b's slot and key
// count passed by address (int64 elements), causal; the slots and lengths
// are checked against the cache first.
// CHECK-LABEL: func.func @cache_attention
//       CHECK:   strata.check {{.+}}{kind = 8 : i64
//       CHECK:   strata.check {{.+}}{kind = 9 : i64
//       CHECK:   bufferization.to_buffer %arg1 read_only
//       CHECK:   bufferization.to_buffer %arg2 read_only
//       CHECK:   %[[SLOTS:.+]] = bufferization.to_buffer %arg3 read_only
//       CHECK:   memref.extract_aligned_pointer_as_index %[[SLOTS]]
//       CHECK:   arith.constant 8 : index
//       CHECK:   %[[LENGTHS:.+]] = bufferization.to_buffer %arg4 read_only
//       CHECK:   memref.extract_aligned_pointer_as_index %[[LENGTHS]]
//       CHECK:   call @strata_rt_attention_f32
//   CHECK-NOT:   strata.cache_attention
func.func @cache_attention(%q: tensor<?x4x1x16xf32>, %k: tensor<3x2x64x16xf32>, %v: tensor<3x2x64x16xf32>,
                           %slots: tensor<?xi64>, %lengths: tensor<?xi64>) -> tensor<?x4x1x16xf32> {
  %o = strata.cache_attention %q, %k, %v, %slots, %lengths : (tensor<?x4x1x16xf32>, tensor<3x2x64x16xf32>, tensor<3x2x64x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4x1x16xf32>
  return %o : tensor<?x4x1x16xf32>
}

// A compressed cache goes to strata_rt_attention_kv: the same fields, then
// the element type (STRATA_DTYPE_I8 = 5) and each int8 row's scale, the 4
// bytes after its 16 values: the rows' address plus 16, the cache's strides
// (in bytes) divided by 4 to count floats. The result keeps 16 values.
// CHECK-LABEL: func.func @int8_cache_attention
//       CHECK:   %[[K:.+]] = bufferization.to_buffer %arg1 read_only
//       CHECK:   %[[V:.+]] = bufferization.to_buffer %arg2 read_only
//       CHECK:   memref.alloc({{.+}}) : memref<?x4x1x16xf32>
//       CHECK:   arith.constant 5 : index
//       CHECK:   arith.divui
//       CHECK:   call @strata_rt_attention_kv
//   CHECK-NOT:   strata_rt_attention_f32
func.func @int8_cache_attention(%q: tensor<?x4x1x16xf32>, %k: tensor<3x2x64x20xi8>, %v: tensor<3x2x64x20xi8>,
                                %slots: tensor<?xi64>, %lengths: tensor<?xi64>) -> tensor<?x4x1x16xf32> {
  %o = strata.cache_attention %q, %k, %v, %slots, %lengths : (tensor<?x4x1x16xf32>, tensor<3x2x64x20xi8>, tensor<3x2x64x20xi8>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4x1x16xf32>
  return %o : tensor<?x4x1x16xf32>
}

// A bf16 cache: element type STRATA_DTYPE_BF16 = 3, no scales.
// CHECK-LABEL: func.func @bf16_cache_attention
//       CHECK:   arith.constant 3 : index
//       CHECK:   call @strata_rt_attention_kv
func.func @bf16_cache_attention(%q: tensor<?x4x1x16xf32>, %k: tensor<3x2x64x16xbf16>, %v: tensor<3x2x64x16xbf16>,
                                %slots: tensor<?xi64>, %lengths: tensor<?xi64>) -> tensor<?x4x1x16xf32> {
  %o = strata.cache_attention %q, %k, %v, %slots, %lengths : (tensor<?x4x1x16xf32>, tensor<3x2x64x16xbf16>, tensor<3x2x64x16xbf16>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4x1x16xf32>
  return %o : tensor<?x4x1x16xf32>
}

// A ring cache (a window's sinks and its last rows) goes to
// strata_rt_attention_ring: SK is the context the lengths are checked
// against (1000, not the 40 rows), the fp32 element type
// (STRATA_DTYPE_F32 = 1), then the kept rows and the ring's rows; the
// tokens at once are checked against what the ring holds (kind 10).
// CHECK-LABEL: func.func @ring_cache_attention
//       CHECK:   arith.constant 1000 : i64
//       CHECK:   strata.check {{.+}}{kind = 9 : i64
//       CHECK:   strata.check {{.+}}{kind = 10 : i64
//       CHECK:   arith.constant 1000 : index
//       CHECK:   call @strata_rt_attention_ring
//   CHECK-NOT:   call @strata_rt_attention_kv
func.func @ring_cache_attention(%q: tensor<?x4x?x16xf32>, %k: tensor<3x2x40x16xf32>, %v: tensor<3x2x40x16xf32>,
                                %slots: tensor<?xi64>, %lengths: tensor<?xi64>) -> tensor<?x4x?x16xf32> {
  %o = strata.cache_attention %q, %k, %v, %slots, %lengths {window = 16 : i64, sinks = 4 : i64, ring_kept = 4 : i64, ring_context = 1000 : i64} : (tensor<?x4x?x16xf32>, tensor<3x2x40x16xf32>, tensor<3x2x40x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// A paged cache goes to strata_rt_attention_paged: SK is the 64 positions
// a row's 4 blocks of 16 reach, every table entry checked against the
// pool's 10 blocks (kind 8) and the lengths against the 64 (kind 9); the
// table by address, then 4 blocks per row, blocks of 16 and the pool's 10.
// CHECK-LABEL: func.func @paged_cache_attention
//       CHECK:   strata.check {{.+}}{kind = 8 : i64
//       CHECK:   arith.constant 64 : i64
//       CHECK:   strata.check {{.+}}{kind = 9 : i64
//       CHECK:   arith.constant 64 : index
//       CHECK:   %[[TABLE:.+]] = bufferization.to_buffer %arg3 read_only
//       CHECK:   memref.extract_aligned_pointer_as_index %[[TABLE]]
//       CHECK:   arith.constant 4 : index
//       CHECK:   arith.constant 16 : index
//       CHECK:   call @strata_rt_attention_paged
//   CHECK-NOT:   call @strata_rt_attention_kv
func.func @paged_cache_attention(%q: tensor<?x4x1x16xf32>, %k: tensor<10x2x16x16xf32>, %v: tensor<10x2x16x16xf32>,
                                 %tables: tensor<?x4xi64>, %lengths: tensor<?xi64>) -> tensor<?x4x1x16xf32> {
  %o = strata.cache_attention %q, %k, %v, %tables, %lengths {block_size = 16 : i64} : (tensor<?x4x1x16xf32>, tensor<10x2x16x16xf32>, tensor<10x2x16x16xf32>, tensor<?x4xi64>, tensor<?xi64>) -> tensor<?x4x1x16xf32>
  return %o : tensor<?x4x1x16xf32>
}

// The bf16 precision policy's mark on an attention (strata-bf16-contractions)
// becomes STRATA_ATTN_FLAG_BF16_PRODUCTS: flags 9 = causal (1) + bf16
// products (8), the first field after the result buffer.
// CHECK-LABEL: func.func @attention_bf16_products
//       CHECK:   %[[OUT:.+]] = memref.alloc() : memref<1x4x8x16xf32>
//       CHECK:   memref.extract_strided_metadata %[[OUT]]
//  CHECK-NEXT:   arith.constant 9 : index
//  CHECK-NEXT:   arith.constant 4 : index
//       CHECK:   call @strata_rt_attention_f32
func.func @attention_bf16_products(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %o = strata.attention %q, %k, %v {causal, strata.compute_type = bf16} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// Top-k global blocks go to strata_rt_attention_global, prefill and cache
// attention alike: the compressed-cache fields (fp32 here), then 3 blocks
// of 16 keys.
// CHECK-LABEL: func.func @global_blocks
//       CHECK:   call @strata_rt_attention_global
//       CHECK:   call @strata_rt_attention_global
//   CHECK-NOT:   call @strata_rt_attention_f32
func.func @global_blocks(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %cq: tensor<?x4x1x16xf32>,
                         %kc: tensor<3x2x64x16xf32>, %slots: tensor<?xi64>, %lengths: tensor<?xi64>)
    -> (tensor<1x4x8x16xf32>, tensor<?x4x1x16xf32>) {
  %o = strata.attention %q, %k, %k {causal, window = 4 : i64, global_topk = 3 : i64, global_block = 16 : i64} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  %c = strata.cache_attention %cq, %kc, %kc, %slots, %lengths {window = 4 : i64, global_topk = 3 : i64, global_block = 16 : i64} : (tensor<?x4x1x16xf32>, tensor<3x2x64x16xf32>, tensor<3x2x64x16xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4x1x16xf32>
  return %o, %c : tensor<1x4x8x16xf32>, tensor<?x4x1x16xf32>
}

// A with-past export's attention: key and value each Concat(past, new)
// along the sequence, returned as the present. One call of the append
// kernel reads the past and new parts where they lie (K and V at the past,
// SK their sum) and writes both presents, fresh buffers the function
// returns; the concatenations are gone.
// CHECK-LABEL: func.func @with_past
//       CHECK:   memref.alloca() : memref<60xi64>
//       CHECK:   bufferization.to_buffer %arg1 read_only
//       CHECK:   bufferization.to_buffer %arg3 read_only
//       CHECK:   bufferization.to_buffer %arg2 read_only
//       CHECK:   bufferization.to_buffer %arg4 read_only
//       CHECK:   %[[KP:.+]] = memref.alloc(%{{.+}}) : memref<1x2x?x16xf32>
//       CHECK:   %[[VP:.+]] = memref.alloc(%{{.+}}) : memref<1x2x?x16xf32>
//       CHECK:   call @strata_rt_attention_append(
//       CHECK:   %[[O:.+]] = bufferization.to_tensor %{{.+}} restrict writable
//       CHECK:   %[[K:.+]] = bufferization.to_tensor %[[KP]] restrict writable
//       CHECK:   %[[V:.+]] = bufferization.to_tensor %[[VP]] restrict writable
//       CHECK:   return %[[O]], %[[K]], %[[V]]
//   CHECK-NOT:   strata.concat
func.func @with_past(%q: tensor<1x4x1x16xf32>, %pk: tensor<1x2x?x16xf32>, %nk: tensor<1x2x1x16xf32>, %pv: tensor<1x2x?x16xf32>, %nv: tensor<1x2x1x16xf32>) -> (tensor<1x4x1x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) {
  %k = strata.concat %pk, %nk {axis = 2 : i64} : (tensor<1x2x?x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x?x16xf32>
  %v = strata.concat %pv, %nv {axis = 2 : i64} : (tensor<1x2x?x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x?x16xf32>
  %o = strata.attention %q, %k, %v {causal} : (tensor<1x4x1x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x4x1x16xf32>
  return %o, %k, %v : tensor<1x4x1x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
}

// A concatenation read before the attention (the kernel writes it only
// then) stays, and the attention reads it through the plain kernel.
// CHECK-LABEL: func.func @with_past_read_before
//       CHECK:   strata.concat
//       CHECK:   call @strata_rt_attention_f32(
//   CHECK-NOT:   call @strata_rt_attention_append(
func.func @with_past_read_before(%q: tensor<1x4x1x16xf32>, %pk: tensor<1x2x?x16xf32>, %nk: tensor<1x2x1x16xf32>, %pv: tensor<1x2x?x16xf32>, %nv: tensor<1x2x1x16xf32>) -> (tensor<1x4x1x16xf32>, tensor<1x2x?x16xf32>) {
  %k = strata.concat %pk, %nk {axis = 2 : i64} : (tensor<1x2x?x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x?x16xf32>
  %kneg = strata.neg %k : tensor<1x2x?x16xf32>
  %v = strata.concat %pv, %nv {axis = 2 : i64} : (tensor<1x2x?x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x?x16xf32>
  %o = strata.attention %q, %k, %v {causal} : (tensor<1x4x1x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x4x1x16xf32>
  return %o, %kneg : tensor<1x4x1x16xf32>, tensor<1x2x?x16xf32>
}

// One concatenation as both key and value: the plain kernel reads it.
// CHECK-LABEL: func.func @with_past_key_is_value
//       CHECK:   strata.concat
//       CHECK:   call @strata_rt_attention_f32(
//   CHECK-NOT:   call @strata_rt_attention_append(
func.func @with_past_key_is_value(%q: tensor<1x2x1x16xf32>, %p: tensor<1x2x?x16xf32>, %n: tensor<1x2x1x16xf32>) -> (tensor<1x2x1x16xf32>, tensor<1x2x?x16xf32>) {
  %kv = strata.concat %p, %n {axis = 2 : i64} : (tensor<1x2x?x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x?x16xf32>
  %o = strata.attention %q, %kv, %kv {causal} : (tensor<1x2x1x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x2x1x16xf32>
  return %o, %kv : tensor<1x2x1x16xf32>, tensor<1x2x?x16xf32>
}
