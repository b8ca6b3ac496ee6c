// RUN: strata-opt %s --strata-cpu-matmul-to-runtime | FileCheck %s

// An fp32 contraction marked strata.compute_type = bf16 over a constant
// weight calls strata_rt_matmul_f32_bf16 (layout 2, PANEL_BF16_PAIRS): the
// 3 x 2 weight rounded to bf16 (nearest even) in pairs of rows, K padded to
// 4, one 32-wide panel: 4 x 32 values. The unmarked contraction over the
// same weight keeps fp32 panels and strata_rt_matmul_f32; a marked one
// over an activation has nothing to pack and stays fp32 as well.
// CHECK-DAG:   func.func private @strata_rt_matmul_f32_bf16(index) attributes {strata.runtime_import}
// CHECK-DAG:   memref.global "private" constant @w_packed_bf16 : memref<128xbf16>
// CHECK-DAG:   memref.global "private" constant @w_packed : memref<96xf32>
// CHECK-LABEL: func.func @main
//   CHECK-DAG:   %[[LAYOUT:.+]] = arith.constant 2 : index
//   CHECK-DAG:   memref.get_global @w_packed_bf16
//       CHECK:   call @strata_rt_matmul_f32_bf16
//       CHECK:   call @strata_rt_matmul_f32(
//       CHECK:   call @strata_rt_matmul_f32(
// Pair-row 0: column 0's rows 0 and 1 (1.0 = 0x3F80; 1 + 3 * 2^-8 lies
// halfway between 0x3F81 and 0x3F82 and rounds to the even 0x3F82), column
// 1's (2.0 = 0x4000, -0.5 = 0xBF00); pair-row 1 starts 64 values on with
// row 2 and the zero padding row.
//       CHECK:   w_packed_bf16: "0x{{([0-9A-F]{8})}}803F823F004000BF{{((0000){60})}}4040000080400000
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
module {
  memref.global "private" constant @w : memref<3x2xf32> = dense_resource<w> {alignment = 64 : i64}
  func.func @main(%x: memref<4x3xf32>, %y: memref<3x2xf32>, %out: memref<4x2xf32>, %out2: memref<4x2xf32>, %out3: memref<4x2xf32>) {
    %w = memref.get_global @w : memref<3x2xf32>
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<4x3xf32>, memref<3x2xf32>) outs(%out : memref<4x2xf32>) attrs = {strata.compute_type = bf16} {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %p = arith.mulf %i, %j : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<4x3xf32>, memref<3x2xf32>) outs(%out2 : memref<4x2xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %p = arith.mulf %i, %j : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %y : memref<4x3xf32>, memref<3x2xf32>) outs(%out3 : memref<4x2xf32>) attrs = {strata.compute_type = bf16} {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %p = arith.mulf %i, %j : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
    return
  }
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F000000400080813F000000BF0000404000008040"
    }
  }
#-}
