// RUN: strata-opt %s --strata-cpu-matmul-to-runtime | FileCheck %s

// Marked strata.weight_bits = 4 with groups of 4 rows, the quantized
// contraction calls strata_rt_matmul_f32_i4 with the 8 x 3 weight two
// values a byte. Its scales (1 .. 6) are binary16 values, so they go
// inside the panel as fp16 (layout PANEL_I4_F16_BLOCKS, 6): two blocks of
// 4 / 4 quads of 64 bytes and 32 fp16 scales (256 bytes), the first
// starting 0x89 (rows 0-3 of column 0 hold 1, 4, 7, -2: +8 in the low
// nibbles, column 16's padding 8 in the high ones), its scales 1, 2, 3 =
// 0x3C00, 0x4000, 0x4200 (little-endian) then zeros; B_SCALES is 0. The
// same weight with a scale that is not a binary16 value (0.1) keeps fp32
// scales apart (layout PANEL_I4_GROUPS, 4: 128 bytes of quads, scales
// padded to 2 x 32). With groups of 2 rows (not a multiple of 4) the int8
// kernel takes it, the 4-bit values in int8 panels.
// CHECK-DAG:   func.func private @strata_rt_matmul_f32_i4(index) attributes {strata.runtime_import}
// CHECK-DAG:   func.func private @strata_rt_matmul_f32_i8(index) attributes {strata.runtime_import}
// CHECK-DAG:   memref.global "private" constant @q_blocks_i4 : memref<256xi8>
// CHECK-DAG:   memref.global "private" constant @q3_panels_i4 : memref<128xi8>
// CHECK-DAG:   memref.global "private" constant @s3_padded : memref<64xf32>
// CHECK-DAG:   memref.global "private" constant @q2_panels : memref<256xi8>
// CHECK-LABEL: func.func @main
//       CHECK:   memref.get_global @q_blocks_i4
//       CHECK:   %[[LAYOUT:.+]] = arith.index_cast %c6{{(_[0-9]+)?}} : index to i64
//  CHECK-NEXT:   %[[SLOT:.+]] = arith.constant 30 : index
//  CHECK-NEXT:   memref.store %[[LAYOUT]], %{{.+}}[%[[SLOT]]]
//       CHECK:   %[[NONE:.+]] = arith.index_cast %c0{{(_[0-9]+)?}} : index to i64
//  CHECK-NEXT:   %[[SLOT:.+]] = arith.constant 32 : index
//  CHECK-NEXT:   memref.store %[[NONE]], %{{.+}}[%[[SLOT]]]
//       CHECK:   call @strata_rt_matmul_f32_i4
//       CHECK:   memref.get_global @q3_panels_i4
//       CHECK:   memref.get_global @s3_padded
//       CHECK:   %[[LAYOUT:.+]] = arith.index_cast %c4{{(_[0-9]+)?}} : index to i64
//  CHECK-NEXT:   %[[SLOT:.+]] = arith.constant 30 : index
//  CHECK-NEXT:   memref.store %[[LAYOUT]], %{{.+}}[%[[SLOT]]]
//       CHECK:   call @strata_rt_matmul_f32_i4
//       CHECK:   call @strata_rt_matmul_f32_i8
//   CHECK-NOT:   linalg.generic
//       CHECK:   q_blocks_i4: "0x40000000898C8F86{{([0-9A-F]{120})}}003C00400042{{(0{116})}}{{([0-9A-F]{128})}}004400450046{{(0{116})}}"
#x = affine_map<(m, k, n) -> (m, k)>
#q = affine_map<(m, k, n) -> (k, n)>
#s = affine_map<(m, k, n) -> (k floordiv 4, n)>
#s2 = affine_map<(m, k, n) -> (k floordiv 2, n)>
#o = affine_map<(m, k, n) -> (m, n)>
module {
  memref.global "private" constant @q : memref<8x3xi8> = dense_resource<q> {alignment = 64 : i64}
  memref.global "private" constant @s : memref<2x3xf32> = dense_resource<s> {alignment = 64 : i64}
  memref.global "private" constant @q2 : memref<8x3xi8> = dense_resource<q> {alignment = 64 : i64}
  memref.global "private" constant @s2 : memref<4x3xf32> = dense_resource<s2> {alignment = 64 : i64}
  memref.global "private" constant @q3 : memref<8x3xi8> = dense_resource<q> {alignment = 64 : i64}
  memref.global "private" constant @s3 : memref<2x3xf32> = dense_resource<s3> {alignment = 64 : i64}
  func.func @main(%x: memref<5x8xf32>, %out: memref<5x3xf32>, %out2: memref<5x3xf32>, %out3: memref<5x3xf32>) {
    %q = memref.get_global @q : memref<8x3xi8>
    %s = memref.get_global @s : memref<2x3xf32>
    %q2 = memref.get_global @q2 : memref<8x3xi8>
    %s2 = memref.get_global @s2 : memref<4x3xf32>
    %q3 = memref.get_global @q3 : memref<8x3xi8>
    %s3 = memref.get_global @s3 : memref<2x3xf32>
    linalg.generic {indexing_maps = [#x, #q, #s, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %q, %s : memref<5x8xf32>, memref<8x3xi8>, memref<2x3xf32>) outs(%out : memref<5x3xf32>) attrs = {strata.weight_bits = 4 : i64} {
    ^bb0(%i: f32, %w: i8, %sc: f32, %o: f32):
      %f = arith.sitofp %w : i8 to f32
      %d = arith.mulf %f, %sc : f32
      %p = arith.mulf %i, %d : f32
      %r = arith.addf %o, %p : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#x, #q, #s, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %q3, %s3 : memref<5x8xf32>, memref<8x3xi8>, memref<2x3xf32>) outs(%out3 : memref<5x3xf32>) attrs = {strata.weight_bits = 4 : i64} {
    ^bb0(%i: f32, %w: i8, %sc: f32, %o: f32):
      %f = arith.sitofp %w : i8 to f32
      %d = arith.mulf %f, %sc : f32
      %p = arith.mulf %i, %d : f32
      %r = arith.addf %o, %p : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#x, #q, #s2, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %q2, %s2 : memref<5x8xf32>, memref<8x3xi8>, memref<4x3xf32>) outs(%out2 : memref<5x3xf32>) attrs = {strata.weight_bits = 4 : i64} {
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
      q: "0x010000000102030405060700FFFEFDFCFBFAF9F80102030405060700",
      s: "0x040000000000803F0000004000004040000080400000A0400000C040",
      s3: "0x04000000CDCCCC3D0000004000004040000080400000A0400000C040",
      s2: "0x040000000000803F0000004000004040000080400000A0400000C0400000803F0000004000004040000080400000A0400000C040"
    }
  }
#-}
