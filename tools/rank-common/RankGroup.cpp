//===- RankGroup.cpp - The group of ranks a tool runs in ------------------===//
// SPDX-License-Identifier: Apache-2.0
// Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE, MPICH's and Slurm's PMI
// launchers PMI_SIZE: either above 1 means the process is one of a group.
//===----------------------------------------------------------------------===//

#include "tools/rank-common/RankGroup.h"

#include "tools/common/RankPath.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#if defined(STRATA_RANK_GROUP_HAVE_MPI)
#include "strata/runtime/mpi_communicator.h"
#include "strata/runtime/nccl_communicator.h"
#endif

namespace strata::tools {

const char kCommunicatorHelp[] =
    "  --communicator MODE   mpi: each process of an MPI launch is one rank\n"
    "                        of a tensor-parallel model; nccl: the same\n"
    "                        ranks exchanging through NCCL, rank R on GPU\n"
    "                        R mod the GPU count (MPI starts them and\n"
    "                        hands out NCCL's id);\n"
    "                        none: a process of its own (default: mpi when\n"
    "                        started by mpirun or a PMI launcher with 2+\n"
    "                        processes). A rank R given X.strata that is\n"
    "                        not itself a rank loads X.rank<R>.strata; only\n"
    "                        rank 0 prints and writes outputs\n";

namespace {

bool launchedAsGroup() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char *value = std::getenv(name);
    if (value && std::atol(value) > 1)
      return true;
  }
  return false;
}

bool exists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

} // namespace

RankGroup::~RankGroup() {
#if defined(STRATA_RANK_GROUP_HAVE_MPI)
  // NCCL's communicator first: MPI may finalize at its release.
  strata_nccl_communicator_release(nccl_);
  for (strata_communicator_t *other : others_)
    strata_mpi_communicator_release(other);
  strata_mpi_communicator_release(mpi_);
#endif
}

std::string RankGroup::open(const std::string &mode) {
  if (mode == "none" || (mode.empty() && !launchedAsGroup()))
    return "";
  if (!mode.empty() && mode != "mpi" && mode != "nccl")
    return "--communicator expects mpi, nccl or none, got '" + mode + "'";
#if defined(STRATA_RANK_GROUP_HAVE_MPI)
  strata_status_t status = strata_mpi_communicator_create(&mpi_);
  if (status) {
    std::string problem = std::string("cannot start MPI: ") +
                          strata_status_message(status);
    strata_status_free(status);
    return problem;
  }
  communicator_ = mpi_;
  if (mode != "nccl")
    return "";
  // MPI carries NCCL's id from rank 0 to the others; the runs go over NCCL.
  status = strata_nccl_communicator_create(mpi_, -1, &nccl_);
  if (status) {
    std::string problem = std::string("cannot start NCCL on rank ") +
                          std::to_string(mpi_->rank) + ": " +
                          strata_status_code_string(strata_status_code(
                              status)) +
                          ": " + strata_status_message(status);
    strata_status_free(status);
    return problem;
  }
  communicator_ = nccl_;
  return "";
#else
  if (mode.empty())
    return "started by an MPI launcher, but this tool was built "
           "without MPI (libstrata_mpi); rebuild where MPI is installed or "
           "pass --communicator none";
  return "--communicator " + mode +
         ": this tool was built without MPI (libstrata_mpi), which "
         "starts the ranks; rebuild where MPI is installed";
#endif
}

void RankGroup::abortJob(int code) const {
#if defined(STRATA_RANK_GROUP_HAVE_MPI)
  if (size() > 1) {
    std::fflush(stdout);
    std::fflush(stderr);
    strata_mpi_communicator_abort(mpi_, code);
  }
#else
  (void)code;
#endif
}

strata_status_t RankGroup::loadModule(const std::string &path,
                                      strata_allocator_t allocator,
                                      strata_module_t **out,
                                      std::string *loaded) const {
  std::string rankPath;
  if (size() > 1)
    rankPath = tools::rankArtifactPath(path, int(rank()));
  if (rankPath.empty() || exists(path)) {
    strata_module_t *module = nullptr;
    STRATA_RETURN_IF_ERROR(
        strata_module_load_file(path.c_str(), allocator, &module));
    uint32_t ranks = 1;
    strata_module_parallel(module, nullptr, &ranks);
    if (rankPath.empty() || ranks > 1) {
      *out = module;
      *loaded = path;
      return nullptr;
    }
    strata_module_release(module);
  }
  *loaded = rankPath;
  strata_status_t status =
      strata_module_load_file(rankPath.c_str(), allocator, out);
  if (!status)
    return nullptr;
  const std::string why = "'" + path + "' is " +
                          (exists(path) ? "a whole model, not a rank"
                                        : "missing") +
                          ", so rank " + std::to_string(rank()) + " of " +
                          std::to_string(size()) + " loads '" + rankPath + "'";
  return strata_status_annotate(status, why.c_str());
}

std::string RankGroup::openAnother(const strata_communicator_t **out) {
#if defined(STRATA_RANK_GROUP_HAVE_MPI)
  if (!mpi_ || communicator_ != mpi_)
    return "sessions side by side need --communicator mpi";
  if (!strata_mpi_communicators_concurrent())
    return "this MPI does not give MPI_THREAD_MULTIPLE, which sessions "
           "running side by side need";
  strata_communicator_t *other = nullptr;
  strata_status_t status = strata_mpi_communicator_create(&other);
  if (status) {
    std::string problem = std::string("cannot open another communicator: ") +
                          strata_status_message(status);
    strata_status_free(status);
    return problem;
  }
  others_.push_back(other);
  *out = other;
  return "";
#else
  (void)out;
  return "sessions side by side need MPI, and this strata-run was built "
         "without it";
#endif
}

strata_status_t RankGroup::attach(strata_session_t *session) const {
  if (!communicator_)
    return nullptr;
  return strata_session_set_communicator(session, communicator_);
}

} // namespace strata::tools
