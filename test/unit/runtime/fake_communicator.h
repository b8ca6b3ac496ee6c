//===- fake_communicator.h - An in-process group of ranks for tests -------===//
// SPDX-License-Identifier: Apache-2.0
// N threads of one test play the N ranks of a tensor-parallel group: each
// gets a strata_communicator_t of the group, whose all_gather waits for
// every rank, copies every rank's bytes, and waits again so that no rank
// reuses its buffers while another still reads them. Also a communicator
// whose all_gather always fails, for the transport-error paths.

#ifndef STRATA_TEST_UNIT_RUNTIME_FAKE_COMMUNICATOR_H_
#define STRATA_TEST_UNIT_RUNTIME_FAKE_COMMUNICATOR_H_

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "strata/runtime/communicator.h"
#include "strata/runtime/status.h"

namespace strata::testing {

class FakeGroup {
 public:
  explicit FakeGroup(uint32_t size)
      : size_(size), ranks_(size), sends_(size, nullptr) {
    for (uint32_t r = 0; r < size; ++r) ranks_[r] = {this, r};
  }
  FakeGroup(const FakeGroup&) = delete;
  FakeGroup& operator=(const FakeGroup&) = delete;

  /// The communicator of rank |rank| (valid while the group lives).
  strata_communicator_t communicator(uint32_t rank) {
    strata_communicator_t c;
    strata_communicator_init(&c);
    c.self = &ranks_[rank];
    c.rank = rank;
    c.size = size_;
    c.all_gather = &FakeGroup::allGather;
    return c;
  }

  /// Runs body(rank) on one thread per rank and joins them.
  void run(const std::function<void(uint32_t)>& body) {
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < size_; ++r) threads.emplace_back(body, r);
    for (std::thread& t : threads) t.join();
  }

  /// all_gather calls made so far, over all ranks.
  int calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }

 private:
  struct Rank {
    FakeGroup* group;
    uint32_t rank;
  };

  // Every rank arrives before any leaves.
  void barrier(std::unique_lock<std::mutex>& lock) {
    const uint64_t generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
      return;
    }
    changed_.wait(lock, [&] { return generation_ != generation; });
  }

  static strata_status_t allGather(void* self, const void* send, void* recv,
                                   size_t bytes) {
    auto* me = static_cast<Rank*>(self);
    FakeGroup* group = me->group;
    std::unique_lock<std::mutex> lock(group->mutex_);
    ++group->calls_;
    group->sends_[me->rank] = send;
    group->barrier(lock);
    for (uint32_t r = 0; r < group->size_; ++r) {
      std::memcpy(static_cast<uint8_t*>(recv) + r * bytes, group->sends_[r],
                  bytes);
    }
    group->barrier(lock);
    return nullptr;
  }

  const uint32_t size_;
  std::vector<Rank> ranks_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<const void*> sends_;
  uint32_t arrived_ = 0;
  uint64_t generation_ = 0;
  int calls_ = 0;
};

/// A group of one whose all_gather fails with UNAVAILABLE "link down".
inline strata_communicator_t failingCommunicator() {
  strata_communicator_t c;
  strata_communicator_init(&c);
  c.all_gather = [](void*, const void*, void*, size_t) -> strata_status_t {
    return strata_status_create(STRATA_STATUS_UNAVAILABLE, nullptr, 0,
                                "link down");
  };
  return c;
}

}  // namespace strata::testing

#endif  // STRATA_TEST_UNIT_RUNTIME_FAKE_COMMUNICATOR_H_
