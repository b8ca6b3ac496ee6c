// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' | FileCheck %s

// fp8 casts are integer bit operations on the i8 code: arith.extf/truncf
// on fp8 have no CPU lowering (LLVM has no fp8 type).
// CHECK-LABEL: func.func @cast_f32_to_f8E4M3FN
//       CHECK:   linalg.generic
//       CHECK:     arith.bitcast %{{.+}} : f32 to i32
//       CHECK:     arith.trunci %{{.+}} : i32 to i8
//       CHECK:     arith.bitcast %{{.+}} : i8 to f8E4M3FN
//   CHECK-NOT:   arith.truncf
func.func @cast_f32_to_f8E4M3FN(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  %0 = strata.cast %x : tensor<4xf32> -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

// f16 -> fp8 goes through f32 (exact).
// CHECK-LABEL: func.func @cast_f16_to_f8E5M2FNUZ
//       CHECK:     arith.extf %{{.+}} : f16 to f32
//       CHECK:     arith.bitcast %{{.+}} : i8 to f8E5M2FNUZ
func.func @cast_f16_to_f8E5M2FNUZ(%x: tensor<4xf16>) -> tensor<4xf8E5M2FNUZ> {
  %0 = strata.cast %x : tensor<4xf16> -> tensor<4xf8E5M2FNUZ>
  return %0 : tensor<4xf8E5M2FNUZ>
}

// -----

// CHECK-LABEL: func.func @cast_f8E5M2_to_f16
//       CHECK:     arith.bitcast %{{.+}} : f8E5M2 to i8
//       CHECK:     arith.extui %{{.+}} : i8 to i32
//       CHECK:     arith.bitcast %{{.+}} : i32 to f32
//       CHECK:     arith.truncf %{{.+}} : f32 to f16
//   CHECK-NOT:   arith.extf
func.func @cast_f8E5M2_to_f16(%x: tensor<4xf8E5M2>) -> tensor<4xf16> {
  %0 = strata.cast %x : tensor<4xf8E5M2> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// fp4 E2M1 is the same scheme on an i4 code.
// CHECK-LABEL: func.func @cast_f32_to_f4E2M1FN
//       CHECK:     arith.trunci %{{.+}} : i32 to i4
//       CHECK:     arith.bitcast %{{.+}} : i4 to f4E2M1FN
//   CHECK-NOT:   arith.truncf
func.func @cast_f32_to_f4E2M1FN(%x: tensor<4xf32>) -> tensor<4xf4E2M1FN> {
  %0 = strata.cast %x : tensor<4xf32> -> tensor<4xf4E2M1FN>
  return %0 : tensor<4xf4E2M1FN>
}

// -----

// Floats to int4 saturate to [-8, 7] and round to nearest even (ONNX),
// instead of fptosi's truncation and poison out of range.
// CHECK-LABEL: func.func @cast_f32_to_i4
//       CHECK:     arith.minimumf
//       CHECK:     arith.maximumf
//       CHECK:     arith.fptosi %{{.+}} : f32 to i32
//       CHECK:     arith.trunci %{{.+}} : i32 to i4
func.func @cast_f32_to_i4(%x: tensor<4xf32>) -> tensor<4xi4> {
  %0 = strata.cast %x : tensor<4xf32> -> tensor<4xi4>
  return %0 : tensor<4xi4>
}

// -----

// CHECK-LABEL: func.func @cast_ui4_to_f16
//       CHECK:     arith.uitofp %{{.+}} : i4 to f16
func.func @cast_ui4_to_f16(%x: tensor<4xui4>) -> tensor<4xf16> {
  %0 = strata.cast %x : tensor<4xui4> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
