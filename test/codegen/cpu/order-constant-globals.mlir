// RUN: strata-opt %s --strata-cpu-order-constant-globals | FileCheck %s

// Bufferization's constant globals get names and places by their first
// use, functions in module order: @first reads the 4-element constant, then
// @second reads it again and the scalar one. A constant nothing reads is
// dropped; other globals keep their names, and the renamed ones go just
// before the first function.
// CHECK:       memref.global "private" constant @kept : memref<2xf32>
// CHECK-NEXT:  memref.global "private" constant @__constant_0 : memref<4xf32> = dense<1.000000e+00>
// CHECK-NEXT:  memref.global "private" constant @__constant_1 : memref<f32> = dense<2.000000e+00>
// CHECK-NOT:   memref.global
// CHECK-LABEL: func.func @first
// CHECK:         memref.get_global @__constant_0 : memref<4xf32>
// CHECK-LABEL: func.func @second
// CHECK:         memref.get_global @__constant_0 : memref<4xf32>
// CHECK:         memref.get_global @__constant_1 : memref<f32>
// CHECK:         memref.get_global @kept : memref<2xf32>
memref.global "private" constant @__constant_xf32 : memref<f32> = dense<2.0>
memref.global "private" constant @__constant_3xf32_0 : memref<3xf32> = dense<5.0>
memref.global "private" constant @kept : memref<2xf32> = dense<3.0>
memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<1.0>
func.func @first() -> memref<4xf32> {
  %0 = memref.get_global @__constant_4xf32 : memref<4xf32>
  return %0 : memref<4xf32>
}
func.func @second() -> (memref<4xf32>, memref<f32>, memref<2xf32>) {
  %0 = memref.get_global @__constant_4xf32 : memref<4xf32>
  %1 = memref.get_global @__constant_xf32 : memref<f32>
  %2 = memref.get_global @kept : memref<2xf32>
  return %0, %1, %2 : memref<4xf32>, memref<f32>, memref<2xf32>
}
