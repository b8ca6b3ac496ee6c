//===- kv_pingpong.cc - Latency and bandwidth of a KV-cache hand-off ------===//
// SPDX-License-Identifier: Apache-2.0
// Usage: mpirun -np 2 strata-kv-pingpong [--max-bytes N] [--rounds N]
// Rank 0 sends a buffer to rank 1 and waits for it to come back, through
// libstrata_mpi's send/recv (the transport a disaggregated prefill would
// hand its KV cache over), for sizes from 8 bytes to --max-bytes in powers
// of 4. Prints one JSON object: per size the median one-way time (half the
// round trip) over --rounds round trips, after 3 untimed ones.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "strata/runtime/mpi_communicator.h"
#include "strata/runtime/status.h"

namespace {

bool ok(strata_status_t status) {
  if (!status) return true;
  std::fprintf(stderr, "strata-kv-pingpong: error: %s\n",
               strata_status_message(status));
  strata_status_free(status);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  size_t maxBytes = size_t{64} << 20;
  int rounds = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--max-bytes")) {
      maxBytes = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--rounds")) {
      rounds = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr, "strata-kv-pingpong: error: unknown option '%s'\n",
                   argv[i]);
      return 1;
    }
  }
  strata_communicator_t* comm = nullptr;
  if (!ok(strata_mpi_communicator_create(&comm))) return 1;
  if (comm->size != 2 || !comm->send || !comm->recv) {
    std::fprintf(stderr, "strata-kv-pingpong: error: needs exactly 2 ranks\n");
    strata_mpi_communicator_release(comm);
    return 1;
  }
  const uint32_t peer = 1 - comm->rank;
  // Touched once, so that page faults are not timed.
  std::vector<char> buffer(maxBytes, 1);
  std::string json = "{\"transport\": \"libstrata_mpi\", \"results\": [";
  bool first = true;
  for (size_t bytes = 8; bytes <= maxBytes; bytes *= 4) {
    std::vector<double> oneWay;
    for (int round = -3; round < rounds; ++round) {
      const auto start = std::chrono::steady_clock::now();
      if (comm->rank == 0) {
        if (!ok(comm->send(comm->self, buffer.data(), bytes, peer, 0)) ||
            !ok(comm->recv(comm->self, buffer.data(), bytes, peer, 0)))
          return 1;
      } else {
        if (!ok(comm->recv(comm->self, buffer.data(), bytes, peer, 0)) ||
            !ok(comm->send(comm->self, buffer.data(), bytes, peer, 0)))
          return 1;
      }
      const std::chrono::duration<double> elapsed =
          std::chrono::steady_clock::now() - start;
      if (round >= 0) oneWay.push_back(elapsed.count() / 2);
    }
    std::sort(oneWay.begin(), oneWay.end());
    char line[128];
    std::snprintf(line, sizeof(line), "%s{\"bytes\": %zu, \"seconds\": %.9g}",
                  first ? "" : ", ", bytes, oneWay[oneWay.size() / 2]);
    json += line;
    first = false;
  }
  json += "]}";
  if (comm->rank == 0) std::printf("%s\n", json.c_str());
  strata_mpi_communicator_release(comm);
  return 0;
}
