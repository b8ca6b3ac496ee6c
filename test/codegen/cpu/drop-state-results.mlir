// RUN: strata-opt %s --strata-cpu-drop-state-results | FileCheck %s

// An entry's result that is its own argument (a state written in place)
// leaves the return and the function type; fresh results stay. Functions
// that are not entries keep their results.
// CHECK-LABEL: func.func @step
//  CHECK-SAME:   (%{{.+}}: memref<4xf32>, %[[S:.+]]: memref<2x4xf32>) -> memref<4xf32>
//       CHECK:   %[[OUT:.+]] = memref.alloc
//       CHECK:   return %[[OUT]] : memref<4xf32>
// CHECK-LABEL: func.func private @helper
//  CHECK-SAME:   -> memref<2x4xf32>
func.func @step(%x: memref<4xf32>, %s: memref<2x4xf32>) -> (memref<4xf32>, memref<2x4xf32>) attributes {strata.entry, strata.state_results = 1 : i64} {
  %out = memref.alloc() : memref<4xf32>
  memref.copy %x, %out : memref<4xf32> to memref<4xf32>
  return %out, %s : memref<4xf32>, memref<2x4xf32>
}
func.func private @helper(%s: memref<2x4xf32>) -> memref<2x4xf32> {
  return %s : memref<2x4xf32>
}
