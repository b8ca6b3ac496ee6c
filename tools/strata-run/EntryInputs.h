//===- EntryInputs.h - An entry's inputs from .npy files --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_TOOLS_STRATA_RUN_ENTRYINPUTS_H_
#define STRATA_TOOLS_STRATA_RUN_ENTRYINPUTS_H_

#include <string>
#include <utility>
#include <vector>

#include "strata/runtime/api.h"

namespace strata::tools {

/// Tensors released with the list.
struct TensorList {
  std::vector<strata_tensor_t *> tensors;
  TensorList() = default;
  TensorList(const TensorList &) = delete;
  TensorList &operator=(const TensorList &) = delete;
  ~TensorList() { clear(); }
  void clear() {
    for (strata_tensor_t *t : tensors)
      strata_tensor_release(t);
    tensors.clear();
  }
};

/// A session released with the handle.
struct SessionHandle {
  strata_session_t *session = nullptr;
  SessionHandle() = default;
  SessionHandle(const SessionHandle &) = delete;
  SessionHandle &operator=(const SessionHandle &) = delete;
  ~SessionHandle() {
    if (session)
      strata_session_release(session);
  }
};

/// A session on |module| with |threads| threads (0: one per CPU) in |*out|.
/// |communicator| (null: none) is given to the session, for a rank of a
/// tensor-parallel group.
strata_status_t createSession(strata_module_t *module, long threads,
                              strata_allocator_t allocator, SessionHandle *out,
                              const strata_communicator_t *communicator =
                                  nullptr);

/// Runs |entry| once on |inputs|: |*outputs| gets its outputs (released on
/// failure), |*ms| the call's wall time.
strata_status_t runEntry(strata_session_t *session,
                         const strata_entry_signature_t &entry,
                         const TensorList &inputs, TensorList *outputs,
                         double *ms);

/// Reads the inputs of |entry| in its order from (NAME, FILE.npy) |files|,
/// each name once and every input given; false with |*error| otherwise.
bool loadEntryInputs(const strata_entry_signature_t &entry,
                     const std::vector<std::pair<std::string, std::string>> &files,
                     strata_allocator_t allocator, TensorList *inputs,
                     std::string *error);

/// The file name of an output: characters outside [A-Za-z0-9._-] become '_'.
std::string sanitizeFileName(const std::string &name);

/// Writes each output of |entry| as DIR/<name>.npy (DIR created if needed),
/// the paths into |*written|; false with |*error| otherwise.
bool writeEntryOutputs(const strata_entry_signature_t &entry,
                       const TensorList &outputs, const std::string &dir,
                       std::vector<std::string> *written, std::string *error);

/// `--steps FILE`: runs the steps of FILE on one session, in order (states
/// such as a KV cache carry from step to step). One step per line, `ENTRY
/// NAME=FILE.npy ...`; blank lines and lines starting with '#' are skipped.
/// With |outputDir|, step k's outputs go to DIR/k/<name>.npy. Returns the
/// process exit code.
int runSteps(strata_module_t *module, const std::string &stepsPath,
             const std::string &outputDir, long threads, bool json,
             const strata_communicator_t *communicator = nullptr);

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_RUN_ENTRYINPUTS_H_
