//===- fake_communicator.h - An in-process group of ranks for tests -------===//
// SPDX-License-Identifier: Apache-2.0
// N threads of one test play the N ranks of a split model: each gets a
// strata_communicator_t of the group, whose all_gather waits for every
// rank, copies every rank's bytes, and waits again so that no rank reuses
// its buffers while another still reads them. Its send waits until the
// matching recv took the message (as MPI_Send may: an exchange that
// relies on buffered sends deadlocks here too); messages between two ranks
// with one tag arrive in order, and a recv of another size fails. Every
// wait gives up after a while, so a deadlock fails a test rather than
// hanging it. Also a communicator whose all_gather always fails, for the
// transport-error paths.

#ifndef STRATA_TEST_UNIT_RUNTIME_FAKE_COMMUNICATOR_H_
#define STRATA_TEST_UNIT_RUNTIME_FAKE_COMMUNICATOR_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "strata/runtime/communicator.h"
#include "strata/runtime/status.h"

namespace strata::testing {

class FakeGroup {
 public:
  /// |patience|: how long a send or recv waits for its other side.
  explicit FakeGroup(uint32_t size,
                     std::chrono::milliseconds patience = std::chrono::seconds(20))
      : size_(size), patience_(patience), ranks_(size), sends_(size, nullptr) {
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
    c.send = &FakeGroup::send;
    c.recv = &FakeGroup::recv;
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

  /// Messages sent so far, over all ranks, with |tag|.
  int messages(uint32_t tag) {
    std::lock_guard<std::mutex> lock(mutex_);
    int n = 0;
    for (const auto& [key, queue] : queues_)
      if (std::get<2>(key) == tag) n += static_cast<int>(queue.sent);
    return n;
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

  // The messages from one rank to another with one tag, in order.
  struct Queue {
    std::deque<std::vector<uint8_t>> waiting;
    uint64_t sent = 0;   // messages pushed so far
    uint64_t taken = 0;  // messages received so far
  };
  using Key = std::tuple<uint32_t, uint32_t, uint32_t>;  // from, to, tag

  template <typename... Args>
  static strata_status_t failure(const char* format, Args... args) {
    return strata_status_create(STRATA_STATUS_UNAVAILABLE, nullptr, 0, format,
                                args...);
  }

  static strata_status_t send(void* self, const void* buffer, size_t bytes,
                              uint32_t peer, uint32_t tag) {
    auto* me = static_cast<Rank*>(self);
    FakeGroup* group = me->group;
    if (peer >= group->size_ || peer == me->rank)
      return failure("rank %u cannot send to rank %u (tag %u)", me->rank, peer,
                     tag);
    std::unique_lock<std::mutex> lock(group->mutex_);
    Queue& queue = group->queues_[Key{me->rank, peer, tag}];
    const auto* b = static_cast<const uint8_t*>(buffer);
    queue.waiting.emplace_back(b, b + bytes);
    const uint64_t mine = queue.sent++;
    group->changed_.notify_all();
    if (!group->changed_.wait_for(lock, group->patience_,
                                  [&] { return queue.taken > mine; }))
      return failure("rank %u's send to rank %u (tag %u) was never received",
                     me->rank, peer, tag);
    return nullptr;
  }

  static strata_status_t recv(void* self, void* buffer, size_t bytes,
                              uint32_t peer, uint32_t tag) {
    auto* me = static_cast<Rank*>(self);
    FakeGroup* group = me->group;
    if (peer >= group->size_ || peer == me->rank)
      return failure("rank %u cannot receive from rank %u (tag %u)", me->rank,
                     peer, tag);
    std::unique_lock<std::mutex> lock(group->mutex_);
    Queue& queue = group->queues_[Key{peer, me->rank, tag}];
    if (!group->changed_.wait_for(lock, group->patience_,
                                  [&] { return !queue.waiting.empty(); }))
      return failure("rank %u received nothing from rank %u (tag %u)", me->rank,
                     peer, tag);
    std::vector<uint8_t> message = std::move(queue.waiting.front());
    queue.waiting.pop_front();
    ++queue.taken;
    group->changed_.notify_all();
    if (message.size() != bytes)
      return failure("rank %u sent %zu bytes with tag %u, expected %zu", peer,
                     message.size(), tag, bytes);
    if (bytes > 0) std::memcpy(buffer, message.data(), bytes);
    return nullptr;
  }

  const uint32_t size_;
  const std::chrono::milliseconds patience_;
  std::vector<Rank> ranks_;
  std::map<Key, Queue> queues_;
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
