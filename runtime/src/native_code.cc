//===- native_code.cc - Loading the CPU code section
//-----------------------===//
// SPDX-License-Identifier: Apache-2.0
// memfd_create + dlopen("/proc/self/fd/N"): no temporary file, nothing left
// behind on a crash, and the code is never writable once mapped.

#include "native_code.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "strata_kernel_abi.h"

namespace strata::runtime {
namespace {

static_assert(kMaxEntryArgs >= STRATA_MAX_ENTRY_INPUTS + 2,
              "an entry call has results, the inputs and the weights");

std::string errnoText(int error) {
  char buffer[256];
  // GNU strerror_r returns the message, possibly not in |buffer|.
  return strerror_r(error, buffer, sizeof(buffer));
}

template <size_t>
using VoidPtr = void*;

template <size_t... I>
void callWithArity(void* function, void* const* args,
                   std::index_sequence<I...>) {
  using Function = void (*)(VoidPtr<I>...);
  reinterpret_cast<Function>(function)(args[I]...);
}

template <size_t N>
void callN(void* function, void* const* args) {
  callWithArity(function, args, std::make_index_sequence<N>{});
}

using Caller = void (*)(void*, void* const*);

template <size_t... N>
constexpr std::array<Caller, sizeof...(N)> makeCallers(
    std::index_sequence<N...>) {
  return {&callN<N>...};
}

// One caller per arity, so every call uses the callee's exact type.
constexpr auto kCallers =
    makeCallers(std::make_index_sequence<kMaxEntryArgs + 1>{});

}  // namespace

NativeCode::~NativeCode() {
  if (handle_) dlclose(handle_);
  if (fd_ >= 0) close(fd_);
}

strata_status_t NativeCode::load(const uint8_t* data, size_t size) {
  fd_ = memfd_create("strata-code", MFD_CLOEXEC);
  if (fd_ < 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                              "memfd_create failed: %s",
                              errnoText(errno).c_str());
  }
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(fd_, data + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                                "cannot write the code to a memory file: %s",
                                n < 0 ? errnoText(errno).c_str() : "no space");
    }
    written += static_cast<size_t>(n);
  }
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd_);
  if (access(path, R_OK) != 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                              "cannot open %s (is /proc mounted?): %s", path,
                              errnoText(errno).c_str());
  }
  handle_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* error = dlerror();
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_DATA_LOSS,
        "code section is not a loadable shared object: %s",
        error ? error : "unknown error");
  }
  return nullptr;
}

strata_status_t NativeCode::resolve(const char* symbol,
                                    void** out_address) const {
  dlerror();
  void* address = dlsym(handle_, symbol);
  if (!address) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_DATA_LOSS,
                              "symbol '%s' not found in the code section",
                              symbol);
  }
  *out_address = address;
  return nullptr;
}

void* NativeCode::find(const char* symbol) const {
  return handle_ ? dlsym(handle_, symbol) : nullptr;
}

void callEntry(void* function, void* const* args, size_t arg_count) {
  kCallers[arg_count](function, args);
}

}  // namespace strata::runtime
