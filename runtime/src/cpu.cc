//===- cpu.cc - CPU features of the host and of artifacts
//------------------===//
// SPDX-License-Identifier: Apache-2.0
// Host detection goes through the compiler's __builtin_cpu_supports, which
// reads CPUID once in libgcc/compiler-rt and needs no state of ours.

#include "strata/runtime/cpu.h"

#include <cinttypes>

#include "strata_artifact_format.h"

namespace {

struct FeatureName {
  uint64_t bit;
  const char* name;
};

constexpr FeatureName kFeatures[] = {
    {STRATA_CPU_FEATURE_AVX2, "avx2"},
    {STRATA_CPU_FEATURE_FMA, "fma"},
    {STRATA_CPU_FEATURE_AVX512F, "avx512f"},
    {STRATA_CPU_FEATURE_AVX512BW, "avx512bw"},
    {STRATA_CPU_FEATURE_AVX512VL, "avx512vl"},
    {STRATA_CPU_FEATURE_AVX512DQ, "avx512dq"},
    {STRATA_CPU_FEATURE_AVX512VNNI, "avx512vnni"},
    {STRATA_CPU_FEATURE_AVX512BF16, "avx512bf16"},
    {STRATA_CPU_FEATURE_F16C, "f16c"},
};

constexpr uint64_t kKnownFeatures = [] {
  uint64_t all = 0;
  for (const FeatureName& f : kFeatures) all |= f.bit;
  return all;
}();

}  // namespace

extern "C" {

uint64_t strata_cpu_features_host(void) {
  uint64_t features = 0;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) features |= STRATA_CPU_FEATURE_AVX2;
  if (__builtin_cpu_supports("fma")) features |= STRATA_CPU_FEATURE_FMA;
  if (__builtin_cpu_supports("avx512f")) features |= STRATA_CPU_FEATURE_AVX512F;
  if (__builtin_cpu_supports("avx512bw")) {
    features |= STRATA_CPU_FEATURE_AVX512BW;
  }
  if (__builtin_cpu_supports("avx512vl")) {
    features |= STRATA_CPU_FEATURE_AVX512VL;
  }
  if (__builtin_cpu_supports("avx512dq")) {
    features |= STRATA_CPU_FEATURE_AVX512DQ;
  }
  if (__builtin_cpu_supports("avx512vnni")) {
    features |= STRATA_CPU_FEATURE_AVX512VNNI;
  }
  if (__builtin_cpu_supports("avx512bf16")) {
    features |= STRATA_CPU_FEATURE_AVX512BF16;
  }
  if (__builtin_cpu_supports("f16c")) features |= STRATA_CPU_FEATURE_F16C;
#endif
  return features;
}

const char* strata_cpu_feature_name(uint64_t feature) {
  for (const FeatureName& f : kFeatures) {
    if (f.bit == feature) return f.name;
  }
  return nullptr;
}

strata_status_t strata_cpu_features_check(uint64_t required,
                                          uint64_t available) {
  uint64_t unknown = required & ~kKnownFeatures;
  if (unknown) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INCOMPATIBLE,
        "artifact requires unknown CPU feature bit %d (built by a newer "
        "compiler?)",
        __builtin_ctzll(unknown));
  }
  for (const FeatureName& f : kFeatures) {
    if ((required & f.bit) && !(available & f.bit)) {
      return STRATA_MAKE_STATUS(
          STRATA_STATUS_INCOMPATIBLE,
          "artifact requires CPU feature '%s', which this CPU lacks; "
          "recompile with a lower --target-cpu",
          f.name);
    }
  }
  return nullptr;
}

}  // extern "C"
