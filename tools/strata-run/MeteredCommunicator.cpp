//===- MeteredCommunicator.cpp - Counts what a rank exchanges -------------===//
// SPDX-License-Identifier: Apache-2.0

#include "MeteredCommunicator.h"

#include <chrono>

namespace strata::tools {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

} // namespace

MeteredCommunicator::MeteredCommunicator(const strata_communicator_t *inner)
    : inner_(inner) {
  strata_communicator_init(&table_);
  if (!inner_)
    return;
  table_.self = this;
  table_.rank = inner_->rank;
  table_.size = inner_->size;
  table_.all_gather = &MeteredCommunicator::allGather;
  table_.send = inner_->send ? &MeteredCommunicator::sendTo : nullptr;
  table_.recv = inner_->recv ? &MeteredCommunicator::receiveFrom : nullptr;
  table_.probe = inner_->probe ? &MeteredCommunicator::probeFor : nullptr;
}

strata_status_t MeteredCommunicator::allGather(void *self, const void *send,
                                               void *recv, size_t bytes) {
  auto *m = static_cast<MeteredCommunicator *>(self);
  auto start = std::chrono::steady_clock::now();
  strata_status_t status =
      m->inner_->all_gather(m->inner_->self, send, recv, bytes);
  m->totals_.seconds += secondsSince(start);
  ++m->totals_.allGathers;
  m->totals_.bytes += bytes;
  return status;
}

strata_status_t MeteredCommunicator::sendTo(void *self, const void *buffer,
                                            size_t bytes, uint32_t peer,
                                            uint32_t tag) {
  auto *m = static_cast<MeteredCommunicator *>(self);
  auto start = std::chrono::steady_clock::now();
  strata_status_t status =
      m->inner_->send(m->inner_->self, buffer, bytes, peer, tag);
  m->totals_.seconds += secondsSince(start);
  ++m->totals_.sends;
  m->totals_.bytes += bytes;
  return status;
}

strata_status_t MeteredCommunicator::receiveFrom(void *self, void *buffer,
                                                 size_t bytes, uint32_t peer,
                                                 uint32_t tag) {
  auto *m = static_cast<MeteredCommunicator *>(self);
  auto start = std::chrono::steady_clock::now();
  strata_status_t status =
      m->inner_->recv(m->inner_->self, buffer, bytes, peer, tag);
  m->totals_.seconds += secondsSince(start);
  ++m->totals_.receives;
  return status;
}

strata_status_t MeteredCommunicator::probeFor(void *self, uint32_t peer,
                                              uint32_t tag, int *ready) {
  auto *m = static_cast<MeteredCommunicator *>(self);
  return m->inner_->probe(m->inner_->self, peer, tag, ready);
}

} // namespace strata::tools
