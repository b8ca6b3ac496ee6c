// RUN: strata-opt %s --strata-cpu-merge-identical-kernels | FileCheck %s

// Two kernels from different dispatch regions (on the function and the
// ops inside) and locations with the same body: one function, both calls
// to it. A kernel whose body differs
// (the multiplier) and one reading another global stay apart; functions
// that are not kernels are never merged.
// CHECK-LABEL: func.func @main
//       CHECK:   call @strata_kernel_0(%{{.+}}, %{{.+}})
//  CHECK-NEXT:   call @strata_kernel_0(%{{.+}}, %{{.+}})
//  CHECK-NEXT:   call @strata_kernel_2(%{{.+}}, %{{.+}})
//  CHECK-NEXT:   call @strata_kernel_3(%{{.+}})
//  CHECK-NEXT:   call @strata_kernel_4(%{{.+}})
//  CHECK-NEXT:   call @helper_a(%{{.+}})
//  CHECK-NEXT:   call @helper_b(%{{.+}})
//       CHECK: func.func private @strata_kernel_0
//   CHECK-NOT: func.func private @strata_kernel_1
//       CHECK: func.func private @strata_kernel_2
//       CHECK: func.func private @strata_kernel_3
//       CHECK: func.func private @strata_kernel_4
//       CHECK: func.func private @helper_a
//       CHECK: func.func private @helper_b
#id = affine_map<(d0) -> (d0)>
memref.global "private" constant @w0 : memref<4xf32> = dense<1.0>
memref.global "private" constant @w1 : memref<4xf32> = dense<2.0>
func.func @main(%x: memref<4xf32>, %y: memref<4xf32>) {
  call @strata_kernel_0(%x, %y) : (memref<4xf32>, memref<4xf32>) -> ()
  call @strata_kernel_1(%y, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  call @strata_kernel_2(%x, %y) : (memref<4xf32>, memref<4xf32>) -> ()
  call @strata_kernel_3(%x) : (memref<4xf32>) -> ()
  call @strata_kernel_4(%x) : (memref<4xf32>) -> ()
  call @helper_a(%x) : (memref<4xf32>) -> ()
  call @helper_b(%x) : (memref<4xf32>) -> ()
  return
}
func.func private @strata_kernel_0(%a: memref<4xf32>, %b: memref<4xf32>)
    attributes {passthrough = ["noinline"], strata.kernel,
                strata.dispatch = {id = 0 : i64, kind = "elementwise"}} {
  %c = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  }
  return
}
func.func private @strata_kernel_1(%a: memref<4xf32>, %b: memref<4xf32>)
    attributes {passthrough = ["noinline"], strata.kernel,
                strata.dispatch = {id = 7 : i64, kind = "elementwise"}} {
  %c = arith.constant 2.0 : f32 loc("layer1")
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
      attrs = {strata.dispatch = {id = 7 : i64, kind = "elementwise"}} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } loc("layer1")
  return
}
func.func private @strata_kernel_2(%a: memref<4xf32>, %b: memref<4xf32>)
    attributes {passthrough = ["noinline"], strata.kernel} {
  %c = arith.constant 3.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  }
  return
}
func.func private @strata_kernel_3(%a: memref<4xf32>)
    attributes {passthrough = ["noinline"], strata.kernel} {
  %w = memref.get_global @w0 : memref<4xf32>
  memref.copy %w, %a : memref<4xf32> to memref<4xf32>
  return
}
func.func private @strata_kernel_4(%a: memref<4xf32>)
    attributes {passthrough = ["noinline"], strata.kernel} {
  %w = memref.get_global @w1 : memref<4xf32>
  memref.copy %w, %a : memref<4xf32> to memref<4xf32>
  return
}
func.func private @helper_a(%a: memref<4xf32>) {
  return
}
func.func private @helper_b(%a: memref<4xf32>) {
  return
}
