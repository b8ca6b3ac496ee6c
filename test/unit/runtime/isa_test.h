//===- isa_test.h - Run a kernel test once per instruction set ------------===//
// SPDX-License-Identifier: Apache-2.0
// A test fixture parameterized by MatmulIsa: it forces the kernels to that
// ISA for the test (skipping ISAs the CPU lacks) and restores the choice.
//
//   class MyTest : public IsaTest {};
//   TEST_P(MyTest, Case) { ... }
//   INSTANTIATE_TEST_SUITE_P(Isa, MyTest, kAllIsas, isaName);
//
// kAllIsas leaves out kAmx, under which only the bf16 and W8A8 matmuls
// differ from kAvx512; their tests use kPackedGemmIsas.

#ifndef STRATA_TEST_UNIT_RUNTIME_ISA_TEST_H_
#define STRATA_TEST_UNIT_RUNTIME_ISA_TEST_H_

#include <string>

#include <gtest/gtest.h>

#include "kernels/amx.h"
#include "kernels/matmul_f32.h"

namespace strata::runtime::kernels {

class IsaTest : public ::testing::TestWithParam<MatmulIsa> {
 protected:
  void SetUp() override {
    const MatmulIsa best = matmulIsa();
    // Before any skip: TearDown runs after a skipped SetUp too, and must
    // not cap the next tests to the default.
    saved_ = best;
    if (GetParam() == MatmulIsa::kAmx && best != MatmulIsa::kAmx)
      GTEST_SKIP() << "no AMX: " << amxUnavailableReason();
    if (GetParam() == MatmulIsa::kAvx512 && best != MatmulIsa::kAvx512 &&
        best != MatmulIsa::kAmx)
      GTEST_SKIP() << "no AVX-512 on this CPU";
    if (GetParam() == MatmulIsa::kAvx2 && matmulIsa() == MatmulIsa::kScalar)
      GTEST_SKIP() << "no AVX2 on this CPU";
    capMatmulIsa(GetParam());
  }
  void TearDown() override { capMatmulIsa(saved_); }

 private:
  MatmulIsa saved_ = MatmulIsa::kScalar;
};

inline const auto kAllIsas = ::testing::Values(
    MatmulIsa::kAvx512, MatmulIsa::kAvx2, MatmulIsa::kScalar);

inline const auto kPackedGemmIsas =
    ::testing::Values(MatmulIsa::kAmx, MatmulIsa::kAvx512, MatmulIsa::kAvx2,
                      MatmulIsa::kScalar);

inline std::string isaName(const ::testing::TestParamInfo<MatmulIsa>& info) {
  switch (info.param) {
    case MatmulIsa::kAmx: return "amx";
    case MatmulIsa::kAvx512: return "avx512";
    case MatmulIsa::kAvx2: return "avx2";
    default: return "scalar";
  }
}

}  // namespace strata::runtime::kernels

#endif  // STRATA_TEST_UNIT_RUNTIME_ISA_TEST_H_
