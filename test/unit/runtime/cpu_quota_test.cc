//===- cpu_quota_test.cc - The default thread count's inputs --------------===//
// SPDX-License-Identifier: Apache-2.0
// The cgroup parsers on file contents as the kernel writes them, and on
// contents it never writes (which must count as "no limit").

#include "cpu_quota.h"

#include <gtest/gtest.h>

#include <thread>

namespace strata::runtime {
namespace {

TEST(CpuQuotaTest, V2CpuMaxRoundsUp) {
  EXPECT_EQ(cpusFromCgroupV2CpuMax("200000 100000\n"), 2u);
  EXPECT_EQ(cpusFromCgroupV2CpuMax("150000 100000\n"), 2u);
  EXPECT_EQ(cpusFromCgroupV2CpuMax("50000 100000\n"), 1u);
  EXPECT_EQ(cpusFromCgroupV2CpuMax("1 100000"), 1u);
  EXPECT_EQ(cpusFromCgroupV2CpuMax("6400000 100000"), 64u);
  EXPECT_EQ(cpusFromCgroupV2CpuMax("  300000 100000  \n"), 3u);
}

TEST(CpuQuotaTest, V2CpuMaxWithoutLimit) {
  EXPECT_EQ(cpusFromCgroupV2CpuMax("max 100000\n"), 0u);
  EXPECT_EQ(cpusFromCgroupV2CpuMax("max"), 0u);
}

TEST(CpuQuotaTest, V2CpuMaxGarbageIsIgnored) {
  for (const char* contents :
       {"", "\n", "garbage", "100000", "100000 0", "0 100000", "-5 100000",
        "100000 -1", "100000 100000 7", "100000  100000", "1e5 100000",
        "100000 100000x", "0x10 100000", "99999999999999999999 100000",
        "100000\t100000", "100000 100000\n\n200000 100000"}) {
    EXPECT_EQ(cpusFromCgroupV2CpuMax(contents), 0u) << "'" << contents << "'";
  }
}

TEST(CpuQuotaTest, V2CpuMaxClampsHugeQuotas) {
  EXPECT_EQ(cpusFromCgroupV2CpuMax("999999999999999999 1"), UINT32_MAX);
}

TEST(CpuQuotaTest, V1Quota) {
  EXPECT_EQ(cpusFromCgroupV1Quota("200000\n", "100000\n"), 2u);
  EXPECT_EQ(cpusFromCgroupV1Quota("250000", "100000"), 3u);
  EXPECT_EQ(cpusFromCgroupV1Quota("-1\n", "100000\n"), 0u);
  EXPECT_EQ(cpusFromCgroupV1Quota("", "100000"), 0u);
  EXPECT_EQ(cpusFromCgroupV1Quota("200000", ""), 0u);
  EXPECT_EQ(cpusFromCgroupV1Quota("200000", "0"), 0u);
  EXPECT_EQ(cpusFromCgroupV1Quota("max", "100000"), 0u);
  EXPECT_EQ(cpusFromCgroupV1Quota("20O000", "100000"), 0u);
}

// A cgroup v2 system (systemd): the process's cgroup and its ancestors.
TEST(CpuQuotaTest, FindsV2DirsUpToTheMountPoint) {
  const char* mountinfo =
      "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
      "26 23 0:23 / /sys/fs/cgroup rw,nosuid,nodev shared:4 - cgroup2 "
      "cgroup2 rw,nsdelegate\n";
  CgroupCpuDirs dirs =
      findCgroupCpuDirs(mountinfo, "0::/user.slice/session-3.scope\n");
  EXPECT_EQ(dirs.v2, (std::vector<std::string>{
                         "/sys/fs/cgroup/user.slice/session-3.scope",
                         "/sys/fs/cgroup/user.slice", "/sys/fs/cgroup"}));
  EXPECT_TRUE(dirs.v1.empty());
}

// A container with its own cgroup namespace: the path is "/".
TEST(CpuQuotaTest, FindsV2RootInANamespace) {
  CgroupCpuDirs dirs = findCgroupCpuDirs(
      "30 25 0:26 / /sys/fs/cgroup ro - cgroup2 cgroup rw\n", "0::/\n");
  EXPECT_EQ(dirs.v2, (std::vector<std::string>{"/sys/fs/cgroup"}));
}

// A bind-mounted subtree: paths are relative to the mount's root, and a
// path outside it yields only the mount point.
TEST(CpuQuotaTest, PathsRelativeToTheMountRoot) {
  const char* mountinfo =
      "30 25 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup rw\n";
  EXPECT_EQ(
      findCgroupCpuDirs(mountinfo, "0::/docker/abc/worker\n").v2,
      (std::vector<std::string>{"/sys/fs/cgroup/worker", "/sys/fs/cgroup"}));
  EXPECT_EQ(findCgroupCpuDirs(mountinfo, "0::/other/x\n").v2,
            (std::vector<std::string>{"/sys/fs/cgroup"}));
  EXPECT_EQ(findCgroupCpuDirs(mountinfo, "0::/docker/abcdef\n").v2,
            (std::vector<std::string>{"/sys/fs/cgroup"}));
  EXPECT_EQ(findCgroupCpuDirs(mountinfo, "0::/docker/abc/../../x\n").v2,
            (std::vector<std::string>{"/sys/fs/cgroup"}));
}

// Hybrid: v1 controllers (cpu co-mounted with cpuacct) and a v2 mount
// without them; both are listed, the missing files count as no limit.
TEST(CpuQuotaTest, FindsV1CpuControllerInHybridSetups) {
  const char* mountinfo =
      "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup "
      "cgroup rw,cpu,cpuacct\n"
      "34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
  const char* procCgroup =
      "4:memory:/job\n3:cpuset:/\n2:cpu,cpuacct:/job/7\n0::/job\n";
  CgroupCpuDirs dirs = findCgroupCpuDirs(mountinfo, procCgroup);
  EXPECT_EQ(dirs.v1,
            (std::vector<std::string>{"/sys/fs/cgroup/cpu,cpuacct/job/7",
                                      "/sys/fs/cgroup/cpu,cpuacct/job",
                                      "/sys/fs/cgroup/cpu,cpuacct"}));
  EXPECT_EQ(dirs.v2, (std::vector<std::string>{"/sys/fs/cgroup/unified/job",
                                               "/sys/fs/cgroup/unified"}));
}

// cpuset is not cpu, and "cpuacct" alone is not either.
TEST(CpuQuotaTest, V1NeedsTheCpuControllerItself) {
  const char* mountinfo =
      "33 31 0:30 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n"
      "34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n";
  CgroupCpuDirs dirs =
      findCgroupCpuDirs(mountinfo, "3:cpuset:/a\n2:cpuacct:/a\n");
  EXPECT_TRUE(dirs.v1.empty());
  EXPECT_TRUE(dirs.v2.empty());
}

// Mount points with spaces are octal-escaped in mountinfo.
TEST(CpuQuotaTest, UnescapesMountPoints) {
  CgroupCpuDirs dirs = findCgroupCpuDirs(
      "30 25 0:26 / /mnt/my\\040cgroup rw - cgroup2 cgroup2 rw\n", "0::/a\n");
  EXPECT_EQ(dirs.v2,
            (std::vector<std::string>{"/mnt/my cgroup/a", "/mnt/my cgroup"}));
}

TEST(CpuQuotaTest, MalformedProcFilesYieldNoDirs) {
  for (const char* mountinfo :
       {"", "garbage\n", "1 2 3\n", "30 25 0:26 / /sys/fs/cgroup rw - cgroup2",
        "- cgroup2 cgroup2 rw\n"}) {
    CgroupCpuDirs dirs = findCgroupCpuDirs(mountinfo, "0::/a\n");
    EXPECT_TRUE(dirs.v2.empty()) << mountinfo;
  }
  const char* mountinfo = "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 c rw\n";
  for (const char* procCgroup :
       {"", "garbage", "0:", "0::", "0::relative\n", "1::/a\n"}) {
    EXPECT_TRUE(findCgroupCpuDirs(mountinfo, procCgroup).v2.empty())
        << procCgroup;
  }
}

TEST(CpuQuotaTest, ThreadCountIsTheSmallestKnownLimit) {
  EXPECT_EQ(chooseThreadCount(64, 64, 2), 2u);
  EXPECT_EQ(chooseThreadCount(64, 8, 0), 8u);
  EXPECT_EQ(chooseThreadCount(4, 8, 16), 4u);
  EXPECT_EQ(chooseThreadCount(0, 0, 3), 3u);
  EXPECT_EQ(chooseThreadCount(0, 0, 0), 1u);
}

// On this machine: never more than the CPUs the process may run on.
TEST(CpuQuotaTest, DefaultIsWithinTheAffinityMask) {
  uint32_t threads = defaultThreadCount();
  EXPECT_GE(threads, 1u);
  uint32_t affinity = affinityCpuCount();
  ASSERT_GT(affinity, 0u);
  EXPECT_LE(threads, affinity);
  EXPECT_LE(threads, std::max(1u, std::thread::hardware_concurrency()));
  uint32_t quota = cgroupCpuLimit();
  if (quota > 0) {
    EXPECT_LE(threads, quota);
  }
}

}  // namespace
}  // namespace strata::runtime
