//===- QuantizedConstants.h - Constant data of quantized models -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Reading the constant integers and scales of pre-quantized ONNX models,
// and building strata.quantized_linear from weights unpacked at import time.

#ifndef STRATA_COMPILER_IMPORT_QUANTIZEDCONSTANTS_H_
#define STRATA_COMPILER_IMPORT_QUANTIZEDCONSTANTS_H_

#include "compiler/import/ImportContext.h"

#include <vector>

namespace strata::import {

/// The elements of |v| when it is a strata.constant (seen through reshapes)
/// of 8-bit integers, signed or not, widened to int32; std::nullopt
/// otherwise.
std::optional<std::vector<int32_t>> constantInt8s(mlir::Value v);

/// The elements of |v| when it is a strata.constant (seen through reshapes)
/// of integers of any width up to 64 bits; std::nullopt otherwise.
std::optional<std::vector<int64_t>> constantInts(mlir::Value v);

/// The elements of |v| when it is an f32 strata.constant (seen through
/// reshapes), inline or a resource blob; std::nullopt otherwise.
std::optional<std::vector<float>> constantFloats(mlir::Value v);

/// A weight quantized symmetrically to integers of |bits| bits.
struct QuantizedWeight {
  int64_t k = 0, n = 0;
  int64_t bits = 8;
  int64_t groupSize = 0;      // rows of each column sharing one scale
  std::vector<int8_t> values; // [k, n] row-major, in the range of |bits|
  std::vector<float> scales;  // [ceil(k / groupSize), n] row-major
};

/// The weight |w| ([K, N], or [N, K] when |transposed|) as int8 values and
/// one scale per output channel when it is what DequantizeLinear makes of a
/// constant int8 tensor with a zero (or absent) zero point and a constant
/// per-tensor or per-output-channel scale: strata.mul(strata.cast(q), s).
std::optional<QuantizedWeight> matchDequantizedWeight(mlir::Value w,
                                                      bool transposed);

/// strata.quantized_linear(|x|, weight, scales, |bias|) over |weight|'s
/// values and scales as new constants named after |name|.
mlir::Value buildQuantizedLinear(ImportContext &ctx, mlir::Value x,
                                 const QuantizedWeight &weight,
                                 mlir::Value bias, llvm::StringRef name);

/// A new f32 strata.constant of |shape| holding |data| (a resource blob
/// named after |name|).
mlir::Value buildFloatConstant(ImportContext &ctx,
                               llvm::ArrayRef<int64_t> shape,
                               llvm::ArrayRef<float> data,
                               llvm::StringRef name);

} // namespace strata::import

#endif // STRATA_COMPILER_IMPORT_QUANTIZEDCONSTANTS_H_
