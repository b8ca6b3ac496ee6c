//===- cpu_target.cc - The host against a CPU target descriptor -----------===//
// SPDX-License-Identifier: Apache-2.0
// CPUID is read on every query: a handful of instructions, no state of
// ours, and a check runs once per load.

#include "cpu_target.h"

#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "strata_x86_features.h"

namespace strata::runtime {
namespace {

struct X86Feature {
  const char* name;
  uint32_t leaf;
  uint32_t subleaf;
  int reg;
  int bit;
  uint64_t xstate;
  uint64_t legacyBit;
};

#define STRATA_X86_FEATURE_ROW(name, leaf, subleaf, reg, bit, xstate, legacy) \
  {name, leaf, subleaf, reg, bit, xstate, legacy},
constexpr X86Feature kFeatures[] = {STRATA_X86_FEATURES(STRATA_X86_FEATURE_ROW)};
#undef STRATA_X86_FEATURE_ROW

const X86Feature* findFeature(const char* name) {
  for (const X86Feature& feature : kFeatures) {
    if (std::strcmp(feature.name, name) == 0) return &feature;
  }
  return nullptr;
}

#if defined(__x86_64__)
// XCR0: the register state the operating system saves, 0 without XSAVE.
uint64_t enabledXstate() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  if (!(ecx & bit_OSXSAVE)) return 0;
  uint32_t low, high;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (uint64_t{high} << 32) | low;
}

bool cpuidBit(const X86Feature& feature) {
  // The highest leaf of the feature's range (basic or extended).
  unsigned maxLeaf = __get_cpuid_max(feature.leaf & 0x80000000u, nullptr);
  if (maxLeaf < feature.leaf) return false;
  unsigned regs[4] = {};
  __cpuid_count(feature.leaf, feature.subleaf, regs[0], regs[1], regs[2],
                regs[3]);
  if (feature.leaf == 0x7 && feature.subleaf > 0) {
    // Leaf 7's subleaf count is EAX of subleaf 0.
    unsigned eax, ebx, ecx, edx;
    __cpuid_count(0x7, 0, eax, ebx, ecx, edx);
    if (eax < feature.subleaf) return false;
  }
  return (regs[feature.reg] >> feature.bit) & 1u;
}
#endif

bool supports(const X86Feature& feature) {
#if defined(__x86_64__)
  if (!cpuidBit(feature)) return false;
  return feature.xstate == 0 ||
         (enabledXstate() & feature.xstate) == feature.xstate;
#else
  (void)feature;
  return false;
#endif
}

// Appends |name| to a quoted list, at most 16 names of 64 bytes each, so a
// hostile descriptor cannot make the message huge.
void appendName(std::string* list, size_t* count, const std::string& name) {
  constexpr size_t kMaxNames = 16;
  if (++*count > kMaxNames) return;
  *list += (list->empty() ? "'" : ", '") + name.substr(0, 64) + "'";
}

std::string finished(const std::string& list, size_t count) {
  constexpr size_t kMaxNames = 16;
  if (count <= kMaxNames) return list;
  return list + " and " + std::to_string(count - kMaxNames) + " more";
}

}  // namespace

bool hostSupportsCpuFeature(const char* name, bool* known) {
  const X86Feature* feature = name ? findFeature(name) : nullptr;
  if (known) *known = feature != nullptr;
  return feature && supports(*feature);
}

uint64_t legacyCpuFeatureBits(const std::vector<std::string>& features) {
  uint64_t bits = 0;
  for (const std::string& name : features) {
    const X86Feature* feature = findFeature(name.c_str());
    if (feature) bits |= feature->legacyBit;
  }
  return bits;
}

strata_status_t checkCpuTarget(const format::CpuTarget& target) {
  if (target.arch != STRATA_TARGET_CPU_ARCH_X86_64) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INCOMPATIBLE,
                              "artifact code is compiled for CPU architecture "
                              "'%.64s'; this runtime runs '%s' code",
                              target.arch.c_str(),
                              STRATA_TARGET_CPU_ARCH_X86_64);
  }
#if !defined(__x86_64__)
  return STRATA_MAKE_STATUS(STRATA_STATUS_INCOMPATIBLE,
                            "artifact code is x86-64; this CPU is not");
#else
  std::string missing, unknown;
  size_t missingCount = 0, unknownCount = 0;
  for (const std::string& name : target.features) {
    bool known = false;
    if (hostSupportsCpuFeature(name.c_str(), &known)) continue;
    if (known) {
      appendName(&missing, &missingCount, name);
    } else {
      appendName(&unknown, &unknownCount, name);
    }
  }
  if (missingCount == 0 && unknownCount == 0) return nullptr;
  missing = finished(missing, missingCount);
  unknown = finished(unknown, unknownCount);
  std::string message = "artifact code needs CPU features";
  if (!missing.empty()) message += " this CPU lacks: " + missing;
  if (!unknown.empty()) {
    message += std::string(missing.empty() ? "" : ";") +
               " this runtime cannot detect: " + unknown +
               " (built by a newer compiler?)";
  }
  message += "; recompile with a lower --target-cpu";
  return STRATA_MAKE_STATUS(STRATA_STATUS_INCOMPATIBLE, "%s", message.c_str());
#endif
}

}  // namespace strata::runtime
