// RUN: strata-opt %s --strata-cpu-matmul-to-runtime | FileCheck %s

// A quantized contraction marked strata.activation_bits = 8 with one scale
// per column (group = K = 5) calls strata_rt_matmul_f32_w8a8: the 5 x 3
// int8 weight packed in quads of rows (K padded to 8: two quads of 32
// columns x 4 bytes), the 4 rows of a column in one 32-bit lane; its scales
// padded to 32 floats; layout 3 (PANEL_I8_QUADS). The same weight read
// weight-only (no mark) keeps int8 panels and strata_rt_matmul_f32_i8;
// the two share one padded copy of the scales.
// CHECK-DAG:   func.func private @strata_rt_matmul_f32_w8a8(index) attributes {strata.runtime_import}
// CHECK-DAG:   func.func private @strata_rt_matmul_f32_i8(index) attributes {strata.runtime_import}
// CHECK-DAG:   memref.global "private" constant @q_quads : memref<256xi8>
// CHECK-DAG:   memref.global "private" constant @q_panels : memref<160xi8>
// CHECK-DAG:   memref.global "private" constant @s_padded : memref<32xf32>
// CHECK-NOT:   memref.global "private" constant @s_padded_
// CHECK-LABEL: func.func @main
//   CHECK-DAG:   %[[LAYOUT:.+]] = arith.constant 3 : index
//   CHECK-DAG:   memref.get_global @q_quads
//       CHECK:   call @strata_rt_matmul_f32_w8a8
//       CHECK:   call @strata_rt_matmul_f32_i8
// Quad 0 holds column 0's rows 0-3 (01 04 07 0A), then column 1's and
// column 2's; quad 1 starts 128 bytes on with column 0's row 4 (0D).
//       CHECK:   q_quads: "0x{{([0-9A-F]{8})}}0104070A0205080B0306090C{{((00){116})}}0D0000000E0000000F000000
#x = affine_map<(m, k, n) -> (m, k)>
#q = affine_map<(m, k, n) -> (k, n)>
#s = affine_map<(m, k, n) -> (k floordiv 5, n)>
#o = affine_map<(m, k, n) -> (m, n)>
module {
  memref.global "private" constant @q : memref<5x3xi8> = dense_resource<q> {alignment = 64 : i64}
  memref.global "private" constant @s : memref<1x3xf32> = dense_resource<s> {alignment = 64 : i64}
  func.func @main(%x: memref<7x5xf32>, %out: memref<7x3xf32>, %out2: memref<7x3xf32>) {
    %q = memref.get_global @q : memref<5x3xi8>
    %s = memref.get_global @s : memref<1x3xf32>
    linalg.generic {indexing_maps = [#x, #q, #s, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %q, %s : memref<7x5xf32>, memref<5x3xi8>, memref<1x3xf32>) outs(%out : memref<7x3xf32>) attrs = {strata.activation_bits = 8 : i64, strata.weight_bits = 8 : i64} {
    ^bb0(%i: f32, %w: i8, %sc: f32, %o: f32):
      %f = arith.sitofp %w : i8 to f32
      %d = arith.mulf %f, %sc : f32
      %p = arith.mulf %i, %d : f32
      %r = arith.addf %o, %p : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#x, #q, #s, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %q, %s : memref<7x5xf32>, memref<5x3xi8>, memref<1x3xf32>) outs(%out2 : memref<7x3xf32>) attrs = {strata.weight_bits = 8 : i64} {
    ^bb0(%i: f32, %w: i8, %sc: f32, %o: f32):
      %f = arith.sitofp %w : i8 to f32
      %d = arith.mulf %f, %sc : f32
      %p = arith.mulf %i, %d : f32
      %r = arith.addf %o, %p : f32
      linalg.yield %r : f32
    }
    return
  }
}
{-#
  dialect_resources: {
    builtin: {
      q: "0x010000000102030405060708090A0B0C0D0E0F",
      s: "0x040000000000803F0000004000004040"
    }
  }
#-}
