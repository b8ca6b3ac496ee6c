// RUN: strata-opt %s --strata-cpu-memory-plan | FileCheck %s

// Three intermediates of at most 128 x 64 floats (the input maxima bound
// dim 0): A and B live together and get disjoint ranges; C starts after A
// is freed and takes A's range. One arena of 2 x 32 KiB, freed at the end.
// CHECK-LABEL: func.func @plan
//       CHECK:   %[[ARENA:.+]] = memref.alloc() {alignment = 64 : i64} : memref<65536xi8>
//       CHECK:   %[[N:.+]] = memref.dim %arg0
//       CHECK:   %[[A:.+]] = memref.view %[[ARENA]][%[[A_OFF:.+]]][%[[N]]] : memref<65536xi8> to memref<?x64xf32>
//       CHECK:   %[[B_OFF:.+]] = arith.constant 32768 : index
//       CHECK:   %[[B:.+]] = memref.view %[[ARENA]][%[[B_OFF]]][%[[N]]]
//       CHECK:   linalg.copy ins(%arg0 : memref<?x64xf32>) outs(%[[A]] : memref<?x64xf32>)
//       CHECK:   linalg.copy ins(%[[A]] : memref<?x64xf32>) outs(%[[B]] : memref<?x64xf32>)
//       CHECK:   %[[C_OFF:.+]] = arith.constant 0 : index
//       CHECK:   %[[C:.+]] = memref.view %[[ARENA]][%[[C_OFF]]][%[[N]]]
//       CHECK:   linalg.copy ins(%[[B]] : memref<?x64xf32>) outs(%[[C]] : memref<?x64xf32>)
//   CHECK-NOT:   memref.alloc
//       CHECK:   memref.dealloc %[[ARENA]]
//  CHECK-NEXT:   return
func.func @plan(%x: memref<?x64xf32>, %out: memref<?x64xf32>) attributes {strata.input_maxima = [array<i64: 128, -1>, array<i64: 128, -1>]} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  %a = memref.alloc(%n) : memref<?x64xf32>
  %b = memref.alloc(%n) : memref<?x64xf32>
  linalg.copy ins(%x : memref<?x64xf32>) outs(%a : memref<?x64xf32>)
  linalg.copy ins(%a : memref<?x64xf32>) outs(%b : memref<?x64xf32>)
  memref.dealloc %a : memref<?x64xf32>
  %c = memref.alloc(%n) : memref<?x64xf32>
  linalg.copy ins(%b : memref<?x64xf32>) outs(%c : memref<?x64xf32>)
  memref.dealloc %b : memref<?x64xf32>
  linalg.copy ins(%c : memref<?x64xf32>) outs(%out : memref<?x64xf32>)
  memref.dealloc %c : memref<?x64xf32>
  return
}

// Without a maximum for dim 0 the size has no bound: the buffer stays a
// run-time allocation.
// CHECK-LABEL: func.func @unbounded
//       CHECK:   memref.alloc(%{{.+}}) : memref<?x64xf32>
//   CHECK-NOT:   memref.view
func.func @unbounded(%x: memref<?x64xf32>, %out: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  %a = memref.alloc(%n) : memref<?x64xf32>
  linalg.copy ins(%x : memref<?x64xf32>) outs(%a : memref<?x64xf32>)
  linalg.copy ins(%a : memref<?x64xf32>) outs(%out : memref<?x64xf32>)
  memref.dealloc %a : memref<?x64xf32>
  return
}
