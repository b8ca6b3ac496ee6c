//===- conv_columns.cc - A channels-last convolution's columns, on demand -===//
// SPDX-License-Identifier: Apache-2.0

#include "conv_columns.h"

#include <cstring>

namespace strata::runtime::kernels {
namespace {

int64_t clampTo(int64_t x, int64_t lo, int64_t hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

void zero(float* dst, int64_t n) {
  if (n > 0) std::memset(dst, 0, static_cast<size_t>(n) * sizeof(float));
}

}  // namespace

int64_t ConvColumns::rows() const {
  int64_t r = images;
  for (int64_t d = 0; d < spatial; ++d) r *= out[d];
  return r;
}

int64_t ConvColumns::depth() const {
  int64_t k = channels;
  for (int64_t d = 0; d < spatial; ++d) k *= kernel[d];
  return k;
}

bool ConvColumns::valid() const {
  // Bounded as the compiler bounds window attributes, so that no product
  // below overflows: each size <= 2^30 and the element counts <= 2^62.
  constexpr int64_t kMost = int64_t{1} << 30;
  auto inRange = [&](int64_t x, int64_t least) {
    return x >= least && x <= kMost;
  };
  if (spatial < 1 || spatial > kMaxSpatial || !input ||
      !inRange(images, 0) || !inRange(channels, 1))
    return false;
  __int128 elements = channels, taps = channels, positions = images;
  for (int64_t d = 0; d < spatial; ++d) {
    if (!inRange(in[d], 1) || !inRange(out[d], 1) || !inRange(kernel[d], 1) ||
        !inRange(stride[d], 1) || !inRange(dilation[d], 1) ||
        !inRange(padBegin[d], 0))
      return false;
    elements *= in[d];
    taps *= kernel[d];
    positions *= out[d];
  }
  constexpr __int128 kMostElements = __int128{1} << 62;
  return elements * (images > 0 ? images : 1) <= kMostElements &&
         taps <= kMostElements && positions <= kMostElements &&
         positions * taps <= kMostElements;
}

void ConvColumns::gather(int64_t r0, int64_t rows, int64_t k0, int64_t kc,
                         float* dst) const {
  const int64_t last = spatial - 1, c = channels;
  // Element strides of the input's spatial dims (channels innermost).
  int64_t inStride[kMaxSpatial];
  inStride[last] = c;
  for (int64_t d = last; d-- > 0;) inStride[d] = inStride[d + 1] * in[d + 1];
  const int64_t imageElements = inStride[0] * in[0];
  // A tap row: the taps along the last dim, each C channels; with unit
  // dilation there, one contiguous run of the input.
  const int64_t rowLength = kernel[last] * c;
  const bool contiguousRow = dilation[last] == 1;
  for (int64_t i = 0; i < rows; ++i) {
    float* outRow = dst + i * kc;
    int64_t o[kMaxSpatial];
    int64_t rest = r0 + i;
    for (int64_t d = last; d >= 0; --d) {
      o[d] = rest % out[d];
      rest /= out[d];
    }
    const float* image = input + rest * imageElements;
    const int64_t x0 = o[last] * stride[last] - padBegin[last];
    for (int64_t k = k0; k < k0 + kc;) {
      const int64_t tapRow = k / rowLength, within = k % rowLength;
      const int64_t length =
          rowLength - within < k0 + kc - k ? rowLength - within : k0 + kc - k;
      float* seg = outRow + (k - k0);
      k += length;
      // The outer taps (every dim but the last) of this tap row.
      int64_t t = tapRow, offset = 0;
      bool inside = true;
      for (int64_t d = last; d-- > 0;) {
        const int64_t tap = t % kernel[d];
        t /= kernel[d];
        const int64_t at = o[d] * stride[d] + tap * dilation[d] - padBegin[d];
        inside &= at >= 0 && at < in[d];
        offset += at * inStride[d];
      }
      if (!inside) {
        zero(seg, length);
        continue;
      }
      if (contiguousRow) {
        // Tap-row elements [lo, hi) lie inside the input along the last dim.
        const int64_t lo = clampTo(-x0 * c, 0, rowLength);
        const int64_t hi = clampTo((in[last] - x0) * c, 0, rowLength);
        const int64_t a = within > lo ? within : lo;
        const int64_t b = within + length < hi ? within + length : hi;
        if (a >= b) {
          zero(seg, length);
          continue;
        }
        zero(seg, a - within);
        std::memcpy(seg + (a - within), image + (offset + x0 * c + a),
                    static_cast<size_t>(b - a) * sizeof(float));
        zero(seg + (b - within), within + length - b);
        continue;
      }
      for (int64_t j = 0; j < length;) {
        const int64_t e = within + j, tap = e / c, channel = e % c;
        const int64_t n = c - channel < length - j ? c - channel : length - j;
        const int64_t x = x0 + tap * dilation[last];
        if (x >= 0 && x < in[last])
          std::memcpy(seg + j, image + (offset + x * c + channel),
                      static_cast<size_t>(n) * sizeof(float));
        else
          zero(seg + j, n);
        j += n;
      }
    }
  }
}

}  // namespace strata::runtime::kernels
