//===- weight_prefetch.cc - Whether this CPU's decode kernels prefetch -----===//
// SPDX-License-Identifier: Apache-2.0

#include "weight_prefetch.h"

#include <atomic>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace strata::runtime::kernels {
namespace {

bool amdFamily1AhOrLater() {
#if defined(__x86_64__)
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  if (std::strcmp(vendor, "AuthenticAMD") != 0) return false;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  // Family: the base field, plus the extended field when the base is 0Fh.
  unsigned family = (eax >> 8) & 0xF;
  if (family == 0xF) family += (eax >> 20) & 0xFF;
  return family >= 0x1A;
#else
  return false;
#endif
}

std::atomic<int> gForced{-1};

}  // namespace

bool weightPrefetchPays() {
  static const bool pays = amdFamily1AhOrLater();
  const int forced = gForced.load(std::memory_order_relaxed);
  return forced < 0 ? pays : forced != 0;
}

void forceWeightPrefetchForTesting(int mode) {
  gForced.store(mode, std::memory_order_relaxed);
}

}  // namespace strata::runtime::kernels
