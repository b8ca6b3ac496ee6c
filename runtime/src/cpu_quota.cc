//===- cpu_quota.cc - How many CPUs this process may use ------------------===//
// SPDX-License-Identifier: Apache-2.0
// A quota of 1.5 CPUs per period rounds up to 2 threads: the pool's caller
// thread is busy only part of the time, and a rounded-down count would
// leave quota unused. Parent cgroups limit their children, so every level
// up to the mount point counts.

#include "cpu_quota.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

namespace strata::runtime {
namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && isSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back())) text.remove_suffix(1);
  return text;
}

// A decimal number that fits in int64_t, with an optional '-' sign; the
// whole of |text| must be the number.
bool parseInt(std::string_view text, int64_t* out) {
  bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text.empty() || text.size() > 18) return false;  // < 10^18: no overflow
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *out = negative ? -value : value;
  return true;
}

// ceil(quota / period) clamped to [1, UINT32_MAX]; 0 for a non-positive
// quota or period.
uint32_t cpusForQuota(int64_t quota, int64_t period) {
  if (quota <= 0 || period <= 0) return 0;
  int64_t cpus = quota / period + (quota % period != 0);
  return static_cast<uint32_t>(std::min<int64_t>(cpus, UINT32_MAX));
}

// Splits |text| at |separator|; every piece, empty ones included.
std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  for (;;) {
    size_t at = text.find(separator);
    pieces.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return pieces;
    text.remove_prefix(at + 1);
  }
}

bool hasToken(std::string_view list, std::string_view token) {
  for (std::string_view piece : split(list, ','))
    if (piece == token) return true;
  return false;
}

// mountinfo writes space, tab, newline and backslash in paths as \ooo.
std::string unescapeOctal(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] >= '0' &&
        text[i + 1] <= '3' && text[i + 2] >= '0' && text[i + 2] <= '7' &&
        text[i + 3] >= '0' && text[i + 3] <= '7') {
      out += static_cast<char>((text[i + 1] - '0') * 64 +
                               (text[i + 2] - '0') * 8 + (text[i + 3] - '0'));
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

// One cgroup filesystem mount: where it is and which cgroup it shows.
struct CgroupMount {
  std::string root;
  std::string mountPoint;
};

// |mountPoint| followed by |path| relative to the mounted |root|, and each
// ancestor up to the mount point; only the mount point when |path| lies
// outside |root|.
std::vector<std::string> cgroupDirs(const CgroupMount& mount,
                                    std::string_view path) {
  std::string_view root = mount.root;
  if (root == "/") root = "";
  std::string relative;
  if (path.substr(0, root.size()) == root &&
      (path.size() == root.size() || path[root.size()] == '/')) {
    relative = std::string(path.substr(root.size()));
  }
  // No climbing out of the mount point.
  for (std::string_view piece : split(relative, '/'))
    if (piece == "..") relative.clear();
  std::vector<std::string> dirs;
  for (;;) {
    while (!relative.empty() && relative.back() == '/') relative.pop_back();
    dirs.push_back(mount.mountPoint + relative);
    size_t slash = relative.rfind('/');
    if (relative.empty()) return dirs;
    relative.resize(slash == std::string::npos ? 0 : slash);
  }
}

// Reads at most 1 MiB of a (pseudo) file; false if it cannot be read.
bool readSmallFile(const std::string& path, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  out->clear();
  char buffer[4096];
  bool ok = true;
  while (out->size() < (1u << 20)) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    out->append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return ok;
}

}  // namespace

uint32_t cpusFromCgroupV2CpuMax(std::string_view contents) {
  std::vector<std::string_view> fields = split(trim(contents), ' ');
  int64_t quota = 0, period = 0;
  if (fields.size() != 2 || fields[0] == "max" ||
      !parseInt(fields[0], &quota) || !parseInt(fields[1], &period)) {
    return 0;
  }
  return cpusForQuota(quota, period);
}

