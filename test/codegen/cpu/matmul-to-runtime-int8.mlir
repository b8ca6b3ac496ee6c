// RUN: strata-opt %s --strata-cpu-matmul-to-runtime | FileCheck %s

// The weight-only int8 contraction (acc + x * (sitofp(q) * scale), scales
// at k floordiv G) reading constant globals becomes a call of
// strata_rt_matmul_f32_i8: the 4 x 3 int8 weight packed into one 32-wide
// panel of 4 x 32 bytes, its 2 x 3 scales padded to 2 x 32 floats, the
// group size (2) and a zero zero-points field in the params block. One
// over a weight that is not a constant stays a generic. With int8
// activations per block of 32 (strata.activation_bits = 8,
// strata.activation_block = 32) and groups of a multiple of 16 k, the
// weight is packed in quads (layout 3) for the integer products: the 32 x
// 3 weight in groups of 16 becomes one panel of 32 x 32 bytes; without
// those attributes the same weight keeps int8 panels and fp32 activations.
// CHECK:       func.func private @strata_rt_matmul_f32_i8(index) attributes {strata.runtime_import}
// CHECK-DAG:   memref.global "private" constant @q_panels : memref<128xi8>
// CHECK-DAG:   memref.global "private" constant @s_padded : memref<64xf32>
// CHECK-NOT:   memref.global "private" constant @q :
// CHECK-LABEL: func.func @main
//   CHECK-NOT:   linalg.fill
//   CHECK-DAG:   %[[GROUP:.+]] = arith.constant 2 : index
//   CHECK-DAG:   %[[LAYOUT:.+]] = arith.constant 5 : index
//   CHECK-DAG:   memref.get_global @q_panels
//   CHECK-DAG:   memref.get_global @s_padded
//       CHECK:   call @strata_rt_matmul_f32_i8
//       CHECK:   linalg.generic
#x = affine_map<(m, k, n) -> (m, k)>
#q = affine_map<(m, k, n) -> (k, n)>
#s = affine_map<(m, k, n) -> (k floordiv 2, n)>
#o = affine_map<(m, k, n) -> (m, n)>
#s16 = affine_map<(m, k, n) -> (k floordiv 16, n)>
module {
  memref.global "private" constant @q : memref<4x3xi8> = dense_resource<q> {alignment = 64 : i64}
  memref.global "private" constant @s : memref<2x3xf32> = dense_resource<s> {alignment = 64 : i64}
  func.func @main(%x: memref<5x4xf32>, %qa: memref<4x3xi8>, %out: memref<5x3xf32>, %out2: memref<5x3xf32>) {
    %q = memref.get_global @q : memref<4x3xi8>
    %s = memref.get_global @s : memref<2x3xf32>
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%out : memref<5x3xf32>)
    linalg.generic {indexing_maps = [#x, #q, #s, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %q, %s : memref<5x4xf32>, memref<4x3xi8>, memref<2x3xf32>) outs(%out : memref<5x3xf32>) {
    ^bb0(%i: f32, %w: i8, %sc: f32, %o: f32):
      %f = arith.sitofp %w : i8 to f32
      %d = arith.mulf %f, %sc : f32
      %p = arith.mulf %i, %d : f32
      %r = arith.addf %o, %p : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#x, #q, #s, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %qa, %s : memref<5x4xf32>, memref<4x3xi8>, memref<2x3xf32>) outs(%out2 : memref<5x3xf32>) {
    ^bb0(%i: f32, %w: i8, %sc: f32, %o: f32):
      %f = arith.sitofp %w : i8 to f32
      %d = arith.mulf %f, %sc : f32
      %p = arith.mulf %i, %d : f32
      %r = arith.addf %o, %p : f32
      linalg.yield %r : f32
    }
    return
  }
  memref.global "private" constant @q16 : memref<32x3xi8> = dense_resource<q16> {alignment = 64 : i64}
  memref.global "private" constant @s16 : memref<2x3xf32> = dense_resource<s> {alignment = 64 : i64}
  // CHECK-DAG:   memref.global "private" constant @q16_quads : memref<1024xi8>
  // CHECK-DAG:   memref.global "private" constant @s16_padded : memref<64xf32>
  // CHECK-DAG:   memref.global "private" constant @q16_panels : memref<1024xi8>
  // CHECK-LABEL: func.func @grouped16
  //   CHECK-DAG:   %[[GROUP16:.+]] = arith.constant 16 : index
  //   CHECK-DAG:   %[[QUADS:.+]] = arith.constant 3 : index
  //   CHECK-DAG:   memref.get_global @q16_quads
  //   CHECK-DAG:   memref.get_global @s16_padded
  //       CHECK:   call @strata_rt_matmul_f32_i8
  func.func @grouped16(%x: memref<5x32xf32>, %out: memref<5x3xf32>) {
    %q = memref.get_global @q16 : memref<32x3xi8>
    %s = memref.get_global @s16 : memref<2x3xf32>
    linalg.generic {indexing_maps = [#x, #q, #s16, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %q, %s : memref<5x32xf32>, memref<32x3xi8>, memref<2x3xf32>) outs(%out : memref<5x3xf32>) attrs = {strata.activation_bits = 8 : i64, strata.activation_block = 32 : i64} {
    ^bb0(%i: f32, %w: i8, %sc: f32, %o: f32):
      %f = arith.sitofp %w : i8 to f32
      %d = arith.mulf %f, %sc : f32
      %p = arith.mulf %i, %d : f32
      %r = arith.addf %o, %p : f32
      linalg.yield %r : f32
    }
    return
  }
  // CHECK-LABEL: func.func @grouped16_fp32_activations
  //   CHECK-DAG:   %[[PANELS:.+]] = arith.constant 5 : index
  //   CHECK-DAG:   memref.get_global @q16_panels
  //       CHECK:   call @strata_rt_matmul_f32_i8
  func.func @grouped16_fp32_activations(%x: memref<5x32xf32>, %out: memref<5x3xf32>) {
    %q = memref.get_global @q16 : memref<32x3xi8>
    %s = memref.get_global @s16 : memref<2x3xf32>
    linalg.generic {indexing_maps = [#x, #q, #s16, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %q, %s : memref<5x32xf32>, memref<32x3xi8>, memref<2x3xf32>) outs(%out : memref<5x3xf32>) {
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
      q: "0x01000000010203040506070809F0F1F2",
      q16: "0x01000000030A11181F262D343B424950575E656C737A81888F969DA4ABB2B9C0C7CED5DCE3EAF1F8FF060D141B222930373E454C535A61686F767D848B9299A0A7AEB5BCC3CAD1D8DFE6EDF4FB020910171E252C333A41484F565D646B727980878E959C",
      s: "0x040000000000803F0000004000004040000080400000A0400000C040"
    }
  }
#-}
