#!/usr/bin/env bash
#===- scripts/fuzz-loaders.sh - fuzz the artifact loader and .npy reader --===#
# SPDX-License-Identifier: Apache-2.0
# scripts/fuzz-loaders.sh [SECONDS [LIBFUZZER_FLAGS...]]   (SECONDS: 600)
# Builds strata-loader-fuzzer and strata-npy-fuzzer in build-fuzz-rt/
# (clang-22, ASan+UBSan, libFuzzer; a runtime-only configure, so no LLVM or
# MLIR is compiled) and runs each in turn for SECONDS over a working corpus
# seeded from test/fuzz/loader-corpus/ and test/fuzz/npy-corpus/. Crash,
# leak and timeout inputs land in build-fuzz-rt/crashes/<fuzzer>-*; the log
# is build-fuzz-rt/fuzz-loaders.log. Exits non-zero when a fuzzer found
# something in this run. Extra flags go to libFuzzer, e.g. to keep going
# past known crashes:
#   scripts/fuzz-loaders.sh 600 -fork=1 -ignore_crashes=1 -ignore_timeouts=1
# STRATA_FUZZ_LOADERS picks the fuzzers ("loader npy"), STRATA_FUZZ_RT_BUILD_DIR
# the build folder (docs/testing.md).
set -euo pipefail
# shellcheck source=scripts/fuzz-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/fuzz-common.sh"

SECONDS_TO_RUN="${1:-600}"
shift $(( $# > 0 ? 1 : 0 ))
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STRATA_FUZZ_RT_BUILD_DIR:-$ROOT/build-fuzz-rt}"
JOBS="${STRATA_JOBS:-$(nproc)}"
read -r -a FUZZERS <<< "${STRATA_FUZZ_LOADERS:-loader npy}"

echo "==> configure ($BUILD)"
CC=clang-22 CXX=clang++-22 cmake -G Ninja -S "$ROOT" -B "$BUILD" \
  -DCMAKE_BUILD_TYPE=Release -DSTRATA_RUNTIME_ONLY=ON \
  -DSTRATA_BUILD_FUZZERS=ON -DSTRATA_BUILD_TESTS=OFF \
  -DSTRATA_SANITIZE=address,undefined >/dev/null
targets=()
for fuzzer in "${FUZZERS[@]}"; do targets+=("strata-$fuzzer-fuzzer"); done
echo "==> build ${targets[*]}"
ninja -C "$BUILD" -j "$JOBS" "${targets[@]}"

CRASHES="$BUILD/crashes"
LOG="$BUILD/fuzz-loaders.log"
mkdir -p "$CRASHES"
: > "$LOG"
# Artifacts of earlier runs stay; only newer ones count as this run's.
MARKER="$BUILD/.fuzz-loaders-start"
touch "$MARKER"

status=0
summary=()
for fuzzer in "${FUZZERS[@]}"; do
  # The working corpus grows as the fuzzer finds new coverage; the committed
  # seeds are only read.
  corpus="$BUILD/$fuzzer-corpus"
  seeds="$ROOT/test/fuzz/$fuzzer-corpus"
  mkdir -p "$corpus"
  part="$BUILD/fuzz-$fuzzer.log"
  echo "==> fuzz $fuzzer for ${SECONDS_TO_RUN} s (log: $LOG)"
  set +e
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  "$BUILD/bin/strata-$fuzzer-fuzzer" \
    -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$CRASHES/$fuzzer-" "$@" "$corpus" "$seeds" \
    2>&1 | tee "$part"
  rc=${PIPESTATUS[0]}
  set -e
  fuzz_result "$fuzzer" "$part" "$rc"
done

echo "==> final stats"
printf '  %s\n' "${summary[@]}" | tee -a "$LOG"
echo "artifacts: $CRASHES/"
ls -l "$CRASHES/"
exit "$status"
