//===- cpu_quota.h - How many CPUs this process may use -------------------===//
// SPDX-License-Identifier: Apache-2.0
// The default thread count: the smallest of the CPUs the system has, the
// CPUs the affinity mask allows and the CPU time the cgroup quota grants
// (cgroup v2 cpu.max, cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us). A
// container limited to 2 CPUs on a 64-core host gets 2 threads, not 64.
// Every parser takes file contents, so each rule is testable on strings;
// unreadable or malformed files count as "no limit".

#ifndef STRATA_RUNTIME_SRC_CPU_QUOTA_H_
#define STRATA_RUNTIME_SRC_CPU_QUOTA_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::runtime {

/// CPUs granted by the contents of a cgroup v2 `cpu.max` file, "QUOTA
/// PERIOD" in microseconds: ceil(QUOTA / PERIOD), at least 1. Returns 0 (no
/// limit) for "max PERIOD" and for anything malformed: empty, not two
/// decimal numbers, a zero period or quota, trailing text.
uint32_t cpusFromCgroupV2CpuMax(std::string_view contents);

/// CPUs granted by cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`
/// contents: ceil(quota / period), at least 1. Returns 0 (no limit) for a
/// quota of -1 and for anything malformed.
uint32_t cpusFromCgroupV1Quota(std::string_view quota, std::string_view period);

/// The directories whose CPU quota applies to this process: its own cgroup
/// and every ancestor up to the mount point, for the cgroup v2 hierarchy
/// and for a cgroup v1 hierarchy with the `cpu` controller.
struct CgroupCpuDirs {
  std::vector<std::string> v2;
  std::vector<std::string> v1;
};

/// Finds the cgroup directories from the contents of /proc/self/mountinfo
/// and /proc/self/cgroup. Lines it does not understand are skipped; a
/// cgroup path outside the mounted subtree (another cgroup namespace's)
/// yields only the mount point itself.
CgroupCpuDirs findCgroupCpuDirs(std::string_view mountinfo,
                                std::string_view procCgroup);

/// The smallest CPU quota along this process's cgroups (v2 and v1), or 0
/// when none applies or the files cannot be read.
uint32_t cgroupCpuLimit();

/// The CPUs the affinity mask of this process allows, or 0 if unknown.
uint32_t affinityCpuCount();

/// The smallest of the nonzero counts (0 = unknown); 1 if all are 0.
uint32_t chooseThreadCount(uint32_t hardware, uint32_t affinity,
                           uint32_t quota);

/// chooseThreadCount(hardware concurrency, affinityCpuCount(),
/// cgroupCpuLimit()): reads /proc and /sys, so callers keep the result.
uint32_t defaultThreadCount();

}  // namespace strata::runtime

#endif  // STRATA_RUNTIME_SRC_CPU_QUOTA_H_
