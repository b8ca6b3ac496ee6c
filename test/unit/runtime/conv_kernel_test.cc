//===- conv_kernel_test.cc - The convolution imports against a reference --===//
// SPDX-License-Identifier: Apache-2.0
// Every ISA the CPU has: 1-D, 2-D and 3-D channels-last convolutions with
// strides, dilations, begin and end padding, channel counts around the
// panel width and a k block, bias, residual and ReLU epilogues, one and
// several images and 1-3 threads, compared with a double-precision direct
// convolution (tolerance: taps * C * 2^-22 relative to the sum of |x*w|,
// fp32 rounding of each partial sum). strata_rt_conv_f32_winograd on the
// same checks, its bound 8 times wider: its transforms add up to 4 inputs
// and 9 weights before the products, and 9 sums after them, so its
// roundings fall on sums up to that much larger than one product. Bad
// geometry ends the run before any write.

#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "isa_test.h"
#include "kernel_context.h"
#include "kernels/conv_winograd.h"
#include "kernels/matmul_f32.h"
#include "run_context.h"
#include "strata_kernel_abi.h"
#include "thread_pool.h"

namespace strata::runtime::kernels {
namespace {

struct Conv {
  int64_t images, channels, outChannels;
  std::vector<int64_t> in, kernel, stride, dilation, padBegin, padEnd;
  bool bias = false, residual = false, relu = false;
  // The residual is the output buffer itself (written over).
  bool inPlace = false;
  // strata_rt_conv_f32_winograd with the transformed weight.
  bool winograd = false;

