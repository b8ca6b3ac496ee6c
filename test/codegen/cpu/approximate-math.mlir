// RUN: strata-opt %s --strata-cpu-approximate-math | FileCheck %s

// exp, tanh and erf become polynomials (no libm call left); sqrt, which
// the CPU has an instruction for, stays.
// CHECK-LABEL: func.func @transcendentals
//   CHECK-NOT:   math.exp
//   CHECK-NOT:   math.tanh
//   CHECK-NOT:   math.erf
//       CHECK:   math.sqrt
func.func @transcendentals(%x: f32) -> (f32, f32, f32, f32) {
  %0 = math.exp %x : f32
  %1 = math.tanh %x : f32
  %2 = math.erf %x : f32
  %3 = math.sqrt %x : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}
