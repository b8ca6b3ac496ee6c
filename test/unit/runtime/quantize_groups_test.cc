//===- quantize_groups_test.cc - int4 activations, vector vs reference ----===//
// SPDX-License-Identifier: Apache-2.0
// The activation quantizer of the int4 kernels must give the same bytes,
// scales and sums on every ISA (the products are then the same integers):
// each vector set against quantizeGroupsReference, bit for bit, over group
// sizes, K ragged against the group and the vector width, halves that
// round away from zero, and non-finite values.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/matmul_f32_tiles.h"

namespace strata::runtime::kernels {
namespace {

struct Quantized {
  std::vector<int8_t> q;
  std::vector<float> scale;
  std::vector<int32_t> sum;
};

Quantized run(QuantizeGroupsFn fn, const std::vector<float>& a, int64_t k,
              int64_t group) {
  const int64_t kp = (k + group - 1) / group * group;
  // Filled with a marker: every byte up to kp must be written.
  Quantized r{std::vector<int8_t>(kp, 0x55),
              std::vector<float>(kp / group, -1.0f),
              std::vector<int32_t>(kp / group, -1)};
  if (fn)
    fn(k, kp, group, a.data(), r.q.data(), r.scale.data(), r.sum.data());
  else
    quantizeGroupsReference(k, kp, group, a.data(), 1, r.q.data(),
                            r.scale.data(), r.sum.data());
  return r;
}

std::vector<std::pair<const char*, QuantizeGroupsFn>> vectorSets() {
  std::vector<std::pair<const char*, QuantizeGroupsFn>> sets;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
    sets.push_back({"avx512", kQuantizeGroupsAvx512});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    sets.push_back({"avx2", kQuantizeGroupsAvx2});
#endif
  return sets;
}

void expectSame(const std::vector<float>& a, int64_t k, int64_t group) {
  const Quantized want = run(nullptr, a, k, group);
  for (const auto& [name, fn] : vectorSets()) {
    const Quantized got = run(fn, a, k, group);
    EXPECT_EQ(got.q, want.q) << name << " k " << k << " group " << group;
    EXPECT_EQ(got.sum, want.sum) << name << " k " << k << " group " << group;
    ASSERT_EQ(got.scale.size(), want.scale.size());
    for (size_t g = 0; g < want.scale.size(); ++g)
      EXPECT_EQ(std::memcmp(&got.scale[g], &want.scale[g], sizeof(float)), 0)
          << name << " group " << g << ": " << got.scale[g] << " vs "
          << want.scale[g];
  }
}

TEST(QuantizeGroupsTest, MatchesReferenceBitForBit) {
  if (vectorSets().empty()) GTEST_SKIP() << "no vector set on this CPU";
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  for (int64_t group : {4, 8, 12, 16, 32, 64, 128})
    for (int64_t k : {1, 3, 4, 7, 15, 16, 17, 31, 33, 100, 768, 3072}) {
      std::vector<float> a(k);
      for (float& x : a) x = dist(rng);
      expectSame(a, k, group);
    }
}

// Values whose scaled form lands on .5 exactly: x * (127 / amax) with
// amax = 127 leaves x unscaled, so the halves test the rounding.
TEST(QuantizeGroupsTest, HalvesRoundAwayFromZero) {
  std::vector<float> a = {127.0f, 0.5f, -0.5f, 1.5f, -1.5f, -0.0f, 2.5f,
                          -126.5f, 0.0f, 3.49999f, -3.5f, 100.5f};
  const Quantized want = run(nullptr, a, int64_t(a.size()), 16);
  const std::vector<int8_t> rounded = {127, 1, -1, 2, -2, 0, 3, -127,
                                       0,   3, -4, 101, 0, 0, 0, 0};
  EXPECT_EQ(want.q, rounded);
  expectSame(a, int64_t(a.size()), 16);
}

TEST(QuantizeGroupsTest, NonFiniteGroupsGetInfiniteScales) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (float bad : {inf, -inf, nan}) {
    std::vector<float> a(70, 0.25f);
    a[3] = -1.0f;
    a[40] = bad;  // the second group of 32
    const Quantized want = run(nullptr, a, 70, 32);
    EXPECT_TRUE(std::isfinite(want.scale[0]));
    EXPECT_EQ(want.scale[1], inf);
    EXPECT_TRUE(std::isfinite(want.scale[2]));
    // An infinite amax makes the group's multiplier 0 (inf * 0 is NaN, so
    // 0 too): the infinite scale alone carries the value.
    EXPECT_EQ(want.q[40], 0);
    expectSame(a, 70, 32);
  }
}

TEST(QuantizeGroupsTest, ZeroGroupsHaveZeroScale) {
  std::vector<float> a(40, 0.0f);
  a[35] = 2.0f;
  const Quantized want = run(nullptr, a, 40, 32);
  EXPECT_EQ(want.scale[0], 0.0f);
  EXPECT_EQ(want.sum[0], 0);
  EXPECT_EQ(want.q[35], 127);
  expectSame(a, 40, 32);
}

}  // namespace
}  // namespace strata::runtime::kernels
