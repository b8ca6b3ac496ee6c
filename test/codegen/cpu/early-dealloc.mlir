// RUN: strata-opt %s --strata-cpu-early-dealloc | FileCheck %s

// The deallocation pipeline frees at the end of the block; each free moves
// to right after the buffer's last use.
// CHECK-LABEL: func.func @chain
//       CHECK:   %[[A:.+]] = memref.alloc()
//       CHECK:   %[[B:.+]] = memref.alloc()
//       CHECK:   linalg.copy ins(%{{.+}} : memref<16xf32>) outs(%[[A]] : memref<16xf32>)
//  CHECK-NEXT:   linalg.copy ins(%[[A]] : memref<16xf32>) outs(%[[B]] : memref<16xf32>)
//  CHECK-NEXT:   memref.dealloc %[[A]]
//  CHECK-NEXT:   linalg.copy ins(%[[B]] : memref<16xf32>)
//  CHECK-NEXT:   memref.dealloc %[[B]]
//  CHECK-NEXT:   return
func.func @chain(%x: memref<16xf32>, %out: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  linalg.copy ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
  linalg.copy ins(%a : memref<16xf32>) outs(%b : memref<16xf32>)
  linalg.copy ins(%b : memref<16xf32>) outs(%out : memref<16xf32>)
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  return
}

// A use through a view keeps the buffer alive up to the view's last use.
// CHECK-LABEL: func.func @through_a_view
//       CHECK:   %[[A:.+]] = memref.alloc()
//       CHECK:   %[[V:.+]] = memref.subview %[[A]]
//       CHECK:   linalg.copy ins(%[[V]] : {{.*}}) outs(%{{.+}} : memref<8xf32>)
//  CHECK-NEXT:   memref.dealloc %[[A]]
func.func @through_a_view(%x: memref<16xf32>, %out: memref<8xf32>) {
  %a = memref.alloc() : memref<16xf32>
  linalg.copy ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
  %v = memref.subview %a[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  linalg.copy ins(%v : memref<8xf32, strided<[1]>>) outs(%out : memref<8xf32>)
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%out : memref<8xf32>)
  memref.dealloc %a : memref<16xf32>
  return
}
