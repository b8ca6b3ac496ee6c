//===- QuantizationGrid.h - The symmetric absmax integer grid --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// How a group of weights becomes integers, in one place: the quantization
// pass, the embedding tables and the activation-aware scale search (which
// must predict the pass's rounding exactly) all use it.

#ifndef STRATA_PASSES_QUANTIZATIONGRID_H_
#define STRATA_PASSES_QUANTIZATIONGRID_H_

#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace strata {

/// Symmetric integers of |bits| bits: [-127, 127] for 8 (the -128 left out
/// so the grid is symmetric), [-8, 7] for 4. A group's scale is its largest
/// magnitude over the top value; an all-zero or non-finite group keeps
/// scale 1. 4-bit scales are rounded to the nearest binary16 value when
/// they are normal binary16 numbers ([2^-14, 65504]): the int4 kernels then
/// read them as fp16 beside the weights (one stream, 10% fewer bytes); the
/// values are quantized with the rounded scale, so nothing else changes.
/// Values round to nearest, ties to even, and clamp; a non-finite value
/// becomes 0.
struct SymmetricGrid {
  explicit SymmetricGrid(int64_t bits)
      : qmax(bits == 8 ? 127.0f : 7.0f), qmin(bits == 8 ? -127.0f : -8.0f),
        halfScales(bits == 4) {}

  float scale(float amax) const {
    if (!(amax > 0.0f && std::isfinite(amax)))
      return 1.0f;
    const float s = amax / qmax;
    if (!halfScales || s < 0x1p-14f || s > 65504.0f)
      return s;
    llvm::APFloat half(s);
    bool inexact;
    half.convert(llvm::APFloat::IEEEhalf(),
                 llvm::APFloat::rmNearestTiesToEven, &inexact);
    half.convert(llvm::APFloat::IEEEsingle(),
                 llvm::APFloat::rmNearestTiesToEven, &inexact);
    return half.convertToFloat();
  }
  float quantize(float x, float scale) const {
    const float q = std::nearbyint(x / scale);
    return std::isfinite(q) ? std::min(qmax, std::max(qmin, q)) : 0.0f;
  }

  float qmax, qmin;
  bool halfScales;
};

} // namespace strata

#endif // STRATA_PASSES_QUANTIZATIONGRID_H_
