// RUN: strata-opt %s --strata-cpu-copies-to-linalg | FileCheck %s

// A strided memref.copy would lower to a call into MLIR's runner library.
// CHECK-LABEL: func.func @strided_copy
//       CHECK:   linalg.copy ins(%{{.+}} : memref<4x2xf32, strided<[8, 1]>>) outs(%{{.+}} : memref<4x2xf32>)
//   CHECK-NOT:   memref.copy
func.func @strided_copy(%src: memref<4x8xf32>, %dst: memref<4x2xf32>) {
  %view = memref.subview %src[0, 0] [4, 2] [1, 1] : memref<4x8xf32> to memref<4x2xf32, strided<[8, 1]>>
  memref.copy %view, %dst : memref<4x2xf32, strided<[8, 1]>> to memref<4x2xf32>
  return
}
