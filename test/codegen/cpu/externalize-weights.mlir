// RUN: strata-opt %s --strata-cpu-externalize-weights | FileCheck %s

// Two entries read weight @a: one copy in the image, at offset 0; @b
// follows at the next 64-byte boundary. The image's layout is a module
// attribute; small dense constants stay in the code.
// CHECK:       module attributes {strata.weights = [{data = dense_resource<a> : tensor<4xf32>, offset = 0 : i64}, {data = dense_resource<b> : tensor<3xf32>, offset = 64 : i64}]}
// CHECK-NOT:   memref.global "private" constant @a
// CHECK-NOT:   memref.global "private" constant @b
// CHECK:       memref.global "private" constant @small
// CHECK-LABEL: func.func @prefill
//  CHECK-SAME:   (%{{.+}}: memref<4xf32>, %[[W:.+]]: memref<?xi8>)
//       CHECK:   %[[C0:.+]] = arith.constant 0 : index
//       CHECK:   %[[A:.+]] = memref.view %[[W]][%[[C0]]][] : memref<?xi8> to memref<4xf32>
//       CHECK:   %[[C64:.+]] = arith.constant 64 : index
//       CHECK:   memref.view %[[W]][%[[C64]]][] : memref<?xi8> to memref<3xf32>
//       CHECK:   memref.get_global @small
//       CHECK:   linalg.copy ins(%[[A]] : memref<4xf32>)
// CHECK-LABEL: func.func @decode
//  CHECK-SAME:   (%{{.+}}: memref<4xf32>, %[[W:.+]]: memref<?xi8>)
//       CHECK:   memref.view %[[W]][%{{.+}}][] : memref<?xi8> to memref<4xf32>
module {
  memref.global "private" constant @a : memref<4xf32> = dense_resource<a> {alignment = 64 : i64}
  memref.global "private" constant @b : memref<3xf32> = dense_resource<b> {alignment = 64 : i64}
  memref.global "private" constant @small : memref<2xf32> = dense<[1.0, 2.0]>
  func.func @prefill(%out: memref<4xf32>) {
    %a = memref.get_global @a : memref<4xf32>
    %b = memref.get_global @b : memref<3xf32>
    %s = memref.get_global @small : memref<2xf32>
    linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
    return
  }
  func.func @decode(%out: memref<4xf32>) {
    %a = memref.get_global @a : memref<4xf32>
    linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
    return
  }
}
{-#
  dialect_resources: {
    builtin: {
      a: "0x040000000000803F000000400000404000008040",
      b: "0x040000000000A0400000C0400000E040"
    }
  }
#-}
