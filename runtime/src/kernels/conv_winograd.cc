//===- conv_winograd.cc - strata_rt_conv_f32_winograd ---------------------===//
// SPDX-License-Identifier: Apache-2.0
// The driver of Winograd's F(2x2, 3x3) (conv_winograd.h). Each task takes a
// block of tiles through all three steps on one thread, so that its
// transformed patches (16 x tiles x C floats, at most 512 KB) stay in L2
// between them: their transform; then, per panel of 32 output columns,
// the 16 products with the transformed weight's panel (read once a task,
// in the order it is stored) and the output transform of those columns.

#include "conv_winograd.h"

#include <algorithm>
#include <cstring>

#include "conv_winograd_impl.h"
#include "matmul_f32.h"
#include "matmul_f32_tiles.h"

#include "../run_context.h"

namespace strata::runtime::kernels {

const WinogradTransforms kWinogradTransformsGeneric = {winogradInput,
                                                       winogradOutput};

namespace {

constexpr int64_t kW = STRATA_PACK_PANEL_WIDTH;
constexpr int64_t kPoints = STRATA_WINOGRAD_F23_POINTS;
// The matmuls' k block: 256 x 32 floats of the weight panel stay in L1.
constexpr int64_t kKc = 256;
// Transformed patches a task keeps: 16 x tiles x C floats.
constexpr int64_t kPatchFloats = 128 * 1024;
constexpr int64_t kMinTiles = 8, kMaxTiles = 64;

const WinogradTransforms& transformsFor(MatmulIsa isa) {
  switch (isa) {
    case MatmulIsa::kAmx:
    case MatmulIsa::kAvx512:
      return kWinogradTransformsAvx512;
    case MatmulIsa::kAvx2:
      return kWinogradTransformsAvx2;
    case MatmulIsa::kScalar:
      break;
  }
  return kWinogradTransformsGeneric;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One thread's scratch, carved from its block.
struct TaskScratch {
  float* patches;  // kPoints x tiles x C
  float* products; // kPoints x tiles x kW
  float* zeros;    // max(C, kW)
};

}  // namespace

bool winogradApplies(const ConvColumns& c) {
  return c.spatial == 2 && c.kernel[0] == 3 && c.kernel[1] == 3 &&
         c.stride[0] == 1 && c.stride[1] == 1 && c.dilation[0] == 1 &&
         c.dilation[1] == 1;
}

void runConvWinogradF32(strata_rt_context_t* context,
                        const ConvColumns& columns, const float* u,
                        int64_t outChannels, const float* bias,
                        const float* residual, bool relu, float* out) {
  WinogradShape s{};
  s.images = columns.images;
  s.height = columns.in[0];
  s.width = columns.in[1];
  s.channels = columns.channels;
  s.outHeight = columns.out[0];
  s.outWidth = columns.out[1];
  s.outChannels = outChannels;
  s.padTop = columns.padBegin[0];
  s.padLeft = columns.padBegin[1];
  s.tileRows = ceilDiv(s.outHeight, 2);
  s.tileColumns = ceilDiv(s.outWidth, 2);
  const int64_t tiles = s.tiles();
  if (tiles == 0) return;

  // Tiles a task: the patches within kPatchFloats, then as many tasks as
  // a multiple of the threads (a 7 x 7 block of tiles over 64 channels is
  // two tasks, not one that a single thread runs).
  const int64_t threads = loopThreads(context);
  int64_t perTask = std::clamp(kPatchFloats / (kPoints * s.channels),
                               kMinTiles, kMaxTiles);
  int64_t tasks = ceilDiv(tiles, perTask);
  if (tasks % threads != 0)
    tasks = std::min(tiles, ceilDiv(tasks, threads) * threads);
  perTask = ceilDiv(tiles, tasks);
  tasks = ceilDiv(tiles, perTask);

  const int64_t zeroFloats = std::max(s.channels, kW);
  const size_t floats =
      size_t(kPoints * perTask * s.channels + kPoints * perTask * kW +
             zeroFloats) +
      3 * 16;  // room to align each part to 64 bytes
  size_t stride = 0;
  uint8_t* base = kernelScratch(context, floats * sizeof(float), &stride);
  if (!base) return;

  const MatmulTiles& mt = matmulTiles();
  const WinogradTransforms& wt = transformsFor(matmulIsa());
  const int64_t panels = ceilDiv(outChannels, kW);
  const int64_t panelFloats = kPoints * s.channels * kW;
  auto align = [](float* p) {
    return reinterpret_cast<float*>(
        (reinterpret_cast<uintptr_t>(p) + 63) & ~uintptr_t{63});
  };
  parallelFor(context, static_cast<size_t>(tasks), [&](size_t task,
                                                       uint32_t thread) {
    TaskScratch ts;
    ts.patches = align(reinterpret_cast<float*>(base + thread * stride));
    ts.products = align(ts.patches + kPoints * perTask * s.channels);
    ts.zeros = align(ts.products + kPoints * perTask * kW);
    std::memset(ts.zeros, 0, sizeof(float) * zeroFloats);
    const int64_t first = int64_t(task) * perTask;
    const int64_t count = std::min(perTask, tiles - first);
    wt.input(s, columns.input, ts.zeros, first, count, ts.patches);
    for (int64_t p = 0; p < panels; ++p) {
      const float* panel = u + p * panelFloats;
      for (int64_t point = 0; point < kPoints; ++point) {
        const float* a = ts.patches + point * count * s.channels;
        const float* b = panel + point * s.channels * kW;
        float* c = ts.products + point * count * kW;
        for (int64_t k0 = 0; k0 < s.channels; k0 += kKc) {
          const int64_t kc = std::min(kKc, s.channels - k0);
          for (int64_t r = 0; r < count; r += mt.mr)
            mt.tile(std::min(mt.mr, count - r), kc, a + r * s.channels + k0,
                    s.channels, b + k0 * kW, c + r * kW, kW, k0 > 0);
        }
      }
      wt.output(s, ts.products, first, count, p * kW,
                std::min(kW, outChannels - p * kW), bias, residual, ts.zeros,
                relu, out);
    }
  });
}

extern "C" void strataConvF32Winograd(strata_rt_context_t* context,
                                      const int64_t* params) {
  pollCancel(context);
  const ConvParams p = ConvParams::decode(params);
  if (!p.valid() || !winogradApplies(p.columns)) {
    failRunInternal(context, "strata_rt_conv_f32_winograd: geometry",
                    p.columns.spatial);
    return;
  }
  runConvWinogradF32(context, p.columns, p.weight, p.outChannels, p.bias,
                     p.residual, p.relu, p.out);
}

}  // namespace strata::runtime::kernels
