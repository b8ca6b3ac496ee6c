//===- RankGroup.h - The group of ranks a tool runs in ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Under an MPI launcher (or with --communicator mpi or nccl) every process
// of strata-run or strata-serve is one rank: it loads the artifact written
// for its rank, gives its session the MPI (or NCCL) communicator, and only
// rank 0 prints and writes outputs (strata-serve: only rank 0 serves).
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_RANK_COMMON_RANKGROUP_H_
#define STRATA_TOOLS_RANK_COMMON_RANKGROUP_H_

#include <string>
#include <vector>

#include "strata/runtime/api.h"

namespace strata::tools {

/// The --help text of --communicator and the artifact rule.
extern const char kCommunicatorHelp[];

class RankGroup {
public:
  RankGroup() = default;
  RankGroup(const RankGroup &) = delete;
  RankGroup &operator=(const RankGroup &) = delete;
  ~RankGroup();

  /// |mode| "" (MPI when an MPI launcher started 2 or more processes and
  /// this strata-run has MPI), "mpi", "nccl" (MPI's ranks exchanging
  /// through NCCL) or "none". Returns "" or the problem.
  std::string open(const std::string &mode);

  /// The communicator for sessions; null for a process of its own.
  const strata_communicator_t *communicator() const { return communicator_; }
  /// The one for the tools' own messages between ranks (a server's calls):
  /// MPI's, with its probe, also when sessions exchange over NCCL.
  const strata_communicator_t *control() const {
    return mpi_ ? mpi_ : communicator_;
  }
  uint32_t rank() const { return communicator_ ? communicator_->rank : 0; }
  uint32_t size() const { return communicator_ ? communicator_->size : 1; }
  /// Whether this process prints and writes outputs (rank 0).
  bool lead() const { return rank() == 0; }

  /// Loads the artifact of this rank for |path|: |path| itself unless the
  /// group has several ranks and |path| (X.strata) is missing or not a
  /// rank, then X.rank<R>.strata. |*loaded| names the file loaded.
  strata_status_t loadModule(const std::string &path,
                             strata_allocator_t allocator,
                             strata_module_t **out, std::string *loaded) const;

  /// Ends every rank's process with |code| when the group has several
  /// (the others would wait for this one's messages forever); else
  /// returns.
  void abortJob(int code) const;

  /// Gives |session| the communicator, if any.
  strata_status_t attach(strata_session_t *session) const;

  /// One more communicator over the same ranks whose messages never meet
  /// the first's, for a session that runs beside the first one on another
  /// thread (pipeline micro-batches); the group keeps it. MPI only, and
  /// only where MPI allows threads to call it at once. Returns "" or the
  /// problem.
  std::string openAnother(const strata_communicator_t **out);

private:
  /// From openAnother, released before mpi_.
  std::vector<strata_communicator_t *> others_;
  /// The one sessions use: mpi_, nccl_ or null.
  strata_communicator_t *communicator_ = nullptr;
  strata_communicator_t *mpi_ = nullptr;
  /// Over mpi_, which started the ranks.
  strata_communicator_t *nccl_ = nullptr;
};

/// Ends the whole job (RankGroup::abortJob) when the scope it guards ends
/// before disarm(): a rank that failed alone. Declared after the group and
/// before the sessions, it acts once they are released.
class AbortJobOnFailure {
public:
  explicit AbortJobOnFailure(const RankGroup &group) : group_(group) {}
  AbortJobOnFailure(const AbortJobOnFailure &) = delete;
  AbortJobOnFailure &operator=(const AbortJobOnFailure &) = delete;
  ~AbortJobOnFailure() {
    if (armed_)
      group_.abortJob(1);
  }
  /// The work succeeded; returns |exitCode| (disarming only when it is 0).
  int done(int exitCode) {
    if (exitCode == 0)
      armed_ = false;
    return exitCode;
  }

private:
  const RankGroup &group_;
  bool armed_ = true;
};

} // namespace strata::tools

#endif // STRATA_TOOLS_RANK_COMMON_RANKGROUP_H_
