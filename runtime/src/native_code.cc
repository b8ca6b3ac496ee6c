//===- native_code.cc - Loading the CPU code section
//-----------------------===//
// SPDX-License-Identifier: Apache-2.0
// memfd_create + dlopen("/proc/self/fd/N"): no temporary file, nothing left
// behind on a crash, and the code is never writable once mapped.
//
// A profiler cannot read a memory file's symbols after the process is
// gone (perf reports its samples as "memfd:strata-code (deleted)" and
// bare addresses), so with STRATA_CODE_DIR set the code is written to a
// file of its own there, strata-code-<pid>-<n>.so, loaded from it and left
// behind for the profiler.

#include "native_code.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
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

// Writes |size| bytes to |fd|; a status naming |what| if it cannot.
strata_status_t writeAll(int fd, const uint8_t* data, size_t size,
                         const char* what) {
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(fd, data + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                                "cannot write the code to %s: %s", what,
                                n < 0 ? errnoText(errno).c_str() : "no space");
    }
    written += static_cast<size_t>(n);
  }
  return nullptr;
}

// Loads are numbered so that every kept file has a name of its own (the
// loader identifies objects by path).
std::atomic<unsigned> gKeptFiles{0};

}  // namespace

NativeCode::~NativeCode() {
  if (handle_) dlclose(handle_);
  if (fd_ >= 0) close(fd_);
}

strata_status_t NativeCode::openObject(const char* path) {
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

strata_status_t NativeCode::loadKept(const char* dir, const uint8_t* data,
                                     size_t size) {
  std::string path = std::string(dir) + "/strata-code-" +
                     std::to_string(getpid()) + "-" +
                     std::to_string(gKeptFiles.fetch_add(1)) + ".so";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                        0600);
  if (fd < 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                              "STRATA_CODE_DIR: cannot create %s: %s",
                              path.c_str(), errnoText(errno).c_str());
  }
  strata_status_t status = writeAll(fd, data, size, path.c_str());
  close(fd);
  return status ? status : openObject(path.c_str());
}

strata_status_t NativeCode::load(const uint8_t* data, size_t size) {
  const char* keep = std::getenv("STRATA_CODE_DIR");
  if (keep && *keep) return loadKept(keep, data, size);
  fd_ = memfd_create("strata-code", MFD_CLOEXEC);
  if (fd_ < 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                              "memfd_create failed: %s",
                              errnoText(errno).c_str());
  }
  if (strata_status_t status = writeAll(fd_, data, size, "a memory file"))
    return status;
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd_);
  if (access(path, R_OK) != 0) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_UNAVAILABLE,
                              "cannot open %s (is /proc mounted?): %s", path,
                              errnoText(errno).c_str());
  }
  return openObject(path);
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
