#!/usr/bin/env bash
#===- scripts/fuzz.sh - build and run the importer fuzzer -----------------===#
# SPDX-License-Identifier: Apache-2.0
# scripts/fuzz.sh [SECONDS [LIBFUZZER_FLAGS...]]   (SECONDS defaults to 600)
# Configures build-fuzz/ with clang-22, ASan+UBSan and libFuzzer, builds
# strata-import-fuzzer, and runs it for SECONDS over a working corpus seeded
# from test/fuzz/corpus/ and test/import/hostile/Inputs/. Crash, leak,
# timeout and OOM inputs land in build-fuzz/crashes/; the log is
# build-fuzz/fuzz.log. Exits non-zero when the fuzzer found something.
# Extra flags go to libFuzzer, e.g. to keep going past known crashes:
#   scripts/fuzz.sh 600 -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1
# scripts/test.sh runs it for 30 s (docs/testing.md).
set -euo pipefail

SECONDS_TO_RUN="${1:-600}"
shift $(( $# > 0 ? 1 : 0 ))
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STRATA_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
MLIR_DIR="${MLIR_DIR:-/usr/lib/llvm-22/lib/cmake/mlir}"
JOBS="${STRATA_JOBS:-$(nproc)}"

echo "==> configure ($BUILD)"
CC=clang-22 CXX=clang++-22 cmake -G Ninja -S "$ROOT" -B "$BUILD" \
  -DMLIR_DIR="$MLIR_DIR" -DCMAKE_BUILD_TYPE=Release \
  -DSTRATA_BUILD_FUZZERS=ON -DSTRATA_BUILD_TESTS=OFF \
  -DSTRATA_SANITIZE=address,undefined >/dev/null

echo "==> build strata-import-fuzzer"
ninja -C "$BUILD" -j "$JOBS" strata-import-fuzzer

# The working corpus grows as the fuzzer finds new coverage; the committed
# seeds are only read.
mkdir -p "$BUILD/corpus" "$BUILD/crashes"
echo "==> fuzz for ${SECONDS_TO_RUN} s (log: $BUILD/fuzz.log)"
set +e
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
"$BUILD/bin/strata-import-fuzzer" \
  -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -timeout=10 \
  -rss_limit_mb=4096 -print_final_stats=1 \
  -artifact_prefix="$BUILD/crashes/" "$@" \
  "$BUILD/corpus" "$ROOT/test/fuzz/corpus" "$ROOT/test/import/hostile/Inputs" \
  2>&1 | tee "$BUILD/fuzz.log"
status=${PIPESTATUS[0]}
set -e
artifacts=$(find "$BUILD/crashes" -type f | wc -l)
echo "==> fuzzer exit status $status; $artifacts artifact(s) in $BUILD/crashes/"
ls -l "$BUILD/crashes/"
# With -fork=1 -ignore_crashes=1 libFuzzer exits 0 even after crashes.
if [ "$status" -eq 0 ] && [ "$artifacts" -gt 0 ]; then
  status=1
fi
exit "$status"