uint32_t cpusFromCgroupV1Quota(std::string_view quota,
                               std::string_view period) {
  int64_t q = 0, p = 0;
  if (!parseInt(trim(quota), &q) || !parseInt(trim(period), &p)) return 0;
  return cpusForQuota(q, p);
}

CgroupCpuDirs findCgroupCpuDirs(std::string_view mountinfo,
                                std::string_view procCgroup) {
  // The first cgroup2 mount, and the first cgroup (v1) mount with the cpu
  // controller.
  CgroupMount v2Mount, v1Mount;
  bool haveV2 = false, haveV1 = false;
  for (std::string_view line : split(mountinfo, '\n')) {
    std::vector<std::string_view> fields = split(line, ' ');
    auto dash = std::find(fields.begin(), fields.end(), "-");
    // 6 fields before the optional ones, then fstype, source, options.
    if (dash - fields.begin() < 6 || fields.end() - dash < 4) continue;
    std::string_view fsType = dash[1];
    CgroupMount mount{unescapeOctal(fields[3]), unescapeOctal(fields[4])};
    if (fsType == "cgroup2" && !haveV2) {
      v2Mount = mount;
      haveV2 = true;
    } else if (fsType == "cgroup" && !haveV1 && hasToken(dash[3], "cpu")) {
      v1Mount = mount;
      haveV1 = true;
    }
  }
  CgroupCpuDirs dirs;
  for (std::string_view line : split(procCgroup, '\n')) {
    // hierarchy-id:controllers:path; the path may itself contain ':'.
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? std::string_view::npos
                                                    : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view id = line.substr(0, first);
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    std::string_view path = line.substr(second + 1);
    if (path.empty() || path.front() != '/') continue;
    if (id == "0" && controllers.empty() && haveV2 && dirs.v2.empty()) {
      dirs.v2 = cgroupDirs(v2Mount, path);
    } else if (haveV1 && dirs.v1.empty() && hasToken(controllers, "cpu")) {
      dirs.v1 = cgroupDirs(v1Mount, path);
    }
  }
  return dirs;
}

uint32_t cgroupCpuLimit() {
  std::string mountinfo, procCgroup;
  if (!readSmallFile("/proc/self/mountinfo", &mountinfo) ||
      !readSmallFile("/proc/self/cgroup", &procCgroup)) {
    return 0;
  }
  CgroupCpuDirs dirs = findCgroupCpuDirs(mountinfo, procCgroup);
  uint32_t limit = 0;
  auto consider = [&](uint32_t cpus) {
    if (cpus > 0 && (limit == 0 || cpus < limit)) limit = cpus;
  };
  std::string contents, period;
  for (const std::string& dir : dirs.v2) {
    if (readSmallFile(dir + "/cpu.max", &contents))
      consider(cpusFromCgroupV2CpuMax(contents));
  }
  for (const std::string& dir : dirs.v1) {
    if (readSmallFile(dir + "/cpu.cfs_quota_us", &contents) &&
        readSmallFile(dir + "/cpu.cfs_period_us", &period))
      consider(cpusFromCgroupV1Quota(contents, period));
  }
  return limit;
}

uint32_t affinityCpuCount() {
  // A fixed cpu_set_t covers 1024 CPUs; larger machines need a larger mask.
  for (int cpus = 1024; cpus <= (1 << 16); cpus *= 4) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (!set) return 0;
    size_t size = CPU_ALLOC_SIZE(cpus);
    int rc = sched_getaffinity(0, size, set);
    int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
    CPU_FREE(set);
    if (rc == 0) return static_cast<uint32_t>(count);
    if (errno != EINVAL) return 0;
  }
  return 0;
}

uint32_t chooseThreadCount(uint32_t hardware, uint32_t affinity,
                           uint32_t quota) {
  uint32_t count = 0;
  for (uint32_t n : {hardware, affinity, quota})
    if (n > 0 && (count == 0 || n < count)) count = n;
  return count > 0 ? count : 1;
}

uint32_t defaultThreadCount() {
  return chooseThreadCount(std::thread::hardware_concurrency(),
                           affinityCpuCount(), cgroupCpuLimit());
}

}  // namespace strata::runtime
