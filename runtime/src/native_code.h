//===- native_code.h - Loading the CPU code section
//------------------------===//
// SPDX-License-Identifier: Apache-2.0
// The code section is an ELF shared object. It is loaded without touching
// the file system: the bytes go into an anonymous memory file (memfd) that
// the dynamic loader opens through /proc/self/fd.

#ifndef STRATA_RUNTIME_SRC_NATIVE_CODE_H_
#define STRATA_RUNTIME_SRC_NATIVE_CODE_H_

#include <cstddef>
#include <cstdint>

#include "strata/runtime/status.h"

namespace strata::runtime {

/// A loaded shared object; unloads on destruction.
class NativeCode {
 public:
  NativeCode() = default;
  ~NativeCode();
  NativeCode(const NativeCode&) = delete;
  NativeCode& operator=(const NativeCode&) = delete;

  /// Loads |size| bytes of ELF shared object from |data|. UNAVAILABLE if the
  /// system cannot provide a memory file (or, with STRATA_CODE_DIR set, the
  /// file there); DATA_LOSS with the loader's message if the bytes are not a
  /// loadable shared object.
  strata_status_t load(const uint8_t* data, size_t size);

  /// Resolves exported |symbol|; DATA_LOSS if it is missing.
  strata_status_t resolve(const char* symbol, void** out_address) const;

  /// The address of exported |symbol|, or null.
  void* find(const char* symbol) const;

 private:
  // dlopen of |path|: DATA_LOSS with the loader's message if it fails.
  strata_status_t openObject(const char* path);
  // STRATA_CODE_DIR: the code in a file of its own in |dir|, kept.
  strata_status_t loadKept(const char* dir, const uint8_t* data, size_t size);

  // The memory file stays open while the object is loaded: the loader
  // identifies objects by path, and a reused descriptor number would make
  // dlopen return a stale module.
  int fd_ = -1;
  void* handle_ = nullptr;
};

/// Calls |function| (an entry point per the kernel ABI) with |arg_count|
/// pointer arguments |args|, through the function type of exactly that
/// arity. |arg_count| is at most kMaxEntryArgs.
void callEntry(void* function, void* const* args, size_t arg_count);

/// The most pointer arguments callEntry supports.
constexpr size_t kMaxEntryArgs = 256;

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_NATIVE_CODE_H_
