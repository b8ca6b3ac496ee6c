//===- conv_columns.cc - A channels-last convolution's columns, on demand -===//
// SPDX-License-Identifier: Apache-2.0

#include "conv_columns.h"

#include <cstring>

#include "param_address.h"
#include "strata_kernel_abi.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace strata::runtime::kernels {
namespace {

int64_t clampTo(int64_t x, int64_t lo, int64_t hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

void zero(float* dst, int64_t n) {
  if (n > 0) std::memset(dst, 0, static_cast<size_t>(n) * sizeof(float));
}

// memcpy of |n| floats, inline below 64: a 7 x 7 stem over 3 channels
// copies runs of 21 floats, where memcpy's call and dispatch cost more
// than the copy (the stem's gather took as long as its tiles).
void copy(float* dst, const float* src, int64_t n) {
  if (n >= 64) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  int64_t i = 0;
#if defined(__SSE2__)
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(dst + i, _mm_loadu_ps(src + i));
#endif
  for (; i < n; ++i) dst[i] = src[i];
}

}  // namespace

ConvParams ConvParams::decode(const int64_t* params) {
  ConvParams p;
  ConvColumns& c = p.columns;
  c.spatial = params[STRATA_CONV_SPATIAL];
  c.images = params[STRATA_CONV_BATCH];
  c.channels = params[STRATA_CONV_CHANNELS];
  c.input = paramAddress<const float>(params[STRATA_CONV_INPUT]);
  const int64_t dims =
      c.spatial >= 1 && c.spatial <= ConvColumns::kMaxSpatial ? c.spatial : 0;
  for (int64_t d = 0; d < dims; ++d) {
    c.in[d] = params[STRATA_CONV_IN_SIZES + d];
    c.out[d] = params[STRATA_CONV_OUT_SIZES + d];
    c.kernel[d] = params[STRATA_CONV_KERNEL + d];
    c.stride[d] = params[STRATA_CONV_STRIDES + d];
    c.dilation[d] = params[STRATA_CONV_DILATIONS + d];
    c.padBegin[d] = params[STRATA_CONV_PADS_BEGIN + d];
  }
  p.outChannels = params[STRATA_CONV_OUT_CHANNELS];
  p.weight = paramAddress<const float>(params[STRATA_CONV_WEIGHT]);
  p.bias = paramAddress<const float>(params[STRATA_CONV_BIAS]);
  p.residual = paramAddress<const float>(params[STRATA_CONV_RESIDUAL]);
  p.relu = (params[STRATA_CONV_FLAGS] & STRATA_CONV_FLAG_RELU) != 0;
  p.out = paramAddress<float>(params[STRATA_CONV_OUTPUT]);
  return p;
}

bool ConvParams::valid() const {
  return columns.valid() && outChannels >= 1 &&
         outChannels <= (int64_t{1} << 30) && weight &&
         (out || columns.images == 0);
}

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

bool ConvColumns::readsInPlace() const {
  const int64_t last = spatial - 1;
  return dilation[last] == 1 && out[last] >= 4;
}

int64_t ConvColumns::blockEnd(int64_t k0, int64_t most) const {
  const int64_t tapRow = kernel[spatial - 1] * channels;
  if (tapRow <= most) {
    // Whole tap rows: consecutive ones lie evenly apart only along one
    // outer dim (2-D).
    const int64_t block = (spatial == 2 ? most / tapRow : 1) * tapRow;
    const int64_t end = (k0 / block + 1) * block;
    return end < depth() ? end : depth();
  }
  const int64_t parts = (tapRow + most - 1) / most;
  const int64_t part = (tapRow + parts - 1) / parts;
  const int64_t start = k0 - k0 % tapRow;
  const int64_t end = start + (k0 % tapRow / part + 1) * part;
  return end < start + tapRow ? end : start + tapRow;
}

ConvColumns::RowsInPlace ConvColumns::rowsInPlace(int64_t r, int64_t rows,
                                                  int64_t k0,
                                                  int64_t kc) const {
  RowsInPlace none;
  const int64_t last = spatial - 1, c = channels;
  const int64_t tapRowLength = kernel[last] * c;
  const int64_t tapRow = k0 / tapRowLength, within = k0 % tapRowLength;
  // One tap row or a part of it, or whole consecutive tap rows (2-D).
  int64_t segments = 1, length = kc;
  if (within + kc > tapRowLength) {
    if (spatial != 2 || within != 0 || kc % tapRowLength != 0) return none;
    segments = kc / tapRowLength;
    length = tapRowLength;
  }
  if (rows < 1 || kc < 1) return none;
  int64_t o[kMaxSpatial];
  int64_t rest = r;
  for (int64_t d = last; d >= 0; --d) {
    o[d] = rest % out[d];
    rest /= out[d];
  }
  if (o[last] + rows > out[last]) return none;
  // The first tap row's outer taps, inside the input (every segment's,
  // along dim 0 in 2-D); element offset of the position in the image.
  int64_t offset = rest * channels, t = tapRow;
  for (int64_t d = 0; d < spatial; ++d) offset *= in[d];
  int64_t inStride = c;
  for (int64_t d = last; d-- > 0;) {
    inStride *= in[d + 1];
    const int64_t tap = t % kernel[d];
    t /= kernel[d];
    const int64_t at = o[d] * stride[d] + tap * dilation[d] - padBegin[d];
    const int64_t atLast = at + (segments - 1) * dilation[d];
    if (at < 0 || atLast >= in[d]) return none;
    offset += at * inStride;
  }
  // Along the last dim: the first row's first column and the last row's
  // last one inside [0, in * C).
  const int64_t x0 = o[last] * stride[last] - padBegin[last];
  const int64_t first = x0 * c + within;
  const int64_t end = (x0 + (rows - 1) * stride[last]) * c + within + length;
  if (first < 0 || end > in[last] * c) return none;
  RowsInPlace found;
  found.first = input + offset + first;
  found.lda = stride[last] * c;
  found.segments = segments;
  // In 2-D the loop above ends with inStride the stride of dim 0.
  found.segmentStride = spatial == 2 ? dilation[0] * inStride : 0;
  return found;
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

  // The block's columns as segments, each within one tap row: the same
  // for every row, so their divisions are done once here, not per row.
  struct Segment {
    int64_t column;  // the segment's first column, from k0
    int64_t within;  // its first element within the tap row
    int64_t length;
    int64_t tap[kMaxSpatial];  // the tap row's outer taps (dims < last)
  };
  constexpr int64_t kMaxSegments = 64;
  Segment segments[kMaxSegments];
  for (int64_t k = k0; k < k0 + kc;) {
    // At most kMaxSegments at a time (short tap rows, wide k blocks).
    int64_t count = 0;
    for (; k < k0 + kc && count < kMaxSegments; ++count) {
      Segment& s = segments[count];
      const int64_t tapRow = k / rowLength;
      s.column = k - k0;
      s.within = k % rowLength;
      s.length = rowLength - s.within < k0 + kc - k ? rowLength - s.within
                                                     : k0 + kc - k;
      int64_t t = tapRow;
      for (int64_t d = last; d-- > 0;) {
        s.tap[d] = (t % kernel[d]) * dilation[d];
        t /= kernel[d];
      }
      k += s.length;
    }

    // Output position of row r0, then stepped row by row (an odometer).
    int64_t o[kMaxSpatial];
    int64_t rest = r0;
    for (int64_t d = last; d >= 0; --d) {
      o[d] = rest % out[d];
      rest /= out[d];
    }
    int64_t image = rest;
    for (int64_t i = 0; i < rows; ++i) {
      float* outRow = dst + i * kc;
      const float* base = input + image * imageElements;
      const int64_t x0 = o[last] * stride[last] - padBegin[last];
      int64_t corner[kMaxSpatial];
      for (int64_t d = 0; d < last; ++d)
        corner[d] = o[d] * stride[d] - padBegin[d];
      for (int64_t si = 0; si < count; ++si) {
        const Segment& s = segments[si];
        float* seg = outRow + s.column;
        int64_t offset = 0;
        bool inside = true;
        for (int64_t d = 0; d < last; ++d) {
          const int64_t at = corner[d] + s.tap[d];
          inside &= at >= 0 && at < in[d];
          offset += at * inStride[d];
        }
        if (!inside) {
          zero(seg, s.length);
          continue;
        }
        if (contiguousRow) {
          // Tap-row elements [lo, hi) lie inside the input along the last
          // dim.
          const int64_t lo = clampTo(-x0 * c, 0, rowLength);
          const int64_t hi = clampTo((in[last] - x0) * c, 0, rowLength);
          const int64_t a = s.within > lo ? s.within : lo;
          const int64_t b =
              s.within + s.length < hi ? s.within + s.length : hi;
          if (a >= b) {
            zero(seg, s.length);
            continue;
          }
          zero(seg, a - s.within);
          copy(seg + (a - s.within), base + (offset + x0 * c + a), b - a);
          zero(seg + (b - s.within), s.within + s.length - b);
          continue;
        }
        for (int64_t j = 0; j < s.length;) {
          const int64_t e = s.within + j, tap = e / c, channel = e % c;
          const int64_t n =
              c - channel < s.length - j ? c - channel : s.length - j;
          const int64_t x = x0 + tap * dilation[last];
          if (x >= 0 && x < in[last])
            copy(seg + j, base + (offset + x * c + channel), n);
          else
            zero(seg + j, n);
          j += n;
        }
      }
      // The next row's position.
      for (int64_t d = last; d >= 0; --d) {
        if (++o[d] < out[d]) break;
        o[d] = 0;
        if (d == 0) ++image;
      }
    }
  }
}

}  // namespace strata::runtime::kernels
