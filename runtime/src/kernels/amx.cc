//===- amx.cc - Whether this process may use AMX tiles --------------------===//
// SPDX-License-Identifier: Apache-2.0

#include "amx.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace strata::runtime::kernels {
namespace {

// Linux's arch_prctl codes and the tile data state component
// (arch/x86/include/uapi/asm/prctl.h; XFEATURE_XTILEDATA).
constexpr int kArchGetXcompPerm = 0x1022;
constexpr int kArchReqXcompPerm = 0x1023;
constexpr unsigned long kXfeatureXtiledata = 18;

struct AmxState {
  bool permitted;
  char reason[160];
};

AmxState ask() {
  AmxState s{false, ""};
#if defined(__x86_64__)
  __builtin_cpu_init();
  // The runtime's feature check includes the OS's XCR0 tile state bits.
  if (!__builtin_cpu_supports("amx-tile") ||
      !__builtin_cpu_supports("amx-bf16") ||
      !__builtin_cpu_supports("amx-int8")) {
    std::snprintf(s.reason, sizeof s.reason,
                  "this CPU (or its operating system) has no AMX");
    return s;
  }
#if defined(__linux__)
  unsigned long granted = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &granted) == 0 &&
      (granted & (1ul << kXfeatureXtiledata))) {
    s.permitted = true;
    return s;
  }
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) {
    std::snprintf(s.reason, sizeof s.reason,
                  "Linux refused AMX tile data to this process "
                  "(arch_prctl ARCH_REQ_XCOMP_PERM: %s)",
                  std::strerror(errno));
    return s;
  }
  s.permitted = true;
  return s;
#else
  std::snprintf(s.reason, sizeof s.reason,
                "AMX tile data is requested only on Linux");
  return s;
#endif
#else
  std::snprintf(s.reason, sizeof s.reason, "not an x86-64 CPU");
  return s;
#endif
}

const AmxState& hostState() {
  static const AmxState state = ask();  // thread-safe, asked once
  return state;
}

std::atomic<bool> gSimulateRefusal{false};

constexpr const char* kSimulatedReason =
    "Linux refused AMX tile data to this process (simulated by a test)";

}  // namespace

bool amxPermitted() {
  if (gSimulateRefusal.load(std::memory_order_relaxed)) return false;
  return hostState().permitted;
}

const char* amxUnavailableReason() {
  const AmxState& s = hostState();
  if (s.permitted && gSimulateRefusal.load(std::memory_order_relaxed))
    return kSimulatedReason;
  return s.reason;
}

void simulateAmxRefusalForTesting(bool refuse) {
  gSimulateRefusal.store(refuse, std::memory_order_relaxed);
}

}  // namespace strata::runtime::kernels
