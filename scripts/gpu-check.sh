#!/usr/bin/env bash
#===- scripts/gpu-check.sh - the checks that need a GPU --------------------===#
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-check.sh   (on a machine with an NVIDIA GPU, after a build)
# Builds nothing: runs what the build folder (STRATA_BUILD_DIR, default
# build/) already holds, so it can be copied to a GPU machine with the
# build and run there. The NCCL communicator (libstrata_nccl) as one rank:
# a real all_gather and a send/recv to itself, which must run, not skip.
# libnccl.so.2 and libcudart must be on the loader's path
# (LD_LIBRARY_PATH). Exits non-zero when a check fails or cannot run.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STRATA_BUILD_DIR:-$ROOT/build}"
failures=0

step() { printf '\n==> %s\n' "$*"; }

step "GPUs"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L
else
  echo "nvidia-smi not found"
fi

step "NCCL communicator, one rank ($BUILD/bin/strata_nccl_tests)"
tests="$BUILD/bin/strata_nccl_tests"
if [ ! -x "$tests" ]; then
  echo "FAIL: $tests is missing; build the target strata_nccl_tests first"
  failures=$((failures + 1))
else
  # The working communicator's tests skip when NCCL or the GPU is missing;
  # here a skip is a failure.
  log="$(mktemp)"
  "$tests" --gtest_filter='NcclCommunicatorTest.*' 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  if [ "$status" -ne 0 ]; then
    echo "FAIL: strata_nccl_tests exited with $status"
    failures=$((failures + 1))
  elif grep -q '^\[  SKIPPED \]' "$log"; then
    echo "FAIL: the NCCL tests skipped (no GPU or no libnccl.so.2 here)"
    failures=$((failures + 1))
  fi
  rm -f "$log"
  # The argument checks too, whatever the machine.
  "$tests" --gtest_filter='NcclCommunicatorCreateTest.*' --gtest_brief=1 ||
    failures=$((failures + 1))
fi

step "done"
if [ "$failures" -ne 0 ]; then
  echo "$failures GPU check(s) failed"
  exit 1
fi
echo "all GPU checks passed"