  int64_t spatial() const { return static_cast<int64_t>(in.size()); }
  int64_t outSize(int64_t d) const {
    return (in[d] + padBegin[d] + padEnd[d] - dilation[d] * (kernel[d] - 1) -
            1) / stride[d] + 1;
  }
};

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// The params block of |c| over the given buffers.
std::vector<int64_t> paramsOf(const Conv& c, const float* input,
                              const float* packed, const float* bias,
                              const float* residual, float* out) {
  std::vector<int64_t> p(STRATA_CONV_PARAM_COUNT, 0);
  p[STRATA_CONV_FLAGS] = c.relu ? STRATA_CONV_FLAG_RELU : 0;
  p[STRATA_CONV_BATCH] = c.images;
  p[STRATA_CONV_SPATIAL] = c.spatial();
  p[STRATA_CONV_CHANNELS] = c.channels;
  p[STRATA_CONV_OUT_CHANNELS] = c.outChannels;
  for (int64_t d = 0; d < c.spatial(); ++d) {
    p[STRATA_CONV_IN_SIZES + d] = c.in[d];
    p[STRATA_CONV_OUT_SIZES + d] = c.outSize(d);
    p[STRATA_CONV_KERNEL + d] = c.kernel[d];
    p[STRATA_CONV_STRIDES + d] = c.stride[d];
    p[STRATA_CONV_DILATIONS + d] = c.dilation[d];
    p[STRATA_CONV_PADS_BEGIN + d] = c.padBegin[d];
  }
  p[STRATA_CONV_INPUT] = reinterpret_cast<intptr_t>(input);
  p[STRATA_CONV_WEIGHT] = reinterpret_cast<intptr_t>(packed);
  p[STRATA_CONV_BIAS] = reinterpret_cast<intptr_t>(bias);
  p[STRATA_CONV_RESIDUAL] = reinterpret_cast<intptr_t>(residual);
  p[STRATA_CONV_OUTPUT] = reinterpret_cast<intptr_t>(out);
  return p;
}

void check(const Conv& c, uint32_t threads) {
  const int64_t spatial = c.spatial();
  std::vector<int64_t> outSizes;
  for (int64_t d = 0; d < spatial; ++d) outSizes.push_back(c.outSize(d));
  const int64_t taps = product(c.kernel), positions = product(outSizes);
  const int64_t depth = taps * c.channels, m = c.outChannels;
  std::mt19937 rng(static_cast<uint32_t>(depth * 31 + m * 7 + positions));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> input(c.images * product(c.in) * c.channels);
  std::vector<float> weight(depth * m), bias(m), residual(c.images * positions * m);
  for (float& x : input) x = dist(rng);
  for (float& x : weight) x = dist(rng);
  for (float& x : bias) x = dist(rng);
  for (float& x : residual) x = dist(rng);
  std::vector<float> packed;
  if (c.winograd) {
    const int64_t rows = STRATA_WINOGRAD_F23_POINTS * c.channels;
    std::vector<float> transformed(rows * m);
    strata_winograd_f23_weight(weight.data(), c.channels, m,
                               transformed.data());
    packed.resize(strata_packed_b_f32_elements(rows, m));
    strata_pack_b_f32(transformed.data(), rows, m, m, 1, packed.data());
  } else {
    packed.resize(strata_packed_b_f32_elements(depth, m));
    strata_pack_b_f32(weight.data(), depth, m, m, 1, packed.data());
  }
  std::vector<float> out(c.images * positions * m, 12345.0f);
  if (c.inPlace) out = residual;
  const std::vector<int64_t> p = paramsOf(
      c, input.data(), packed.data(), c.bias ? bias.data() : nullptr,
      c.inPlace ? out.data() : c.residual ? residual.data() : nullptr,
      out.data());
  ThreadPool pool(threads);
  KernelContext context(&pool);
  if (c.winograd)
    strataConvF32Winograd(context.get(), p.data());
  else
    strataConvF32(context.get(), p.data());

  // Input element strides (channels innermost).
  std::vector<int64_t> inStride(spatial);
  inStride[spatial - 1] = c.channels;
  for (int64_t d = spatial - 1; d-- > 0;)
    inStride[d] = inStride[d + 1] * c.in[d + 1];
  for (int64_t n = 0; n < c.images; ++n)
    for (int64_t pos = 0; pos < positions; ++pos) {
      std::vector<int64_t> o(spatial);
      for (int64_t d = spatial - 1, rest = pos; d >= 0; --d) {
        o[d] = rest % outSizes[d];
        rest /= outSizes[d];
      }
      for (int64_t j = 0; j < m; ++j) {
        double sum = c.bias ? bias[j] : 0.0, magnitude = std::fabs(sum);
        for (int64_t t = 0; t < taps; ++t) {
          int64_t offset = n * product(c.in) * c.channels;
          bool inside = true;
          for (int64_t d = spatial - 1, rest = t; d >= 0; --d) {
            const int64_t tap = rest % c.kernel[d];
            rest /= c.kernel[d];
            const int64_t at =
                o[d] * c.stride[d] + tap * c.dilation[d] - c.padBegin[d];
            inside &= at >= 0 && at < c.in[d];
            offset += at * inStride[d];
          }
          if (!inside) continue;
          for (int64_t ch = 0; ch < c.channels; ++ch) {
            const double prod = double(input[offset + ch]) *
                                double(weight[(t * c.channels + ch) * m + j]);
            sum += prod;
            magnitude += std::fabs(prod);
          }
        }
        const int64_t at = (n * positions + pos) * m + j;
        if (c.residual) {
          sum += residual[at];
          magnitude += std::fabs(residual[at]);
        }
        if (c.relu) sum = sum < 0 ? 0 : sum;
        const double tolerance = (c.winograd ? 8.0 : 1.0) *
                                 double(depth + 2) * std::ldexp(1.0, -22) *
                                 (magnitude + 1e-30);
        ASSERT_NEAR(out[at], sum, tolerance)
            << "image " << n << " position " << pos << " channel " << j
            << " (C " << c.channels << ", M " << m << ", " << spatial
            << "-D, threads " << threads << ")";
      }
    }
}

class ConvKernelTest : public IsaTest {};

// ResNet's shapes in miniature: a 3x3 with padding (columns gathered), a
// 1x1 (the input read in place), a strided 1x1 and a 7x7 stem over 3
// channels, each with the epilogues a residual block uses.
TEST_P(ConvKernelTest, TwoDimensionalWithEpilogues) {
  for (uint32_t threads : {1u, 2u, 3u}) {
    check({2, 16, 40, {9, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true,
           false, true},
          threads);
    check({1, 33, 70, {6, 6}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true,
           true, true},
          threads);
    check({3, 8, 32, {9, 9}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, true,
           false, false},
          threads);
    check({1, 3, 17, {20, 18}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}, false,
           false, true},
          threads);
  }
}

// K * C past one k block (256) with a ragged last one, rows past one row
// block (128) and a ragged last tile, M past a panel block.
TEST_P(ConvKernelTest, SeveralKBlocksAndRowBlocks) {
  check({1, 40, 150, {13, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true,
         true, true},
        2);
  check({2, 300, 33, {5, 4}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false,
         true, false},
        2);
}

// Columns read in place from the input wherever a tile's rows (one output
// row) and a k block lie inside it, gathered at the padding: a tap row in
// one k block or in equal ones (3 x 3 over 96 channels: 288 columns; over
// 200: 600 in two of 300), several tap
// rows to a block (2-D: a 7 x 7 stem over 3 channels, a 3 x 3 over 20 in
// blocks of 3 rows, 5 x 5 over 10 with dilation 2 along the first dim),
// strides along the last dim (the rows' distance), output rows of 4 to 23
// positions (tiles of uneven height), row blocks that start mid-row, a
// partial last panel (its tiles gather), 1-D and 3-D, 1-3 threads.
TEST_P(ConvKernelTest, ColumnsReadInPlace) {
  for (uint32_t threads : {1u, 2u, 3u}) {
    check({1, 96, 40, {9, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true,
           true, true},
          threads);
    check({1, 200, 36, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true,
           true, false},
          threads);
    check({2, 3, 64, {30, 46}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}, true,
           false, true},
          threads);
    check({1, 20, 45, {17, 23}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false,
           true, false},
          threads);
    check({2, 10, 33, {14, 9}, {5, 5}, {1, 2}, {2, 1}, {4, 2}, {4, 1}, true,
           false, true},
          threads);
    check({3, 64, 32, {40}, {3}, {1}, {1}, {1}, {1}, true, true, true},
          threads);
    check({1, 24, 32, {5, 6, 9}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1},
           {1, 1, 1}, true, false, true},
          threads);
    check({2, 256, 64, {9, 9}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, true,
           true, false},
          threads);
  }
}

// The result written over its residual (the residual's address is the
// output's): the residual must be read before the first k block stores
// partial sums, so K * C spans several k blocks, with and without a bias,
// a partial last panel, rows past a row block, 1-3 threads.
TEST_P(ConvKernelTest, ResidualWrittenOver) {
  for (uint32_t threads : {1u, 2u, 3u}) {
    Conv c{1, 40, 150, {13, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true,
           true, true};
    c.inPlace = true;
    check(c, threads);
    Conv d{2, 300, 33, {5, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false,
           true, false};
    d.inPlace = true;
    check(d, threads);
  }
}

// Dilations (the last dim's taps then are no contiguous run), uneven
// pads, windows that reach past the input, 1-D and 3-D.
TEST_P(ConvKernelTest, DilationsPaddingAndRanks) {
  check({2, 5, 9, {11, 10}, {3, 2}, {2, 3}, {2, 3}, {2, 0}, {1, 3}, true,
         false, false},
        2);
  check({1, 4, 6, {4, 4}, {3, 3}, {1, 1}, {1, 1}, {3, 0}, {0, 3}, false,
         false, false},
        1);
  check({3, 7, 12, {30}, {5}, {3}, {2}, {4}, {2}, true, true, true}, 2);
  check({1, 6, 10, {5, 6, 4}, {3, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 2},
         {1, 1, 2}, true, false, true},
        2);
}

// No images: nothing to write, no output buffer needed.
TEST_P(ConvKernelTest, NoImages) {
  Conv c{0, 4, 8, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  std::vector<float> packed(strata_packed_b_f32_elements(36, 8), 1.0f);
  std::vector<float> input(1, 1.0f);
  const std::vector<int64_t> p =
      paramsOf(c, input.data(), packed.data(), nullptr, nullptr, nullptr);
  KernelContext context;
  strataConvF32(context.get(), p.data());
}

// Winograd's F(2x2, 3x3): odd and even output sizes (tiles past the
// edge), no, begin-only and both-sides padding, channels within and past
// one k block (256) and around the panel width, a partial last panel,
// tasks past one block of tiles, every epilogue and the residual written
// over, 1-3 images and 1-3 threads.
TEST_P(ConvKernelTest, Winograd) {
  auto winograd = [](Conv c, bool inPlace = false) {
    c.winograd = true;
    c.inPlace = inPlace;
    return c;
  };
  for (uint32_t threads : {1u, 2u, 3u}) {
    check(winograd({1, 16, 40, {9, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1},
                    true, false, true}),
          threads);
    check(winograd({2, 64, 64, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                    {1, 1}, true, true, true}),
          threads);
    check(winograd({1, 300, 33, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {0, 0},
                    {0, 0}, false, true, false}),
          threads);
    check(winograd({3, 8, 70, {11, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 0},
                    {0, 2}, true, false, false}),
          threads);
    check(winograd({1, 40, 150, {13, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                    {1, 1}, true, true, true},
                   /*inPlace=*/true),
          threads);
    check(winograd({1, 3, 5, {40, 36}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1},
                    false, false, true}),
          threads);
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, ConvKernelTest, kAllIsas, isaName);

// Calls the import as a checked run would (a trap set); returns the
// failure kind if it ended the run, 0 if it returned.
int64_t endedRunKind(strata_rt_context_t* context, const int64_t* params,
                     void (*import)(strata_rt_context_t*,
                                    const int64_t*) = strataConvF32) {
  RunTrap trap;
  context->trap = &trap;
  if (setjmp(trap.jump) != 0) {
    context->trap = nullptr;
    return trap.failure.kind;
  }
  import(context, params);
  context->trap = nullptr;
  return 0;
}

// strata_rt_conv_f32_winograd takes only 2-D 3 x 3 kernels with unit
// strides and dilations; anything else ends the run before any write.
TEST(ConvKernelErrorsTest, WinogradRefusesOtherGeometry) {
  const Conv good{1, 4, 8, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  std::vector<float> input(100, 1.0f);
  std::vector<float> packed(strata_packed_b_f32_elements(64, 32), 1.0f);
  std::vector<float> out(200, -2.0f);
  const int64_t fields[] = {STRATA_CONV_KERNEL, STRATA_CONV_STRIDES + 1,
                            STRATA_CONV_DILATIONS};
  for (int64_t field : fields) {
    std::vector<int64_t> p = paramsOf(good, input.data(), packed.data(),
                                      nullptr, nullptr, out.data());
    p[field] = 2;
    KernelContext context;
    EXPECT_EQ(endedRunKind(context.get(), p.data(), strataConvF32Winograd),
              kInternalFailure)
        << "field " << field;
    for (float x : out) ASSERT_EQ(x, -2.0f);
  }
}

// Geometry no compiler emits ends the run (INTERNAL) before any write.
TEST(ConvKernelErrorsTest, BadGeometryEndsTheRunBeforeWriting) {
  const Conv good{1, 4, 8, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  std::vector<float> input(100, 1.0f);
  std::vector<float> packed(strata_packed_b_f32_elements(36, 32), 1.0f);
  std::vector<float> out(200, -2.0f);
  struct Bad {
    int64_t field, value;
  };
  const Bad cases[] = {{STRATA_CONV_SPATIAL, 0},
                       {STRATA_CONV_SPATIAL, 4},
                       {STRATA_CONV_CHANNELS, 0},
                       {STRATA_CONV_OUT_CHANNELS, 0},
                       {STRATA_CONV_BATCH, -1},
                       {STRATA_CONV_KERNEL, 0},
                       {STRATA_CONV_STRIDES + 1, 0},
                       {STRATA_CONV_DILATIONS, -1},
                       {STRATA_CONV_PADS_BEGIN, -1},
                       {STRATA_CONV_IN_SIZES + 1, int64_t{1} << 40},
                       {STRATA_CONV_WEIGHT, 0}};
  for (const Bad& bad : cases) {
    std::vector<int64_t> p = paramsOf(good, input.data(), packed.data(),
                                      nullptr, nullptr, out.data());
    p[bad.field] = bad.value;
    KernelContext context;
    EXPECT_EQ(endedRunKind(context.get(), p.data()), kInternalFailure)
        << "field " << bad.field << " = " << bad.value;
    for (float x : out) ASSERT_EQ(x, -2.0f);
  }
}

}  // namespace
}  // namespace strata::runtime::kernels
