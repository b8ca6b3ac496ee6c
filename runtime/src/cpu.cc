//===- cpu.cc - CPU features of the host and of artifacts
//------------------===//
// SPDX-License-Identifier: Apache-2.0
// The legacy feature bits are the subset of strata_x86_features.h that has
// one; detection is cpu_target.cc's, the same the loader uses.

#include "strata/runtime/cpu.h"

#include <cinttypes>
#include <cstring>

#include "cpu_target.h"
#include "kernels/amx.h"
#include "kernels/matmul_f32.h"
#include "strata_artifact_format.h"
#include "strata_x86_features.h"

namespace {

struct FeatureName {
  uint64_t bit;
  const char* name;
};

#define STRATA_LEGACY_FEATURE_ROW(name, leaf, subleaf, reg, bit, xstate, \
                                  legacy)                                \
  {legacy, name},
constexpr FeatureName kAllFeatures[] = {
    STRATA_X86_FEATURES(STRATA_LEGACY_FEATURE_ROW)};
#undef STRATA_LEGACY_FEATURE_ROW

constexpr uint64_t kKnownFeatures = [] {
  uint64_t all = 0;
  for (const FeatureName& f : kAllFeatures) all |= f.bit;
  return all;
}();

}  // namespace

extern "C" {

uint64_t strata_cpu_features_host(void) {
  uint64_t features = 0;
  for (const FeatureName& f : kAllFeatures) {
    if (f.bit && strata::runtime::hostSupportsCpuFeature(f.name, nullptr)) {
      features |= f.bit;
    }
  }
  return features;
}

const char* strata_cpu_feature_name(uint64_t feature) {
  if (feature == 0) return nullptr;
  for (const FeatureName& f : kAllFeatures) {
    if (f.bit == feature) return f.name;
  }
  return nullptr;
}

int strata_cpu_host_supports(const char* feature) {
  return strata::runtime::hostSupportsCpuFeature(feature, nullptr) ? 1 : 0;
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
  for (const FeatureName& f : kAllFeatures) {
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

const char* strata_cpu_kernel_isa(void) {
  using strata::runtime::kernels::MatmulIsa;
  switch (strata::runtime::kernels::matmulIsa()) {
    case MatmulIsa::kAmx:
      return "amx";
    case MatmulIsa::kAvx512:
      return "avx512";
    case MatmulIsa::kAvx2:
      return "avx2";
    case MatmulIsa::kScalar:
      break;
  }
  return "scalar";
}

strata_status_t strata_cpu_cap_kernel_isa(const char* isa) {
  strata::runtime::kernels::MatmulIsa cap;
  if (!strata::runtime::kernels::matmulIsaNamed(isa, &cap)) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "unknown kernel instruction set '%s' (known: amx, avx512, avx2, "
        "scalar)",
        isa ? isa : "(null)");
  }
  strata::runtime::kernels::capMatmulIsa(cap);
  return nullptr;
}

const char* strata_cpu_amx_status(void) {
  using namespace strata::runtime::kernels;
  if (matmulIsa() == MatmulIsa::kAmx) return nullptr;
  if (amxPermitted()) return "capped below amx (strata_cpu_cap_kernel_isa)";
  return amxUnavailableReason();
}

}  // extern "C"
